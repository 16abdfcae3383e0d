#!/bin/sh
# Runs a command-line tool and checks it behaves like an ordinary tool: exit status RC, STREAM
# (stdout or stderr) matching the extended regex PATTERN on some line, the other stream empty.
# usage: check_tool.sh RC stdout|stderr PATTERN COMMAND [ARGS...]
set -u
want_rc=$1 stream=$2 pattern=$3
shift 3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$@" >"$dir/stdout" 2>"$dir/stderr"
rc=$?
echo "--- stdout:"
cat "$dir/stdout"
echo "--- stderr:"
cat "$dir/stderr"
other=stderr
[ "$stream" = stderr ] && other=stdout
if [ "$rc" -ne "$want_rc" ]; then
    echo "FAIL: exit status $rc, expected $want_rc"
    exit 1
fi
if ! grep -Eq -- "$pattern" "$dir/$stream"; then
    echo "FAIL: $stream does not match /$pattern/"
    exit 1
fi
if [ -s "$dir/$other" ]; then
    echo "FAIL: $other is not empty"
    exit 1
fi
echo "PASS"
