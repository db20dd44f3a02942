#!/usr/bin/env bash
# The test command: installs what is missing, builds everything, runs every test (CTest), then
# installs troupe into a temporary prefix and builds and runs examples/ against it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
(cd "${BUILD_DIR:-build}" && ctest --output-on-failure -j"${JOBS:-2}" --timeout 900)
scripts/examples.sh
