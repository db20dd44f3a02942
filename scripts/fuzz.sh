#!/usr/bin/env bash
# Builds the fuzz targets (test/fuzz) with clang's libFuzzer, ASan and UBSan into
# ${BUILD_DIR:-build-fuzz} and runs each for ${FUZZ_SECONDS:-60} seconds, starting from the
# seed corpus in test/fuzz/corpus/<name> (new inputs go to the build directory, not the repo).
# Extra arguments name the targets to run (default: all). Exits non-zero if any target finds a
# crash, leak or undefined behaviour; the input is kept in <build dir>/artifacts/<name>/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
if ! command -v clang++ >/dev/null || ! compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
  echo "fuzz.sh: needs clang with libFuzzer (apt-get install clang libclang-rt-14-dev)" >&2
  exit 2
fi
build_dir=${BUILD_DIR:-build-fuzz}
seconds=${FUZZ_SECONDS:-60}
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DTROUPE_FUZZ=ON >/dev/null
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for source in test/fuzz/*_fuzz.cpp; do
    name=$(basename "$source" _fuzz.cpp)
    targets+=("$name")
  done
fi
ninja -C "$build_dir" -j"${JOBS:-2}" "${targets[@]/#/fuzz_}"
failed=()
for name in "${targets[@]}"; do
  corpus="$build_dir/corpus/$name"
  artifacts="$build_dir/artifacts/$name"
  mkdir -p "$corpus" "$artifacts"
  echo "fuzz.sh: $name for ${seconds}s" >&2
  if ! "$build_dir/test/fuzz/fuzz_$name" -max_total_time="$seconds" -rss_limit_mb=4096 \
      -timeout=10 -print_final_stats=1 -artifact_prefix="$artifacts/" \
      "$corpus" "test/fuzz/corpus/$name" 2>"$build_dir/fuzz_$name.log"; then
    failed+=("$name")
    tail -40 "$build_dir/fuzz_$name.log" >&2
  fi
  grep -E "^stat::number_of_executed_units|^stat::new_units_added" "$build_dir/fuzz_$name.log" \
    | sed "s/^/fuzz.sh: $name: /" >&2 || true
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: failures in: ${failed[*]} (inputs in $build_dir/artifacts/)" >&2
  exit 1
fi
echo "fuzz.sh: no failures in ${targets[*]}" >&2
