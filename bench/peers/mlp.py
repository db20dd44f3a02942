"""What the training peers share: the benchmark's MLP, its synthetic batch, and how a PyTorch
process is put in its best configuration on this machine.

A peer runs every configuration of threads per process that fits the cores it may run on
(processes x threads <= cores; threads 1, 2, 4, ...; at least 1) and reports the fastest,
naming it. A configuration is a pair: torch's intra-op threads (OpenMP: the element-wise ops) and OpenBLAS's threads (the
products: Debian's torch calls the system BLAS, OpenBLAS through libopenblas0-pthread, and
torch.set_num_threads does not reach it). On 2 cores, one process measured best with 1 torch
thread and 2 OpenBLAS threads: 2 of each ran 4 busy threads on 2 cores.
"""
import ctypes
import json
import os
import socket
import statistics

import torch

BATCH, PIXELS, CLASSES, WARMUP = 128, 784, 10, 20
CASE = "MLP 784-512-512-10, batch 128, SGD"


def make_model(hidden=(512, 512)):
    layers, width = [], PIXELS
    for size in hidden:
        layers += [torch.nn.Linear(width, size), torch.nn.ReLU()]
        width = size
    return torch.nn.Sequential(*layers, torch.nn.Linear(width, CLASSES))


def synthetic_batch(seed):
    generator = torch.Generator().manual_seed(seed)
    return (torch.rand(BATCH, PIXELS, generator=generator),
            torch.randint(0, CLASSES, (BATCH,), generator=generator))


def set_threads(config):
    """This process's threads: `config` is (torch's intra-op threads, OpenBLAS's threads)."""
    torch_threads, blas_threads = config
    torch.set_num_threads(torch_threads)
    try:
        ctypes.CDLL("libopenblas.so.0").openblas_set_num_threads(blas_threads)
    except (OSError, AttributeError):
        pass


def blas_name():
    """The BLAS torch's products go through (Debian's alternative for libblas.so.3)."""
    try:
        path = os.path.realpath("/usr/lib/x86_64-linux-gnu/libblas.so.3")
    except OSError:
        return "the system BLAS"
    return "OpenBLAS" if "openblas" in path else os.path.basename(os.path.dirname(path))


def configurations(processes):
    """The (torch threads, OpenBLAS threads) pairs that fit the cores this process may run on:
    1, 2, 4, ... of each, with processes x threads <= cores."""
    cores = len(os.sched_getaffinity(0))
    counts = [t for t in (1 << i for i in range(8)) if processes * t <= cores] or [1]
    return [(t, b) for t in counts for b in counts]


def describe(config):
    torch_threads, blas_threads = config
    return f"{torch_threads} torch + {blas_threads} {blas_name()} threads"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def report_best(system, processes, runs):
    """`runs`: {config: [examples/s per rep]}. Prints the fastest configuration's series."""
    best = max(runs, key=lambda c: statistics.median(runs[c]))
    tried = "; ".join(f"{c[0]}+{c[1]}: {statistics.median(v):,.0f}" for c, v in sorted(runs.items()))
    per = " per process" if processes > 1 else ""
    print(json.dumps({
        "bench": "training", "case": CASE,
        "system": f"PyTorch {torch.__version__} {system}, {describe(best)}{per} "
                  f"(best of torch+OpenBLAS threads {tried} examples/s)",
        "unit": "examples/s", "samples": runs[best]}), flush=True)
