"""Convolution, pooling, dropout and the layers built on them (tf.nn.conv2d, max_pool,
avg_pool, dropout; tf.layers and tf.contrib.layers): values against a direct numpy
computation, gradients against finite differences (float64), TensorFlow's variable names, and
the errors for bad input."""

import numpy as np
import pytest

import troupe as tf

from conftest import check_gradient

RNG = np.random.default_rng(11)


def run(fetches, feed_dict=None, init=False):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def geometry(size, window, stride, dilation, padding):
    effective = (window - 1) * dilation + 1
    if padding == "VALID":
        return (size - effective + stride) // stride, 0
    out = (size + stride - 1) // stride
    return out, max((out - 1) * stride + effective - size, 0) // 2


def reference_conv(x, w, strides, padding, dilations=(1, 1)):
    n, h, wd, c = x.shape
    kh, kw, _, o = w.shape
    oh, top = geometry(h, kh, strides[0], dilations[0], padding)
    ow, left = geometry(wd, kw, strides[1], dilations[1], padding)
    out = np.zeros((n, oh, ow, o), dtype=x.dtype)
    for i in range(oh):
        for j in range(ow):
            for ky in range(kh):
                for kx in range(kw):
                    y = i * strides[0] - top + ky * dilations[0]
                    xx = j * strides[1] - left + kx * dilations[1]
                    if 0 <= y < h and 0 <= xx < wd:
                        out[:, i, j, :] += x[:, y, xx, :] @ w[ky, kx]
    return out


def reference_pool(x, k, s, padding, reduce):
    n, h, wd, c = x.shape
    oh, top = geometry(h, k[0], s[0], 1, padding)
    ow, left = geometry(wd, k[1], s[1], 1, padding)
    out = np.zeros((n, oh, ow, c), dtype=x.dtype)
    for i in range(oh):
        for j in range(ow):
            y0, x0 = max(i * s[0] - top, 0), max(j * s[1] - left, 0)
            y1, x1 = min(i * s[0] - top + k[0], h), min(j * s[1] - left + k[1], wd)
            out[:, i, j, :] = reduce(x[:, y0:y1, x0:x1, :], axis=(1, 2))
    return out


