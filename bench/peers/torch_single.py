#!/usr/bin/env python3
"""training peer: the benchmark's MLP trained by PyTorch in one process, as troupe's one-process
row trains it (bench/training_bench.cpp): MLP 784-512-512-10, ReLU, softmax cross entropy, SGD
with learning rate 0.01, batch 128 of synthetic data. For each configuration of threads mlp.py
allows, `--reps` runs of `--steps` measured steps after 20 unmeasured ones; prints the fastest
configuration as one JSON line of examples/s.
"""
import torch

import mlp


def examples_per_second(steps, config):
    mlp.set_threads(config)
    torch.manual_seed(1)
    model = mlp.make_model()
    return mlp.examples_per_second_of(mlp.sgd_step(model, *mlp.synthetic_batch(1)), steps)


if __name__ == "__main__":
    mlp.main(__doc__, "one process", 1, examples_per_second)
