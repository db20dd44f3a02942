#!/usr/bin/env bash
# The test suite under sanitizers (not part of CI: 3-10x slower).
#
#   scripts/sanitize.sh            # AddressSanitizer (with LeakSanitizer) and UBSan, every test
#   scripts/sanitize.sh thread     # ThreadSanitizer, the transport and runtime tests (actors)
#
# Builds into ${BUILD_DIR:-build-asan} (build-tsan for thread) with -DTROUPE_SANITIZE=...; every
# report is fatal. More arguments go to CTest. ThreadSanitizer sees only instrumented code: the
# synchronisation inside Debian's CAF is invisible to it, so scripts/tsan.supp names the
# hand-offs through CAF's mailboxes it cannot see (each with the reason).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=address
if [ "${1:-}" = thread ] || [ "${1:-}" = address ]; then
  mode=$1
  shift
fi
scripts/install-deps.sh
if [ "$mode" = thread ]; then
  build_dir=${BUILD_DIR:-build-tsan}
  sanitize=thread
  targets=(test_actors)
  tests=(-R '^actors$')
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp}
else
  build_dir=${BUILD_DIR:-build-asan}
  sanitize=${SANITIZE:-address,undefined}
  targets=()
  tests=()
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
fi
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTROUPE_SANITIZE="$sanitize" >/dev/null
ninja -C "$build_dir" -j"${JOBS:-2}" "${targets[@]}"
cd "$build_dir"
ctest --output-on-failure -j"${JOBS:-2}" --timeout 1800 "${tests[@]}" "$@"
