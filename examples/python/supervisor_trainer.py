"""Asynchronous training under `tf.train.Supervisor`, as TensorFlow 1.x's "Supervisor: training
helper for days-long trainings" shows it: between-graph replication, `managed_session`, the
`sv.should_stop()` loop, and the Supervisor's own services on the chief — checkpoints every
--save_model_secs, summaries (`tf.summary.merge_all()`, run by the Supervisor) and
global_step/sec every --save_summaries_secs, all in --logdir, where a restarted chief resumes.

The model is a softmax classifier of points drawn in the graph itself (`tf.random_normal`),
labelled by the side of a fixed hyperplane they fall on, so no step needs a feed and the
Supervisor's summary thread can run the summaries on its own. At the end each worker prints the
accuracy on a fresh batch. Only the import differs from a TensorFlow 1.x program.

    python3 supervisor_trainer.py --ps_hosts=localhost:2222 \
        --worker_hosts=localhost:2223,localhost:2224 --job_name=ps --task_index=0
    python3 supervisor_trainer.py ... --job_name=worker --task_index=0   (and 1)

or `troupe launch --ps 1 --workers 2 -- python3 examples/python/supervisor_trainer.py`.
"""

import os
import tempfile

import numpy as np

import troupe as tf
from cluster_flags import cluster_and_task, define_cluster_flags

flags = tf.app.flags
define_cluster_flags(flags)
flags.DEFINE_string("logdir", None, "Checkpoints and summaries (default: a temporary directory)")
flags.DEFINE_integer("train_steps", 5000, "Global steps to train for")
flags.DEFINE_integer("batch_size", 64, "Examples per step")
flags.DEFINE_integer("features", 20, "Dimensions of the points")
flags.DEFINE_float("learning_rate", 0.5, "Gradient descent's learning rate")
flags.DEFINE_integer("save_model_secs", 600, "Seconds between the chief's checkpoints")
flags.DEFINE_integer("save_summaries_secs", 120, "Seconds between the chief's summaries")
FLAGS = flags.FLAGS


def main(_):
    if FLAGS.insecure:
        os.environ["TROUPE_INSECURE"] = "1"
    cluster, job_name, task_index = cluster_and_task(FLAGS)
    server = tf.train.Server(cluster, job_name=job_name, task_index=task_index)
    if job_name == "ps":
        server.join()
        return

    is_chief = task_index == 0
    hyperplane = np.random.RandomState(7).normal(size=[FLAGS.features, 1]).astype(np.float32)
    with tf.device(tf.train.replica_device_setter(
            worker_device="/job:worker/task:%d" % task_index, cluster=cluster)):
        global_step = tf.train.get_or_create_global_step()
        points = tf.random_normal([FLAGS.batch_size, FLAGS.features])
        labels = tf.cast(tf.greater(tf.matmul(points, hyperplane), 0.0), tf.int64)
        labels = tf.reshape(labels, [-1])
        weights = tf.Variable(tf.zeros([FLAGS.features, 2]), name="weights")
        biases = tf.Variable(tf.zeros([2]), name="biases")
        logits = tf.nn.xw_plus_b(points, weights, biases)
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
            name="xent")
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32),
                                  name="accuracy")
        train_op = tf.train.GradientDescentOptimizer(FLAGS.learning_rate).minimize(
            loss, global_step=global_step)
        tf.summary.scalar("loss", loss)
        tf.summary.scalar("batch_accuracy", accuracy)
        tf.summary.histogram("weights", weights)

    logdir = FLAGS.logdir or tempfile.mkdtemp(prefix="supervisor_trainer-")
    sv = tf.train.Supervisor(is_chief=is_chief, logdir=logdir, global_step=global_step,
                             save_model_secs=FLAGS.save_model_secs,
                             save_summaries_secs=FLAGS.save_summaries_secs,
                             recovery_wait_secs=1)
    config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:%d" % task_index])
    steps = 0
    with sv.managed_session(server.target, config=config) as sess:
        step = sess.run(global_step)
        while not sv.should_stop() and step < FLAGS.train_steps:
            _, step = sess.run([train_op, global_step])
            steps += 1
        if is_chief:
            sv.saver.save(sess, sv.save_path, global_step=global_step)
        final_accuracy = np.mean([sess.run(accuracy) for _ in range(10)])
    print("worker %d: %d steps; accuracy %.4f at global step %d"
          % (task_index, steps, final_accuracy, step))


if __name__ == "__main__":
    tf.app.run()
