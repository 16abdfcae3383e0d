#!/usr/bin/env bash
# Builds the libFuzzer API fuzzer with clang-14 (libkupl of the same build instrumented, with
# AddressSanitizer+UBSan) and runs it for SECONDS (default 60). New inputs go to a work corpus in
# the build folder; the seeds in tests/fuzz/corpus are only read. A crash leaves crash-* in
# $FUZZ_BUILD/findings and makes the script fail.
#   tests/fuzz/run_fuzz.sh 120
#   FUZZ_JOBS=2 tests/fuzz/run_fuzz.sh 600          # two fuzzing processes
#   FUZZ_SEED=1 tests/fuzz/run_fuzz.sh 60           # the same random choices every run (CI)
set -euo pipefail
seconds=${1:-60}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
jobs=${FUZZ_JOBS:-1}

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 "${launcher[@]}" \
  -DKUPL_BUILD_FUZZERS=ON -DKUPL_SANITIZER=address -DKUPL_BUILD_TESTS=OFF -DKUPL_BUILD_BENCHMARKS=OFF \
  -DKUPL_BUILD_EXAMPLES=OFF -DKUPL_BUILD_OMP_PLUGIN=OFF -DKUPL_BUILD_MPI_HOOKS=OFF >/dev/null
cmake --build "$build" -j"${KUPL_CI_JOBS:-2}" --target kupl_api_fuzzer kupl_api_fuzz_replay

mkdir -p "$build/fuzz-corpus" "$build/findings"
# detect_leaks=0: the runtime is never freed (late calls at exit must find it) and libFuzzer's
# leak check per input cannot tell that from a leak. -timeout: a hang is a finding too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# FUZZ_SEED fixes libFuzzer's random choices (CI uses one, so two runs of a commit explore alike).
seed_args=()
[ -z "${FUZZ_SEED:-}" ] || seed_args=(-seed="$FUZZ_SEED")
args=("${seed_args[@]}" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 -max_len=512 -print_final_stats=1
      -artifact_prefix="$build/findings/" "$build/fuzz-corpus" "$here/corpus")
if [ "$jobs" -gt 1 ]; then
  args=(-jobs="$jobs" -workers="$jobs" "${args[@]}")
fi
cd "$build"
"$build/tests/fuzz/kupl_api_fuzzer" "${args[@]}"