@pytest.mark.parametrize("shape, filt, strides, padding, dilations", [
    ((2, 7, 6, 3), (3, 3, 3, 4), (1, 1), "SAME", (1, 1)),
    ((2, 7, 6, 3), (3, 2, 3, 2), (2, 2), "VALID", (1, 1)),
    ((1, 9, 9, 2), (3, 3, 2, 2), (2, 1), "SAME", (1, 1)),
    ((1, 9, 8, 1), (2, 3, 1, 3), (1, 1), "VALID", (2, 2)),
    ((3, 5, 5, 4), (1, 1, 4, 5), (1, 1), "SAME", (1, 1)),
])
def test_conv2d_against_a_direct_computation(shape, filt, strides, padding, dilations):
    x = RNG.normal(size=shape)
    w = RNG.normal(size=filt)
    y = tf.nn.conv2d(x, w, [1, *strides, 1], padding, dilations=[1, *dilations, 1])
    expected = reference_conv(x, w, strides, padding, dilations)
    assert y.shape.as_list() == list(expected.shape)
    np.testing.assert_allclose(run(y), expected, rtol=1e-10, atol=1e-10)
    y32 = tf.nn.conv2d(x.astype(np.float32), w.astype(np.float32), [1, *strides, 1], padding,
                       dilations=[1, *dilations, 1])
    np.testing.assert_allclose(run(y32), expected, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("k, s, padding", [((2, 2), (2, 2), "VALID"), ((3, 3), (2, 2), "SAME"),
                                           ((3, 2), (1, 2), "SAME"), ((2, 3), (3, 1), "VALID")])
def test_pooling_against_a_direct_computation(k, s, padding):
    x = RNG.normal(size=(2, 7, 6, 3))
    for op, reduce in ((tf.nn.max_pool, np.max), (tf.nn.avg_pool, np.mean)):
        y = op(x, [1, *k, 1], [1, *s, 1], padding)
        expected = reference_pool(x, k, s, padding, reduce)
        assert y.shape.as_list() == list(expected.shape)
        np.testing.assert_allclose(run(y), expected, rtol=1e-12)


W = RNG.normal(size=(3, 3, 2, 3))


@pytest.mark.parametrize("name, build, shape", [
    ("conv_input_same", lambda x: tf.reduce_sum(tf.square(
        tf.nn.conv2d(x, W, [1, 1, 1, 1], "SAME"))), (2, 4, 5, 2)),
    ("conv_input_strided_valid", lambda x: tf.reduce_sum(tf.square(
        tf.nn.conv2d(x, W, [1, 2, 2, 1], "VALID"))), (1, 6, 7, 2)),
    ("conv_input_dilated", lambda x: tf.reduce_sum(tf.square(
        tf.nn.conv2d(x, W, [1, 1, 1, 1], "SAME", dilations=[1, 2, 2, 1]))), (1, 5, 5, 2)),
    ("conv_filter", lambda w: tf.reduce_sum(tf.square(tf.nn.conv2d(
        RNG.normal(size=(2, 5, 4, 2)), w, [1, 2, 1, 1], "SAME"))), (3, 2, 2, 2)),
    ("max_pool", lambda x: tf.reduce_sum(tf.square(
        tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "SAME"))), (2, 5, 4, 2)),
    ("max_pool_overlapping", lambda x: tf.reduce_sum(
        tf.nn.max_pool(x, [1, 3, 3, 1], [1, 1, 1, 1], "VALID") * 1.5), (1, 5, 5, 1)),
    ("avg_pool", lambda x: tf.reduce_sum(tf.square(
        tf.nn.avg_pool(x, [1, 3, 2, 1], [1, 2, 1, 1], "SAME"))), (2, 5, 4, 2)),
])
def test_gradient_matches_finite_differences(name, build, shape):
    check_gradient(build, shape)


def test_dropout_keeps_the_expected_fraction_scaled():
    x = np.ones((200, 100), np.float32)
    y = run(tf.nn.dropout(x, keep_prob=0.25, seed=3))
    kept = y != 0
    assert 0.22 < kept.mean() < 0.28
    np.testing.assert_allclose(y[kept], 4.0)
    np.testing.assert_array_equal(run(tf.nn.dropout(x, 1.0)), x)
    shared = run(tf.nn.dropout(x, 0.5, noise_shape=[200, 1], seed=1))
    assert all(len(set(row)) == 1 for row in shared)
    with pytest.raises(ValueError, match=r"range \(0, 1\]"):
        tf.nn.dropout(x, 1.5)
    with pytest.raises(ValueError, match="floating point"):
        tf.nn.dropout(np.ones(3, np.int32), 0.5)


