"""A wide-and-deep click-through model, written as TensorFlow 1.x programs write one: 26
categorical features looked up in one embedding table (dim 16) partitioned over the ps tasks
with `fixed_size_partitioner`, a wide part (a weight per id, from a table partitioned the same
way), 13 dense features, an MLP 400-400-1, sigmoid cross entropy, Adagrad (sparse updates: only
the rows a step looks up move, on the ps that holds them), between-graph replication with
`replica_device_setter` and a `MonitoredTrainingSession` that checkpoints on the chief. The data
is synthetic with a planted logistic model (ctr_data.py); at the end the chief prints the test
AUC beside the planted model's.

    troupe launch --ps 2 --workers 2 -- python3 examples/python/wide_deep.py

or with --ps_hosts, --worker_hosts, --job_name and --task_index as TensorFlow's examples take
them; without any cluster flags it trains in this process alone.
"""

import os
import tempfile
import time

import numpy as np

import troupe as tf
from cluster_flags import cluster_and_task, define_cluster_flags
from ctr_data import NUM_CATEGORICAL, NUM_DENSE, PlantedCtr, auc

flags = tf.app.flags
define_cluster_flags(flags)
flags.DEFINE_string("checkpoint_dir", None, "Checkpoints (default: a temporary directory)")
flags.DEFINE_integer("table_rows", 1000000, "Rows of the embedding table (all 26 features)")
flags.DEFINE_integer("embedding_dim", 16, "Width of each embedding")
flags.DEFINE_list("deep_units", ["400", "400"], "Units of the MLP's hidden layers")
flags.DEFINE_integer("train_steps", 3000, "Global steps to train for")
flags.DEFINE_integer("batch_size", 512, "Examples per step")
flags.DEFINE_float("learning_rate", 0.2, "Adagrad's learning rate")
flags.DEFINE_integer("test_examples", 20000, "Examples of the test sample")
flags.DEFINE_float("zipf", 2.0, "The Zipf exponent of the ids")
flags.DEFINE_integer("seed", 1, "The graph's random seed")
flags.DEFINE_integer("save_checkpoint_steps", 0, "Checkpoint every this many global steps "
                     "(0: every 120 s)")
FLAGS = flags.FLAGS


def model(ids, dense, num_shards):
    """Logits [batch] of ids [batch, 26] and dense features [batch, 13]."""
    partitioner = tf.fixed_size_partitioner(num_shards)
    with tf.variable_scope("wide", partitioner=partitioner):
        weights = tf.get_variable("weights", [FLAGS.table_rows, 1],
                                  initializer=tf.zeros_initializer())
        wide = tf.reduce_sum(tf.nn.embedding_lookup(weights, ids, partition_strategy="div"),
                             axis=[1, 2])
    with tf.variable_scope("deep", partitioner=partitioner):
        table = tf.get_variable("embeddings", [FLAGS.table_rows, FLAGS.embedding_dim],
                                initializer=tf.truncated_normal_initializer(stddev=0.05))
    embedded = tf.nn.embedding_lookup(table, ids, partition_strategy="div")
    x = tf.concat([tf.reshape(embedded, [-1, NUM_CATEGORICAL * FLAGS.embedding_dim]), dense], 1)
    for units in FLAGS.deep_units:
        x = tf.layers.dense(x, int(units), activation=tf.nn.relu)
    deep = tf.squeeze(tf.layers.dense(x, 1), axis=1)
    return wide + deep


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
    data = PlantedCtr(FLAGS.table_rows, FLAGS.zipf, seed=0)
    rng = np.random.default_rng(1000 + task_index)

    tf.set_random_seed(FLAGS.seed)
    device = tf.train.replica_device_setter(worker_device="/job:worker/task:%d" % task_index,
                                            cluster=cluster) if cluster else None
    with tf.device(device):
        global_step = tf.train.get_or_create_global_step()
        ids = tf.placeholder(tf.int64, [None, NUM_CATEGORICAL], name="ids")
        dense = tf.placeholder(tf.float32, [None, NUM_DENSE], name="dense")
        labels = tf.placeholder(tf.float32, [None], name="labels")
        logits = model(ids, dense, num_ps)
        probabilities = tf.sigmoid(logits)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=labels,
                                                                      logits=logits))
        train_op = tf.train.AdagradOptimizer(FLAGS.learning_rate).minimize(
            loss, global_step=global_step)
        tf.summary.scalar("loss", loss)

    checkpoint_dir = FLAGS.checkpoint_dir or tempfile.mkdtemp(prefix="wide_deep-")
    hooks = [tf.train.StopAtStepHook(last_step=FLAGS.train_steps)]
    master = server.target if server else ""
    started = time.time()
    steps = 0
    with tf.train.MonitoredTrainingSession(master=master, is_chief=is_chief,
                                           checkpoint_dir=checkpoint_dir, hooks=hooks,
                                           save_checkpoint_secs=None if
                                           FLAGS.save_checkpoint_steps else 120,
                                           save_checkpoint_steps=FLAGS.save_checkpoint_steps or
                                           None,
                                           save_summaries_steps=100) as sess:
        while not sess.should_stop():
            batch_ids, batch_dense, batch_labels, _ = data.sample(FLAGS.batch_size, rng)
            _, step, batch_loss = sess.run([train_op, global_step, loss],
                                           {ids: batch_ids, dense: batch_dense,
                                            labels: batch_labels})
            steps += 1
            if steps % 100 == 0:
                print("worker %d: local step %d, global step %d, loss %.4f, %.1f examples/s"
                      % (task_index, steps, step, batch_loss,
                         steps * FLAGS.batch_size / (time.time() - started)), flush=True)
        if is_chief:
            test_ids, test_dense, test_labels, planted = data.sample(
                FLAGS.test_examples, np.random.default_rng(7))
            scores = np.concatenate([
                sess.run(probabilities, {ids: test_ids[at:at + 5000],
                                         dense: test_dense[at:at + 5000],
                                         labels: test_labels[at:at + 5000]})
                for at in range(0, FLAGS.test_examples, 5000)])
            print("worker %d: %d local steps in %.1f s; test AUC %.4f, planted model's AUC %.4f"
                  % (task_index, steps, time.time() - started, auc(test_labels, scores),
                     auc(test_labels, planted)), flush=True)


if __name__ == "__main__":
    tf.app.run()
