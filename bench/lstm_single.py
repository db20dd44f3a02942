#!/usr/bin/env python3
"""The sequence model of examples/python/lstm_classifier.py in one process: troupe's Python
module (tf.nn.dynamic_rnn over an LSTMCell: a While node whose body is the cell, and its
gradient, which runs the loop again) against PyTorch's nn.LSTM, on the same cores. The model:
28 time steps of 28 features, an LSTM of 64 units, its last output through a dense layer to 10
classes, softmax cross entropy, Adam 0.005, batch 128 of random data generated before timing.
Each run: 10 unmeasured steps, then `--steps` measured, with 1 and with 2 intra-op threads
(bench/one_process.py).

usage: lstm_single.py PYTHONPATH [--steps=N] [--reps=N]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_process  # noqa: E402

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
        return one_process.measure(step, steps, BATCH, warmup=10)


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
    return one_process.measure(step, steps, BATCH, warmup=10)


if __name__ == "__main__":
    one_process.main(__file__, {"troupe": troupe_rate, "torch": torch_rate}, bench="lstm",
                     case="LSTM 64 units, 28 steps of 28 features, dense 10, Adam, batch 128, "
                          "one process", steps=100, reps=3)
