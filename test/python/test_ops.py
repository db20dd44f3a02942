"""The ops and Tensor operators against numpy."""

import numpy as np
import pytest

import troupe as tf


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed_dict)


def test_arithmetic_operators_and_literals():
    x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    values = run({"add": x + 1, "radd": 1 + x, "sub": x - 1.5, "rsub": 10 - x, "mul": x * 2,
                  "rmul": 3 * x, "div": x / 2, "rdiv": 1 / x, "neg": -x, "matmul": x @ x})
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    np.testing.assert_allclose(values["add"], a + 1)
    np.testing.assert_allclose(values["radd"], 1 + a)
    np.testing.assert_allclose(values["sub"], a - 1.5)
    np.testing.assert_allclose(values["rsub"], 10 - a)
    np.testing.assert_allclose(values["mul"], a * 2)
    np.testing.assert_allclose(values["rmul"], 3 * a)
    np.testing.assert_allclose(values["div"], a / 2)
    np.testing.assert_allclose(values["rdiv"], 1 / a, rtol=1e-6)
    np.testing.assert_allclose(values["neg"], -a)
    np.testing.assert_allclose(values["matmul"], a @ a)
    assert values["add"].dtype == np.float32


def test_comparisons_and_their_operators():
    x = tf.constant([1.0, 2.0, 3.0])
    v = tf.Variable([3, 1], name="ints")
    with tf.Session() as sess:
        sess.run(v.initializer)
        values = sess.run({"lt": x < 2, "le": x <= 2, "gt": 2.5 < x, "ge": x >= [1, 3, 3],
                           "ne": tf.not_equal(x, 2.0), "eq": tf.equal(x, 2.0),
                           "less": tf.less(x, x), "var": v > 2})
    np.testing.assert_array_equal(values["lt"], [True, False, False])
    np.testing.assert_array_equal(values["le"], [True, True, False])
    np.testing.assert_array_equal(values["gt"], [False, False, True])
    np.testing.assert_array_equal(values["ge"], [True, False, True])
    np.testing.assert_array_equal(values["ne"], [True, False, True])
    np.testing.assert_array_equal(values["eq"], [False, True, False])
    np.testing.assert_array_equal(values["var"], [True, False])
    assert not values["less"].any() and values["lt"].dtype == np.bool_
    assert x == x and x != tf.constant([1.0, 2.0, 3.0])  # identity, as in TensorFlow 1.x
    with pytest.raises(tf.errors.InvalidArgumentError, match="Less"):
        tf.constant(["a"]) < "b"


