#!/usr/bin/env bash
# The main job: installs what is missing, builds the `troupe` tool, and trains the Fashion-MNIST
# classifier on a local cluster of 1 ps + 2 workers (processes on loopback), printing the test
# accuracy at the end. Checkpoints go to train_logs/: run it again to resume (or, once done, to
# evaluate again). Extra arguments go to `troupe train` (e.g. --epochs=5).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh troupe
exec "${BUILD_DIR:-build}/apps/troupe" launch --ps=1 --workers=2 --max_restarts=3 -- troupe train "$@"
