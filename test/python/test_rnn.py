"""tf.nn.rnn_cell, dynamic_rnn and static_rnn (TensorFlow 1.x's rnn_cell_test and rnn_test,
ported): each cell's step against its formula in numpy, TensorFlow's variable names and
shapes, dynamic_rnn equal to static_rnn (outputs, final states and gradients), sequence_length
masking, time-major inputs, stacked cells, a model that trains, and the errors TensorFlow
gives for bad arguments."""

import numpy as np
import pytest

import troupe as tf

RNG = np.random.RandomState(0)
X = RNG.randn(3, 5, 4).astype(np.float64)  # batch, time, depth


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def run(fetches, init=True):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches)


def test_basic_lstm_cell_step_and_its_variables():
    x = tf.constant(X[:, 0])
    cell = tf.nn.rnn_cell.BasicLSTMCell(6, forget_bias=0.5)
    state = cell.zero_state(3, tf.float64)
    assert isinstance(state, tf.nn.rnn_cell.LSTMStateTuple)
    with tf.variable_scope("root"):
        h, new_state = cell(x, state)
    names = [(v.name, v.shape.as_list()) for v in tf.global_variables()]
    assert names == [("root/basic_lstm_cell/kernel:0", [10, 24]),
                     ("root/basic_lstm_cell/bias:0", [24])]
    assert cell.output_size == 6 and tuple(cell.state_size) == (6, 6)
    kernel, got_h, got_c = run([cell.variables[0], h, new_state.c])
    i, j, f, o = np.split(np.concatenate([X[:, 0], np.zeros((3, 6))], 1) @ kernel, 4, axis=1)
    c = sigmoid(i) * np.tanh(j)
    np.testing.assert_allclose(got_c, c, rtol=1e-10)
    np.testing.assert_allclose(got_h, np.tanh(c) * sigmoid(o), rtol=1e-10)


def numpy_gru(x, h, gate_kernel, gate_bias, cand_kernel, cand_bias):
    r, u = np.split(sigmoid(np.concatenate([x, h], 1) @ gate_kernel + gate_bias), 2, axis=1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ cand_kernel + cand_bias)
    return u * h + (1 - u) * c


def test_gru_cell_names_and_formula():
    cell = tf.nn.rnn_cell.GRUCell(3)
    h, _ = cell(tf.constant(X[:, 0]), tf.constant(np.ones((3, 3))))
    names = [v.name for v in tf.global_variables()]
    assert names == ["gru_cell/gates/kernel:0", "gru_cell/gates/bias:0",
                     "gru_cell/candidate/kernel:0", "gru_cell/candidate/bias:0"]
    values = run(cell.variables + [h])
    np.testing.assert_allclose(values[-1], numpy_gru(X[:, 0], np.ones((3, 3)), *values[:4]),
                               rtol=1e-10)
    np.testing.assert_allclose(values[1], np.ones(6))  # the gates' bias starts at 1


CELLS = {
    "basic_rnn": lambda: tf.nn.rnn_cell.BasicRNNCell(5),
    "basic_lstm": lambda: tf.nn.rnn_cell.BasicLSTMCell(5),
    "lstm_peepholes_projection": lambda: tf.nn.rnn_cell.LSTMCell(
        5, use_peepholes=True, num_proj=3, cell_clip=2.0,
        initializer=tf.random_uniform_initializer(-0.5, 0.5, seed=3)),
    "gru": lambda: tf.nn.rnn_cell.GRUCell(5),
    "stacked": lambda: tf.nn.rnn_cell.MultiRNNCell(
        [tf.nn.rnn_cell.BasicLSTMCell(5), tf.nn.rnn_cell.GRUCell(4)]),
}


def flat(state):
    return [state] if not isinstance(state, tuple) else [t for s in state for t in flat(s)]


