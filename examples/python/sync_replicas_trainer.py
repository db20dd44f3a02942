"""Synchronous data-parallel training as TensorFlow 1.x programs write it: between-graph
replication, TensorFlow's usual int32 global step (`tf.Variable(0, trainable=False,
name="global_step")`), `tf.train.SyncReplicasOptimizer` around Adagrad, and
`tf.train.MonitoredTrainingSession` with the optimizer's hook, `StopAtStepHook` and
`LoggingTensorHook`. The chief checkpoints to --checkpoint_dir and writes the graph, the merged
summaries and global_step/sec there every --save_summaries_steps; at the end it prints the test
accuracy. Only the import differs from a TensorFlow 1.x program: `import troupe as tf`.

One process per task (add --insecure on loopback without TLS):

    python3 sync_replicas_trainer.py --ps_hosts=localhost:2222 \
        --worker_hosts=localhost:2223,localhost:2224 --job_name=ps --task_index=0
    python3 sync_replicas_trainer.py ... --job_name=worker --task_index=0
    python3 sync_replicas_trainer.py ... --job_name=worker --task_index=1

or `troupe launch --ps 1 --workers 2 -- python3 examples/python/sync_replicas_trainer.py`.
"""

import os
import tempfile
import time

import troupe as tf
from cluster_flags import cluster_and_task, define_cluster_flags
from fashion_mnist import IMAGE_PIXELS, NUM_CLASSES, read_data_set

flags = tf.app.flags
define_cluster_flags(flags)
flags.DEFINE_string("data_dir", "/usr/share/datasets/fashion-mnist",
                    "Directory of the (Fashion-)MNIST IDX files")
flags.DEFINE_string("checkpoint_dir", None,
                    "Checkpoints and summaries (default: a temporary directory)")
flags.DEFINE_integer("train_steps", 400, "Global steps to train for")
flags.DEFINE_integer("batch_size", 100, "Examples per worker and step")
flags.DEFINE_integer("hidden_units", 128, "Units of the hidden layer")
flags.DEFINE_float("learning_rate", 0.1, "Adagrad's learning rate")
flags.DEFINE_integer("replicas_to_aggregate", None,
                     "Gradients aggregated per update (default: the number of workers)")
flags.DEFINE_integer("save_summaries_steps", 50, "Global steps between summaries")
FLAGS = flags.FLAGS


def dense(inputs, units, name, activation=None):
    with tf.variable_scope(name):
        weights = tf.get_variable("weights", [int(inputs.shape[1]), units],
                                  initializer=tf.glorot_uniform_initializer(seed=1))
        biases = tf.get_variable("biases", [units], initializer=tf.zeros_initializer())
        outputs = tf.nn.xw_plus_b(inputs, weights, biases)
        return activation(outputs) if activation is not None else outputs


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    if FLAGS.insecure:
        os.environ["TROUPE_INSECURE"] = "1"
    cluster, job_name, task_index = cluster_and_task(FLAGS)
    server = tf.train.Server(cluster, job_name=job_name, task_index=task_index)
    if job_name == "ps":
        server.join()
        return

    num_workers = cluster.num_tasks("worker")
    is_chief = task_index == 0
    train = read_data_set(FLAGS.data_dir, "train", seed=task_index, one_hot=False)
    with tf.device(tf.train.replica_device_setter(
            worker_device="/job:worker/task:%d" % task_index, cluster=cluster)):
        global_step = tf.Variable(0, trainable=False, name="global_step")
        images = tf.placeholder(tf.float32, [None, IMAGE_PIXELS ** 2], name="images")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        hidden = dense(images, FLAGS.hidden_units, "hidden", activation=tf.nn.relu)
        logits = dense(hidden, NUM_CLASSES, "logits")
        loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits),
            name="xent")
        accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), labels), tf.float32),
                                  name="accuracy")
        tf.summary.scalar("loss", loss)
        tf.summary.scalar("train_accuracy", accuracy)
        tf.summary.histogram("logits", logits)

        opt = tf.train.SyncReplicasOptimizer(
            tf.train.AdagradOptimizer(FLAGS.learning_rate),
            replicas_to_aggregate=FLAGS.replicas_to_aggregate or num_workers,
            total_num_replicas=num_workers)
        train_op = opt.minimize(loss, global_step=global_step)

    hooks = [opt.make_session_run_hook(is_chief),
             tf.train.StopAtStepHook(last_step=FLAGS.train_steps)]
    chief_hooks = [tf.train.LoggingTensorHook({"step": global_step, "loss": loss},
                                              every_n_iter=100)]
    checkpoint_dir = FLAGS.checkpoint_dir or tempfile.mkdtemp(prefix="sync_replicas-")
    config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:%d" % task_index])
    start = time.time()
    steps = 0
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=is_chief,
                                           checkpoint_dir=checkpoint_dir, hooks=hooks,
                                           chief_only_hooks=chief_hooks,
                                           save_summaries_steps=FLAGS.save_summaries_steps,
                                           config=config) as sess:
        while not sess.should_stop():
            batch_images, batch_labels = train.next_batch(FLAGS.batch_size)
            sess.run(train_op, feed_dict={images: batch_images, labels: batch_labels})
            steps += 1
        if is_chief:
            test = read_data_set(FLAGS.data_dir, "t10k", one_hot=False)
            test_accuracy = sess.run(accuracy, {images: test.images, labels: test.labels})
    print("worker %d: %d steps in %.1f s" % (task_index, steps, time.time() - start))
    if is_chief:
        print("test accuracy %.4f after %d global steps" % (test_accuracy, FLAGS.train_steps))


if __name__ == "__main__":
    tf.app.run()
