#!/bin/sh
# xadd_self_add.sh <binary>...: fails if a binary holds the code GCC 12.2 (-O1/-O2, x86-64) emits
# for `if (c) a.store(x); else y = a.fetch_add(x) + x;` with x computed: `lock xadd %R,(a)`
# followed by `add %R,%R`, the old value added to itself instead of to x. core/sched/engine.cpp
# avoids that shape; this keeps new code from falling into it unseen. (A real `old + old` right
# after an xadd would be flagged too; none is meant anywhere.)
set -eu
status=0
for binary in "$@"; do
    found=$(objdump -d --no-show-raw-insn "$binary" | grep -A1 "lock xadd" |
        grep -B1 -E "add +%(r[a-z0-9]+|e[a-z]+),%\1\$" || true)
    if [ -n "$found" ]; then
        echo "FAIL: $binary adds an xadd's result to itself:"
        echo "$found"
        status=1
    else
        echo "PASS: $binary ($(objdump -d "$binary" | grep -c "lock xadd") lock xadd, none added to itself)"
    fi
done
exit $status
