"""A distributed MNIST trainer in the style of TensorFlow 1.x's mnist_replica: one hidden layer,
tf.app.flags, between-graph replication with replica_device_setter, tf.train.Supervisor, Adam,
and --sync_replicas for SyncReplicasOptimizer. Only the import differs from a TensorFlow 1.x
program: `import troupe as tf`.

The data is Fashion-MNIST from Debian's dataset-fashion-mnist (--data_dir), read with numpy
into a small next_batch() reader (fashion_mnist.py), as TensorFlow's tutorial reader is used.

Run it as TensorFlow's, one process per task (add --insecure on loopback without TLS):

    python3 mnist_replica.py --ps_hosts=localhost:2222 \
        --worker_hosts=localhost:2223,localhost:2224 --job_name=ps --task_index=0
    python3 mnist_replica.py ... --job_name=worker --task_index=0
    python3 mnist_replica.py ... --job_name=worker --task_index=1 [--sync_replicas]

or with troupe launch, which sets TF_CONFIG and TLS credentials for every task:

    troupe launch --ps 1 --workers 2 -- python3 examples/python/mnist_replica.py
"""

import math
import os
import sys
import tempfile
import time

import troupe as tf
from cluster_flags import cluster_and_task
from fashion_mnist import IMAGE_PIXELS, read_data_set

flags = tf.app.flags
flags.DEFINE_string("data_dir", "/usr/share/datasets/fashion-mnist",
                    "Directory of the (Fashion-)MNIST IDX files")
flags.DEFINE_integer("task_index", None,
                     "Worker task index, should be >= 0. task_index=0 is the master worker "
                     "task that performs the variable initialization")
flags.DEFINE_integer("replicas_to_aggregate", None,
                     "Number of replicas to aggregate before parameter update is applied "
                     "(For sync_replicas mode only; default: num_workers)")
flags.DEFINE_integer("hidden_units", 100, "Number of units in the hidden layer of the NN")
flags.DEFINE_integer("train_steps", 2000, "Number of (global) training steps to perform")
flags.DEFINE_integer("batch_size", 100, "Training batch size")
flags.DEFINE_float("learning_rate", 0.01, "Learning rate")
flags.DEFINE_boolean("sync_replicas", False,
                     "Use the sync_replicas (synchronized replicas) mode, wherein the parameter "
                     "updates from workers are aggregated before applied to avoid stale "
                     "gradients")
flags.DEFINE_string("ps_hosts", None, "Comma-separated list of hostname:port pairs")
flags.DEFINE_string("worker_hosts", None, "Comma-separated list of hostname:port pairs")
flags.DEFINE_string("job_name", None, "job name: worker or ps")
flags.DEFINE_string("train_dir", None, "Checkpoints and event files (default: a temporary "
                                       "directory)")
flags.DEFINE_boolean("insecure", False, "Run without TLS (TROUPE_INSECURE=1)")
FLAGS = flags.FLAGS


