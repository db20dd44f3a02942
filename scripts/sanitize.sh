#!/usr/bin/env bash
# The test suite under AddressSanitizer (with LeakSanitizer) and UndefinedBehaviorSanitizer:
# builds into ${BUILD_DIR:-build-asan} with -DTROUPE_SANITIZE=${SANITIZE:-address,undefined}
# (any compiler; every error is fatal) and runs CTest there. Not part of CI: about 3x slower.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
build_dir=${BUILD_DIR:-build-asan}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTROUPE_SANITIZE="${SANITIZE:-address,undefined}" >/dev/null
ninja -C "$build_dir" -j"${JOBS:-2}"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
cd "$build_dir"
ctest --output-on-failure -j"${JOBS:-2}" --timeout 1800 "$@"