@pytest.mark.parametrize("kind", sorted(CELLS))
@pytest.mark.parametrize("lengths", [None, [5, 2, 0]])
def test_dynamic_rnn_equals_static_rnn_values_and_gradients(kind, lengths):
    x = tf.constant(X)
    cell = CELLS[kind]()
    outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=lengths, dtype=tf.float64)
    steps = tf.unstack(x, axis=1)
    static_outputs, static_state = tf.nn.static_rnn(cell, steps, sequence_length=lengths,
                                                    dtype=tf.float64)  # the same variables
    assert outputs.shape.as_list() == [3, 5, cell.output_size]
    weights = np.random.RandomState(1).randn(3, 5, cell.output_size)
    loss = tf.reduce_sum(outputs * weights) + sum(tf.reduce_sum(s) for s in flat(state))
    static_loss = tf.reduce_sum(tf.stack(static_outputs, axis=1) * weights) + \
        sum(tf.reduce_sum(s) for s in flat(static_state))
    grads = tf.gradients(loss, cell.variables + [x])
    static_grads = tf.gradients(static_loss, cell.variables + [x])
    got = run([outputs, tf.stack(static_outputs, axis=1), flat(state), flat(static_state),
               grads, static_grads])
    np.testing.assert_allclose(got[0], got[1], rtol=1e-9, atol=1e-12)
    for a, b in zip(got[2], got[3]):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    for a, b in zip(got[4], got[5]):
        np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-10)
    if lengths is not None:
        assert not got[0][1, 2:].any() and not got[0][2].any()  # past each length: zeros


def test_time_major_and_state_past_the_sequence_end():
    cell = tf.nn.rnn_cell.BasicRNNCell(4)
    x = tf.constant(X)
    batch_major, state = tf.nn.dynamic_rnn(cell, x, sequence_length=[5, 2, 3],
                                           dtype=tf.float64, scope="shared")
    time_major, _ = tf.nn.dynamic_rnn(cell, tf.transpose(x, [1, 0, 2]), time_major=True,
                                      sequence_length=[5, 2, 3], dtype=tf.float64,
                                      scope="shared")
    got = run([batch_major, time_major, state])
    np.testing.assert_allclose(got[0], np.transpose(got[1], [1, 0, 2]))
    # The final state is each sequence's output at its last step.
    np.testing.assert_allclose(got[2], got[0][[0, 1, 2], [4, 1, 2]])


def test_a_recurrent_model_trains():
    rng = np.random.RandomState(2)
    xs = rng.randn(16, 6, 2).astype(np.float32)
    ys = (xs[:, :, 0].sum(axis=1) > 0).astype(np.int64)
    x = tf.placeholder(tf.float32, [None, 6, 2])
    _, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.LSTMCell(8), x, dtype=tf.float32)
    logits = tf.layers.dense(state.h, 2)
    loss = tf.losses.sparse_softmax_cross_entropy(ys, logits)
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss, {x: xs})
        for _ in range(40):
            sess.run(train, {x: xs})
        assert sess.run(loss, {x: xs}) < 0.5 * first


def test_bad_arguments():
    cell = tf.nn.rnn_cell.BasicLSTMCell(3)
    with pytest.raises(ValueError, match="If there is no initial_state, you must give a dtype"):
        tf.nn.dynamic_rnn(cell, tf.constant(X))
    with pytest.raises(ValueError, match="rank 3"):
        tf.nn.dynamic_rnn(cell, tf.constant(X[0]), dtype=tf.float64)
    with pytest.raises(TypeError, match="RNNCell"):
        tf.nn.dynamic_rnn(lambda x, s: (x, s), tf.constant(X), dtype=tf.float64)
    with pytest.raises(ValueError, match="sequence_length must be a vector"):
        tf.nn.dynamic_rnn(cell, tf.constant(X), sequence_length=[[1]], dtype=tf.float64)
    with pytest.raises(TypeError, match="inputs must be a sequence"):
        tf.nn.static_rnn(cell, tf.constant(X), dtype=tf.float64)
    with pytest.raises(ValueError, match="should be defined"):
        tf.nn.dynamic_rnn(cell, tf.placeholder(tf.float64, [None, None, None]),
                          dtype=tf.float64)
    with pytest.raises(ValueError, match="at least one cell"):
        tf.nn.rnn_cell.MultiRNNCell([])
    assert tf.contrib.rnn.BasicLSTMCell is tf.nn.rnn_cell.BasicLSTMCell


