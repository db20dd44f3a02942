#!/usr/bin/env python3
"""training peer: PyTorch's DistributedDataParallel over gloo, 2 workers as processes on
loopback.

The model, loss, optimizer (SGD, learning rate 0.01) and batch (128 synthetic examples per
worker) of bench/training_bench.cpp. DDP is synchronous data parallelism: every step averages
the two workers' gradients (an allreduce) and each applies them to its own copy of the
parameters; there is no ps. Threads per process as mlp.py chooses them. Prints one JSON line:
examples/s over the measured steps, summed over the workers, for each of `--reps` runs.
"""
import argparse
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch.nn.parallel import DistributedDataParallel

import mlp

WORKERS = 2


def run(rank, port, steps, config, results):
    mlp.set_threads(config)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=WORKERS)
    torch.manual_seed(0)  # the same initial parameters on every worker
    model = DistributedDataParallel(mlp.make_model())
    images, labels = mlp.synthetic_batch(rank + 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model(images), labels).backward()
        optimizer.step()

    for _ in range(mlp.WARMUP):
        step()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    results.put(steps * mlp.BATCH / (time.perf_counter() - start))
    dist.destroy_process_group()


def examples_per_second(steps, config):
    context = mp.get_context("spawn")
    results = context.SimpleQueue()
    port = mlp.free_port()
    processes = [context.Process(target=run, args=(rank, port, steps, config, results))
                 for rank in range(WORKERS)]
    for p in processes:
        p.start()
    for p in processes:
        p.join(600)
        if p.exitcode != 0:
            raise SystemExit(f"torch_ddp: a process failed (exit code {p.exitcode})")
    return sum(results.get() for _ in range(WORKERS))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=300, help="measured steps per worker")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    runs = {}
    for _ in range(args.reps):
        for config in mlp.configurations(WORKERS):
            runs.setdefault(config, []).append(examples_per_second(args.steps, config))
    mlp.report_best("DDP over gloo (2 workers, processes)", WORKERS, runs)


if __name__ == "__main__":
    main()
