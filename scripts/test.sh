#!/usr/bin/env bash
# The test command: installs what is missing, builds everything, runs every test (CTest),
# installs troupe into a temporary prefix and builds and runs examples/ against it, then runs
# the Kubernetes manifests on podman (scripts/k8s-e2e.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# The Kubernetes manifest checker's packages (npm, pinned by package-lock.json); Debian's
# nodejs and npm where the machine has no npm of its own.
command -v npm >/dev/null || scripts/install-deps.sh nodejs npm
npm ci --prefix deploy/k8s/tools --no-audit --no-fund --loglevel=error
scripts/build.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j"${JOBS:-2}" --timeout 900)
scripts/examples.sh
# The Kubernetes manifests played on podman, a ps killed and recovered (docs/deploy.md).
scripts/k8s-e2e.sh --if-supported
