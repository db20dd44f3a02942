#!/usr/bin/env bash
# CTest: `troupe k8s`'s manifests, in each variant, pass deploy/k8s/tools (the official
# schemas, and no unknown field); and the check refuses a manifest with a misspelt field, so
# that it can fail. Exits 77 (skipped) where the checker's npm packages are not installed
# (scripts/test.sh installs them: npm ci in deploy/k8s/tools).
#   check_manifests.sh TROUPE_CLI
set -euo pipefail
troupe=$1
here=$(cd "$(dirname "$0")" && pwd)
validate=$here/../../../deploy/k8s/tools
if [ ! -d "$validate/node_modules" ] || ! command -v node >/dev/null; then
  echo "skipped: the manifest checker is not installed (run: npm ci --prefix deploy/k8s/tools)"
  exit 77
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {  # name, then troupe k8s arguments
  local name=$1
  shift
  "$troupe" k8s "$@" >"$out/$name.yaml"
  echo "== $name"
  node "$validate/validate.mjs" "$out/$name.yaml"
}
run default --name=fashion --image=registry.example.com/troupe:0.1 -- troupe train \
  --checkpoint_dir=/train_logs
run credentials --name=fashion --image=troupe:0.1 --make_credentials --ps=2 --workers=3 -- \
  troupe train --checkpoint_dir=/train_logs --sync_replicas
run insecure --name=job-7 --namespace=training --image=troupe:0.1 --insecure --ps=0 \
  --workers=1 --storage=500Mi --storage_class=nfs-client --port=3333 -- troupe node
echo "== a misspelt field is refused"
sed 's/podManagementPolicy/podManagmentPolicy/' "$out/default.yaml" >"$out/misspelt.yaml"
if node "$validate/validate.mjs" "$out/misspelt.yaml" >"$out/misspelt.log"; then
  cat "$out/misspelt.log"
  echo "FAILED: the checker accepted podManagmentPolicy"
  exit 1
fi
grep -q "podManagmentPolicy: unknown field" "$out/misspelt.log"
echo "refused, as it must be"
