#!/bin/sh
# Runs COMMAND twice, without NAME and with NAME=VALUE, and checks the configuration rule: the
# bad value is reported by exactly COUNT lines (one per process), each exactly
#   kupl: ignoring NAME=VALUE: expected FORM; using DEFAULT
# both runs succeed, and stdout and the rest of stderr are the same as without the variable (the
# default is in effect; lines are compared sorted, as MPI ranks interleave).
# usage: check_config_warning.sh COUNT NAME=VALUE FORM DEFAULT COMMAND [ARGS...]
set -u
count=$1 assignment=$2
name=${assignment%%=*}
value=${assignment#*=}
expected="kupl: ignoring $assignment: expected $3; using $4"
shift 4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

env -u "$name" "$@" >"$dir/base.out" 2>"$dir/base.err"
rc=$?
if [ $rc -ne 0 ]; then
    cat "$dir/base.out" "$dir/base.err"
    echo "FAIL: without $name the command exited with $rc"
    exit 1
fi
env "$name=$value" "$@" >"$dir/bad.out" 2>"$dir/bad.err"
rc=$?
echo "--- stderr with $name=$value:"
cat "$dir/bad.err"
if [ $rc -ne 0 ]; then
    cat "$dir/bad.out"
    echo "FAIL: with $name=$value the command exited with $rc"
    exit 1
fi
if grep -q '^kupl: ignoring' "$dir/base.err"; then
    echo "FAIL: a warning without $name"
    exit 1
fi
matching=$(grep -cxF -- "$expected" "$dir/bad.err")
warnings=$(grep -c '^kupl: ignoring' "$dir/bad.err")
if [ "$matching" -ne "$count" ] || [ "$warnings" -ne "$count" ]; then
    echo "FAIL: expected exactly $count line(s) '$expected', got $matching of them among $warnings warning(s)"
    exit 1
fi
# Apart from the warnings, stderr is as without the variable too (e.g. KUPL_MPI_STATS counts).
grep -vxF -- "$expected" "$dir/bad.err" | sort >"$dir/bad.err.sorted"
sort "$dir/base.err" >"$dir/base.err.sorted"
if ! cmp -s "$dir/base.err.sorted" "$dir/bad.err.sorted"; then
    echo "FAIL: apart from the warning(s), stderr differs from the run without $name:"
    diff "$dir/base.err.sorted" "$dir/bad.err.sorted"
    exit 1
fi
sort "$dir/base.out" >"$dir/base.sorted"
sort "$dir/bad.out" >"$dir/bad.sorted"
if ! cmp -s "$dir/base.sorted" "$dir/bad.sorted"; then
    echo "FAIL: the output differs from the run without $name (the default is not in effect):"
    diff "$dir/base.sorted" "$dir/bad.sorted"
    exit 1
fi
echo "PASS: $count warning line(s), output as with the default"
