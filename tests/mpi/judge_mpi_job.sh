# Sourced by the MPI test runners (run_mpi_test.sh, run_two_nodes_test.sh): the verdict on one
# mpirun job, from its exit status and its output. POSIX sh.
# judge_mpi_job MODE RC LOG EXPECT: prints LOG, then fails (exit 1) if mpirun failed; in kupl mode
# if some pattern of EXPECT (several separated by ';;') matches no line of LOG, which would mean
# the calls did not go through the interposer, or some pattern written !PATTERN matches a line
# (something counted that must not be, on any rank); in plain mode if the interposer was loaded.
judge_mpi_job() {
    cat "$3"
    if [ "$2" -ne 0 ]; then
        echo "FAIL: mpirun exited with $2"
        exit 1
    fi
    if [ "$1" = kupl ]; then
        missing=$(printf '%s\n' "$4" | sed 's/;;/\n/g' | while IFS= read -r pattern; do
            case $pattern in
            !*) ! grep -Eq -- "${pattern#!}" "$3" || printf 'found /%s/ ' "${pattern#!}" ;;
            *) grep -Eq -- "$pattern" "$3" || printf 'missing /%s/ ' "$pattern" ;;
            esac
        done)
        if [ -n "$missing" ]; then
            echo "FAIL: the statistics are not as expected: ${missing}(the interposer did not take the calls as it should)"
            exit 1
        fi
    elif grep -q '^\[kupl_mpi\]' "$3"; then
        echo "FAIL: the interposer was loaded in plain mode"
        exit 1
    fi
}