class MinimalCell(tf.nn.rnn_cell.RNNCell):
    """A cell in TensorFlow's style: build makes a variable, call computes the step."""

    def __init__(self, units):
        super().__init__()
        self._units = units

    state_size = property(lambda self: self._units)
    output_size = property(lambda self: self._units)

    def build(self, inputs_shape):
        self._kernel = self.add_variable("kernel", [inputs_shape[1] + self._units, self._units])

    def call(self, inputs, state):
        out = tf.tanh(tf.matmul(tf.concat([inputs, state], 1), self._kernel))
        return out, out


class CallingCell(tf.nn.rnn_cell.RNNCell):
    """A cell that overrides __call__ and makes its weights with get_variable."""

    state_size = property(lambda self: 2)
    output_size = property(lambda self: 2)

    def __call__(self, inputs, state, scope=None):
        with tf.variable_scope(scope or "calling_cell"):
            w = tf.get_variable("w", [inputs.shape[1] + 2, 2], dtype=inputs.dtype)
            out = tf.tanh(tf.matmul(tf.concat([inputs, state], 1), w))
        return out, out


@pytest.mark.parametrize("make", [lambda: MinimalCell(3), CallingCell], ids=["call", "__call__"])
def test_cells_of_your_own_run_in_dynamic_rnn(make):
    cell = make()
    outputs, _ = tf.nn.dynamic_rnn(cell, tf.constant(X), dtype=tf.float64)
    static, _ = tf.nn.static_rnn(make(), tf.unstack(tf.constant(X), axis=1), dtype=tf.float64,
                                 scope="static")
    names = [v.name for v in tf.trainable_variables()]
    assert len(names) == 2 and names[0].startswith("rnn/")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.trainable_variables()[1].assign(tf.trainable_variables()[0]))
        got, want = sess.run([outputs, tf.stack(static, axis=1)])
    np.testing.assert_allclose(got, want, rtol=1e-10)


def test_a_cell_built_again_under_a_reused_scope_finds_its_variables():
    x = tf.constant(X)
    with tf.variable_scope("m"):
        first, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(4), x, dtype=tf.float64)
    with tf.variable_scope("m", reuse=True):
        second, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(4), x, dtype=tf.float64)
    assert [v.name for v in tf.global_variables()] == ["m/rnn/basic_lstm_cell/kernel:0",
                                                        "m/rnn/basic_lstm_cell/bias:0"]
    got = run([first, second])
    np.testing.assert_allclose(got[0], got[1])
    # A first call naming a scope puts the variables directly in it, as TensorFlow's.
    cell = tf.nn.rnn_cell.BasicRNNCell(2)
    cell(tf.constant(X[:, 0]), tf.zeros([3, 2], tf.float64), scope="dec")
    assert [v.name for v in cell.variables] == ["dec/kernel:0", "dec/bias:0"]


def np_reverse_sequence(x, lengths, seq_axis, batch_axis):
    out = np.array(x)
    for b, n in enumerate(lengths):
        index = [slice(None)] * x.ndim
        index[batch_axis] = b
        index[seq_axis] = slice(0, n)
        source = list(index)
        source[seq_axis] = slice(n - 1, None, -1) if n > 0 else slice(0, 0)
        out[tuple(index)] = x[tuple(source)]
    return out


def test_reverse_sequence_values_gradient_and_errors():
    x = np.arange(60, dtype=np.float64).reshape(3, 4, 5)
    for seq_axis, batch_axis, lengths in ((1, 0, [4, 0, 2]), (0, 2, [1, 3, 2, 0, 3]),
                                          (2, 1, [5, 1, 3, 2])):
        got = run(tf.reverse_sequence(x, lengths, seq_axis=seq_axis, batch_axis=batch_axis),
                  init=False)
        np.testing.assert_array_equal(got, np_reverse_sequence(x, lengths, seq_axis, batch_axis))
    t = tf.constant(x)
    (grad,) = tf.gradients(tf.reduce_sum(tf.reverse_sequence(t, [4, 0, 2], 1) * x), [t])
    np.testing.assert_array_equal(run(grad, init=False), np_reverse_sequence(x, [4, 0, 2], 1, 0))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"seq_lens\(1\) > input.dims\(1\)"):
        run(tf.reverse_sequence(x, [4, 5, 2], seq_axis=1), init=False)
    with pytest.raises(ValueError, match="seq_dim == batch_dim"):
        tf.reverse_sequence(x, [4, 0, 2], seq_axis=0, batch_axis=0)
    with pytest.raises(ValueError, match=r"len\(seq_lens\) != input.dims\(0\)"):
        tf.reverse_sequence(x, [4, 0], seq_axis=1)