def test_math_nn_and_reductions():
    rng = np.random.default_rng(1)
    a = rng.normal(size=(4, 3)).astype(np.float32)
    x = tf.constant(a)
    v = run({
        "relu": tf.nn.relu(x), "softmax": tf.nn.softmax(x), "sigmoid": tf.sigmoid(x),
        "tanh": tf.tanh(x), "square": tf.square(x), "exp": tf.exp(x),
        "sum": tf.reduce_sum(x), "sum0": tf.reduce_sum(x, axis=0),
        "mean1k": tf.reduce_mean(x, 1, keepdims=True), "max": tf.reduce_max(x, [0, 1]),
        "min": tf.reduce_min(x, reduction_indices=1), "argmax": tf.argmax(x, 1),
        "cast": tf.cast(x, tf.int32), "reshape": tf.reshape(x, [3, 4]),
        "shape": tf.shape(x), "bias": tf.nn.bias_add(x, tf.constant([1.0, 2.0, 3.0])),
        "mt": tf.matmul(x, x, transpose_b=True), "max2": tf.maximum(x, 0.0),
        "eq": tf.equal(tf.argmax(x, 1), tf.argmax(x, 1)),
        "zeros": tf.zeros([2, 2]), "ones": tf.ones([2], tf.int64),
        "fill": tf.fill([2], 3.0), "zl": tf.zeros_like(x), "sqrt": tf.sqrt(tf.square(x)),
        "log": tf.log(tf.exp(x)),
    })
    np.testing.assert_allclose(v["relu"], np.maximum(a, 0))
    e = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(v["softmax"], e / e.sum(1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(v["sigmoid"], 1 / (1 + np.exp(-a)), rtol=1e-5)
    np.testing.assert_allclose(v["tanh"], np.tanh(a), rtol=1e-5)
    np.testing.assert_allclose(v["square"], a * a, rtol=1e-6)
    np.testing.assert_allclose(v["exp"], np.exp(a), rtol=1e-5)
    np.testing.assert_allclose(v["sum"], a.sum(), rtol=1e-5)
    np.testing.assert_allclose(v["sum0"], a.sum(0), rtol=1e-5)
    np.testing.assert_allclose(v["mean1k"], a.mean(1, keepdims=True), rtol=1e-5)
    np.testing.assert_allclose(v["max"], a.max())
    np.testing.assert_allclose(v["min"], a.min(1))
    np.testing.assert_array_equal(v["argmax"], a.argmax(1))
    assert v["argmax"].dtype == np.int64
    np.testing.assert_array_equal(v["cast"], a.astype(np.int32))
    np.testing.assert_array_equal(v["reshape"], a.reshape(3, 4))
    np.testing.assert_array_equal(v["shape"], [4, 3])
    np.testing.assert_allclose(v["bias"], a + [1, 2, 3])
    np.testing.assert_allclose(v["mt"], a @ a.T, rtol=1e-5)
    np.testing.assert_allclose(v["max2"], np.maximum(a, 0))
    assert v["eq"].all() and v["eq"].dtype == np.bool_
    np.testing.assert_array_equal(v["zeros"], np.zeros((2, 2)))
    np.testing.assert_array_equal(v["ones"], [1, 1])
    assert v["ones"].dtype == np.int64
    np.testing.assert_array_equal(v["fill"], [3.0, 3.0])
    np.testing.assert_array_equal(v["zl"], np.zeros_like(a))
    np.testing.assert_allclose(v["sqrt"], np.abs(a), rtol=1e-5)
    np.testing.assert_allclose(v["log"], a, atol=1e-5)


def test_sparse_softmax_cross_entropy():
    logits = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]], np.float32)
    labels = np.array([2, 0], np.int64)
    loss = run(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    expected = -np.log(np.exp(logits)[np.arange(2), labels] / np.exp(logits).sum(1))
    np.testing.assert_allclose(loss, expected, rtol=1e-5)
    with pytest.raises(ValueError, match="named arguments"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(logits, labels)


def test_dense_softmax_cross_entropy_and_its_gradient():
    logits = np.array([[1.0, 2.0, 30.0], [1.0, 1.0, 1.0]], np.float32)
    labels = np.array([[0.0, 0.2, 0.8], [1.0, 0.0, 0.0]], np.float32)
    x = tf.constant(logits)
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=x)
    (grad,) = tf.gradients(tf.reduce_sum(loss), [x])
    values = run({"loss": loss, "grad": grad, "v2": tf.nn.softmax_cross_entropy_with_logits_v2(
        labels=labels, logits=logits)})
    shifted = logits - logits.max(1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    np.testing.assert_allclose(values["loss"], -(labels * log_softmax).sum(1), rtol=1e-5)
    np.testing.assert_allclose(values["v2"], values["loss"])
    # d/dlogits = softmax(logits) - labels (labels sum to 1 per row).
    np.testing.assert_allclose(values["grad"], np.exp(log_softmax) - labels, atol=1e-6)
    with pytest.raises(ValueError, match="named arguments"):
        tf.nn.softmax_cross_entropy_with_logits(labels, logits)
    with pytest.raises(ValueError, match="out of range"):
        tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits, dim=5)


def test_minimum_clip_by_value_xw_plus_b_and_l2_loss():
    a = np.array([[-2.0, 0.5], [3.0, 1.0]], np.float32)
    w = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    b = np.array([0.5, -1.0], np.float32)
    x = tf.constant(a)
    clipped = tf.clip_by_value(x, -1.0, 1.0)
    (clip_grad,) = tf.gradients(tf.reduce_sum(clipped), [x])
    values = run({"min": tf.minimum(x, 0.75), "clip": clipped, "clip_grad": clip_grad,
                  "xwb": tf.nn.xw_plus_b(x, w, b), "l2": tf.nn.l2_loss(x)})
    np.testing.assert_array_equal(values["min"], np.minimum(a, 0.75))
    np.testing.assert_array_equal(values["clip"], np.clip(a, -1.0, 1.0))
    np.testing.assert_array_equal(values["clip_grad"], [[0.0, 1.0], [0.0, 1.0]])
    np.testing.assert_allclose(values["xwb"], a @ w + b)
    np.testing.assert_allclose(values["l2"], (a ** 2).sum() / 2)


def test_tensor_properties_and_graph_lookup():
    x = tf.placeholder(tf.float32, [None, 3], name="input")
    y = tf.matmul(x, tf.ones([3, 2]), name="product")
    assert y.name == "product:0" and y.op.type == "MatMul"
    assert y.shape.as_list() == [None, 2] and y.dtype == tf.float32
    assert str(y.shape) == "(?, 2)"
    g = tf.get_default_graph()
    assert g.get_tensor_by_name("product:0") == y
    assert g.get_operation_by_name("input").type == "Placeholder"
    assert y.op.get_attr("transpose_a") is False
    with pytest.raises(KeyError):
        g.get_operation_by_name("nope")
    with pytest.raises(TypeError, match="Python `bool`"):
        bool(y)
    assert "product" in [op.name for op in g.get_operations()]


def test_variables_initializers_and_scopes():
    tf.set_random_seed(3)
    with tf.variable_scope("layer"):
        w = tf.get_variable("w", [3, 2], initializer=tf.truncated_normal_initializer(stddev=0.1))
        b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
        c = tf.get_variable("c", [2], initializer=tf.constant_initializer(5.0))
    with tf.variable_scope("layer", reuse=True):
        assert tf.get_variable("w") is w
    with pytest.raises(ValueError, match="already exists"):
        with tf.variable_scope("layer"):
            tf.get_variable("w", [3, 2])
    with pytest.raises(ValueError, match="does not exist"):
        with tf.variable_scope("other", reuse=True):
            tf.get_variable("w", [3, 2])
    assert w.name == "layer/w:0"
    with tf.variable_scope("layer", reuse=True):  # the ops' name scope is layer_1/
        assert tf.get_variable("b").name == "layer/b:0"
        assert tf.identity(b).op.name == "layer_3/Identity"  # the 4th "layer" scope
    with tf.name_scope("ns"):  # get_variable ignores name scopes, as in TensorFlow
        assert tf.get_variable("top", [1]).name == "top:0"
    with tf.variable_scope("typed", initializer=tf.constant_initializer(2), dtype=tf.float64):
        typed = tf.get_variable("t", [2])
    assert typed.dtype == tf.float64
    assert [v.name for v in tf.global_variables()] == ["layer/w:0", "layer/b:0", "layer/c:0",
                                                       "top:0", "typed/t:0"]
    step = tf.train.get_or_create_global_step()
    assert step.dtype == tf.int64 and step not in tf.trainable_variables()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        wv, bv, cv, sv, tv = sess.run([w, b, c, step, typed])
    assert np.abs(wv).max() <= 0.2 and wv.std() > 0
    np.testing.assert_array_equal(bv, [0, 0])
    np.testing.assert_array_equal(cv, [5, 5])
    np.testing.assert_array_equal(tv, [2, 2])
    assert sv == 0
    v = tf.Variable(tf.constant([1, 2]), name="from_tensor")
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(v.assign([3, 4])), [3, 4])
        np.testing.assert_array_equal(sess.run(v.assign_add([1, 1])), [4, 5])
        assert sess.run(tf.is_variable_initialized(v))


