#!/usr/bin/env bash
# The GPU check (docs/gpu.md): the GPU device's tests and the MLP against PyTorch CUDA, on a
# machine with an NVIDIA GPU, in one run that fits well inside 10 minutes.
#
#   scripts/gpu-check.sh bundle DIR   on the build machine (Debian 12 with troupe's packages and a
#                                     CUDA toolkit): builds with CUDA and puts the GPU test
#                                     program, the benchmark and the Debian libraries they load
#                                     into DIR (bin/, lib/) and DIR.tar.xz, so the GPU machine
#                                     needs no Debian packages and no network.
#   scripts/gpu-check.sh run DIR      (or DIR.tar.xz) on the GPU machine (its own CUDA runtime, of the major
#                                     version the bundle was built with, cuBLAS, and Python with
#                                     PyTorch): runs the tests, profiles the CNN's step, then runs
#                                     each benchmark case on troupe and on PyTorch, and prints one
#                                     table. CASES="cnn 128 0 sgd,..." (model batch hidden
#                                     optimizer) picks cases, PROFILE=0 skips the profile,
#                                     TORCH=0 skips the PyTorch peers (a troupe-only run).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
dir=${2:-}
if [ -z "$mode" ] || [ -z "$dir" ]; then
  echo "usage: scripts/gpu-check.sh bundle|run DIR" >&2
  exit 2
fi

