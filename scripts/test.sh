#!/usr/bin/env bash
# Builds capstan and runs every test through ctest: the release build (-O2 -g) runs all tiers,
# then an AddressSanitizer + UndefinedBehaviorSanitizer build runs the unit tests again, then a
# clang build of the libFuzzer targets runs each for a few seconds (tests/fuzz/README.md).
# Installs missing Debian packages first (scripts/setup.sh). Usage: scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

jobs=2
# ccache (CMakeLists.txt uses it when present) keys on absolute paths unless they lie under its
# base dir: with the clone as base dir, a clone elsewhere (CI's fresh one) hits the same cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAPSTAN_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAPSTAN_SANITIZE=ON -DCAPSTAN_WERROR=ON >/dev/null
cmake --build build-asan -j"$jobs" --target unit_tests
# CAF's own headers trip one UBSan check at every spawn (notes/caf-capnp-brief.md, section 6);
# every other finding stays fatal.
export UBSAN_OPTIONS="suppressions=$PWD/tests/ubsan.supp:halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS="detect_leaks=1"
ctest --test-dir build-asan --output-on-failure -j"$jobs" -L unit

cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCAPSTAN_FUZZ=ON -DCAPSTAN_WERROR=ON \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >/dev/null
cmake --build build-fuzz -j"$jobs"
ctest --test-dir build-fuzz --output-on-failure -j"$jobs" -L fuzz
