#!/bin/sh
# Runs COMMAND with KUPL_STATS=1 and checks that every op it submitted was settled exactly once:
# the command succeeds, and each process that printed stats at exit (forked children that _exit
# print none) reports a non-zero op balance with nothing left unsettled and nothing settled twice.
# usage: check_ops_settled.sh COMMAND [ARGS...]
set -u
log=$(mktemp)
trap 'rm -f "$log"' EXIT
KUPL_STATS=1 "$@" >"$log" 2>&1
rc=$?
grep -E '^\[kupl\] +ops:' "$log"
if [ "$rc" -ne 0 ]; then
    tail -n 40 "$log"
    echo "FAIL: exit status $rc"
    exit 1
fi
if ! grep -Eq '^\[kupl\] +ops: admitted=[1-9][0-9]* ' "$log"; then
    echo "FAIL: no process reported the ops it admitted (KUPL_STATS)"
    exit 1
fi
if grep -E '^\[kupl\] +ops:' "$log" | grep -Evq '\(never settled: 0, settled twice: 0\)$'; then
    echo "FAIL: an op was never settled, or settled twice"
    exit 1
fi
echo "every op settled exactly once"