case "$mode" in
bundle)
  build=${BUILD_DIR:-build}
  cmake -S . -B "$build" -G Ninja -DTROUPE_CUDA=ON -DTROUPE_BENCH=ON >/dev/null
  cmake --build "$build" -j"${JOBS:-2}" --target test_devices troupe_gpu_bench
  rm -rf "$dir" && mkdir -p "$dir/bin" "$dir/lib"
  for program in "$build/test/test_devices" "$build/bench/troupe_gpu_bench"; do
    strip -o "$dir/bin/$(basename "$program")" "$program"
  done
  # The libraries the programs load, but the C library's own (the GPU machine's are newer) and
  # CUDA's (the GPU machine's toolkit has them, matched to its driver).
  ldd "$dir"/bin/* | awk '/=> \// { print $3 }' | sort -u | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*) ;;
      libcuda.so.*|libcudart.so.*|libcublas.so.*|libcublasLt.so.*) ;;
      *) cp -L "$lib" "$dir/lib/" ;;
    esac
  done
  cp bench/peers/torch_mlp_cuda.py "$dir/"
  # One compressed file to carry (OpenBLAS alone is ~36 MB unpacked).
  tar -C "$(dirname "$dir")" -cJf "$dir.tar.xz" "$(basename "$dir")"
  du -sh "$dir" "$dir.tar.xz"
  ;;
run)
  if [ -f "$dir" ]; then  # the bundle's .tar.xz
    unpacked=$(mktemp -d)
    tar -C "$unpacked" -xJf "$dir"
    dir="$unpacked/$(ls -A "$unpacked" | head -1)"
  fi
  dir=$(cd "$dir" && pwd)
  nvidia-smi -L || { echo "gpu-check: no NVIDIA GPU here" >&2; exit 1; }
  # CUDA's libraries where the machine's toolkit or PyTorch's wheels keep them.
  cuda_libs=$(python3 - <<'PY'
import glob, os
dirs = ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"]
try:
    import nvidia
    for root in nvidia.__path__:
        dirs += glob.glob(os.path.join(root, "*", "lib"))
except ImportError:
    pass
print(":".join(d for d in dirs if os.path.isdir(d)))
PY
)
  export LD_LIBRARY_PATH="$dir/lib:$cuda_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  status=0
  echo "== GPU tests"
  "$dir/bin/test_devices" --run_test=gpu_kernels:gpu_registry --log_level=test_suite \
    --report_level=short || status=1
  if [ "${PROFILE:-1}" != 0 ]; then
    echo "== CNN: where the time goes (troupe: TROUPE_GPU_PROFILE=1; PyTorch eager: torch.profiler)"
    TROUPE_GPU_PROFILE=1 timeout 120 "$dir/bin/troupe_gpu_bench" --device=gpu --model=cnn \
      --steps=100 --runs=1 || status=1
    timeout 120 python3 "$dir/torch_mlp_cuda.py" --model=cnn --steps=100 --runs=1 --profile \
      || status=1
    echo "== CNN: troupe with cuDNN's heuristic algorithms (TF_CUDNN_USE_AUTOTUNE=0)"
    TF_CUDNN_USE_AUTOTUNE=0 timeout 120 "$dir/bin/troupe_gpu_bench" --device=gpu --model=cnn \
      --steps="${STEPS:-200}" --runs="${RUNS:-5}" || status=1
    echo "== CNN: troupe with cuDNN's legacy API (TROUPE_CUDNN_API=legacy)"
    TROUPE_CUDNN_API=legacy timeout 120 "$dir/bin/troupe_gpu_bench" --device=gpu --model=cnn \
      --steps="${STEPS:-200}" --runs="${RUNS:-5}" || status=1
  fi
  echo "== The MLP and the CNN: troupe (Session, one worker) against PyTorch CUDA"
  results=$(mktemp)
  # A case: model batch hidden optimizer [towers]; PyTorch runs each model and batch once (its
  # peer of troupe's towers is the same model on the whole batch).
  cases=${CASES:-"cnn 128 0 sgd,cnn 128 0 sgd 2,mlp 128 512 sgd,mlp 128 512 sgd 2,mlp 128 512 adam,mlp 1024 2048 sgd"}
  IFS=, read -r -a case_list <<<"$cases"
  torch_done=" "
  for case in "${case_list[@]}"; do
    read -r model batch hidden optimizer towers <<<"$case"
    args="--model=$model --batch=$batch --hidden=$hidden --optimizer=$optimizer"
    args="$args --steps=${STEPS:-200} --runs=${RUNS:-5}"
    # shellcheck disable=SC2086
    timeout 120 "$dir/bin/troupe_gpu_bench" --device=gpu $args --towers="${towers:-1}" \
      | tee -a "$results" || status=1
    [ "${TORCH:-1}" != 0 ] || continue
    case "$torch_done" in *" $args "*) continue ;; esac
    torch_done="$torch_done$args "
    # shellcheck disable=SC2086
    timeout 120 python3 "$dir/torch_mlp_cuda.py" $args | tee -a "$results" || status=1
    # shellcheck disable=SC2086
    timeout 240 python3 "$dir/torch_mlp_cuda.py" --compile $args | tee -a "$results" || status=1
  done
  python3 - "$results" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
torch, troupe = {}, {}
for r in rows:
    key = (r.get("model", "mlp"), r["batch"], r["hidden"], r["optimizer"])
    if r["peer"] == "troupe":
        troupe[key + (r.get("towers", 1),)] = r
    else:
        torch.setdefault(key, {})[r["peer"]] = r
gpu = next((r["gpu"] for r in rows if "gpu" in r), "?")
print(f"\nGPU: {gpu}; examples/s, median of runs (min-max); the ratio is to PyTorch's best")
print("| model | troupe GPU | PyTorch CUDA eager | PyTorch CUDA compiled | troupe / PyTorch |")
print("| --- | ---: | ---: | ---: | ---: |")
for (model, batch, hidden, opt, towers), t in sorted(troupe.items()):
    peers = torch.get((model, batch, hidden, opt), {})
    e, c = (peers.get(k) for k in ("pytorch", "pytorch compiled"))
    missing = "failed" if torch else "not run"
    cell = lambda r: f"{r['examples_per_s']:,} ({r['min']:,}-{r['max']:,})" if r else missing
    best = max((r["examples_per_s"] for r in (e, c) if r), default=0)
    ratio = f"{t['examples_per_s'] / best:.2f}x" if t and best else "-"
    name = f"MLP 784-{hidden}-{hidden}-10" if model == "mlp" else "CNN (TF tutorial)"
    if towers > 1:
        name += f", {towers} towers on one GPU"
    print(f"| {name}, batch {batch}, {opt} | {cell(t)} | {cell(e)} | {cell(c)} | {ratio} |")
PY
  exit $status
  ;;
*)
  echo "gpu-check: unknown mode '$mode' (bundle or run)" >&2
  exit 2
  ;;
esac
