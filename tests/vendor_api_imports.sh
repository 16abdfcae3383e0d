#!/bin/sh
# vendor_api_imports.sh <kupl.h> <library>: passes if every kupl symbol the library imports
# is declared in that kupl.h (the vendor API), i.e. it would also load over vendor KUPL.
# Fails on any kuplx_ extension or other libkupl symbol.
set -eu
header=$1
library=$2
imports=$(nm -D --undefined-only "$library" | awk '{print $NF}' | grep -E '^_?_?kupl' || true)
[ -n "$imports" ] || { echo "FAIL: $library imports nothing from libkupl"; exit 1; }
status=0
for symbol in $imports; do
    if ! grep -Eq "[ *]${symbol}\(" "$header"; then
        echo "FAIL: $library imports $symbol, which $header does not declare"
        status=1
    fi
done
[ $status -eq 0 ] && echo "PASS: $(echo "$imports" | wc -l) kupl imports, all in $header"
exit $status