def test_layers_name_share_and_regularize_as_tensorflow():
    x = tf.placeholder(tf.float32, [None, 8, 8, 1])
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu,
                         kernel_regularizer=tf.contrib.layers.l2_regularizer(0.1))
    h = tf.layers.max_pooling2d(h, 2, 2)
    h = tf.layers.conv2d(h, 6, (3, 3), strides=2)
    h = tf.layers.flatten(h)
    assert h.shape.as_list() == [None, 6]
    training = tf.placeholder(tf.bool, [])
    h = tf.layers.dropout(h, 0.5, training=training)
    logits = tf.layers.dense(h, 3, name="logits")
    shared = tf.layers.dense(h, 3, name="logits", reuse=True)
    names = [v.op.name for v in tf.trainable_variables()]
    assert names == ["conv2d/kernel", "conv2d/bias", "conv2d_1/kernel", "conv2d_1/bias",
                     "logits/kernel", "logits/bias"]
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 1
    batch = RNG.normal(size=(5, 8, 8, 1)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run([logits, shared], {x: batch, training: False})
        np.testing.assert_array_equal(a, b)
        kernel = sess.run(tf.trainable_variables()[0])
        np.testing.assert_allclose(sess.run(losses[0]), 0.1 * np.sum(kernel ** 2) / 2,
                                   rtol=1e-5)
        # Dropout while training changes the logits; otherwise the inputs pass unchanged.
        assert not np.array_equal(sess.run(logits, {x: batch, training: True}), a)
    with pytest.raises(ValueError, match="already exists"):
        tf.layers.dense(h, 3, name="logits")


def test_contrib_layers_names():
    x = tf.placeholder(tf.float32, [None, 6, 6, 2])
    h = tf.contrib.layers.conv2d(x, 3, 3)
    h = tf.contrib.layers.max_pool2d(h, 2)
    h = tf.contrib.layers.flatten(h)
    out = tf.contrib.layers.fully_connected(h, 4, activation_fn=None,
                                            weights_regularizer=tf.contrib.layers.l1_regularizer(
                                                0.5))
    assert [v.op.name for v in tf.trainable_variables()] == [
        "Conv/weights", "Conv/biases", "fully_connected/weights", "fully_connected/biases"]
    assert out.shape.as_list() == [None, 4]
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 1
    value = run(out, {x: np.ones((2, 6, 6, 2), np.float32)}, init=True)
    assert value.shape == (2, 4)
    with pytest.raises(ValueError, match="scale cannot be an integer"):
        tf.contrib.layers.l2_regularizer(1)


def test_a_small_cnn_learns():
    rng = np.random.default_rng(0)
    # Two classes: a bright vertical or horizontal bar somewhere in a noisy 8x8 image.
    def batch(n):
        images = rng.normal(0, 0.3, size=(n, 8, 8, 1)).astype(np.float32)
        labels = rng.integers(0, 2, size=n)
        for i, label in enumerate(labels):
            k = rng.integers(1, 7)
            if label:
                images[i, :, k, 0] += 1.5
            else:
                images[i, k, :, 0] += 1.5
        return images, labels
    tf.set_random_seed(1)
    x = tf.placeholder(tf.float32, [None, 8, 8, 1])
    y = tf.placeholder(tf.int64, [None])
    h = tf.layers.conv2d(x, 4, 3, padding="same", activation=tf.nn.relu)
    h = tf.layers.max_pooling2d(h, 2, 2)
    logits = tf.layers.dense(tf.layers.flatten(h), 2)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train = tf.train.AdamOptimizer(0.01).minimize(loss)
    accuracy = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1), y), tf.float32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(150):
            images, labels = batch(32)
            sess.run(train, {x: images, y: labels})
        images, labels = batch(500)
        assert sess.run(accuracy, {x: images, y: labels}) > 0.95


def test_bad_input_names_the_node_or_argument():
    x = np.zeros((1, 5, 5, 2), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="channels but the filter expects"):
        tf.nn.conv2d(x, np.zeros((3, 3, 4, 1), np.float32), [1, 1, 1, 1], "SAME")
    with pytest.raises(tf.errors.InvalidArgumentError, match="larger than the input"):
        tf.nn.conv2d(x, np.zeros((7, 1, 2, 1), np.float32), [1, 1, 1, 1], "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match="batch or the channels"):
        tf.nn.max_pool(x, [2, 2, 2, 1], [1, 1, 1, 1], "VALID")
    with pytest.raises(ValueError, match="padding must be 'SAME' or 'VALID'"):
        tf.nn.conv2d(x, np.zeros((1, 1, 2, 1), np.float32), [1, 1, 1, 1], "FULL")
    with pytest.raises(ValueError, match="NHWC"):
        tf.nn.avg_pool(x, [1, 2, 2, 1], [1, 1, 1, 1], "SAME", data_format="NCHW")
    with pytest.raises(ValueError, match="expected ndim=4"):
        tf.layers.conv2d(np.zeros((2, 3), np.float32), 2, 3)
    with pytest.raises(ValueError, match="last dimension of the inputs"):
        tf.layers.dense(tf.placeholder(tf.float32, [None, None]), 2)
    images = tf.placeholder(tf.float32, [None, None, None, 2])
    small = tf.nn.conv2d(images, np.zeros((3, 3, 2, 1), np.float32), [1, 1, 1, 1], "VALID",
                         name="late")
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"'late' \(Conv2D\).*larger than the input"):
        run(small, {images: np.zeros((1, 2, 2, 2), np.float32)})


