#!/usr/bin/env python3
"""main-job peer: PyTorch training what scripts/main.sh trains, on the same data.

`troupe train`'s defaults: Fashion-MNIST from Debian's dataset-fashion-mnist (pixels / 255),
the MLP 784-256-256-10 (ReLU, softmax cross entropy, Glorot-uniform weights, zero biases),
Adam with learning rate 0.0005, batch 128, 15 epochs of shuffled batches, an evaluation on the
test set after each epoch. One process, in each configuration of threads mlp.py allows; prints
the fastest as one JSON line: its wall time in seconds (data loading excluded, as
it is a few hundred milliseconds on both sides) and its final test accuracy.
"""
import argparse
import gzip
import json
import time

import numpy as np
import torch

import mlp

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(name, offset):
    with gzip.open(f"{DATA}/{name}", "rb") as f:
        return np.frombuffer(f.read(), dtype=np.uint8, offset=offset)


def load(split):
    images = read_idx(f"{split}-images-idx3-ubyte.gz", 16).reshape(-1, mlp.PIXELS)
    labels = read_idx(f"{split}-labels-idx1-ubyte.gz", 8)
    return (torch.from_numpy(images.astype(np.float32) / 255.0),
            torch.from_numpy(labels.astype(np.int64)))


def make_model():
    model = mlp.make_model(hidden=(256, 256))
    for layer in model:
        if isinstance(layer, torch.nn.Linear):
            torch.nn.init.xavier_uniform_(layer.weight)
            torch.nn.init.zeros_(layer.bias)
    return model


def accuracy(model, images, labels):
    with torch.no_grad():
        return (model(images).argmax(1) == labels).float().mean().item()


def train(epochs, config, train_set, test_set):
    mlp.set_threads(config)
    torch.manual_seed(42)
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.0005)
    loss_fn = torch.nn.CrossEntropyLoss()
    images, labels = train_set
    start = time.perf_counter()
    for _ in range(epochs):
        order = torch.randperm(len(labels))
        for first in range(0, len(labels) - mlp.BATCH + 1, mlp.BATCH):
            batch = order[first:first + mlp.BATCH]
            optimizer.zero_grad(set_to_none=True)
            loss_fn(model(images[batch]), labels[batch]).backward()
            optimizer.step()
        test_accuracy = accuracy(model, *test_set)
    return time.perf_counter() - start, test_accuracy


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    train_set, test_set = load("train"), load("t10k")
    runs = {c: train(args.epochs, c, train_set, test_set) for c in mlp.configurations(1)}
    best = min(runs, key=lambda c: runs[c][0])
    samples = [runs[best][0]]
    test_accuracy = runs[best][1]
    for _ in range(args.reps - 1):
        seconds, test_accuracy = train(args.epochs, best, train_set, test_set)
        samples.append(seconds)
    tried = "; ".join(f"{c[0]}+{c[1]}: {s:.1f} s" for c, (s, _) in sorted(runs.items()))
    print(json.dumps({
        "bench": "training",
        "case": f"Fashion-MNIST, MLP 784-256-256-10, Adam, batch 128, {args.epochs} epochs",
        "system": f"PyTorch {torch.__version__} one process, {mlp.describe(best)} (best of "
                  f"torch+OpenBLAS threads {tried}); test accuracy {test_accuracy:.4f}",
        "unit": "s", "samples": samples}), flush=True)


if __name__ == "__main__":
    main()
