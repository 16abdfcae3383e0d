#!/usr/bin/env bash
# Runs the "never slower" sweep (core_sweep_bench) and draws it: sweep.json, sweep.png,
# sweep.svg and sweep.txt (the table, and how many cases from 2 us on miss 0.95x) in OUT_DIR.
# --quick: fewer sizes and shapes, still medians of 15 (well under a minute); the full sweep
# (1D up to 1 GiB, 2D rows 1 B..64 KiB, up to 10^6 rows) takes several minutes.
#
# Usage: run_sweep.sh [--quick] [BIN_DIR [OUT_DIR]]
#   BIN_DIR  folder holding core_sweep_bench (default: build/benchmarks/core of this repo)
#   OUT_DIR  where the results go (default: BIN_DIR/sweep)
#   REPS=N   repetitions per case (default 15)
# Needs python3-matplotlib (Debian) for the plot; without it the JSON and table are still written.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
quick=()
if [[ "${1:-}" == "--quick" ]]; then
    quick=(--quick)
    shift
fi
bin=$(cd "${1:-$here/../../build/benchmarks/core}" && pwd)
out=${2:-$bin/sweep}
mkdir -p "$out"
# Ratios are paired inside one run, but a busy host still widens them: say how busy it was.
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/load.txt"
"$bin/core_sweep_bench" "${quick[@]}" --reps="${REPS:-15}" --json="$out/sweep.json" | tee "$out/cases.txt"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load.txt"
# Debian's matplotlib lives with /usr/bin/python3, which another python3 on PATH may hide.
py=python3
python3 -c 'import matplotlib' 2>/dev/null || py=/usr/bin/python3
if "$py" -c 'import matplotlib' 2>/dev/null; then
    "$py" "$here/plot_sweep.py" "$out/sweep.json" "$out/sweep.png"
    "$py" "$here/plot_sweep.py" "$out/sweep.json" "$out/sweep.svg"
    echo "plot: $out/sweep.png, $out/sweep.svg"
else
    echo "python3-matplotlib is not installed: no plot (apt-get install python3-matplotlib)"
fi
{
    cat "$out/load.txt"
    python3 "$here/plot_sweep.py" "$out/sweep.json" --table
} | tee "$out/sweep.txt"
