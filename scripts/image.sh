#!/usr/bin/env bash
# Builds the troupe container image offline: the `troupe` binary with the shared libraries it
# loads (its ldd closure), glibc's name-service modules for files and DNS, and the Fashion-MNIST
# files, in a root file system assembled here and built FROM scratch (deploy/image/Containerfile)
# with podman: nothing is pulled from a registry. Prints the image's name.
#
# With --python, the image also holds Debian's Python 3 (the interpreter and its standard
# library), numpy, the troupe module (`import troupe as tf`) and, in /app, the Python programs
# of examples/python or of the folder --app names, so that `troupe k8s ... -- python3
# /app/trainer.py` runs a user's TensorFlow 1.x program in the pods (docs/deploy.md).
#
#   scripts/image.sh                             # troupe:<version>
#   scripts/image.sh my/troupe:dev               # another name
#   scripts/image.sh --python                    # troupe-python:<version>, examples in /app
#   scripts/image.sh --python --app=DIR [NAME]   # DIR's files in /app instead
set -euo pipefail
python=false app= image=
for argument in "$@"; do
  case $argument in
    --python) python=true ;;
    --app=*)
      app=${argument#--app=}  # relative to where the script is run from
      [ -d "$app" ] || { echo "image.sh: --app=$app is not a folder" >&2; exit 2; }
      app=$(realpath "$app")
      ;;
    -*) echo "image.sh: unknown option '$argument' (expected --python, --app=DIR)" >&2; exit 2 ;;
    *) image=$argument ;;
  esac
done
if [ -n "$app" ] && ! $python; then
  echo "image.sh: --app=$app needs --python (the image without Python runs no program of it)" >&2
  exit 2
fi
cd "$(dirname "$0")/.."
app=${app:-examples/python}
scripts/install-deps.sh podman buildah runc >&2
export CONTAINERS_CONF=$PWD/deploy/image/containers.conf
if $python; then scripts/build.sh troupe troupe_python >&2; else scripts/build.sh troupe >&2; fi
build_dir=${BUILD_DIR:-build}
troupe=$build_dir/apps/troupe
version=$("$troupe" version | awk '{print $2}')
if $python; then image=${image:-troupe-python:$version}; else image=${image:-troupe:$version}; fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
copy() {  # a file of the host, at the same path in the image (symbolic links followed)
  mkdir -p "$root$(dirname "$1")"
  cp -L "$1" "$root$1"
}
copy_with_libraries() {  # an executable or shared object at its path, and every library it loads
  copy "$1"
  for library in $(ldd "$1" | grep -o '/[^ ]*'); do copy "$library"; done
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
if $python; then
  # Debian's interpreter and standard library (less its tests and the GUI and packaging tools
  # no task uses), numpy from dist-packages, every extension module with the libraries it
  # loads, the troupe module built for this interpreter, and the programs in /app.
  python3=$(readlink -f /usr/bin/python3)
  copy_with_libraries "$python3"
  ln -s "$(basename "$python3")" "$root/usr/bin/python3"
  stdlib=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')
  numpy=$(/usr/bin/python3 -c 'import numpy, os; print(os.path.dirname(numpy.__file__))')
  mkdir -p "$root$stdlib" "$root$numpy" "$root/usr/lib/python3/dist-packages/troupe" "$root/app"
  tar -C "$stdlib" --exclude=test --exclude=tests --exclude=idlelib --exclude=tkinter \
    --exclude=turtledemo --exclude=ensurepip --exclude=lib2to3 -cf - . | tar -C "$root$stdlib" -xf -
  tar -C "$numpy" --exclude=tests -cf - . | tar -C "$root$numpy" -xf -
  cp -R "$build_dir/python/troupe/." "$root/usr/lib/python3/dist-packages/troupe/"
  while IFS= read -r -d '' module; do
    for library in $(ldd "$module" | grep -o '/[^ ]*'); do copy "$library"; done
  done < <(find "$root$stdlib" "$root$numpy" "$root/usr/lib/python3/dist-packages/troupe" \
    -name '*.so' -print0)
  cp -R "$app/." "$root/app/"
fi

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
if $python; then
  # Its Python must import troupe and numpy, and run a program of /app.
  imported=$(podman run --rm "$image" python3 -c \
    'import numpy, troupe as tf; print("troupe", tf.__version__, "numpy", numpy.__version__)')
  grep -q "^troupe $version numpy" <<<"$imported" || {
    echo "image.sh: the image's python3 did not import troupe $version: $imported" >&2
    exit 1
  }
  echo "image.sh: $imported" >&2
fi
echo "$image"
