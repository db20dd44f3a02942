#!/usr/bin/env bash
# Builds the troupe container image offline: the `troupe` binary with the shared libraries it
# loads (its ldd closure), glibc's name-service modules for files and DNS, and the Fashion-MNIST
# files, in a root file system assembled here and built FROM scratch (deploy/image/Containerfile)
# with podman: nothing is pulled from a registry. Prints the image's name.
#
#   scripts/image.sh                 # troupe:<version>
#   scripts/image.sh my/troupe:dev   # another name
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh podman buildah runc >&2
export CONTAINERS_CONF=$PWD/deploy/image/containers.conf
scripts/build.sh troupe >&2
build_dir=${BUILD_DIR:-build}
troupe=$build_dir/apps/troupe
version=$("$troupe" version | awk '{print $2}')
image=${1:-troupe:$version}

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
copy() {  # a file of the host, at the same path in the image (symbolic links followed)
  mkdir -p "$root$(dirname "$1")"
  cp -L "$1" "$root$1"
}
install -D -m 755 "$troupe" "$root/usr/bin/troupe"
for library in $(ldd "$troupe" | grep -o '/[^ ]*'); do copy "$library"; done
# Name resolution: glibc loads these at run time, so ldd does not list them.
for library in libnss_files.so.2 libnss_dns.so.2 libresolv.so.2; do
  copy "$(dirname "$(ldd "$troupe" | grep -o '/[^ ]*libc\.so\.6')")/$library"
done
mkdir -p "$root/etc" "$root/tmp" "$root/train_logs"
chmod 1777 "$root/tmp"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$root/etc/nsswitch.conf"
printf 'root:x:0:0:root:/:/usr/bin/troupe\n' >"$root/etc/passwd"
printf 'root:x:0:\n' >"$root/etc/group"
for file in /usr/share/datasets/fashion-mnist/*.gz; do copy "$file"; done

podman build --quiet --file deploy/image/Containerfile --tag "$image" "$root" >&2
# The image must run: a version and the hello example, inside it.
podman run --rm "$image" troupe version >&2
hello=$(podman run --rm "$image" troupe hello)
grep -q "Hello, distributed troupe!" <<<"$hello"
# Its tasks take the cores a container is given (devices/device.hpp): 1 under --cpus=1.
cores=$(podman run --rm --cpus=1 "$image" troupe launch --insecure --ps=0 --workers=1 -- \
  troupe version)
grep -q "1 task on this host's 1 core:" <<<"$cores" || {
  echo "image.sh: under --cpus=1 the image's troupe did not see 1 core: $cores" >&2
  exit 1
}
echo "$image"