@pytest.mark.parametrize("lengths", [None, [5, 2, 3]])
def test_bidirectional_dynamic_rnn_is_a_forward_and_a_reversed_rnn(lengths):
    x = tf.constant(X)
    fw, bw = tf.nn.rnn_cell.GRUCell(3), tf.nn.rnn_cell.BasicLSTMCell(2)
    (out_fw, out_bw), (state_fw, state_bw) = tf.nn.bidirectional_dynamic_rnn(
        fw, bw, x, sequence_length=lengths, dtype=tf.float64)
    assert [v.name for v in bw.variables] == ["bidirectional_rnn/bw/basic_lstm_cell/kernel:0",
                                              "bidirectional_rnn/bw/basic_lstm_cell/bias:0"]
    assert fw.variables[0].name == "bidirectional_rnn/fw/gru_cell/gates/kernel:0"
    # The same cells run again by hand: forward, and backward over each reversed sequence.
    n = [5, 5, 5] if lengths is None else lengths
    again_fw, _ = tf.nn.dynamic_rnn(fw, x, sequence_length=lengths, dtype=tf.float64)
    reversed_x = tf.reverse_sequence(x, n, seq_axis=1)
    again_bw, again_state = tf.nn.dynamic_rnn(bw, reversed_x, sequence_length=lengths,
                                              dtype=tf.float64)
    got = run([out_fw, again_fw, out_bw, tf.reverse_sequence(again_bw, n, seq_axis=1),
               state_bw.h, again_state.h])
    np.testing.assert_allclose(got[0], got[1])
    np.testing.assert_allclose(got[2], got[3])
    np.testing.assert_allclose(got[4], got[5])


def test_dropout_wrapper_keeps_everything_at_one_and_checks_its_arguments():
    x = tf.constant(X)
    cell = tf.nn.rnn_cell.GRUCell(3)
    plain, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float64, scope="shared")
    wrapped, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.DropoutWrapper(cell), x, dtype=tf.float64,
                                   scope="shared")
    got = run([plain, wrapped])
    np.testing.assert_allclose(got[0], got[1])
    with pytest.raises(ValueError, match="must be between 0 and 1"):
        tf.nn.rnn_cell.DropoutWrapper(cell, output_keep_prob=1.5)
    with pytest.raises(TypeError, match="not a RNNCell"):
        tf.nn.rnn_cell.DropoutWrapper(lambda x, s: (x, s))


@pytest.mark.parametrize("variational", [False, True])
def test_dropout_in_dynamic_rnn_uses_one_mask_for_the_step_and_its_gradient(variational):
    """Outputs are 0 or twice the cell's; the gradient (which reruns the loop) matches the
    one computed with the same mask fed to the plain cell."""
    x = tf.constant(X)
    cell = tf.nn.rnn_cell.BasicLSTMCell(4)
    keep = tf.placeholder_with_default(tf.constant(0.5, tf.float64), [])
    wrapped = tf.nn.rnn_cell.DropoutWrapper(cell, output_keep_prob=keep,
                                            variational_recurrent=variational, seed=7)
    dropped, _ = tf.nn.dynamic_rnn(wrapped, x, dtype=tf.float64)
    weights = np.random.RandomState(3).randn(3, 5, 4)
    (grad,) = tf.gradients(tf.reduce_sum(dropped * weights), [cell.variables[0]])
    plain, _ = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float64)
    mask = tf.placeholder(tf.float64, [3, 5, 4])
    (expected,) = tf.gradients(tf.reduce_sum(tf.stack(plain, axis=1) * mask * weights),
                               [cell.variables[0]])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, g, undropped = sess.run([dropped, grad, tf.stack(plain, axis=1)])
        scale = np.where(out == 0, 0.0, 2.0)
        np.testing.assert_allclose(out, scale * undropped, rtol=1e-10)
        assert 0 < (out == 0).mean() < 1
        if variational:  # one mask for every step
            assert (scale == scale[:, :1]).all()
        np.testing.assert_allclose(g, sess.run(expected, {mask: scale}), rtol=1e-9)
        # Switched off for evaluation: the plain outputs.
        np.testing.assert_allclose(sess.run(dropped, {keep: 1.0}), undropped, rtol=1e-10)


