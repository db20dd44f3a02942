# The seed's between-graph replicated trainer (trainer.py), with its "Build model..." part
# filled in: the Fashion-MNIST MLP that `troupe train` trains (784 -> 256 -> 256 -> 10, ReLU,
# Adagrad as the seed has it), read with numpy from Debian's dataset-fashion-mnist files.
#
# What differs from the seed, all additions with defaults, so its four command lines run as
# they are (on loopback, with TLS credentials in TROUPE_TLS_CERT/KEY/CA, or --insecure):
#   - without --ps_hosts/--worker_hosts the cluster and task come from TF_CONFIG, so
#     `troupe launch --ps 2 --workers 2 -- python3 examples/python/trainer.py` starts it;
#   - StopAtStepHook stops after --epochs passes over the data (all workers together), not at
#     step 1000000; --learning_rate, --batch_size, --data_dir, --checkpoint_dir, --seed;
#   - the chief logs the loss every 200 steps and, once done, prints the test accuracy;
#   - --insecure runs without TLS (TROUPE_INSECURE=1).
import argparse
import gzip
import os
import sys
import time

import numpy as np

import troupe as tf

FLAGS = None


def load_fashion_mnist(data_dir, train):
    """(images float32 [n, 784] in [0, 1], labels int64 [n]) from the IDX files."""
    prefix = "train" if train else "t10k"
    with gzip.open(os.path.join(data_dir, prefix + "-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)
    with gzip.open(os.path.join(data_dir, prefix + "-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    return images.astype(np.float32) / 255.0, labels.astype(np.int64)


def batches(images, labels, shard, num_shards, batch_size, seed):
    """This worker's shard (every num_shards-th example), reshuffled every epoch, in full
    batches."""
    indices = np.arange(shard, len(labels), num_shards)
    epoch = 0
    while True:
        order = np.random.default_rng([seed, shard, epoch]).permutation(indices)
        for start in range(0, len(order) - batch_size + 1, batch_size):
            chosen = order[start:start + batch_size]
            yield images[chosen], labels[chosen]
        epoch += 1


def build_model(images, labels, seed):
    hidden = images
    width = 784
    for i, size in enumerate([256, 256, 10]):
        last = i == 2
        with tf.variable_scope("logits" if last else "layer%d" % (i + 1)):
            weights = tf.get_variable(
                "weights", [width, size],
                initializer=tf.glorot_uniform_initializer(seed=seed + i))
            biases = tf.get_variable("biases", [size], initializer=tf.zeros_initializer())
            hidden = tf.nn.bias_add(tf.matmul(hidden, weights), biases)
            if not last:
                hidden = tf.nn.relu(hidden)
        width = size
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=hidden),
        name="loss")
    correct = tf.equal(tf.argmax(hidden, 1), labels)
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32), name="accuracy")
    return loss, accuracy


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    if FLAGS.insecure:
        os.environ["TROUPE_INSECURE"] = "1"
    if FLAGS.ps_hosts or FLAGS.worker_hosts:
        ps_hosts = FLAGS.ps_hosts.split(",")
        worker_hosts = FLAGS.worker_hosts.split(",")
        # Create a cluster from the parameter server and worker hosts.
        cluster = tf.train.ClusterSpec({"ps": ps_hosts, "worker": worker_hosts})
        job_name, task_index = FLAGS.job_name, FLAGS.task_index
    else:
        resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        cluster = resolver.cluster_spec()
        job_name, task_index = resolver.task_type, resolver.task_id
        if not cluster or job_name is None:
            sys.exit("trainer.py: give --ps_hosts, --worker_hosts, --job_name and --task_index, "
                     "or set TF_CONFIG (troupe launch does)")

    # Create and start a server for the local task.
    server = tf.train.Server(cluster,
                             job_name=job_name,
                             task_index=task_index)

    if job_name == "ps":
        server.join()
    elif job_name == "worker":
        num_workers = cluster.num_tasks("worker")
        train_images, train_labels = load_fashion_mnist(FLAGS.data_dir, train=True)

        # Assigns ops to the local worker by default.
        with tf.device(tf.train.replica_device_setter(
                worker_device="/job:worker/task:%d" % task_index,
                cluster=cluster)):

            # Build model...
            images = tf.placeholder(tf.float32, [None, 784], name="images")
            labels = tf.placeholder(tf.int64, [None], name="labels")
            loss, accuracy = build_model(images, labels, FLAGS.seed)
            global_step = tf.contrib.framework.get_or_create_global_step()

            train_op = tf.train.AdagradOptimizer(FLAGS.learning_rate).minimize(
                loss, global_step=global_step)

        last_step = FLAGS.epochs * len(train_labels) // FLAGS.batch_size
        # The StopAtStepHook handles stopping after running given steps.
        hooks = [tf.train.StopAtStepHook(last_step=last_step)]
        chief_hooks = [tf.train.LoggingTensorHook(
            {"step": global_step, "loss": loss}, every_n_iter=200)]

        # The MonitoredTrainingSession takes care of session initialization,
        # restoring from a checkpoint, saving to a checkpoint, and closing when done
        # or an error occurs.
        data = batches(train_images, train_labels, task_index, num_workers, FLAGS.batch_size,
                       FLAGS.seed)
        start = time.time()
        steps = 0
        with tf.train.MonitoredTrainingSession(master=server.target,
                                               is_chief=(task_index == 0),
                                               checkpoint_dir=FLAGS.checkpoint_dir,
                                               hooks=hooks,
                                               chief_only_hooks=chief_hooks) as mon_sess:
            while not mon_sess.should_stop():
                # Run a training step asynchronously.
                # See `tf.train.SyncReplicasOptimizer` for additional details on how to
                # perform *synchronous* training.
                # mon_sess.run handles AbortedError in case of preempted PS.
                batch_images, batch_labels = next(data)
                mon_sess.run(train_op, feed_dict={images: batch_images, labels: batch_labels})
                steps += 1
        elapsed = time.time() - start
        print("worker %d: %d steps in %.1f s, %.0f examples/s"
              % (task_index, steps, elapsed, steps * FLAGS.batch_size / elapsed), flush=True)

        if task_index == 0:
            test_images, test_labels = load_fashion_mnist(FLAGS.data_dir, train=False)
            # Only this task and the ps: worker 1 may have finished and gone.
            config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"])
            with tf.Session(server.target, config=config) as sess:
                test_accuracy, test_loss = sess.run(
                    [accuracy, loss], feed_dict={images: test_images, labels: test_labels})
            print("test accuracy %.4f, loss %.4f" % (test_accuracy, test_loss), flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.register("type", "bool", lambda v: v.lower() == "true")
    # Flags for defining the tf.train.ClusterSpec
    parser.add_argument(
        "--ps_hosts",
        type=str,
        default="",
        help="Comma-separated list of hostname:port pairs"
    )
    parser.add_argument(
        "--worker_hosts",
        type=str,
        default="",
        help="Comma-separated list of hostname:port pairs"
    )
    parser.add_argument(
        "--job_name",
        type=str,
        default="",
        help="One of 'ps', 'worker'"
    )
    # Flags for defining the tf.train.Server
    parser.add_argument(
        "--task_index",
        type=int,
        default=0,
        help="Index of task within the job"
    )
    # troupe's additions (see the top of this file).
    parser.add_argument("--epochs", type=int, default=15, help="passes over the training set")
    parser.add_argument("--batch_size", type=int, default=128, help="examples per step")
    parser.add_argument("--learning_rate", type=float, default=0.05, help="Adagrad's rate")
    parser.add_argument("--data_dir", type=str, default="/usr/share/datasets/fashion-mnist",
                        help="where the Fashion-MNIST .gz files are")
    parser.add_argument("--checkpoint_dir", type=str, default="/tmp/train_logs",
                        help="checkpoints and TensorBoard logs")
    parser.add_argument("--seed", type=int, default=42, help="initial weights and data order")
    parser.add_argument("--insecure", action="store_true", help="run without TLS")
    FLAGS, unparsed = parser.parse_known_args()
    tf.app.run(main=main, argv=[sys.argv[0]] + unparsed)
