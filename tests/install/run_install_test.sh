#!/usr/bin/env bash
# The installed package, used the way a user on a fresh shell would: install the build tree to a
# new prefix, then, with a clean environment (env -i: no LD_LIBRARY_PATH, no CMAKE_PREFIX_PATH),
#   - run <prefix>/bin/kupl-info;
#   - build and run a KUPL program with find_package(kupl), and with pkg-config;
#   - build and run the installed examples (<prefix>/share/kupl/examples, a project of their own);
#   - build an OpenMP offload program with find_package(kupl-omp) and run it with kupl-omp-run;
#   - run a 2-rank MPI program with mpirun -x LD_PRELOAD=<prefix>/lib/libkupl_mpi.so.
# usage: run_install_test.sh BUILD_DIR WORK_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
work=$2
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix

# A clean shell: only the system PATH, and the root permission Open MPI asks for when root.
clean_env=(env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$work")
if [ "$(id -u)" -eq 0 ]; then
    clean_env+=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
fi
clean() { "${clean_env[@]}" "$@"; }
step() { printf '\n== %s\n' "$*"; }
fail() {
    echo "FAIL: $*"
    exit 1
}

step "install to $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
libkupl=$(find "$prefix" -name 'libkupl.so.0' | head -n 1)
[ -n "$libkupl" ] || fail "no libkupl.so.0 under $prefix"
libdir=$(dirname "$libkupl")
echo "libdir: $libdir"

step "installed binaries carry \$ORIGIN run paths, nothing from the build tree"
for f in "$prefix"/bin/kupl-info "$libdir"/libkupl_mpi.so "$libdir"/kupl-omp/*.so; do
    [ -e "$f" ] || continue
    runpath=$(readelf -d "$f" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p; s/.*(RPATH).*\[\(.*\)\]/\1/p')
    echo "$(basename "$f"): ${runpath:-<none>}"
    case "$runpath" in
    *'$ORIGIN'*) ;;
    *) fail "$f has no \$ORIGIN run path" ;;
    esac
    case "$runpath" in
    *"$build"*) fail "$f still points into the build tree" ;;
    esac
done

step "kupl-info"
clean "$prefix/bin/kupl-info" >"$work/kupl-info.txt" || fail "kupl-info failed: $(cat "$work/kupl-info.txt")"
head -n 3 "$work/kupl-info.txt"

step "a KUPL program with find_package(kupl)"
clean cmake -S "$here/../core/install_consumer" -B "$work/consumer-cmake" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
clean cmake --build "$work/consumer-cmake" >/dev/null
clean "$work/consumer-cmake/consumer"

step "a KUPL program with pkg-config (PKG_CONFIG_PATH=<prefix>/lib/pkgconfig)"
flags=$(clean PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs kupl)
echo "pkg-config --cflags --libs kupl: $flags"
# shellcheck disable=SC2086 # the flags are words
clean cc -o "$work/consumer-pkgconfig" "$here/../core/install_consumer/main.c" $flags
clean "$work/consumer-pkgconfig"

step "the installed examples, built as their own project"
examples=$prefix/share/kupl/examples
[ -f "$examples/CMakeLists.txt" ] || fail "no examples in $examples"
clean cmake -S "$examples" -B "$work/examples" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
clean cmake --build "$work/examples" >/dev/null
clean "$work/examples/seed_overlap" 16
clean "$work/examples/halo_column"

if [ -x "$prefix/bin/kupl-omp-run" ]; then
    step "an OpenMP offload program with find_package(kupl-omp), run by the installed kupl-omp-run"
    clean cmake -S "$here/omp_project" -B "$work/omp" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
    clean cmake --build "$work/omp" >/dev/null
    launcher=$(cat "$work/omp/launcher.txt")
    [ "$launcher" = "$prefix/bin/kupl-omp-run" ] || fail "find_package(kupl-omp) gave KUPL_OMP_RUN=$launcher"
    clean OMP_TARGET_OFFLOAD=MANDATORY LIBOMPTARGET_INFO=-1 "$launcher" "$work/omp/bin/offload_saxpy" \
        >"$work/omp.log" 2>&1 || fail "offload program failed: $(tail -n 20 "$work/omp.log")"
    grep -m 1 '^kupl-omp device' "$work/omp.log" || fail "the KUPL plugin did not serve the program"
    grep 'offload_saxpy:' "$work/omp.log"
else
    echo "(no kupl-omp-run installed: OpenMP step skipped)"
fi

if [ -f "$libdir/libkupl_mpi.so" ]; then
    step "a 2-rank MPI program: mpirun -x LD_PRELOAD=$libdir/libkupl_mpi.so -x KUPL_MPI_STATS=1 -np 2"
    clean mpicc -O2 -o "$work/mpi_column" "$here/mpi_column.c"
    clean mpirun -x LD_PRELOAD="$libdir/libkupl_mpi.so" -x KUPL_MPI_STATS=1 -np 2 "$work/mpi_column" \
        >"$work/mpi.log" 2>&1 || fail "mpirun failed: $(tail -n 20 "$work/mpi.log")"
    cat "$work/mpi.log"
    # Both ranks took the send and the receive of the column through KUPL.
    accelerated=$(grep -cE 'accelerated:.* send=[1-9][0-9]* .* recv=[1-9]' "$work/mpi.log" || true)
    [ "$accelerated" -eq 2 ] || fail "the stats do not show both ranks accelerated"
else
    echo "(no libkupl_mpi.so installed: MPI step skipped)"
fi

printf '\ninstall test: every step passed\n'