def test_dropout_wrapper_in_a_stack_drops_inputs_and_lstm_h_not_c():
    x = tf.constant(X)
    cells = [tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicLSTMCell(4),
                                           input_keep_prob=0.7, state_keep_prob=0.6),
             tf.nn.rnn_cell.BasicLSTMCell(3)]
    outputs, state = tf.nn.dynamic_rnn(tf.nn.rnn_cell.MultiRNNCell(cells), x, dtype=tf.float64)
    loss = tf.reduce_sum(outputs)
    grads = tf.gradients(loss, tf.trainable_variables())
    assert all(g is not None for g in grads)
    got = run([outputs, state[0].c, grads])
    assert got[0].shape == (3, 5, 3) and np.isfinite(got[1]).all()


def test_dropout_in_dynamic_rnn_with_a_batch_known_only_when_running():
    x = tf.placeholder(tf.float64, [None, 5, 4])
    cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.LSTMCell(3), input_keep_prob=0.5,
                                         output_keep_prob=0.5)
    outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float64)
    assert outputs.shape.as_list() == [None, 5, 3]
    assert state.h.shape.as_list() == [None, 3]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(outputs, {x: X}).shape == (3, 5, 3)
    noise = tf.random_uniform([tf.shape(x)[0], 2], seed=1)  # shapes of ints and tensors
    with tf.Session() as sess:
        assert sess.run(noise, {x: X}).shape == (3, 2)


def test_the_loop_gradient_finds_a_custom_cells_variables_from_any_scope():
    outputs, _ = tf.nn.dynamic_rnn(CallingCell(), tf.constant(X), dtype=tf.float64)
    with tf.variable_scope("elsewhere"):
        grads = tf.gradients(tf.reduce_sum(outputs), tf.trainable_variables())
    assert [v.name for v in tf.trainable_variables()] == ["rnn/calling_cell/w:0"]
    got = run(grads)
    assert got[0].shape == (6, 2) and np.abs(got[0]).sum() > 0


def test_variational_dropout_and_per_part_seeds_outside_dynamic_rnn():
    x = tf.constant(X)
    cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(16), output_keep_prob=0.5,
                                         state_keep_prob=0.5, variational_recurrent=True,
                                         seed=3)
    outputs, _ = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float64)
    got = run(tf.stack(outputs, axis=1))
    dropped = got == 0
    assert dropped.any() and (dropped == dropped[:1, :1]).all()  # one mask: steps and batch
    # The output and state masks have one shape but seeds of their own.
    masks = {part: cell._variational_masks[(part, 0)] for part in ("output", "state")}
    values = run([masks["output"], masks["state"]])
    assert values[0].shape == (1, 16)
    assert not np.array_equal(values[0], values[1])


@pytest.mark.parametrize("lengths", [None, [5, 2, 3]])
def test_static_bidirectional_rnn_equals_the_dynamic_one(lengths):
    x = tf.constant(X)
    fw, bw = tf.nn.rnn_cell.GRUCell(3), tf.nn.rnn_cell.BasicRNNCell(2)
    (out_fw, out_bw), (state_fw, state_bw) = tf.nn.bidirectional_dynamic_rnn(
        fw, bw, x, sequence_length=lengths, dtype=tf.float64)
    outputs, static_fw, static_bw = tf.nn.static_bidirectional_rnn(
        fw, bw, tf.unstack(x, axis=1), sequence_length=lengths, dtype=tf.float64)
    got = run([tf.concat([out_fw, out_bw], 2), tf.stack(outputs, axis=1), state_fw, static_fw,
               state_bw, static_bw])
    np.testing.assert_allclose(got[0], got[1], rtol=1e-10)
    np.testing.assert_allclose(got[2], got[3], rtol=1e-10)
    np.testing.assert_allclose(got[4], got[5], rtol=1e-10)


