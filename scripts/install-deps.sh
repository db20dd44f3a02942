#!/usr/bin/env bash
# Installs the Debian 12 packages troupe builds and runs with (sudo where not root).
# Does nothing when they are all present, so it is cheap to call before every build. Arguments
# name more packages to install (scripts/bench.sh: the peers it measures against); --cuda adds
# Debian's CUDA toolkit (nvidia-cuda-toolkit 11.8, about 1.6 GB, from the non-free component,
# which it enables) for the GPU device (docs/gpu.md).
set -euo pipefail

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
extra=()
for arg in "$@"; do
  if [ "$arg" = "--cuda" ]; then
    if ! grep -rqs "non-free" /etc/apt/sources.list /etc/apt/sources.list.d/; then
      echo "troupe: enabling Debian's non-free component for nvidia-cuda-toolkit" >&2
      echo "deb http://deb.debian.org/debian bookworm main contrib non-free" |
        $sudo tee /etc/apt/sources.list.d/troupe-non-free.list >/dev/null
    fi
    extra+=(nvidia-cuda-toolkit)
  else
    extra+=("$arg")
  fi
done
set -- ${extra[@]+"${extra[@]}"}

packages=(
  build-essential cmake ninja-build pkg-config
  libcaf-dev capnproto libcapnp-dev libeigen3-dev libfmt-dev libspdlog-dev nlohmann-json3-dev
  libboost-test-dev zlib1g-dev libssl-dev
  libopenblas-pthread-dev  # MatMul, threaded by OpenBLAS's pool (devices/cpu/blas_gemm.hpp)
  libjemalloc-dev  # the programs' allocator (CMakeLists.txt)
  openssl  # tests: certificates made with the commands docs/security.md shows
  python3-numpy dataset-fashion-mnist  # tests: npz files checked with numpy; the training data
  python3-dev pybind11-dev python3-pytest  # the Python module (python/) and its tests
  protobuf-compiler python3-protobuf  # tests: TensorFlow file formats decoded by protobuf itself
  "$@"
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "troupe: installing ${missing[*]}" >&2
$sudo apt-get update -q
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
