#!/usr/bin/env bash
# Installs the built troupe into a temporary prefix and builds and runs each project in
# examples/ against it, as a user's own project would (find_package(troupe)); then compiles
# and runs a program from troupe.pc's flags alone, and the Python hello example on the
# installed Python package. Part of the test command (scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${BUILD_DIR:-build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

cmake --install "$build_dir" --prefix "$prefix" >/dev/null
for example in examples/*/; do
  name=$(basename "$example")
  [ -f "$example/CMakeLists.txt" ] || continue  # examples/python: below
  echo "== examples/$name against the installed package"
  cmake -S "$example" -B "$work/$name" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
  cmake --build "$work/$name" -j"${JOBS:-2}"
  ctest --test-dir "$work/$name" --output-on-failure --timeout 300
done

echo "== a program built from troupe.pc"
cat > "$work/pc_program.cpp" <<'CPP'
#include <iostream>
#include <troupe/actors/server.hpp>
int main() {
  auto server = troupe::Server::create_local_server();
  if (!server.ok()) {
    std::cerr << server.status().to_string() << "\n";
    return 1;
  }
  std::cout << "serving at " << (*server)->target() << "\n";
  (*server)->stop();
}
CPP
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046  # pkg-config's output is a list of flags
g++ -O1 -o "$work/pc_program" "$work/pc_program.cpp" $(pkg-config --cflags --libs troupe)
"$work/pc_program" | grep -q "serving at inproc://"
if [ -f "$build_dir/python/troupe/__init__.py" ]; then
  echo "== examples/python/hello.py against the installed Python package"
  module=$(find "$prefix" -name '_troupe*.so' -print -quit)
  [ -n "$module" ] || { echo "examples: the Python module was not installed" >&2; exit 1; }
  site=$(dirname "$(dirname "$module")")
  PYTHONPATH=$site /usr/bin/python3 examples/python/hello.py |
    grep -qx "b'Hello, distributed TensorFlow!'"
fi
echo "examples: ok"
