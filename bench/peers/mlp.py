"""What the training peers share: the benchmark's MLP, its synthetic batch, and how a PyTorch
process is put in its best configuration on this machine.

A peer runs every configuration of threads per process that fits the cores it may run on
(processes x threads <= cores; threads 1, 2, 4, ...; at least 1) and reports the fastest,
naming it. A configuration is a pair: torch's intra-op threads (OpenMP: the element-wise ops) and OpenBLAS's threads (the
products: Debian's torch calls the system BLAS, OpenBLAS through libopenblas0-pthread, and
torch.set_num_threads does not reach it). On 2 cores, one process measured best with 1 torch
thread and 2 OpenBLAS threads: 2 of each ran 4 busy threads on 2 cores.
"""
import argparse
import ctypes
import json
import multiprocessing
import os
import socket
import statistics
import time

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


def sgd_step(model, images, labels):
    """One SGD step (learning rate 0.01) of `model` on the batch, as a function."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model(images), labels).backward()
        optimizer.step()
    return step


def examples_per_second_of(step, steps):
    """Runs WARMUP unmeasured steps, then `steps` measured ones; examples/s of those."""
    for _ in range(WARMUP):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return steps * BATCH / (time.perf_counter() - start)


def run_processes(name, target, processes, steps, config):
    """Runs target(rank, port, steps, config, results) in `processes` spawned processes and
    returns the sum of what they put in `results` (one figure per measuring process)."""
    context = multiprocessing.get_context("spawn")
    results = context.SimpleQueue()
    port = free_port()
    started = [context.Process(target=target, args=(rank, port, steps, config, results))
               for rank in range(processes)]
    for p in started:
        p.start()
    for p in started:
        p.join(600)
        if p.exitcode != 0:
            raise SystemExit(f"{name}: a process failed (exit code {p.exitcode})")
    total = 0.0
    while not results.empty():
        total += results.get()
    return total


def main(description, system, processes, examples_per_second):
    """A peer's command line: --steps and --reps; every configuration `processes` allow, in
    turn for each rep (the machine's speed drifts); the best reported as `system`."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--steps", type=int, default=300, help="measured steps per worker")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    runs = {}
    for _ in range(args.reps):
        for config in configurations(processes):
            runs.setdefault(config, []).append(examples_per_second(args.steps, config))
    report_best(system, processes, runs)


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