def test_conv2d_transpose_is_the_gradient_of_conv2d():
    x = RNG.normal(size=(2, 5, 5, 3))
    w = RNG.normal(size=(3, 3, 3, 4))
    dy = RNG.normal(size=(2, 3, 3, 4))
    value = tf.constant(x)
    y = tf.nn.conv2d(value, w, [1, 2, 2, 1], "SAME")
    (grad,) = tf.gradients(y, [value], grad_ys=[dy])
    transposed = tf.nn.conv2d_transpose(dy, w, [2, 5, 5, 3], [1, 2, 2, 1], "SAME")
    np.testing.assert_allclose(run(transposed), run(grad), rtol=1e-12)
    images = tf.placeholder(tf.float32, [None, 4, 4, 3])
    up = tf.layers.conv2d_transpose(images, 5, 3, strides=2, padding="same")
    valid = tf.layers.conv2d_transpose(images, 2, 3, strides=2)
    assert [v.op.name for v in tf.trainable_variables()][:2] == ["conv2d_transpose/kernel",
                                                                "conv2d_transpose/bias"]
    shapes = run([tf.shape(up), tf.shape(valid)], {images: np.ones((2, 4, 4, 3))}, init=True)
    np.testing.assert_array_equal(shapes[0], [2, 8, 8, 5])
    np.testing.assert_array_equal(shapes[1], [2, 9, 9, 2])


def test_in_top_k_counts_ties_as_in():
    predictions = np.array([[0.1, 0.5, 0.5], [0.9, 0.0, 0.1], [0.2, 0.3, 0.1]], np.float32)
    np.testing.assert_array_equal(run(tf.nn.in_top_k(predictions, [2, 2, 5], 1)),
                                  [True, False, False])
    np.testing.assert_array_equal(run(tf.nn.in_top_k(predictions, [0, 2, 0], 2)),
                                  [False, True, True])


@pytest.mark.parametrize("name, build, shape", [
    ("transpose_value", lambda v: tf.reduce_sum(tf.square(tf.nn.conv2d_transpose(
        v, W, [1, 5, 4, 2], [1, 2, 2, 1], "SAME"))), (1, 3, 2, 3)),
    ("transpose_filter", lambda w: tf.reduce_sum(tf.square(tf.nn.conv2d_transpose(
        RNG.normal(size=(1, 3, 2, 2)), w, [1, 5, 4, 2], [1, 2, 2, 1], "SAME"))), (3, 3, 2, 2)),
])
def test_conv2d_transpose_gradients(name, build, shape):
    check_gradient(build, shape)


def test_a_layer_built_inside_a_variable_scope_finds_its_kernel_and_bias():
    with tf.variable_scope("outer"):
        fc = tf.layers.Dense(3, name="fc")
        fc(tf.ones([2, 4]))
        again = tf.layers.Dense(3, name="fc")  # a second object of that name: under fc_1
        again(tf.ones([2, 4]))
    assert fc.kernel.op.name == "outer/fc/kernel" and fc.bias.op.name == "outer/fc/bias"
    assert again.kernel.op.name == "outer/fc_1/kernel"
    assert fc.name == again.name == "fc"  # as TensorFlow's: the name given stays


