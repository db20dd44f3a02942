"""Multi-tower training in the style of TensorFlow 1.x's cifar10_multi_gpu_train: the model's
variables on /cpu:0, one tower per device under tf.name_scope('tower_i') sharing them through
reuse_variables(), each tower's gradients on its slice of the batch, the gradients averaged, and
one apply_gradients. Only the import differs from a TensorFlow 1.x program: `import troupe as tf`.

With --device=cpu the towers run on CPU devices of this process's task (ConfigProto
device_count={"CPU": towers}, docs/gpu.md); with --device=gpu on its GPUs. A step of k towers
with batch_size examples each computes the same update as one device with k * batch_size
examples (the mean loss of equal slices averages to the mean loss of the whole), which
test/python/test_towers.py checks.

    python3 examples/python/towers.py --towers=2 --train_steps=500
"""

import numpy as np

import troupe as tf
from fashion_mnist import read_data_set

flags = tf.app.flags
flags.DEFINE_integer("towers", 2, "Number of towers (devices)")
flags.DEFINE_string("device", "cpu", "Device type of the towers: cpu or gpu")
flags.DEFINE_string("data_dir", "/usr/share/datasets/fashion-mnist",
                    "Directory of the (Fashion-)MNIST IDX files")
flags.DEFINE_integer("hidden_units", 128, "Units of the hidden layer")
flags.DEFINE_integer("batch_size", 64, "Examples per tower and step")
flags.DEFINE_integer("train_steps", 500, "Number of training steps")
flags.DEFINE_float("learning_rate", 0.1, "Learning rate")
FLAGS = flags.FLAGS

PIXELS, CLASSES = 784, 10


def inference(images, hidden_units):
    """The MLP's logits; its variables are created on /cpu:0 (or reused there)."""
    def variable(name, shape, initializer):
        with tf.device("/cpu:0"):
            return tf.get_variable(name, shape, initializer=initializer)

    w1 = variable("hidden/weights", [PIXELS, hidden_units],
                  tf.glorot_uniform_initializer(seed=1))
    b1 = variable("hidden/biases", [hidden_units], tf.zeros_initializer())
    w2 = variable("logits/weights", [hidden_units, CLASSES],
                  tf.glorot_uniform_initializer(seed=2))
    b2 = variable("logits/biases", [CLASSES], tf.zeros_initializer())
    hidden = tf.nn.relu(tf.nn.xw_plus_b(images, w1, b1))
    return tf.nn.xw_plus_b(hidden, w2, b2)


def tower_loss(images, labels, hidden_units):
    logits = inference(images, hidden_units)
    return tf.reduce_mean(
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))


def average_gradients(tower_grads):
    """The mean over the towers of each variable's gradient (cifar10_multi_gpu_train's)."""
    average_grads = []
    for grad_and_vars in zip(*tower_grads):
        grads = [tf.expand_dims(g, 0) for g, _ in grad_and_vars]
        grad = tf.reduce_mean(tf.concat(grads, 0), 0)
        average_grads.append((grad, grad_and_vars[0][1]))
    return average_grads


def build(towers, device, hidden_units, learning_rate):
    """The training graph: placeholders for the whole batch (towers * batch_size rows), the
    train op, the mean loss over the towers, and the variables."""
    with tf.device("/cpu:0"):
        global_step = tf.train.get_or_create_global_step()
        images = tf.placeholder(tf.float32, [None, PIXELS], name="images")
        labels = tf.placeholder(tf.int64, [None], name="labels")
        image_slices = tf.split(images, towers)
        label_slices = tf.split(labels, towers)
    opt = tf.train.GradientDescentOptimizer(learning_rate)
    tower_grads, losses = [], []
    with tf.variable_scope(tf.get_variable_scope()):
        for i in range(towers):
            with tf.device("/%s:%d" % (device, i)), tf.name_scope("tower_%d" % i):
                loss = tower_loss(image_slices[i], label_slices[i], hidden_units)
                tf.get_variable_scope().reuse_variables()
                tower_grads.append(opt.compute_gradients(loss))
                losses.append(loss)
    with tf.device("/cpu:0"):
        train_op = opt.apply_gradients(average_gradients(tower_grads), global_step=global_step)
        mean_loss = tf.add_n(losses) / float(towers)
    return images, labels, train_op, mean_loss, tf.trainable_variables()


def train(towers, device, images, labels, steps, batch_size, hidden_units=128,
          learning_rate=0.1, log_every=0):
    """Trains on `images`/`labels` (numpy arrays) in order, batch after batch, and returns the
    losses and the final values of the variables (by name)."""
    graph = tf.Graph()
    with graph.as_default():
        x, y, train_op, loss, variables = build(towers, device, hidden_units, learning_rate)
        config = tf.ConfigProto(device_count={"CPU": towers} if device == "cpu" else {})
        losses = []
        with tf.Session(config=config) as sess:
            sess.run(tf.global_variables_initializer())
            step_examples = towers * batch_size
            for step in range(steps):
                begin = (step * step_examples) % (len(images) - step_examples + 1)
                feed = {x: images[begin:begin + step_examples],
                        y: labels[begin:begin + step_examples]}
                _, value = sess.run([train_op, loss], feed_dict=feed)
                losses.append(float(value))
                if log_every and (step + 1) % log_every == 0:
                    print("step %d: loss %.4f" % (step + 1, value))
            values = sess.run({v.op.name: v for v in variables})
    return losses, values


def main(_):
    data = read_data_set(FLAGS.data_dir, "train", one_hot=False)
    losses, _ = train(FLAGS.towers, FLAGS.device, data.images, data.labels.astype(np.int64),
                      FLAGS.train_steps, FLAGS.batch_size, FLAGS.hidden_units,
                      FLAGS.learning_rate, log_every=100)
    print("%d towers on %s: final loss %.4f" % (FLAGS.towers, FLAGS.device, losses[-1]))
    return 0


if __name__ == "__main__":
    tf.app.run()
