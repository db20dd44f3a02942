#!/usr/bin/env python3
"""The wide-and-deep model of examples/python/wide_deep.py in one process: troupe's Python
module against PyTorch, on the same cores. The model: 26 categorical features looked up in one
table of 1,000,000 x 16 (plus a wide weight per id), 13 dense features, MLP 400-400-1, sigmoid
cross entropy, Adagrad 0.2 with sparse updates (troupe: IndexedSlices and SparseApplyAdagrad;
PyTorch: nn.Embedding(sparse=True) and torch.optim.Adagrad, which takes sparse gradients),
batch 512 of synthetic data (examples/python/ctr_data.py, generated before timing). Each run:
20 unmeasured steps, then `--steps` measured; troupe with its default intra-op threads (one per
core), PyTorch with 1 and with 2 threads (bench/one_process.py).

usage: wide_deep_single.py PYTHONPATH [--steps=N] [--reps=N]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import one_process  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROWS, DIM, BATCH, UNITS, LR = 1000000, 16, 512, 400, 0.2


def batches(count):
    sys.path.insert(0, os.path.join(REPO, "examples", "python"))
    import numpy as np
    from ctr_data import PlantedCtr
    data, rng = PlantedCtr(ROWS, 2.0, seed=0), np.random.default_rng(1)
    return [data.sample(BATCH, rng)[:3] for _ in range(count)]


def troupe_rate(steps, threads):
    import troupe as tf
    data = batches(40)
    ids = tf.placeholder(tf.int64, [None, 26])
    dense = tf.placeholder(tf.float32, [None, 13])
    labels = tf.placeholder(tf.float32, [None])
    weights = tf.get_variable("wide", [ROWS, 1], initializer=tf.zeros_initializer())
    table = tf.get_variable("deep", [ROWS, DIM],
                            initializer=tf.truncated_normal_initializer(stddev=0.05))
    wide = tf.reduce_sum(tf.nn.embedding_lookup(weights, ids), axis=[1, 2])
    x = tf.concat([tf.reshape(tf.nn.embedding_lookup(table, ids), [-1, 26 * DIM]), dense], 1)
    for _ in range(2):
        x = tf.layers.dense(x, UNITS, activation=tf.nn.relu)
    logits = wide + tf.squeeze(tf.layers.dense(x, 1), axis=1)
    loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits))
    train = tf.train.AdagradOptimizer(LR).minimize(loss)
    config = tf.ConfigProto(intra_op_parallelism_threads=threads)
    with tf.Session(config=config) as sess:
        sess.run(tf.global_variables_initializer())

        def step(i):
            b = data[i % len(data)]
            sess.run(train, {ids: b[0], dense: b[1], labels: b[2]})
        return one_process.measure(step, steps, BATCH, warmup=20)


def torch_rate(steps, threads):
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    data = [tuple(torch.from_numpy(a) for a in b) for b in batches(40)]

    class WideDeep(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.wide = torch.nn.Embedding(ROWS, 1, sparse=True)
            self.deep = torch.nn.Embedding(ROWS, DIM, sparse=True)
            torch.nn.init.zeros_(self.wide.weight)
            torch.nn.init.trunc_normal_(self.deep.weight, std=0.05, a=-0.1, b=0.1)
            self.mlp = torch.nn.Sequential(
                torch.nn.Linear(26 * DIM + 13, UNITS), torch.nn.ReLU(),
                torch.nn.Linear(UNITS, UNITS), torch.nn.ReLU(), torch.nn.Linear(UNITS, 1))

        def forward(self, ids, dense):
            wide = self.wide(ids).sum(dim=(1, 2))
            x = torch.cat([self.deep(ids).reshape(-1, 26 * DIM), dense], 1)
            return wide + self.mlp(x).squeeze(1)

    model = WideDeep()
    optimizer = torch.optim.Adagrad(model.parameters(), lr=LR, initial_accumulator_value=0.1)
    loss_fn = torch.nn.BCEWithLogitsLoss()

    def step(i):
        ids, dense, labels = data[i % len(data)]
        optimizer.zero_grad()
        loss_fn(model(ids, dense), labels).backward()
        optimizer.step()
    return one_process.measure(step, steps, BATCH, warmup=20)


if __name__ == "__main__":
    one_process.main(__file__, {"troupe": troupe_rate, "torch": torch_rate}, bench="wide_deep",
                     case="wide & deep, 1M x 16 table, MLP 400-400-1, batch 512, one process",
                     steps=200, reps=5, threads={"troupe": (os.cpu_count(),), "torch": (1, 2)})
