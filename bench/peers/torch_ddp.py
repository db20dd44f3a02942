#!/usr/bin/env python3
"""training peer: PyTorch's DistributedDataParallel over gloo, 2 workers as processes on
loopback.

The model, loss, optimizer (SGD, learning rate 0.01) and batch (128 synthetic examples per
worker) of bench/training_bench.cpp. DDP is synchronous data parallelism: every step averages
the two workers' gradients (an allreduce) and each applies them to its own copy of the
parameters; there is no ps. Threads per process as mlp.py chooses them. Prints one JSON line:
examples/s over the measured steps, summed over the workers, for each of `--reps` runs.
"""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import mlp

WORKERS = 2


def run(rank, port, steps, config, results):
    mlp.set_threads(config)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=WORKERS)
    torch.manual_seed(0)  # the same initial parameters on every worker
    model = DistributedDataParallel(mlp.make_model())
    step = mlp.sgd_step(model, *mlp.synthetic_batch(rank + 1))
    results.put(mlp.examples_per_second_of(step, steps))
    dist.destroy_process_group()


def examples_per_second(steps, config):
    return mlp.run_processes("torch_ddp", run, WORKERS, steps, config)


if __name__ == "__main__":
    mlp.main(__doc__, "DDP over gloo (2 workers, processes)", WORKERS, examples_per_second)
