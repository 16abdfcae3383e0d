#!/bin/sh
# Runs a command-line tool and checks it behaves like an ordinary tool: exit status RC, a line of
# stdout matching the extended regex OUT, and every line of stderr matching ERR (at least one).
# An empty OUT or ERR means that stream must be empty.
# usage: check_tool.sh RC OUT ERR COMMAND [ARGS...]
set -u
want_rc=$1 out=$2 err=$3
shift 3
# grep exits 2 on a malformed pattern; without this check an inverted match (grep -v) would
# then read as "every line matches" and the test could not fail.
for pattern in "$out" "$err"; do
    if [ -n "$pattern" ]; then
        echo | grep -Eq -- "$pattern"
        if [ $? -eq 2 ]; then
            echo "FAIL: malformed regular expression /$pattern/"
            exit 1
        fi
    fi
done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$@" >"$dir/stdout" 2>"$dir/stderr"
rc=$?
echo "--- stdout:"
cat "$dir/stdout"
echo "--- stderr:"
cat "$dir/stderr"
if [ "$rc" -ne "$want_rc" ]; then
    echo "FAIL: exit status $rc, expected $want_rc"
    exit 1
fi
if [ -z "$out" ] && [ -s "$dir/stdout" ]; then
    echo "FAIL: stdout is not empty"
    exit 1
fi
if [ -n "$out" ] && ! grep -Eq -- "$out" "$dir/stdout"; then
    echo "FAIL: no line of stdout matches /$out/"
    exit 1
fi
if [ -z "$err" ] && [ -s "$dir/stderr" ]; then
    echo "FAIL: stderr is not empty"
    exit 1
fi
if [ -n "$err" ] && { [ ! -s "$dir/stderr" ] || grep -Evq -- "$err" "$dir/stderr"; }; then
    echo "FAIL: stderr is not only lines matching /$err/"
    exit 1
fi
echo "PASS"
