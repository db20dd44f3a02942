#!/usr/bin/env python3
"""The sequence model of examples/python/lstm_classifier.py in one process: troupe's Python
module (tf.nn.dynamic_rnn over an LSTMCell: a While node whose body is the cell, and its
gradient, which runs the loop again) against PyTorch's nn.LSTM, on the same cores. The model:
28 time steps of 28 features, an LSTM of 64 units, its last output through a dense layer to 10
classes, softmax cross entropy, Adam 0.005, batch 128 of random data generated before timing.
Each run: 10 unmeasured steps, then `--steps` measured. Both systems run with 1 and with 2
intra-op threads and the faster counts for each. Runs alternate between the systems `--reps`
times; prints one JSON line of examples/s per system for docs/PERFORMANCE.md.

usage: lstm_single.py PYTHONPATH [--steps=N] [--reps=N]
"""
import json
import os
import subprocess
import sys
import time

STEPS_IN_TIME, FEATURES, UNITS, CLASSES, BATCH, LR = 28, 28, 64, 10, 128, 0.005


def batches(count):
    import numpy as np
    rng = np.random.default_rng(1)
    return [(rng.standard_normal((BATCH, STEPS_IN_TIME, FEATURES)).astype(np.float32),
             rng.integers(0, CLASSES, BATCH).astype(np.int64)) for _ in range(count)]


def troupe_rate(steps, threads):
    import troupe as tf
    data = batches(20)
    x = tf.placeholder(tf.float32, [None, STEPS_IN_TIME, FEATURES])
    y = tf.placeholder(tf.int64, [None])
    _, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(UNITS), x, dtype=tf.float32)
    logits = tf.layers.dense(state.h, CLASSES)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train = tf.train.AdamOptimizer(LR).minimize(loss)
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())

        def step(i):
            xs, ys = data[i % len(data)]
            sess.run(train, {x: xs, y: ys})
        return measure(step, steps)


def torch_rate(steps, threads):
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    data = [(torch.from_numpy(a), torch.from_numpy(b)) for a, b in batches(20)]

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = torch.nn.LSTM(FEATURES, UNITS, batch_first=True)
            self.dense = torch.nn.Linear(UNITS, CLASSES)

        def forward(self, x):
            _, (h, _) = self.lstm(x)
            return self.dense(h[-1])

    model = Model()
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    loss_fn = torch.nn.CrossEntropyLoss()

    def step(i):
        xs, ys = data[i % len(data)]
        optimizer.zero_grad()
        loss_fn(model(xs), ys).backward()
        optimizer.step()
    return measure(step, steps)


def measure(step, steps):
    for i in range(10):
        step(i)
    started = time.perf_counter()
    for i in range(steps):
        step(i)
    return steps * BATCH / (time.perf_counter() - started)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--run":
        system, steps = sys.argv[2], int(sys.argv[3])
        threads = int(system[-1])
        rate = troupe_rate(steps, threads) if system.startswith("troupe") else \
            torch_rate(steps, threads)
        print(rate)
        return
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    pythonpath = sys.argv[1]
    option = lambda name, default: next(
        (int(a.split("=", 1)[1]) for a in sys.argv[2:] if a.startswith(f"--{name}=")), default)
    steps, reps = option("steps", 100), option("reps", 3)
    env = dict(os.environ, PYTHONPATH=pythonpath)
    samples = {"troupe1": [], "troupe2": [], "torch1": [], "torch2": []}
    for _ in range(reps):
        for system in samples:
            out = subprocess.run([sys.executable, __file__, "--run", system, str(steps)],
                                 capture_output=True, text=True, env=env, check=True)
            samples[system].append(float(out.stdout.split()[-1]))
    median = lambda s: sorted(samples[s])[len(samples[s]) // 2]  # noqa: E731
    case = "LSTM 64 units, 28 steps of 28 features, dense 10, Adam, batch 128, one process"
    for prefix, name in (("troupe", "troupe"), ("torch", "PyTorch")):
        best = max((prefix + "1", prefix + "2"), key=median)
        print(json.dumps({"bench": "lstm", "case": case,
                          "system": "%s %s thread(s)" % (name, best[-1]),
                          "unit": "examples/s", "samples": samples[best],
                          "other_threads": samples[prefix + ("2" if best[-1] == "1" else "1")]}))


if __name__ == "__main__":
    main()