def test_layer_classes_build_once_and_share_their_variables():
    x = tf.placeholder(tf.float32, [None, 8, 8, 1])
    conv = tf.layers.Conv2D(4, 3, padding="same", activation=tf.nn.relu)
    pool = tf.layers.MaxPooling2D(2, 2)
    norm = tf.layers.BatchNormalization()
    fc = tf.layers.Dense(3, name="logits")
    assert not fc.built and fc.variables == []
    features = tf.layers.Flatten()(pool(norm(conv(x), training=True)))
    train_logits = fc(tf.layers.Dropout(0.5)(features, training=True))
    eval_logits = fc(features)  # the same weights
    assert conv.name == "conv2d" and fc.built
    assert [v.op.name for v in fc.variables] == ["logits/kernel", "logits/bias"]
    assert fc.kernel.op.name == "logits/kernel" and fc.bias.op.name == "logits/bias"
    assert [v.op.name for v in norm.non_trainable_variables] == [
        "batch_normalization/moving_mean", "batch_normalization/moving_variance"]
    assert len(tf.trainable_variables()) == 6  # conv, batch norm, dense: 2 each
    batch = RNG.normal(size=(2, 8, 8, 1)).astype(np.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(train_logits, {x: batch}).shape == (2, 3)
        assert sess.run(eval_logits, {x: batch}).shape == (2, 3)


# TensorFlow 1.x's depthwise_conv_op_test and separable convolution, on the CPU: against a
# numpy reference (strides, SAME and VALID, multipliers, rates), gradients for the input and
# the filter by finite differences, and bad shapes.
def _depthwise_reference(x, f, strides, padding, rate=(1, 1)):
    n, h, w, c = x.shape
    kh, kw, _, m = f.shape
    eh, ew = (kh - 1) * rate[0] + 1, (kw - 1) * rate[1] + 1
    if padding == "SAME":
        oh, ow = -(-h // strides[1]), -(-w // strides[2])
        ph = max((oh - 1) * strides[1] + eh - h, 0)
        pw = max((ow - 1) * strides[2] + ew - w, 0)
        x = np.pad(x, [[0, 0], [ph // 2, ph - ph // 2], [pw // 2, pw - pw // 2], [0, 0]])
    else:
        oh, ow = (h - eh) // strides[1] + 1, (w - ew) // strides[2] + 1
    out = np.zeros([n, oh, ow, c * m], x.dtype)
    for r in range(oh):
        for q in range(ow):
            patch = x[:, r * strides[1]:r * strides[1] + eh:rate[0],
                      q * strides[2]:q * strides[2] + ew:rate[1], :]
            out[:, r, q, :] = np.einsum("nhwc,hwcm->ncm", patch, f).reshape(n, c * m)
    return out


def test_depthwise_and_separable_convolutions():
    rng = np.random.RandomState(8)
    x = rng.randn(2, 7, 6, 3)
    for fshape, strides, padding, rate in [((3, 3, 3, 2), [1, 1, 1, 1], "SAME", (1, 1)),
                                           ((2, 3, 3, 1), [1, 2, 2, 1], "VALID", (1, 1)),
                                           ((3, 2, 3, 4), [1, 2, 1, 1], "SAME", (1, 1)),
                                           ((3, 3, 3, 2), [1, 1, 1, 1], "SAME", (2, 2))]:
        f = rng.randn(*fshape)
        got = tf.nn.depthwise_conv2d(x, f, strides, padding, rate=rate)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(got),
                                       _depthwise_reference(x, f, strides, padding, rate),
                                       rtol=1e-10, atol=1e-10)
        fixed_f = tf.constant(f)
        check_gradient(lambda t: tf.reduce_sum(tf.sin(
            tf.nn.depthwise_conv2d_native(t, fixed_f, strides, padding,
                                          dilations=[1, rate[0], rate[1], 1]))), list(x.shape))
        fixed_x = tf.constant(x)
        check_gradient(lambda t: tf.reduce_sum(tf.sin(
            tf.nn.depthwise_conv2d_native(fixed_x, t, strides, padding,
                                          dilations=[1, rate[0], rate[1], 1]))), list(fshape))
    depthwise = rng.randn(3, 3, 3, 2)
    pointwise = rng.randn(1, 1, 6, 4)
    got = tf.nn.separable_conv2d(x, depthwise, pointwise, [1, 1, 1, 1], "SAME")
    assert got.shape.as_list() == [2, 7, 6, 4]
    with tf.Session() as sess:
        want = np.einsum("nhwc,cd->nhwd",
                         _depthwise_reference(x, depthwise, [1, 1, 1, 1], "SAME"),
                         pointwise[0, 0])
        np.testing.assert_allclose(sess.run(got), want, rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match="strides > 1 not supported in conjunction with rate"):
        tf.nn.depthwise_conv2d(x, depthwise, [1, 2, 2, 1], "SAME", rate=[2, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="3 channels but the filter "
                                                            "expects 4"):
        tf.nn.depthwise_conv2d_native(x, rng.randn(3, 3, 4, 1), [1, 1, 1, 1], "SAME")


def test_layers_separable_conv2d_variables_output_and_class():
    x = tf.constant(np.random.RandomState(9).randn(2, 6, 6, 3).astype(np.float32))
    y = tf.layers.separable_conv2d(x, 5, 3, padding="same", depth_multiplier=2,
                                   activation=tf.nn.relu)
    names = sorted(v.name for v in tf.trainable_variables())
    assert names == ["separable_conv2d/bias:0", "separable_conv2d/depthwise_kernel:0",
                     "separable_conv2d/pointwise_kernel:0"]
    assert y.shape.as_list() == [2, 6, 6, 5]
    graph = tf.get_default_graph()
    depthwise = graph.get_tensor_by_name("separable_conv2d/depthwise_kernel:0")
    pointwise = graph.get_tensor_by_name("separable_conv2d/pointwise_kernel:0")
    assert depthwise.shape.as_list() == [3, 3, 3, 2]
    assert pointwise.shape.as_list() == [1, 1, 6, 5]
    layer = tf.layers.SeparableConv2D(4, (3, 3), strides=(2, 2))
    first, second = layer(x), layer(x)
    assert first.shape.as_list() == [2, 2, 2, 4]
    assert layer.depthwise_kernel.name == "separable_conv2d_1/depthwise_kernel:0"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        d, p, got, a, b = sess.run([depthwise, pointwise, y, first, second])
        want = np.maximum(np.einsum("nhwc,cd->nhwd",
                                    _depthwise_reference(sess.run(x), d, [1, 1, 1, 1], "SAME"),
                                    p[0, 0]), 0)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        np.testing.assert_array_equal(a, b)  # one layer, one set of variables
    with pytest.raises(ValueError, match="depth_multiplier must be a positive integer"):
        tf.layers.separable_conv2d(x, 5, 3, depth_multiplier=0)


def test_one_dimensional_layers_match_numpy():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 9, 3)).astype(np.float32)
    with tf.Graph().as_default():
        y = tf.layers.conv1d(x, 4, 3, strides=2, kernel_initializer=tf.ones_initializer(),
                             use_bias=False)
        pooled = tf.layers.max_pooling1d(x, 2, 2)
        averaged = tf.layers.average_pooling1d(x, 3, 1, padding="same")
        assert [v.name for v in tf.trainable_variables()] == ["conv1d/kernel:0"]
        assert tf.trainable_variables()[0].shape.as_list() == [3, 3, 4]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got_y, got_pooled, got_avg = sess.run([y, pooled, averaged])
    expected = np.stack([x[:, s:s + 3].sum(axis=(1, 2)) for s in range(0, 7, 2)], axis=1)
    np.testing.assert_allclose(got_y, np.repeat(expected[:, :, None], 4, 2), rtol=1e-5)
    np.testing.assert_allclose(got_pooled, np.maximum(x[:, 0:8:2], x[:, 1:9:2]))
    padded = [x[:, max(0, i - 1):i + 2].mean(axis=1) for i in range(9)]
    np.testing.assert_allclose(got_avg, np.stack(padded, axis=1), rtol=1e-5)
    with pytest.raises(ValueError, match="expected ndim=3"):
        tf.layers.conv1d(tf.zeros([2, 3]), 4, 3)


def test_contrib_layer_norm_normalizes_the_last_dimensions():
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((4, 3, 5)) * 3 + 2).astype(np.float32)
    with tf.Graph().as_default():
        y = tf.contrib.layers.layer_norm(x, begin_norm_axis=-1)
        z = tf.contrib.layers.layer_norm(x, begin_norm_axis=1, scope="whole")
        names = sorted(v.name for v in tf.trainable_variables())
        assert names == ["LayerNorm/beta:0", "LayerNorm/gamma:0", "whole/beta:0",
                         "whole/gamma:0"]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got_y, got_z = sess.run([y, z])
    mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(got_y, (x - mean) / np.sqrt(var + 1e-12), rtol=1e-4, atol=1e-5)
    mean, var = x.mean((1, 2), keepdims=True), x.var((1, 2), keepdims=True)
    np.testing.assert_allclose(got_z, (x - mean) / np.sqrt(var + 1e-12), rtol=1e-4, atol=1e-5)


def test_nn_convolution_pool_relu_layer_and_moment_parts():
    rng = np.random.default_rng(6)
    x2 = rng.standard_normal((1, 5, 5, 2)).astype(np.float32)
    k2 = rng.standard_normal((3, 3, 2, 1)).astype(np.float32)
    x1 = rng.standard_normal((2, 6, 3)).astype(np.float32)
    k1 = rng.standard_normal((2, 3, 4)).astype(np.float32)
    got = run_all(tf.nn.convolution(x2, k2, "VALID"), tf.nn.conv2d(x2, k2, [1, 1, 1, 1], "VALID"),
                  tf.nn.convolution(x1, k1, "SAME", strides=[2]),
                  tf.nn.conv1d(x1, k1, stride=2, padding="SAME"),
                  tf.nn.pool(x2, [2, 2], "MAX", "VALID", strides=[2, 2]),
                  tf.nn.max_pool(x2, [1, 2, 2, 1], [1, 2, 2, 1], "VALID"),
                  tf.nn.pool(x1, [2], "AVG", "VALID", strides=[2]),
                  tf.nn.relu_layer(x1[0], k1[0], np.ones(4, np.float32)))
    np.testing.assert_allclose(got[0], got[1], rtol=1e-6)
    np.testing.assert_allclose(got[2], got[3], rtol=1e-6)
    np.testing.assert_allclose(got[4], got[5])
    np.testing.assert_allclose(got[6], (x1[:, 0::2] + x1[:, 1::2]) / 2, rtol=1e-6)
    np.testing.assert_allclose(got[7], np.maximum(x1[0] @ k1[0] + 1, 0), rtol=1e-5)
    counts, mean_ss, var_ss, shift = tf.nn.sufficient_statistics(x1, [0, 1], shift=0.5)
    mean, variance = tf.nn.normalize_moments(counts, mean_ss, var_ss, shift)
    got_mean, got_var = run_all(mean, variance)
    np.testing.assert_allclose(got_mean, x1.mean((0, 1)), rtol=1e-5)
    np.testing.assert_allclose(got_var, x1.var((0, 1)), rtol=1e-4)
    with pytest.raises(ValueError, match="Invalid pooling_type"):
        tf.nn.pool(x2, [2, 2], "MIN", "VALID")


def run_all(*fetches):
    with tf.Session() as sess:
        return sess.run(list(fetches))
