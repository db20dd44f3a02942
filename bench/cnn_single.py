#!/usr/bin/env python3
"""The CNN of examples/python/cnn_trainer.py and `troupe train --model=cnn` in one process:
troupe's Python module (tf.layers: Conv2D as im2col onto OpenBLAS's GEMM, MaxPool, dense,
dropout) against PyTorch's nn.Conv2d (its own CPU convolutions), on the same cores. The model,
TensorFlow's tutorial CNN on Fashion-MNIST's shape: 28x28x1 images, conv 5x5 x32 SAME + ReLU,
max pool 2x2, conv 5x5 x64 SAME + ReLU, max pool 2x2, dense 1024 + ReLU, dropout 0.4, dense
10, softmax cross entropy, Adam 0.001, batch 128 of random data generated before timing. Each
run: 5 unmeasured steps, then `--steps` measured, with 1 and with 2 intra-op threads
(bench/one_process.py).

usage: cnn_single.py PYTHONPATH [--steps=N] [--reps=N]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_process  # noqa: E402

SIZE, CLASSES, BATCH, LR, DROPOUT = 28, 10, 128, 0.001, 0.4


def batches(count):
    import numpy as np
    rng = np.random.default_rng(1)
    return [(rng.random((BATCH, SIZE, SIZE, 1), dtype=np.float32),
             rng.integers(0, CLASSES, BATCH).astype(np.int64)) for _ in range(count)]


def troupe_rate(steps, threads):
    import troupe as tf
    data = batches(10)
    x = tf.placeholder(tf.float32, [None, SIZE, SIZE, 1])
    y = tf.placeholder(tf.int64, [None])
    h = tf.layers.conv2d(x, 32, 5, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.conv2d(h, 64, 5, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.dense(tf.layers.flatten(h), 1024, activation=tf.nn.relu)
    h = tf.layers.dropout(h, rate=DROPOUT, training=True)
    logits = tf.layers.dense(h, CLASSES)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train = tf.train.AdamOptimizer(LR).minimize(loss)
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())

        def step(i):
            xs, ys = data[i % len(data)]
            sess.run(train, {x: xs, y: ys})
        return one_process.measure(step, steps, BATCH, warmup=5)


def torch_rate(steps, threads):
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    # NCHW, PyTorch's layout for its CPU convolutions.
    data = [(torch.from_numpy(a).permute(0, 3, 1, 2).contiguous(), torch.from_numpy(b))
            for a, b in batches(10)]
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(1, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(7 * 7 * 64, 1024), nn.ReLU(), nn.Dropout(DROPOUT),
        nn.Linear(1024, CLASSES))
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    loss_fn = nn.CrossEntropyLoss()

    def step(i):
        xs, ys = data[i % len(data)]
        optimizer.zero_grad()
        loss_fn(model(xs), ys).backward()
        optimizer.step()
    return one_process.measure(step, steps, BATCH, warmup=5)


if __name__ == "__main__":
    one_process.main(__file__, {"troupe": troupe_rate, "torch": torch_rate}, bench="cnn",
                     case="TF tutorial CNN (conv 5x5x32, pool, conv 5x5x64, pool, dense 1024, "
                          "dropout), Adam, batch 128, one process", steps=30, reps=3)