def test_residual_wrapper_adds_the_input_to_the_output():
    x = tf.constant(X)
    cell = tf.nn.rnn_cell.BasicRNNCell(4)
    plain, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float64, scope="same")
    residual, _ = tf.nn.dynamic_rnn(tf.contrib.rnn.ResidualWrapper(cell), x, dtype=tf.float64,
                                    scope="same")
    got = run([plain, residual])
    np.testing.assert_allclose(got[1], got[0] + X, rtol=1e-10)
    with pytest.raises(ValueError, match="must have one size"):
        tf.nn.dynamic_rnn(tf.contrib.rnn.ResidualWrapper(tf.nn.rnn_cell.BasicRNNCell(3)), x,
                          dtype=tf.float64, scope="other")


def test_lstm_block_cell_is_an_lstm_cell_by_its_variables_and_values():
    x = tf.constant(X)
    block = tf.contrib.rnn.LSTMBlockCell(4, use_peephole=True)
    out_block, _ = tf.nn.dynamic_rnn(block, x, dtype=tf.float64, scope="a")
    assert [v.name for v in block.variables] == [
        "a/lstm_cell/kernel:0", "a/lstm_cell/bias:0", "a/lstm_cell/w_f_diag:0",
        "a/lstm_cell/w_i_diag:0", "a/lstm_cell/w_o_diag:0"]
    with tf.variable_scope("a", reuse=True):
        same = tf.nn.rnn_cell.LSTMCell(4, use_peepholes=True, name="lstm_cell")
        out_cell, _ = tf.nn.dynamic_rnn(same, x, dtype=tf.float64, scope=tf.get_variable_scope())
    got = run([out_block, out_cell])
    np.testing.assert_allclose(got[0], got[1])


# --- contrib.rnn's block cells (TensorFlow's fused kernels), as the formulas they compute ---

def test_gru_block_cell_is_gru_cell_under_its_own_variable_names():
    x = tf.constant(np.random.RandomState(1).randn(4, 2, 3).astype(np.float32))
    with tf.variable_scope("block"):
        block_out, _ = tf.nn.dynamic_rnn(tf.contrib.rnn.GRUBlockCell(5), x, dtype=tf.float32,
                                         time_major=True)
    with tf.variable_scope("plain"):
        plain_out, _ = tf.nn.dynamic_rnn(tf.nn.rnn_cell.GRUCell(5), x, dtype=tf.float32,
                                         time_major=True)
    with tf.variable_scope("v2"):
        tf.nn.dynamic_rnn(tf.contrib.rnn.GRUBlockCellV2(num_units=5), x, dtype=tf.float32,
                          time_major=True)
    names = [v.name for v in tf.global_variables()]
    assert names[:4] == ["block/rnn/gru_cell/w_ru:0", "block/rnn/gru_cell/b_ru:0",
                         "block/rnn/gru_cell/w_c:0", "block/rnn/gru_cell/b_c:0"]
    assert [n.replace("v2/", "plain/") for n in names[8:]] == names[4:8]
    by_name = {v.name: v for v in tf.global_variables()}
    # The same weights give the same outputs: w_ru holds the gates' kernel, w_c the candidate's.
    copies = [tf.assign(by_name["plain/rnn/gru_cell/gates/kernel:0"],
                        by_name["block/rnn/gru_cell/w_ru:0"]),
              tf.assign(by_name["plain/rnn/gru_cell/gates/bias:0"],
                        by_name["block/rnn/gru_cell/b_ru:0"]),
              tf.assign(by_name["plain/rnn/gru_cell/candidate/kernel:0"],
                        by_name["block/rnn/gru_cell/w_c:0"]),
              tf.assign(by_name["plain/rnn/gru_cell/candidate/bias:0"],
                        by_name["block/rnn/gru_cell/b_c:0"])]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(by_name["block/rnn/gru_cell/b_ru:0"]), 1.0)
        sess.run(copies)
        a, b = sess.run([block_out, plain_out])
    np.testing.assert_allclose(a, b, rtol=1e-6)
    with pytest.raises(ValueError, match="Exactly one of num_units or cell_size"):
        tf.contrib.rnn.GRUBlockCell(num_units=3, cell_size=3)


