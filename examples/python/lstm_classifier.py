"""A recurrent network for Fashion-MNIST, written as TensorFlow 1.x programs write one: each
image read as a sequence of 28 rows of 28 pixels by `tf.nn.dynamic_rnn` over an `LSTMCell` in
a `DropoutWrapper`, its last output classified by `tf.layers.dense`;
`tf.losses.sparse_softmax_cross_entropy`, Adam, between-graph replication with
`replica_device_setter` (the variables on the ps tasks) and a `MonitoredTrainingSession` with
`StopAtStepHook` that checkpoints on the chief. Each worker trains asynchronously on its own
shuffle of the training set; at the end the chief prints the test accuracy. Only the import
differs from a TensorFlow 1.x program.

    python3 lstm_classifier.py --ps_hosts=localhost:2222 \\
        --worker_hosts=localhost:2223,localhost:2224 --job_name=ps --task_index=0
    python3 lstm_classifier.py ... --job_name=worker --task_index=0   (and 1)

or `troupe launch --ps 1 --workers 2 -- python3 examples/python/lstm_classifier.py`; without
any cluster flags it trains in this process alone.
"""

import os
import tempfile
import time

import numpy as np

import troupe as tf
from cluster_flags import cluster_and_task, define_cluster_flags
from fashion_mnist import IMAGE_PIXELS, NUM_CLASSES, read_data_set

flags = tf.app.flags
define_cluster_flags(flags)
flags.DEFINE_string("data_dir", "/usr/share/datasets/fashion-mnist", "Fashion-MNIST's files")
flags.DEFINE_string("checkpoint_dir", None, "Checkpoints (default: a temporary directory)")
flags.DEFINE_integer("train_steps", 1000, "Global steps to train for")
flags.DEFINE_integer("batch_size", 128, "Examples per step")
flags.DEFINE_float("learning_rate", 0.005, "Adam's learning rate")
flags.DEFINE_integer("units", 64, "Units of the LSTM cell")
flags.DEFINE_float("keep_prob", 0.9, "The LSTM outputs' keep probability while training")
flags.DEFINE_integer("seed", 1, "The graph's random seed")
FLAGS = flags.FLAGS


def model(images, keep_prob):
    """Logits [batch, 10] of images [batch, 784], read one row per time step."""
    rows = tf.reshape(images, [-1, IMAGE_PIXELS, IMAGE_PIXELS])
    cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.LSTMCell(FLAGS.units),
                                         output_keep_prob=keep_prob)
    _, state = tf.nn.dynamic_rnn(cell, rows, dtype=tf.float32)
    return tf.layers.dense(state.h, NUM_CLASSES)


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
    train = read_data_set(FLAGS.data_dir, "train", seed=task_index, one_hot=False)
    test = read_data_set(FLAGS.data_dir, "t10k", one_hot=False)

    tf.set_random_seed(FLAGS.seed)
    device = tf.train.replica_device_setter(worker_device="/job:worker/task:%d" % task_index,
                                            cluster=cluster) if cluster else None
    with tf.device(device):
        global_step = tf.train.get_or_create_global_step()
        images = tf.placeholder(tf.float32, [None, IMAGE_PIXELS * IMAGE_PIXELS], name="images")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        keep_prob = tf.placeholder_with_default(1.0, [], name="keep_prob")
        logits = model(images, keep_prob)
        loss = tf.losses.sparse_softmax_cross_entropy(labels, logits)
        correct = tf.equal(tf.argmax(logits, 1), labels)
        train_op = tf.train.AdamOptimizer(FLAGS.learning_rate).minimize(
            loss, global_step=global_step)
        tf.summary.scalar("loss", loss)

    checkpoint_dir = FLAGS.checkpoint_dir or tempfile.mkdtemp(prefix="lstm_classifier-")
    hooks = [tf.train.StopAtStepHook(last_step=FLAGS.train_steps)]
    master = server.target if server else ""
    started = time.time()
    steps = 0
    with tf.train.MonitoredTrainingSession(master=master, is_chief=is_chief,
                                           checkpoint_dir=checkpoint_dir, hooks=hooks,
                                           save_checkpoint_secs=120,
                                           save_summaries_steps=100) as sess:
        while not sess.should_stop():
            batch_images, batch_labels = train.next_batch(FLAGS.batch_size)
            _, step = sess.run([train_op, global_step],
                               {images: batch_images, labels: batch_labels,
                                keep_prob: FLAGS.keep_prob})
            steps += 1
            if steps % 100 == 0:
                print("worker %d: local step %d, global step %d, %.1f s"
                      % (task_index, steps, step, time.time() - started), flush=True)
        if is_chief:
            right = 0
            for at in range(0, test.num_examples, 1000):
                right += int(np.sum(sess.run(correct, {images: test.images[at:at + 1000],
                                                       labels: test.labels[at:at + 1000]})))
            print("worker %d: %d local steps in %.1f s; test accuracy %.4f"
                  % (task_index, steps, time.time() - started, right / test.num_examples),
                  flush=True)


if __name__ == "__main__":
    tf.app.run()
