"""Skip-gram word2vec, written as TensorFlow 1.x's word2vec_basic writes it: an embedding
table and the NCE weights partitioned over the ps tasks (`fixed_size_partitioner`), each step a
batch of (center word, context word) pairs, `tf.nn.nce_loss` against words drawn by the
log-uniform candidate sampler, SGD (sparse updates: only the rows a step touches move, on the
ps that holds them), between-graph replication with `replica_device_setter` and a
`MonitoredTrainingSession` that checkpoints on the chief.

No corpus is downloaded: the text is synthetic, words in groups of `group_size` that appear in
the same contexts (a sentence takes its words from one group and the next), so words of one
group should end up with near embeddings. At the end the chief prints the neighbour precision:
the fraction of each word's group_size - 1 nearest words (cosine) that are of its group (1 at
best; 0.004 for random embeddings of 1,000 words in groups of 5).

    troupe launch --ps 2 --workers 2 -- python3 examples/python/word2vec.py

or with --ps_hosts, --worker_hosts, --job_name and --task_index as TensorFlow's examples take
them; without any cluster flags it trains in this process alone.
"""

import os
import tempfile
import time

import numpy as np

import troupe as tf
from cluster_flags import cluster_and_task, define_cluster_flags

flags = tf.app.flags
define_cluster_flags(flags)
flags.DEFINE_string("checkpoint_dir", None, "Checkpoints (default: a temporary directory)")
flags.DEFINE_integer("vocabulary_size", 1000, "Words")
flags.DEFINE_integer("group_size", 5, "Words that share their contexts")
flags.DEFINE_integer("embedding_size", 32, "Width of each embedding")
flags.DEFINE_integer("num_sampled", 32, "Negative words per batch (nce_loss)")
flags.DEFINE_integer("window", 2, "Context words on each side of a center word")
flags.DEFINE_integer("train_steps", 3000, "Global steps to train for")
flags.DEFINE_integer("batch_size", 128, "(center, context) pairs per step")
flags.DEFINE_float("learning_rate", 8.0, "SGD's learning rate (of the batch's mean loss)")
flags.DEFINE_integer("seed", 1, "The graph's random seed")
FLAGS = flags.FLAGS


def batches(rng):
    """(centers [batch], contexts [batch, 1]) of skip-gram pairs from synthetic sentences: a
    sentence of 8 words drawn from one group and the next."""
    groups = FLAGS.vocabulary_size // FLAGS.group_size
    while True:
        topic = rng.integers(0, groups, FLAGS.batch_size)
        sentences = ((topic[:, None] + rng.integers(0, 2, (FLAGS.batch_size, 8))) % groups) * \
            FLAGS.group_size + rng.integers(0, FLAGS.group_size, (FLAGS.batch_size, 8))
        at = rng.integers(FLAGS.window, 8 - FLAGS.window, FLAGS.batch_size)
        offset = rng.choice([d for d in range(-FLAGS.window, FLAGS.window + 1) if d],
                            FLAGS.batch_size)
        rows = np.arange(FLAGS.batch_size)
        yield sentences[rows, at], sentences[rows, at + offset].reshape(-1, 1)


def neighbour_precision(embeddings):
    """The fraction of each word's group_size - 1 nearest words (cosine) of its group."""
    unit = embeddings / np.maximum(np.linalg.norm(embeddings, axis=1, keepdims=True), 1e-12)
    similarity = unit @ unit.T
    np.fill_diagonal(similarity, -np.inf)
    nearest = np.argsort(-similarity, axis=1)[:, :FLAGS.group_size - 1]
    groups = np.arange(len(embeddings)) // FLAGS.group_size
    return float(np.mean(groups[nearest] == groups[:, None]))


def main(_):
    if FLAGS.insecure:
        os.environ["TROUPE_INSECURE"] = "1"
    alone = not FLAGS.ps_hosts and not FLAGS.worker_hosts and "TF_CONFIG" not in os.environ
    if alone:
        server, job_name, task_index, cluster = None, "worker", 0, None
    else:
        cluster, job_name, task_index = cluster_and_task(FLAGS)
        server = tf.train.Server(cluster, job_name=job_name, task_index=task_index)
        if job_name == "ps":
            server.join()
            return
    is_chief = task_index == 0
    num_ps = cluster.num_tasks("ps") if cluster else 1

    tf.set_random_seed(FLAGS.seed)
    device = tf.train.replica_device_setter(worker_device="/job:worker/task:%d" % task_index,
                                            cluster=cluster) if cluster else None
    with tf.device(device):
        global_step = tf.train.get_or_create_global_step()
        centers = tf.placeholder(tf.int32, [None], name="centers")
        contexts = tf.placeholder(tf.int64, [None, 1], name="contexts")
        with tf.variable_scope("word2vec", partitioner=tf.fixed_size_partitioner(num_ps)):
            embeddings = tf.get_variable(
                "embeddings", [FLAGS.vocabulary_size, FLAGS.embedding_size],
                initializer=tf.random_uniform_initializer(-1.0, 1.0))
            nce_weights = tf.get_variable(
                "nce_weights", [FLAGS.vocabulary_size, FLAGS.embedding_size],
                initializer=tf.truncated_normal_initializer(
                    stddev=1.0 / np.sqrt(FLAGS.embedding_size)))
            nce_biases = tf.get_variable("nce_biases", [FLAGS.vocabulary_size],
                                         initializer=tf.zeros_initializer())
        # fixed_size_partitioner gives each shard a contiguous range of rows: "div".
        embedded = tf.nn.embedding_lookup(embeddings, centers, partition_strategy="div")
        loss = tf.reduce_mean(tf.nn.nce_loss(weights=nce_weights, biases=nce_biases,
                                             labels=contexts, inputs=embedded,
                                             num_sampled=FLAGS.num_sampled,
                                             num_classes=FLAGS.vocabulary_size,
                                             partition_strategy="div"))
        train_op = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(
            loss, global_step=global_step)
        whole_table = tf.concat(list(embeddings), 0) if isinstance(
            embeddings, tf.PartitionedVariable) else tf.identity(embeddings)

    checkpoint_dir = FLAGS.checkpoint_dir or tempfile.mkdtemp(prefix="word2vec-")
    hooks = [tf.train.StopAtStepHook(last_step=FLAGS.train_steps)]
    data = batches(np.random.default_rng(1000 + task_index))
    started, steps = time.time(), 0
    with tf.train.MonitoredTrainingSession(master=server.target if server else "",
                                           is_chief=is_chief, checkpoint_dir=checkpoint_dir,
                                           hooks=hooks, save_summaries_steps=None) as sess:
        if is_chief:
            print("worker 0: neighbour precision before training %.3f"
                  % neighbour_precision(sess.run(whole_table)), flush=True)
        while not sess.should_stop():
            batch_centers, batch_contexts = next(data)
            _, step, batch_loss = sess.run([train_op, global_step, loss],
                                           {centers: batch_centers, contexts: batch_contexts})
            steps += 1
            if steps % 500 == 0:
                print("worker %d: local step %d, global step %d, loss %.4f"
                      % (task_index, steps, step, batch_loss), flush=True)
        if is_chief:
            print("worker %d: %d local steps in %.1f s; neighbour precision %.3f"
                  % (task_index, steps, time.time() - started,
                     neighbour_precision(sess.run(whole_table))), flush=True)


if __name__ == "__main__":
    tf.app.run()