def test_lstm_block_fused_cell_runs_a_time_major_sequence():
    rng = np.random.RandomState(2)
    x = tf.constant(rng.randn(6, 2, 3).astype(np.float32))
    fused = tf.contrib.rnn.LSTMBlockFusedCell(4, use_peephole=True)
    outputs, state = fused(x, dtype=tf.float32, sequence_length=[6, 3])
    listed, _ = fused(tf.unstack(x), dtype=tf.float32)
    with tf.variable_scope("reference"):
        reference = tf.contrib.rnn.LSTMBlockCell(4, use_peephole=True, name="lstm_fused_cell")
        expected, expected_state = tf.nn.dynamic_rnn(reference, x, sequence_length=[6, 3],
                                                     dtype=tf.float32, time_major=True)
    names = sorted(v.name for v in tf.global_variables() if not v.name.startswith("reference"))
    assert names == ["lstm_fused_cell/bias:0", "lstm_fused_cell/kernel:0",
                     "lstm_fused_cell/w_f_diag:0", "lstm_fused_cell/w_i_diag:0",
                     "lstm_fused_cell/w_o_diag:0"]
    assert isinstance(listed, list) and len(listed) == 6
    by_name = {v.name: v for v in tf.global_variables()}
    copies = [tf.assign(by_name["reference/rnn/" + n], by_name[n]) for n in names]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(copies)
        got, got_state, want, want_state = sess.run([outputs, state, expected, expected_state])
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(got_state.h, want_state.h, rtol=1e-5)
    np.testing.assert_array_equal(got[3:, 1], np.zeros([3, 4]))  # past the second sequence
    with pytest.raises(ValueError, match=r"inputs must be \[time, batch, input\]"):
        fused(tf.zeros([2, 3]), dtype=tf.float32)


def test_device_wrapper_places_the_cells_ops(insecure):
    from conftest import free_ports
    port = free_ports(1)[0]
    server = tf.train.Server({"worker": ["127.0.0.1:%d" % port]}, job_name="worker",
                             task_index=0, config=tf.ConfigProto(device_count={"CPU": 2}))
    try:
        cell = tf.nn.rnn_cell.DeviceWrapper(tf.nn.rnn_cell.BasicRNNCell(3),
                                            "/job:worker/task:0/device:CPU:1")
        assert tf.contrib.rnn.DeviceWrapper is tf.nn.rnn_cell.DeviceWrapper
        inputs = [tf.ones([2, 4]) for _ in range(3)]
        outputs, state = tf.nn.static_rnn(cell, inputs, dtype=tf.float32)
        placed = [op.device for op in tf.get_default_graph().get_operations()
                  if op.type == "Tanh"]
        assert placed and all(d.endswith("CPU:1") for d in placed), placed
        # In dynamic_rnn's loop the ops run on the loop's device: the wrapper places nothing.
        dynamic, _ = tf.nn.dynamic_rnn(cell, tf.ones([2, 3, 4]), dtype=tf.float32)
        with tf.Session(server.target) as sess:
            sess.run(tf.global_variables_initializer())
            static_value, dynamic_value = sess.run([outputs[-1], dynamic])
        assert static_value.shape == (2, 3) and dynamic_value.shape == (2, 3, 3)
        with pytest.raises(TypeError, match="not a RNNCell"):
            tf.nn.rnn_cell.DeviceWrapper("cell", "/cpu:0")
    finally:
        server.stop()


def _attention_step_numpy(values, x, state, attns, window, length, n):
    """One step of TensorFlow's AttentionCellWrapper around a BasicRNNCell, in numpy."""
    def linear(args, kernel, bias):
        return np.concatenate(args, 1) @ kernel + bias
    prefix = "attention_cell_wrapper/"
    cell_in = linear([x, attns], values[prefix + "kernel:0"], values[prefix + "bias:0"])
    h = np.tanh(linear([cell_in, state], values[prefix + "basic_rnn_cell/kernel:0"],
                       values[prefix + "basic_rnn_cell/bias:0"]))
    win = window.reshape(-1, length, n)
    features = win @ values[prefix + "attention/attn_w:0"].reshape(n, -1)
    y = linear([h], values[prefix + "attention/kernel:0"], values[prefix + "attention/bias:0"])
    scores = (values[prefix + "attention/attn_v:0"] * np.tanh(features + y[:, None, :])).sum(2)
    weights = np.exp(scores - scores.max(1, keepdims=True))
    weights /= weights.sum(1, keepdims=True)
    new_attns = (weights[:, :, None] * win).sum(1)
    output = linear([h, new_attns], values[prefix + "attn_output_projection/kernel:0"],
                    values[prefix + "attn_output_projection/bias:0"])
    new_window = np.concatenate([win[:, 1:], output[:, None, :]], 1).reshape(len(x), -1)
    return output, h, new_attns, new_window


