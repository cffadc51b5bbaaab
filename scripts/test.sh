#!/usr/bin/env bash
# Builds capstan and runs every test through ctest, in two builds that never compile a test tier
# twice (the second compiles while the first one's tests run):
# - build/: the release build (gcc, -O2 -g1), its cluster and system tiers;
# - build-check/: clang with AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's
#   coverage instrumentation (-O1 -g1), its unit tier, then each libFuzzer target for a few
#   seconds (tests/fuzz/README.md).
# Installs missing Debian packages first (scripts/setup.sh). Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

jobs=2
# ccache (CMakeLists.txt uses it when present) keys on absolute paths unless they lie under its
# base dir: with the clone as base dir, a clone elsewhere (CI's fresh one) hits the same cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
# Linking the test executables with gold instead of ld.bfd.
link="-fuse-ld=gold"

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAPSTAN_WERROR=ON \
  -DCAPSTAN_OPT_FLAGS="-O2 -g1" -DCAPSTAN_TEST_TIERS="cluster;system" \
  -DCMAKE_EXE_LINKER_FLAGS="$link" >/dev/null
cmake -S . -B build-check -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAPSTAN_FUZZ=ON -DCAPSTAN_WERROR=ON \
  -DCAPSTAN_OPT_FLAGS="-O1 -g1" -DCAPSTAN_TEST_TIERS="unit" -DCMAKE_EXE_LINKER_FLAGS="$link" \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
cmake --build build -j"$jobs"

# The release tiers spend most of their time waiting (timeouts, faults, child processes): about a
# fifth of the two cores. The sanitizer build runs beside them at the lowest priority, so it takes
# only the CPU they leave; its output is shown once it ends. In a session of its own, so that a
# failing test run stops all of it (make and its compilers too), not only cmake.
check_log=build-check/build.log
setsid nice -n 19 cmake --build build-check -j"$jobs" --target unit_tests fuzz_targets >"$check_log" 2>&1 &
check_build=$!
trap 'kill -- -"$check_build" 2>/dev/null || true' EXIT
ctest --test-dir build --output-on-failure -j"$jobs"
check_rc=0
wait "$check_build" || check_rc=$?
trap - EXIT
cat "$check_log"
((check_rc == 0)) || { echo "test: the sanitizer build failed (exit $check_rc)" >&2; exit "$check_rc"; }

# CAF's own headers trip one UBSan check at every spawn (docs/architecture.md, "Sanitizers");
# every other finding stays fatal.
export UBSAN_OPTIONS="suppressions=$PWD/tests/ubsan.supp:halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS="detect_leaks=1"
ctest --test-dir build-check --output-on-failure -j"$jobs" -L "unit|fuzz"
