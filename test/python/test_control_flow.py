"""tf.cond and tf.case: only the taken branch runs (its side effects included), results of any
structure, errors for bad branches, and the limits (no gradient yet, one task)."""

import numpy as np
import pytest

import troupe as tf


def test_cond_takes_one_branch_and_runs_only_its_ops():
    pred = tf.placeholder(tf.bool, [])
    x = tf.constant(2.0)
    counter = tf.Variable(0)

    def yes():
        with tf.control_dependencies([tf.assign_add(counter, 1)]):
            return x * 10.0

    def no():
        with tf.control_dependencies([tf.assign_add(counter, 100)]):
            return x + 1.0

    result = tf.cond(pred, yes, no)
    assert result.shape.as_list() == []
    with tf.Session() as sess:
        sess.run(counter.initializer)
        assert sess.run(result, {pred: True}) == 20.0
        assert sess.run(result, {pred: False}) == 3.0
        assert sess.run(counter) == 101


def test_cond_results_keep_their_structure_and_may_be_operations():
    pred = tf.placeholder(tf.bool, [])
    v = tf.Variable(1.0)
    pair = tf.cond(pred, lambda: (tf.constant(1), tf.constant([1.0, 2.0])),
                   lambda: (tf.constant(2), tf.constant([3.0, 4.0])))
    assert isinstance(pair, tuple) and len(pair) == 2
    named = tf.cond(pred, lambda: {"a": tf.constant(1.0)}, lambda: {"a": tf.constant(2.0)})
    single = tf.cond(pred, lambda: [tf.constant(5)], lambda: [tf.constant(6)])
    update = tf.cond(pred, lambda: tf.assign(v, 10.0).op, lambda: tf.no_op())
    assert isinstance(update, tf.Operation)
    with tf.Session() as sess:
        sess.run(v.initializer)
        first, second = sess.run(pair, {pred: False})
        assert first == 2 and list(second) == [3.0, 4.0]
        assert sess.run(named, {pred: True}) == {"a": 1.0}
        assert sess.run(single, {pred: False}) == 6
        sess.run(update, {pred: False})
        assert sess.run(v) == 1.0
        sess.run(update, {pred: True})
        assert sess.run(v) == 10.0


def test_case_picks_the_first_true_predicate():
    x = tf.placeholder(tf.int32, [])
    result = tf.case([(tf.less(x, 0), lambda: tf.constant(-1)),
                      (tf.equal(x, 0), lambda: tf.constant(0))],
                     default=lambda: tf.constant(1))
    with tf.Session() as sess:
        assert [sess.run(result, {x: v}) for v in (-5, 0, 7)] == [-1, 0, 1]
    # exclusive=True: more than one true predicate fails the step (TensorFlow's message).
    exclusive = tf.case([(tf.less(x, 0), lambda: tf.constant(-1)),
                         (tf.less(x, 5), lambda: tf.constant(5))],
                        default=lambda: tf.constant(9), exclusive=True)
    with tf.Session() as sess:
        assert [sess.run(exclusive, {x: v}) for v in (3, 7)] == [5, 9]
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"More than one condition evaluated as True but "
                                 r"exclusive=True. Conditions: \(Less.*, Less.*\), Values:"):
            sess.run(exclusive, {x: -1})


def test_bad_branches_and_limits():
    pred = tf.placeholder(tf.bool, [])
    with pytest.raises(TypeError, match="true_fn must be callable"):
        tf.cond(pred, 1, lambda: tf.constant(1))
    with pytest.raises(ValueError, match="same structure"):
        tf.cond(pred, lambda: [tf.constant(1)] * 2, lambda: [tf.constant(1)])
    with pytest.raises(ValueError, match="same type"):
        tf.cond(pred, lambda: tf.constant(1), lambda: tf.constant(1.0))
    with pytest.raises(TypeError, match="bool scalar"):
        tf.cond(tf.constant(1), lambda: tf.constant(1), lambda: tf.constant(2))
    x = tf.constant(3.0)
    # A value of the untaken branch fetched directly is an error naming the branch.
    inner = []
    tf.cond(pred, lambda: inner.append(x * 2.0) or inner[0], lambda: x)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="cond that was not taken"):
            sess.run(inner[0], {pred: False})
        np.testing.assert_allclose(sess.run(inner[0], {pred: True}), 6.0)


