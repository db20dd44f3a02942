#!/usr/bin/env python3
"""kernels peer: torch.mm of two n x n float32 matrices, GFLOP/s, as bench/kernel_bench.cpp
measures troupe's MatMul (same sizes, threads and sample counts; --rounds=N takes 1/N of the
samples, for scripts/bench.sh to alternate rounds with troupe's). One JSON line per series.
Debian's torch computes torch.mm with the system BLAS (OpenBLAS once installed)."""
import ctypes
import ctypes.util
import json
import sys
import time

import torch


def set_blas_threads(threads):
    """torch.set_num_threads does not reach the BLAS Debian's torch calls for torch.mm: set
    OpenBLAS's threads too (the library torch loaded; a no-op with another BLAS)."""
    try:
        ctypes.CDLL("libopenblas.so.0").openblas_set_num_threads(threads)
    except (OSError, AttributeError):
        pass


def main():
    quick = "--quick" in sys.argv
    rounds = next((int(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--rounds=")), 1)
    for threads in (1, 2):
        torch.set_num_threads(threads)
        set_blas_threads(threads)
        for n in (256, 1024, 2048):
            a = torch.full((n, n), 0.5)
            b = torch.full((n, n), 0.25)
            total = 3 if quick else (200 if n <= 256 else 20 if n <= 1024 else 7)
            samples = -(-total // rounds)
            for _ in range(3):
                torch.mm(a, b)
            gflops = []
            for _ in range(samples):
                start = time.perf_counter()
                torch.mm(a, b)
                gflops.append(2.0 * n**3 / (time.perf_counter() - start) / 1e9)
            name = f"MatMul {n}x{n}, {threads} thread{'' if threads == 1 else 's'}"
            print(json.dumps({"bench": "kernels", "case": name,
                              "system": f"PyTorch {torch.__version__} torch.mm",
                              "unit": "GFLOP/s", "samples": gflops}), flush=True)


if __name__ == "__main__":
    main()
