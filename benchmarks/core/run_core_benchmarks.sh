#!/usr/bin/env bash
# Runs the core benchmarks with repetitions (interleaved at random, so a noisy host hits
# every variant alike), writes Google Benchmark JSON plus overlap.json, and prints the
# table of ratios against memcpy on the calling thread. About 2-3 minutes on 2 cores.
#
# Usage: run_core_benchmarks.sh [BIN_DIR [OUT_DIR]]
#   BIN_DIR  folder holding core_*_bench (default: build-bench/benchmarks/core of this repo)
#   OUT_DIR  where the JSON and ratios.txt go (default: BIN_DIR/results)
#   REPS=N   repetitions per benchmark (default 15)
#   CALLER_CPU=C  run the benchmark threads on CPU C only (taskset); by default the scheduler
#            places them, and the report says where they ran (a caller on a copy channel's
#            core loses the overlap).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "${1:-$here/../../build-bench/benchmarks/core}" && pwd)
out=${2:-$bin/results}
reps=${REPS:-15}
mkdir -p "$out"
# The figures are only as good as the machine is quiet: say how busy it was.
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/load.txt"

run=()
if [[ -n "${CALLER_CPU:-}" ]]; then
    run=(taskset -c "$CALLER_CPU")
    echo "benchmark threads restricted to CPU $CALLER_CPU" | tee -a "$out/load.txt"
fi

gbench=(--benchmark_repetitions="$reps" --benchmark_enable_random_interleaving=true
        --benchmark_display_aggregates_only=true --benchmark_out_format=json)

echo "== 1D copies: memcpy vs kupl_memcpy_async+wait vs kupl_memcpy, 4 KiB .. 256 MiB"
"${run[@]}" "$bin/core_copy_bandwidth_bench" "${gbench[@]}" --benchmark_min_time=0.05 \
    --benchmark_out="$out/copy_bandwidth.json"
echo "== 2D pack: one memcpy per row vs kupl_memcpy2d(_async+wait)"
"${run[@]}" "$bin/core_copy2d_bench" "${gbench[@]}" --benchmark_min_time=0.05 \
    --benchmark_out="$out/copy2d.json"
echo "== Overlap: copy + equal compute"
"${run[@]}" "$bin/core_overlap_bench" --bytes=4M,64M,256M --reps="$((reps * 2 + 1))" --json="$out/overlap.json"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load.txt"
echo
{
    cat "$out/load.txt"
    python3 "$here/report_core_benchmarks.py" "$out"
} | tee "$out/ratios.txt"
