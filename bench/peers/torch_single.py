#!/usr/bin/env python3
"""training peer: the benchmark's MLP trained by PyTorch in one process, as troupe's one-process
row trains it (bench/training_bench.cpp): MLP 784-512-512-10, ReLU, softmax cross entropy, SGD
with learning rate 0.01, batch 128 of synthetic data. For each configuration of threads mlp.py
allows, `--reps` runs of `--steps` measured steps after 20 unmeasured ones; prints the fastest
configuration as one JSON line of examples/s.
"""
import argparse
import time

import torch

import mlp


def examples_per_second(steps, config):
    mlp.set_threads(config)
    torch.manual_seed(1)
    model = mlp.make_model()
    images, labels = mlp.synthetic_batch(1)
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
    return steps * mlp.BATCH / (time.perf_counter() - start)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    runs = {}
    for _ in range(args.reps):  # configurations alternate: the machine's speed drifts
        for config in mlp.configurations(1):
            runs.setdefault(config, []).append(examples_per_second(args.steps, config))
    mlp.report_best("one process", 1, runs)


if __name__ == "__main__":
    main()
