#!/bin/sh
# vendor_api_imports.sh <kupl.h> <library> [<own library>...]: passes if every kupl symbol the
# library imports is declared in that kupl.h (the vendor API), i.e. it would also load over vendor
# KUPL. Fails on any kuplx_ extension or other libkupl symbol. Symbols that one of the <own
# library> arguments defines (libkupl_trace, shipped with the plugin and the interposer and
# independent of libkupl) are not libkupl's and are left out.
set -eu
header=$1
library=$2
shift 2
own=""
for other in "$@"; do
    own="$own $(nm -D --defined-only "$other" | awk '{print $NF}' | tr '\n' ' ')"
done
imports=$(nm -D --undefined-only "$library" | awk '{print $NF}' | grep -E '^_?_?kupl' |
    while read -r symbol; do
        case " $own " in *" $symbol "*) ;; *) echo "$symbol" ;; esac
    done || true)
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