def test_a_variable_without_shape_validation_takes_values_of_any_shape():
    # TensorFlow's Variable(validate_shape=False): the graph does not know its shape, its
    # initial value may be of unknown shape, and an unvalidated assignment may change it.
    tf.reset_default_graph()
    unknown = tf.placeholder_with_default([1.0, 2.0], shape=None)
    v = tf.Variable(unknown, validate_shape=False, name="free")
    assert v.shape.ndims is None
    known = tf.Variable([1.0, 2.0], validate_shape=False, name="free_but_known")
    assert known.shape.ndims is None
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(v), [1.0, 2.0])
        longer = tf.assign(known, [[1.0, 2.0, 3.0]], validate_shape=False)
        np.testing.assert_array_equal(sess.run(longer), [[1.0, 2.0, 3.0]])
        np.testing.assert_array_equal(sess.run(known), [[1.0, 2.0, 3.0]])
    # Validated (the default), an initial value of unknown shape is TensorFlow's ValueError.
    with pytest.raises(ValueError, match="initial_value must have a shape specified"):
        tf.Variable(unknown, name="checked")


def test_group_and_control_dependencies_order_effects():
    v = tf.Variable(0, name="counter")
    inc = tf.assign_add(v, 1)
    with tf.control_dependencies([inc]):
        read = tf.identity(v)
    both = tf.group(inc, tf.assign_add(v, 10))
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(read) == 1
        sess.run(both)
        assert sess.run(v) == 12


