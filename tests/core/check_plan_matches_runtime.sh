#!/bin/sh
# kupl-info --topology FILE must show what the runtime does on that machine: starts the runtime
# on the machine FILE describes (HWLOC_XMLFILE: hwloc reports it, binding is a no-op) and compares
# its channel count, each channel's placement and its executor count with the plan printed by
# `kupl-info --topology FILE`. The KUPL_* variables in the environment count for both.
# usage: check_plan_matches_runtime.sh KUPL_INFO FILE
set -u
tool=$1 file=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
pick() { grep -E '^(copy channels|  channel [0-9]+|host executors) ' "$1" | sed 's/  */ /g'; }
if ! HWLOC_XMLFILE=$file "$tool" >"$dir/runtime" 2>&1; then
    cat "$dir/runtime"; echo "FAIL: kupl-info on HWLOC_XMLFILE=$file failed"; exit 1
fi
if ! "$tool" --topology "$file" >"$dir/plan" 2>&1; then
    cat "$dir/plan"; echo "FAIL: kupl-info --topology $file failed"; exit 1
fi
pick "$dir/runtime" >"$dir/runtime.picked"
pick "$dir/plan" >"$dir/plan.picked"
cat "$dir/plan.picked"
if [ ! -s "$dir/plan.picked" ] || ! grep -q '^copy channels [1-9]' "$dir/plan.picked"; then
    echo "FAIL: no channels in the plan"; exit 1
fi
if ! diff -u "$dir/runtime.picked" "$dir/plan.picked"; then
    echo "FAIL: the runtime (-) and the plan (+) differ"; exit 1
fi
echo "PASS"
