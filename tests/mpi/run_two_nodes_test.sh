#!/bin/bash
# Runs one MPI test program on two simulated nodes (2 ranks each, the shared two-nodes tool:
# network + hostname namespaces), plainly or with the interposer, like run_mpi_test.sh.
# usage: run_two_nodes_test.sh TWO_NODES_TOOL plain|kupl LIBKUPL_MPI EXPECT_REGEX PROGRAM
# Exits 77 (skipped) where the nodes cannot be made (not root, no namespaces, nodes in use).
set -u
. "$(dirname "$0")/judge_mpi_job.sh"
tool=$1 mode=$2 lib=$3 expect=$4 prog=$5
if [ "$(id -u)" != 0 ]; then
    echo "SKIP: two-nodes needs root"
    exit 77
fi
export TWO_NODES_DIR
TWO_NODES_DIR=$(mktemp -d)
log=$TWO_NODES_DIR/log
if ! "$tool" up >"$log" 2>&1; then
    cat "$log"
    echo "SKIP: two-nodes could not make the nodes (namespaces unavailable or in use by another run)"
    rm -rf "$TWO_NODES_DIR"
    exit 77
fi
# Only what this run made is taken down.
trap '"$tool" down >/dev/null 2>&1; rm -rf "$TWO_NODES_DIR"' EXIT
args=(--host node1:2,node2:2 -np 4)
if [ "$mode" = kupl ]; then
    args+=(-x LD_PRELOAD="$lib" -x KUPL_MPI_STATS=1 -x KUPL_MPI_FORCE=1)
fi
TWO_NODES_BTL=self,vader,tcp TWO_NODES_TIMEOUT=100 "$tool" mpirun "${args[@]}" "$prog" >"$log" 2>&1
judge_mpi_job "$mode" $? "$log" "$expect"
exit 0
