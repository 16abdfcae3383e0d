#!/usr/bin/env bash
# Compares two builds of libkupl on the quick sweep: the same core_sweep_bench binary run PAIRS
# times against each library folder in alternation, the first of each pair swapped every pair
# (so that neither side always runs after the other), then compare_sweeps.py over the pairs.
# The sweep's own ratios are paired inside each run; this pairs whole runs, for a library change
# whose effect the host's phase and the code's layout would otherwise hide. Take 12 pairs or more
# (benchmarks/core/results/README.md, "What one sitting can show").
#
# Usage: ab_sweep.sh LIB_A LIB_B PAIRS OUT_DIR [core_sweep_bench options, e.g. --only=1d]
#   LIB_A, LIB_B  folders holding libkupl.so.0 (e.g. copies of two builds' core/ folders)
#   BIN           core_sweep_bench to run (default: build/benchmarks/core of this repo)
# Writes OUT_DIR/a.N.json and OUT_DIR/b.N.json and prints the comparison (OUT_DIR/compare.txt).
set -euo pipefail

if [ $# -lt 4 ]; then
    sed -n '2,/^set /p' "$0" | sed '$d' >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
for lib in "$1" "$2"; do
    [ -e "$lib/libkupl.so.0" ] || { echo "ab_sweep: no libkupl.so.0 in $lib" >&2; exit 2; }
done
lib_a=$(cd "$1" && pwd)
lib_b=$(cd "$2" && pwd)
pairs=$3
out=$4
shift 4
bin=${BIN:-$here/../../build/benchmarks/core/core_sweep_bench}
[ -x "$bin" ] || { echo "ab_sweep: no $bin (build with benchmarks, or set BIN)" >&2; exit 2; }
[[ "$pairs" =~ ^[1-9][0-9]*$ ]] || { echo "ab_sweep: PAIRS must be a positive number, not '$pairs'" >&2; exit 2; }
mkdir -p "$out"
sweep_args=("$@")
run() { # SIDE LIBRARY PAIR
    LD_LIBRARY_PATH=$2 "$bin" --quick --reps="${REPS:-15}" "${sweep_args[@]}" --json="$out/$1.$3.json" >/dev/null
}
for ((n = 1; n <= pairs; n++)); do
    if ((n % 2)); then
        run a "$lib_a" "$n"
        run b "$lib_b" "$n"
    else
        run b "$lib_b" "$n"
        run a "$lib_a" "$n"
    fi
    echo "ab_sweep: pair $n of $pairs done" >&2
done
python3 "$here/compare_sweeps.py" "$out" --all | tee "$out/compare.txt"
