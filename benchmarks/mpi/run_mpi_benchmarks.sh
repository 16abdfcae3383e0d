#!/bin/sh
# Runs the MPI interposer benchmarks under mpirun with libkupl_mpi.so preloaded.
# Every table compares, in the same processes and interleaved, the interposer
# (MPI_*), Open MPI itself (PMPI_*) and hand-packing; medians of repetitions.
#
# usage: run_mpi_benchmarks.sh LIBKUPL_MPI BIN_DIR [--smoke]
#   REPS=N       repetitions (default 21)
#   EXTRA_ENV    e.g. "-x KUPL_MPI_FORCE=1" to stage every eligible message, or "-x KUPL_MPI_P2P=0"
set -eu
lib=$1 bin=$2 smoke=${3:-}
reps=${REPS:-21}
quick=0
if [ "$smoke" = --smoke ]; then reps=3 quick=1; fi
run() {
    np=$1
    shift
    # shellcheck disable=SC2086
    mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np "$np" \
        -x LD_PRELOAD="$lib" -x KUPL_MPI_STATS=1 ${EXTRA_ENV:-} "$@" --reps="$reps" --quick="$quick"
}
echo "== MPI_Pack / MPI_Unpack: interposer vs Open MPI (1 rank)"
run 1 "$bin/mpi_pack_bench"
echo
echo "== Ping-pong, one-way time: interposer vs Open MPI vs hand-packing vs contiguous (2 ranks)"
echo "   (the cost model stages narrow, cache-near messages up to 64 KiB; on other rows kupl runs Open MPI's calls)"
run 2 "$bin/mpi_pingpong_bench"
echo
echo "== Halo exchange with a stencil sweep between post and wait (2 ranks)"
run 2 "$bin/mpi_halo_bench"
echo
echo "== FFT-style transpose (MPI_Alltoall of a resized vector type) vs hand-packing (2 ranks)"
echo "   (collectives are not intercepted: kupl runs Open MPI's MPI_Alltoall)"
run 2 "$bin/mpi_transpose_bench"
