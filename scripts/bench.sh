#!/usr/bin/env bash
# The benchmark suite (not part of CI): installs what it needs — the PyTorch peers it measures
# against, with OpenBLAS —, builds troupe_bench, runs the benchmarks and writes their results
# into docs/PERFORMANCE.md (raw samples: docs/performance-results.jsonl).
#
#   scripts/bench.sh                 # everything, about 10 minutes on 2 cores
#   scripts/bench.sh transfer latency   # some (their earlier results are replaced)
#   scripts/bench.sh --quick         # a smoke run: fewer sizes and samples
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh python3-torch libopenblas0-pthread
build_dir=${BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTROUPE_BENCH=ON >/dev/null
BUILD_DIR=$build_dir scripts/build.sh troupe troupe_bench troupe_python

quick=()
benchmarks=()
for arg in "$@"; do
  if [ "$arg" = "--quick" ]; then quick=(--quick); else benchmarks+=("$arg"); fi
done
[ ${#benchmarks[@]} -gt 0 ] || benchmarks=(transfer memory latency executor kernels training python scale simulation)

results=$(mktemp)
trap 'rm -f "$results"' EXIT
python=/usr/bin/python3  # Debian's, which has python3-torch
for bench in "${benchmarks[@]}"; do
  case "$bench" in kernels|python) ;; *)
    "$build_dir/bench/troupe_bench" "${quick[@]}" "$bench" | tee -a "$results" ;;
  esac
  case "$bench" in
    kernels)
      # Rounds of troupe and torch.mm in turn: this machine's speed drifts within a minute.
      for round in 1 2 3 4 5; do
        "$build_dir/bench/troupe_bench" "${quick[@]}" --rounds=5 kernels | tee -a "$results"
        "$python" bench/peers/torch_mm.py "${quick[@]}" --rounds=5 | tee -a "$results"
      done ;;
    training)
      steps=300 reps=3 epochs=15
      [ ${#quick[@]} -eq 0 ] || { steps=20; reps=1; epochs=1; }
      "$python" bench/peers/torch_single.py --steps=$steps --reps=$reps | tee -a "$results"
      # PyTorch's RPC agents log to stderr at every start and stop: shown only on failure.
      for peer in torch_ps torch_ddp; do
        log=$(mktemp)
        if ! "$python" bench/peers/$peer.py --steps=$steps --reps=$reps 2>"$log" | tee -a "$results"; then
          cat "$log" >&2
          exit 1
        fi
        rm -f "$log"
      done
      # The main job, and PyTorch training the same model on the same data.
      "$python" bench/main_job.py "$build_dir/apps/troupe" --epochs=$epochs --reps=$reps \
        | tee -a "$results"
      "$python" bench/peers/torch_fashion_mnist.py --epochs=$epochs --reps=$reps \
        | tee -a "$results" ;;
    python)
      # The seed's trainer.py on the Python module against troupe train, the same job.
      epochs=15 reps=3
      [ ${#quick[@]} -eq 0 ] || { epochs=1; reps=1; }
      "$python" bench/python_training.py "$build_dir/apps/troupe" "$build_dir/python" \
        --epochs=$epochs --reps=$reps | tee -a "$results" ;;
  esac
done
"$python" bench/report.py "$results" docs/performance-results.jsonl docs/PERFORMANCE.md
echo "troupe: results written to docs/PERFORMANCE.md"
