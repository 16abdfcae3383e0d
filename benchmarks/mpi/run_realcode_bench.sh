#!/bin/sh
# Runs the real-code pattern benchmark (mpi_realcode_bench) several times under mpirun with
# libkupl_mpi.so preloaded, then combines the runs (medians over runs of each run's paired
# ratios) into a table, a JSON summary and a plot (realcode_report.py).
#
# usage: run_realcode_bench.sh LIBKUPL_MPI BENCH [--smoke|--quick|--full] [OUTDIR]
#   --smoke  one run, smallest size of each pattern, a few rounds, every message staged
#            (KUPL_MPI_FORCE=1): checks that every variant's bytes are right, not timing
#   --quick  3 runs, the two smaller sizes of each pattern, 30 rounds per case (35 s at load 7
#            on the 2-vCPU VM; the machine's load stretches it)  [default]
#   --full   5 runs, every size, 100 rounds per case
#   RUNS=n ROUNDS=n TARGET_US=t SIZES=0,1,.. override the mode's numbers; PYTHON=python3 interpreter
#   EXTRA_ENV  e.g. "-x KUPL_MPI_FORCE=1" (stage every eligible message) or "-x KUPL_MPI_P2P=0"
#   OUTDIR defaults to ./realcode-<mode>; it gets run<i>.json/.txt, summary.json, table.md,
#   ratios.png and ratios.svg (the plot needs python3-matplotlib; without it only the tables).
set -eu
lib=$1 bench=$2
mode=${3:---quick}
case $mode in
--smoke) runs=1 rounds=4 target=20 sizes=0 ;;
--quick) runs=3 rounds=30 target=100 sizes=0,1 ;;
--full) runs=5 rounds=100 target=200 sizes=0,1,2,3 ;;
*)
    echo "run_realcode_bench.sh: unknown mode $mode (--smoke, --quick or --full)" >&2
    exit 2
    ;;
esac
out=${4:-realcode-${mode#--}}
runs=${RUNS:-$runs} rounds=${ROUNDS:-$rounds} target=${TARGET_US:-$target} sizes=${SIZES:-$sizes}
extra=${EXTRA_ENV:-}
if [ "$mode" = --smoke ]; then extra="$extra -x KUPL_MPI_FORCE=1"; fi
mkdir -p "$out"
here=$(dirname "$0")
status=0
i=1
while [ "$i" -le "$runs" ]; do
    echo "== run $i of $runs"
    # shellcheck disable=SC2086
    if ! mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np 2 \
        -x LD_PRELOAD="$lib" -x KUPL_MPI_STATS=1 $extra \
        "$bench" --rounds="$rounds" --target-us="$target" --sizes="$sizes" --require-kupl \
        --json="$out/run$i.json" >"$out/run$i.txt" 2>&1; then
        status=1
    fi
    grep -E '^(realcode_bench|geometric|verification)|VERIFY-FAILED|bytes wrong' "$out/run$i.txt" || true
    i=$((i + 1))
done
if [ $status -ne 0 ]; then
    echo "run_realcode_bench.sh: a run failed (see $out/run*.txt)" >&2
    exit 1
fi
# The plot needs matplotlib: take the first Python that has it (Debian's python3-matplotlib is
# only in /usr/bin/python3's path when another python3 comes first in PATH).
py=${PYTHON:-python3}
for candidate in "$py" /usr/bin/python3; do
    if "$candidate" -c 'import matplotlib' 2>/dev/null; then
        py=$candidate
        break
    fi
done
"$py" "$here/realcode_report.py" --out "$out" "$out"/run*.json
