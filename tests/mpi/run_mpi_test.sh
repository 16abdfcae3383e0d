#!/bin/sh
# Runs one MPI test program under real mpirun, plainly or with the interposer.
# usage: run_mpi_test.sh plain|kupl NP LIBKUPL_MPI EXPECT_REGEX PROGRAM [ARGS...]
# In kupl mode the job must also print (KUPL_MPI_STATS=1) lines matching
# EXPECT_REGEX (several patterns separated by ';;'), which proves the calls went
# through the interposer.
set -u
. "$(dirname "$0")/judge_mpi_job.sh"
mode=$1 np=$2 lib=$3 expect=$4
shift 4
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# Shared memory and self only: no network probing, every peer on this node.
if [ "$mode" = kupl ]; then
    # KUPL_MPI_FORCE: take every eligible message whatever its size, so the accelerated path is what runs.
    mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np "$np" \
        -x LD_PRELOAD="$lib" -x KUPL_MPI_STATS=1 -x KUPL_MPI_FORCE=1 "$@" >"$log" 2>&1
else
    mpirun --allow-run-as-root --oversubscribe --mca btl self,vader -np "$np" "$@" >"$log" 2>&1
fi
judge_mpi_job "$mode" $? "$log" "$expect"
exit 0