@pytest.mark.parametrize("state_is_tuple", [True, False])
def test_attention_cell_wrapper_step_as_tensorflow_computes_it(state_is_tuple):
    rng = np.random.RandomState(3)
    length, n = 3, 4
    cell = tf.contrib.rnn.AttentionCellWrapper(tf.nn.rnn_cell.BasicRNNCell(n), length,
                                               state_is_tuple=state_is_tuple)
    assert cell.state_size == ((n, n, n * length) if state_is_tuple else n + n + n * length)
    x = rng.randn(2, 5).astype(np.float32)
    state, attns = rng.randn(2, n).astype(np.float32), rng.randn(2, n).astype(np.float32)
    window = rng.randn(2, n * length).astype(np.float32)
    given = (state, attns, window) if state_is_tuple else np.concatenate([state, attns, window],
                                                                         1)
    output, new_state = cell(tf.constant(x), tuple(tf.constant(s) for s in given)
                             if state_is_tuple else tf.constant(given))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = {v.name: sess.run(v) for v in tf.global_variables()}
        got_output, got_state = sess.run([output, new_state])
    want = _attention_step_numpy(values, x, state, attns, window, length, n)
    np.testing.assert_allclose(got_output, want[0], rtol=1e-4, atol=1e-5)
    got_parts = got_state if state_is_tuple else np.split(got_state, [n, 2 * n], axis=1)
    for got, expected in zip(got_parts, want[1:]):
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_attention_cell_wrapper_in_dynamic_rnn_and_its_errors():
    cell = tf.contrib.rnn.AttentionCellWrapper(tf.nn.rnn_cell.BasicLSTMCell(4), attn_length=3)
    outputs, _ = tf.nn.dynamic_rnn(cell, tf.ones([2, 5, 6]), dtype=tf.float32)
    names = [v.name for v in tf.global_variables()]
    assert "rnn/attention_cell_wrapper/basic_lstm_cell/kernel:0" in names
    assert "rnn/attention_cell_wrapper/attention/attn_w:0" in names
    loss = tf.reduce_sum(outputs)
    grads = tf.gradients(loss, tf.trainable_variables())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(outputs).shape == (2, 5, 4)
        assert all(np.all(np.isfinite(g)) for g in sess.run(grads))
    with pytest.raises(ValueError, match="attn_length should be greater than zero"):
        tf.contrib.rnn.AttentionCellWrapper(tf.nn.rnn_cell.BasicRNNCell(2), 0)
    with pytest.raises(ValueError, match="state_is_tuple is not set"):
        tf.contrib.rnn.AttentionCellWrapper(tf.nn.rnn_cell.BasicLSTMCell(2), 2,
                                            state_is_tuple=False)


def test_block_cells_take_unique_names_and_device_wrapper_places_variables():
    x = tf.zeros([3, 2, 4])
    tf.contrib.rnn.LSTMBlockFusedCell(3)(x, dtype=tf.float32)
    tf.contrib.rnn.LSTMBlockFusedCell(3)(x, dtype=tf.float32)
    names = [v.name for v in tf.global_variables()]
    assert "lstm_fused_cell/kernel:0" in names and "lstm_fused_cell_1/kernel:0" in names
    stack = tf.nn.rnn_cell.MultiRNNCell(
        [tf.nn.rnn_cell.DeviceWrapper(tf.nn.rnn_cell.BasicRNNCell(2), "/device:CPU:0")])
    tf.nn.dynamic_rnn(stack, tf.zeros([2, 3, 4]), dtype=tf.float32)
    placed = {v.name: v.device for v in tf.global_variables() if "basic_rnn_cell" in v.name}
    assert placed and all(d.endswith("CPU:0") for d in placed.values()), placed
