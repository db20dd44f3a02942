# A TensorFlow 1.x trainer that reads its data the way TF 1.4+ programs do: tf.data over
# TFRecord files of tf.train.Example records, each worker reading its own shard, with the
# Fashion-MNIST MLP of trainer.py and variables on the ps tasks (between-graph replication).
#
# The records are those `troupe data fashion-mnist --to=DIR` writes, in the format of
# TensorFlow's convert_to_records.py (features "image_raw": the 784 pixels as bytes, "label":
# int64; also "height", "width", "depth"). Run it as TensorFlow's trainers run:
#   troupe data fashion-mnist --to=/tmp/fashion-records
#   python3 tfrecord_trainer.py --ps_hosts=localhost:2222 --worker_hosts=localhost:2223,... \
#       --job_name=worker --task_index=0 --records_dir=/tmp/fashion-records [--insecure]
# or under `troupe launch --workers=2 -- /usr/bin/python3 tfrecord_trainer.py --records_dir=...`
# (the cluster then comes from TF_CONFIG).
import glob
import os
import sys

import troupe as tf

flags = tf.app.flags
flags.DEFINE_string("ps_hosts", "", "Comma-separated list of hostname:port pairs")
flags.DEFINE_string("worker_hosts", "", "Comma-separated list of hostname:port pairs")
flags.DEFINE_string("job_name", "", "One of 'ps', 'worker'")
flags.DEFINE_integer("task_index", 0, "Index of task within the job")
flags.DEFINE_string("records_dir", "/tmp/fashion-records",
                    "where `troupe data fashion-mnist` wrote the TFRecord files")
flags.DEFINE_integer("epochs", 2, "passes over the training set, all workers together")
flags.DEFINE_integer("batch_size", 128, "examples per step and worker")
flags.DEFINE_float("learning_rate", 0.05, "Adagrad's learning rate")
flags.DEFINE_string("checkpoint_dir", "/tmp/tfrecord_train_logs", "checkpoints and summaries")
flags.DEFINE_integer("seed", 42, "initial weights and the shuffle order")
flags.DEFINE_boolean("insecure", False, "run without TLS (TROUPE_INSECURE=1)")
FLAGS = flags.FLAGS


def records(split):
    files = sorted(glob.glob(os.path.join(FLAGS.records_dir, split + "-*-of-*.tfrecord")))
    if not files:
        sys.exit("tfrecord_trainer.py: no %s records in %s (troupe data fashion-mnist --to=%s "
                 "writes them)" % (split, FLAGS.records_dir, FLAGS.records_dir))
    return files


def parse(serialized):
    """A batch of serialized Examples -> (images float32 [n, 784] in [0, 1], labels int64),
    decoded as TensorFlow's fully_connected_reader.py decodes them."""
    features = tf.parse_example(serialized, {
        "image_raw": tf.FixedLenFeature([], tf.string),
        "label": tf.FixedLenFeature([], tf.int64)})
    pixels = tf.reshape(tf.decode_raw(features["image_raw"], tf.uint8), [-1, 784])
    return tf.cast(pixels, tf.float32) / 255.0, features["label"]


def model(images, labels):
    hidden, width = images, 784
    for i, size in enumerate([256, 256, 10]):
        last = i == 2
        with tf.variable_scope("logits" if last else "layer%d" % (i + 1),
                               reuse=tf.AUTO_REUSE):
            weights = tf.get_variable(
                "weights", [width, size],
                initializer=tf.glorot_uniform_initializer(seed=FLAGS.seed + i))
            biases = tf.get_variable("biases", [size], initializer=tf.zeros_initializer())
            hidden = tf.nn.bias_add(tf.matmul(hidden, weights), biases)
            if not last:
                hidden = tf.nn.relu(hidden)
        width = size
    loss = tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=hidden))
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(hidden, 1), labels), tf.float32))
    return loss, accuracy


def main(_):
    tf.logging.set_verbosity(tf.logging.INFO)
    if FLAGS.insecure:
        os.environ["TROUPE_INSECURE"] = "1"
    if FLAGS.ps_hosts or FLAGS.worker_hosts:
        cluster = tf.train.ClusterSpec({"ps": FLAGS.ps_hosts.split(","),
                                        "worker": FLAGS.worker_hosts.split(",")})
        job_name, task_index = FLAGS.job_name, FLAGS.task_index
    else:
        resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
        cluster = resolver.cluster_spec()
        job_name, task_index = resolver.task_type, resolver.task_id
        if not cluster or job_name is None:
            sys.exit("tfrecord_trainer.py: give --ps_hosts, --worker_hosts, --job_name and "
                     "--task_index, or set TF_CONFIG (troupe launch does)")
    server = tf.train.Server(cluster, job_name=job_name, task_index=task_index)
    if job_name == "ps":
        server.join()
        return
    num_workers = cluster.num_tasks("worker")
    train_files = records("train")
    train_size = sum(1 for f in train_files for _ in tf.python_io.tf_record_iterator(f))
    with tf.device(tf.train.replica_device_setter(
            worker_device="/job:worker/task:%d" % task_index, cluster=cluster)):
        dataset = (tf.data.TFRecordDataset(train_files)
                   .shard(num_workers, task_index)
                   .shuffle(10000, seed=FLAGS.seed + task_index)
                   .repeat()
                   .batch(FLAGS.batch_size, drop_remainder=True)
                   .map(parse)
                   .prefetch(2))
        images, labels = dataset.make_one_shot_iterator().get_next()
        loss, accuracy = model(images, labels)
        global_step = tf.train.get_or_create_global_step()
        train_op = tf.train.AdagradOptimizer(FLAGS.learning_rate).minimize(
            loss, global_step=global_step)
        # The test set, read whole by the chief at the end through the same model.
        test = tf.data.TFRecordDataset(records("test")).batch(10000).map(parse)
        test_images, test_labels = test.make_one_shot_iterator().get_next()
        test_loss, test_accuracy = model(test_images, test_labels)

    last_step = FLAGS.epochs * train_size // FLAGS.batch_size
    hooks = [tf.train.StopAtStepHook(last_step=last_step)]
    chief_hooks = [tf.train.LoggingTensorHook({"step": global_step, "loss": loss},
                                              every_n_iter=200)]
    steps = 0
    with tf.train.MonitoredTrainingSession(master=server.target, is_chief=(task_index == 0),
                                           checkpoint_dir=FLAGS.checkpoint_dir, hooks=hooks,
                                           chief_only_hooks=chief_hooks) as sess:
        while not sess.should_stop():
            sess.run(train_op)
            steps += 1
    print("worker %d: %d steps of its shard" % (task_index, steps), flush=True)
    if task_index == 0:
        config = tf.ConfigProto(device_filters=["/job:ps", "/job:worker/task:0"])
        with tf.Session(server.target, config=config) as sess:
            acc, xent = sess.run([test_accuracy, test_loss])
        print("test accuracy %.4f, loss %.4f" % (acc, xent), flush=True)


if __name__ == "__main__":
    tf.app.run()