# TensorFlow 1.x's control_flow_ops_py_test: testCondGrad_1, _2, _3 and the patterns TF1 models
# train through (a training flag choosing dropout, a weight used in one branch only).
def test_cond_grad_1_and_2():
    x = tf.constant(10.0)
    r = tf.cond(tf.less(1, 2), lambda: tf.identity(x), lambda: tf.identity(x))
    with tf.Session() as sess:
        assert sess.run(tf.gradients(r, [x])[0]) == 1.0
    c = tf.placeholder(tf.int32, shape=[])
    r = tf.cond(tf.less(c, 2), lambda: tf.multiply(x, 42.0), lambda: tf.multiply(x, 3.0))
    grad = tf.gradients(r, [x])[0]
    with tf.Session() as sess:
        assert sess.run(grad, {c: 1}) == 42.0
        assert sess.run(grad, {c: 3}) == 3.0


def test_cond_grad_3_nested_in_the_gradient_of_a_branch():
    c = tf.placeholder(tf.int32, shape=[])
    ox = tf.constant(10.0)
    pred = tf.less(c, 2)

    def fn1(x):
        m = x * x
        return tf.gradients(m, [ox])[0]

    r = tf.cond(pred, lambda: fn1(ox), lambda: tf.constant(1.0))
    with tf.Session() as sess:
        assert sess.run(r, {c: 1}) == 20.0
        assert sess.run(r, {c: 3}) == 1.0


def test_nested_conds_and_their_gradients():
    x = tf.placeholder(tf.float32, [])
    p = tf.placeholder(tf.bool, [])
    q = tf.placeholder(tf.bool, [])
    y = tf.cond(p, lambda: tf.cond(q, lambda: x * x, lambda: 3.0 * x), lambda: -x)
    g = tf.gradients(y, x)[0]
    with tf.Session() as sess:
        for pv, qv, want in [(True, True, 4.0), (True, False, 3.0), (False, True, -1.0)]:
            assert sess.run(g, {x: 2.0, p: pv, q: qv}) == want


def test_a_weight_used_in_one_branch_gets_zero_when_it_is_not_taken():
    w = tf.Variable(3.0)
    v = tf.Variable(5.0)
    train = tf.placeholder(tf.bool, [])
    y = tf.cond(train, lambda: w * w, lambda: v + 1.0)
    gw, gv = tf.gradients(y, [w, v])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run([gw, gv], {train: True}) == [6.0, 0.0]
        assert sess.run([gw, gv], {train: False}) == [0.0, 1.0]


def test_a_model_trains_through_a_training_flag():
    rng = np.random.RandomState(1)
    xs = rng.randn(64, 4).astype(np.float32)
    ys = (xs @ np.array([[1.0], [-2.0], [0.5], [3.0]], np.float32)).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 1])
    training = tf.placeholder_with_default(False, [])
    w = tf.Variable(tf.zeros([4, 1]))
    hidden = tf.cond(training, lambda: tf.nn.dropout(x, keep_prob=0.9) * 0.9, lambda: x)
    loss = tf.reduce_mean(tf.square(tf.matmul(hidden, w) - y))
    step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: xs, y: ys})
        for _ in range(100):
            sess.run(step, {x: xs, y: ys, training: True})
        assert sess.run(loss, {x: xs, y: ys}) < first / 10


def test_an_assign_in_a_branch_still_changes_the_variable():
    v = tf.Variable(1.0)
    p = tf.placeholder(tf.bool, [])
    r = tf.cond(p, lambda: tf.assign_add(v, 10.0), lambda: tf.identity(v))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(r, {p: True}) == 11.0
        assert sess.run(r, {p: False}) == 11.0