def main(unused_argv):
    if FLAGS.insecure:
        os.environ["TROUPE_INSECURE"] = "1"
    cluster, job_name, task_index = cluster_and_task(FLAGS)
    num_workers = cluster.num_tasks("worker")
    print("job name = %s" % job_name)
    print("task index = %d" % task_index)

    server = tf.train.Server(cluster, job_name=job_name, task_index=task_index)
    if job_name == "ps":
        server.join()
        return 0

    is_chief = task_index == 0
    train_dir = FLAGS.train_dir or tempfile.mkdtemp(prefix="mnist_replica-")
    mnist_train = read_data_set(FLAGS.data_dir, "train", seed=task_index)
    mnist_validation = read_data_set(FLAGS.data_dir, "t10k", seed=0)

    worker_device = "/job:worker/task:%d/cpu:0" % task_index
    with tf.device(tf.train.replica_device_setter(worker_device=worker_device,
                                                  ps_device="/job:ps/cpu:0",
                                                  cluster=cluster)):
        global_step = tf.Variable(0, name="global_step", trainable=False)

        # Variables of the hidden layer
        hid_w = tf.Variable(tf.truncated_normal([IMAGE_PIXELS * IMAGE_PIXELS, FLAGS.hidden_units],
                                                stddev=1.0 / IMAGE_PIXELS, seed=1), name="hid_w")
        hid_b = tf.Variable(tf.zeros([FLAGS.hidden_units]), name="hid_b")

        # Variables of the softmax layer
        sm_w = tf.Variable(tf.truncated_normal([FLAGS.hidden_units, 10],
                                               stddev=1.0 / math.sqrt(FLAGS.hidden_units),
                                               seed=2), name="sm_w")
        sm_b = tf.Variable(tf.zeros([10]), name="sm_b")

        x = tf.placeholder(tf.float32, [None, IMAGE_PIXELS * IMAGE_PIXELS])
        y_ = tf.placeholder(tf.float32, [None, 10])

        hid_lin = tf.nn.xw_plus_b(x, hid_w, hid_b)
        hid = tf.nn.relu(hid_lin)

        y = tf.nn.softmax(tf.nn.xw_plus_b(hid, sm_w, sm_b))
        cross_entropy = -tf.reduce_sum(y_ * tf.log(tf.clip_by_value(y, 1e-10, 1.0)))
        correct = tf.equal(tf.argmax(y, 1), tf.argmax(y_, 1))
        accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))

        opt = tf.train.AdamOptimizer(FLAGS.learning_rate)
        if FLAGS.sync_replicas:
            replicas_to_aggregate = FLAGS.replicas_to_aggregate or num_workers
            opt = tf.train.SyncReplicasOptimizer(opt,
                                                 replicas_to_aggregate=replicas_to_aggregate,
                                                 total_num_replicas=num_workers,
                                                 name="mnist_sync_replicas")
        train_step = opt.minimize(cross_entropy, global_step=global_step)
        # The step reached once this worker's step is done. Fetched beside train_step, the
        # variable may be read before the update lands: with --sync_replicas a worker could then
        # take the last token, see the step before the last, and wait for ever for a token that
        # no other worker's gradient will make.
        with tf.control_dependencies([train_step]):
            step_reached = tf.identity(global_step)

        if FLAGS.sync_replicas:
            local_init_op = opt.chief_init_op if is_chief else opt.local_step_init_op
            ready_for_local_init_op = opt.ready_for_local_init_op
            chief_queue_runner = opt.get_chief_queue_runner()
            sync_init_op = opt.get_init_tokens_op()

        init_op = tf.global_variables_initializer()

    # The summaries need the fed batch: the chief computes them in its loop and hands them to
    # the Supervisor (summary_op=None keeps its summary thread from running them unfed).
    tf.summary.scalar("cross_entropy", cross_entropy)
    tf.summary.scalar("accuracy", accuracy)
    summaries = tf.summary.merge_all()
    if FLAGS.sync_replicas:
        sv = tf.train.Supervisor(is_chief=is_chief, logdir=train_dir, init_op=init_op,
                                 local_init_op=local_init_op,
                                 ready_for_local_init_op=ready_for_local_init_op,
                                 summary_op=None, recovery_wait_secs=1,
                                 global_step=global_step)
    else:
        sv = tf.train.Supervisor(is_chief=is_chief, logdir=train_dir, init_op=init_op,
                                 summary_op=None, recovery_wait_secs=1,
                                 global_step=global_step)

    sess_config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False,
                                 device_filters=["/job:ps", "/job:worker/task:%d" % task_index])

    if is_chief:
        print("Worker %d: Initializing session..." % task_index)
    else:
        print("Worker %d: Waiting for session to be initialized..." % task_index)
    sess = sv.prepare_or_wait_for_session(server.target, config=sess_config)
    print("Worker %d: Session initialization complete." % task_index)

    if FLAGS.sync_replicas and is_chief:
        # Chief worker will start the chief queue runner and call the init op.
        sess.run(sync_init_op)
        sv.start_queue_runners(sess, [chief_queue_runner])

    time_begin = time.time()
    print("Training begins @ %f" % time_begin)
    local_step = 0
    while True:
        batch_xs, batch_ys = mnist_train.next_batch(FLAGS.batch_size)
        train_feed = {x: batch_xs, y_: batch_ys}
        _, step = sess.run([train_step, step_reached], feed_dict=train_feed)
        local_step += 1
        if local_step % 100 == 0:
            print("%f: Worker %d: training step %d done (global step: %d)"
                  % (time.time(), task_index, local_step, step))
            if is_chief:
                sv.summary_computed(sess, sess.run(summaries, feed_dict=train_feed), step)
        if step >= FLAGS.train_steps:
            break

    time_end = time.time()
    print("Training ends @ %f" % time_end)
    print("Training elapsed time: %f s" % (time_end - time_begin))

    feed = {x: mnist_validation.images, y_: mnist_validation.labels}
    val_xent, val_accuracy = sess.run([cross_entropy, accuracy], feed_dict=feed)
    print("After %d training step(s), validation cross entropy = %g, accuracy = %.4f"
          % (FLAGS.train_steps, val_xent, val_accuracy))
    # Stops the Supervisor's services and queue runners; the chief's sync queue runner then puts
    # a token per replica in the queue, so a worker still waiting for one ends its step too.
    sv.stop()
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    tf.app.run()