def test_more_math_against_numpy_and_operators():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(3, 4)).astype(np.float32)
    x = tf.constant(a)
    v = run({"abs": tf.abs(x), "abs_op": abs(x), "sign": tf.sign(x), "floor": tf.floor(x),
             "ceil": tf.ceil(x), "round": tf.round(x * 2), "cos": tf.cos(x), "sin": tf.sin(x),
             "expm1": tf.expm1(x), "log1p": tf.log1p(tf.abs(x)), "rsqrt": tf.rsqrt(tf.abs(x)),
             "reciprocal": tf.reciprocal(x), "pow": tf.pow(tf.abs(x), 1.5), "pow_op": x ** 2,
             "rpow": 2.0 ** x, "sqdiff": tf.squared_difference(x, 0.5)})
    np.testing.assert_allclose(v["abs"], np.abs(a))
    np.testing.assert_allclose(v["abs_op"], np.abs(a))
    np.testing.assert_array_equal(v["sign"], np.sign(a))
    np.testing.assert_array_equal(v["floor"], np.floor(a))
    np.testing.assert_array_equal(v["ceil"], np.ceil(a))
    np.testing.assert_array_equal(v["round"], np.round(a * 2))  # numpy also rounds half to even
    for name, expected in [("cos", np.cos(a)), ("sin", np.sin(a)), ("expm1", np.expm1(a)),
                           ("log1p", np.log1p(np.abs(a))), ("rsqrt", 1 / np.sqrt(np.abs(a))),
                           ("reciprocal", 1 / a), ("pow", np.abs(a) ** 1.5), ("pow_op", a ** 2),
                           ("rpow", 2.0 ** a), ("sqdiff", (a - 0.5) ** 2)]:
        np.testing.assert_allclose(v[name], expected, rtol=1e-5, err_msg=name)
    assert v["round"].dtype == np.float32
    with pytest.raises(tf.errors.InvalidArgumentError, match="Pow"):
        tf.pow(tf.constant([2, 3]), 2)  # as troupe's kernels: floating point only


def test_where_with_three_arguments_selects_and_routes_gradients():
    a = np.array([[1.0, -2.0], [-3.0, 4.0]], np.float32)
    x = tf.constant(a)
    y = tf.where(x > 0, x, tf.zeros_like(x))
    rows = tf.where([False, True], x, -x)
    (grad,) = tf.gradients(tf.reduce_sum(y * 3.0), [x])
    v = run({"y": y, "rows": rows, "grad": grad, "scalar": tf.where(True, x, -x)})
    np.testing.assert_array_equal(v["y"], np.where(a > 0, a, 0))
    np.testing.assert_array_equal(v["rows"], [[-1.0, 2.0], [-3.0, 4.0]])
    np.testing.assert_array_equal(v["grad"], np.where(a > 0, 3.0, 0.0))
    np.testing.assert_array_equal(v["scalar"], a)
    with pytest.raises(ValueError, match="both be non-None"):
        tf.where(x > 0, x)
    # troupe raises its shape errors as InvalidArgumentError (docs/python.md, "Bad input").
    with pytest.raises(tf.errors.InvalidArgumentError, match="t and e must have the same shape"):
        tf.where(x > 0, x, tf.constant([1.0, 2.0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="condition must be a scalar"):
        tf.where([True, False, True], x, x)


def test_name_scope_reenters_by_prefix_and_resets_to_the_top():
    with tf.Graph().as_default():
        with tf.name_scope("outer") as outer:
            a = tf.constant(1, name="a")
        assert outer == "outer/"
        with tf.name_scope(outer):  # re-entered as it is, not "outer_1/"
            b = tf.constant(2, name="a")
            with tf.name_scope(None) as top:
                c = tf.constant(3, name="c")
            with tf.name_scope(""):
                d = tf.constant(4, name="d")
        assert (a.name, b.name, c.name, d.name) == ("outer/a:0", "outer/a_1:0", "c:0", "d:0")
        assert top == ""
        with pytest.raises(ValueError, match="At least one of name"):
            with tf.name_scope(None, None, [a]):
                pass


def test_control_dependencies_none_clears_the_enclosing_ones():
    with tf.Graph().as_default():
        first = tf.no_op(name="first")
        with tf.control_dependencies([first]):
            inside = tf.constant(1, name="inside")
            with tf.control_dependencies(None):
                cleared = tf.constant(2, name="cleared")
                with tf.control_dependencies([inside]):
                    again = tf.constant(3, name="again")
        assert [op.name for op in inside.op.control_inputs] == ["first"]
        assert cleared.op.control_inputs == []
        assert [op.name for op in again.op.control_inputs] == ["inside"]


def test_control_dependencies_none_leaves_a_cond_branch():
    with tf.Graph().as_default():
        pred = tf.placeholder(tf.bool, [])

        def branch():
            with tf.control_dependencies(None):
                outside = tf.constant(5.0, name="outside")
            return outside + 1.0
        result = tf.cond(pred, branch, lambda: tf.constant(0.0))
        outside = tf.get_default_graph().get_operation_by_name("cond/outside")
        with tf.Session() as sess:
            assert sess.run(outside.outputs[0]) == 5.0  # no predicate needed: outside the branch
            assert sess.run(result, {pred: True}) == 6.0