# Found in review: a branch returning a tensor from outside the cond (`lambda: h`) gave h a
# dead gradient; iterators' handles and is_variable_initialized in a branch were read as
# values; a while_loop in a branch got no gradient for what its body captured.
def test_a_branch_returning_an_outside_tensor_and_other_references():
    x = tf.constant(3.0)
    p = tf.placeholder(tf.bool, [])
    h = x * 2.0
    g = tf.gradients(tf.cond(p, lambda: h * h, lambda: h), x)[0]
    a = tf.data.Dataset.range(3).make_one_shot_iterator()
    b = tf.data.Dataset.range(10, 13).make_one_shot_iterator()
    n = tf.cond(p, a.get_next, b.get_next)
    v = tf.Variable(1.0)
    initialized = tf.cond(p, lambda: tf.is_variable_initialized(v), lambda: tf.constant(False))
    w = tf.Variable(2.0)

    def loop():
        return tf.while_loop(lambda i, r: i < 3, lambda i, r: (i + 1, r * w),
                             (0, tf.constant(1.0)))[1]

    z = tf.cond(p, loop, lambda: tf.constant(0.0))
    gw = tf.gradients(z, w)[0]
    with tf.Session() as sess:
        assert [sess.run(g, {p: True}), sess.run(g, {p: False})] == [24.0, 2.0]
        assert [sess.run(n, {p: t}) for t in (True, False, True)] == [0, 10, 1]
        assert not sess.run(initialized, {p: True})
        sess.run(tf.global_variables_initializer())
        assert sess.run(initialized, {p: True})
        assert sess.run([z, gw], {p: True}) == [8.0, 12.0]


def test_the_switch_of_an_outside_tensor_lives_with_the_tensor():
    # As TensorFlow's: a tensor (or variable) from outside a branch is switched on its own
    # device, so it moves to the branch's device only in the steps that take the branch.
    with tf.device("/job:ps/task:0"):
        w = tf.Variable(tf.zeros([4]), name="w")
    with tf.device("/job:worker/task:0"):
        pred = tf.placeholder(tf.bool, [], name="pred")
        x = tf.constant(1.0, name="x")
        tf.cond(pred, lambda: tf.reduce_sum(w) * x, lambda: x)
    switched = {}
    for op in tf.get_default_graph().get_operations():
        if op.type == "Switch":
            source = op.inputs[0].op
            if source.type == "Identity":  # a variable's read, made beside the variable
                assert source.device == "/job:ps/task:0"
                source = source.inputs[0].op
            switched[source.name] = op.device
    assert switched["w"] == "/job:ps/task:0"
    assert switched["x"] == "/job:worker/task:0"


def test_a_conds_branches_run_on_another_process(insecure, tmp_path):
    """As TensorFlow's: a branch placed on a ps task in another process runs only when taken
    (the untaken side's value crosses as a dead value), its gradient included."""
    import subprocess
    import sys
    import time
    from conftest import free_ports
    ps_port, worker_port = free_ports(2)
    cluster = {"ps": ["127.0.0.1:%d" % ps_port], "worker": ["127.0.0.1:%d" % worker_port]}
    ps = subprocess.Popen([sys.executable, "-c",
                           "import troupe as tf\n"
                           "tf.train.Server(%r, job_name='ps', task_index=0).join()" % cluster])
    try:
        worker = tf.train.Server(cluster, job_name="worker", task_index=0)
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(3.0, name="w")
            counter = tf.Variable(0, name="counter")
        with tf.device("/job:worker/task:0"):
            pred = tf.placeholder(tf.bool, [], name="pred")
            x = tf.constant(2.0, name="x")

        def on_ps():
            with tf.device("/job:ps/task:0"):
                with tf.control_dependencies([tf.assign_add(counter, 1)]):
                    return x * w

        def on_worker():
            with tf.device("/job:worker/task:0"):
                return x + 1.0

        with tf.device("/job:worker/task:0"):
            result = tf.cond(pred, on_ps, on_worker)
            grad = tf.gradients(result, w)[0]
        deadline = time.time() + 60
        with tf.Session(worker.target) as sess:
            while True:  # the ps process may still be starting
                try:
                    sess.run(tf.global_variables_initializer())
                    break
                except tf.errors.UnavailableError:
                    if time.time() > deadline:
                        raise
                    time.sleep(0.2)
            assert sess.run([result, grad], {pred: True}) == [6.0, 2.0]
            assert sess.run(counter) == 1
            assert sess.run([result, grad], {pred: False}) == [3.0, 0.0]
            assert sess.run(counter) == 1  # the ps branch did not run
        worker.stop()
    finally:
        ps.kill()
        ps.wait()
