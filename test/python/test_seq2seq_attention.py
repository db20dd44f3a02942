"""tf.contrib.seq2seq's attention: LuongAttention and BahdanauAttention against their formulas
computed in numpy from the variables' values, AttentionWrapper's step (inputs with the previous
attention, the cell, the context, the attention layer) against the same, with several
mechanisms, alignment history, TensorFlow's variable names and errors; decoding with
BeamSearchDecoder over an attentional cell (as beam_search_decoder_test.py's attention cases,
with the coverage penalty), and training through the attention."""

import numpy as np
import pytest

import troupe as tf

seq2seq = tf.contrib.seq2seq
BATCH, MEM_TIME, MEM_DEPTH, UNITS = 2, 5, 4, 6


def memory():
    return np.random.RandomState(0).randn(BATCH, MEM_TIME, MEM_DEPTH).astype(np.float32)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def by_name(values):
    return {v.op.name: v for v in values}


def evaluate(fetches, feed_dict=None, assign=None):
    """Runs `fetches` after initialising, with the variables named in `assign` set first;
    returns them and every variable's value."""
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        variables = by_name(tf.global_variables())
        for name, value in (assign or {}).items():
            sess.run(tf.assign(variables[name], value))
        got = sess.run(fetches, feed_dict)
        values = sess.run({v.op.name: v for v in tf.global_variables()})
    return got, values


def masked_memory(mem, lengths):
    """The memory a mechanism keeps: zeros past each entry's length."""
    mem = mem.copy()
    for b, n in enumerate(lengths):
        mem[b, n:] = 0
    return mem


def masked_softmax(score, lengths):
    score = score.copy()
    for b, n in enumerate(lengths):
        score[b, n:] = -np.inf
    return softmax(score)


@pytest.mark.parametrize("scale", [False, True])
def test_luong_attention_scores_the_query_against_the_keyed_memory(scale):
    mem = memory()
    query = np.random.RandomState(1).randn(BATCH, UNITS).astype(np.float32)
    mechanism = seq2seq.LuongAttention(UNITS, mem, memory_sequence_length=[5, 3], scale=scale)
    alignments, next_state = mechanism(tf.constant(query), mechanism.initial_state(BATCH,
                                                                                  tf.float32))
    assert next_state is alignments
    assert alignments.shape.as_list() == [BATCH, MEM_TIME]
    # attention_g starts at 1: another value shows it is used.
    assign = {"luong_attention/attention_g": np.float32(0.37)} if scale else {}
    (got, keys), values = evaluate([alignments, mechanism.keys], assign=assign)
    kernel = values["memory_layer/kernel"]
    mem = masked_memory(mem, [5, 3])
    np.testing.assert_allclose(keys, mem @ kernel, rtol=1e-5, atol=1e-6)
    score = np.einsum("bu,btu->bt", query, mem @ kernel)
    if scale:
        score = score * values["luong_attention/attention_g"]
    np.testing.assert_allclose(got, masked_softmax(score, [5, 3]), rtol=1e-5, atol=1e-6)
    assert (got[1, 3:] == 0).all()


@pytest.mark.parametrize("normalize", [False, True])
def test_bahdanau_attention_adds_the_processed_query_to_the_keys(normalize):
    mem = memory()
    query = np.random.RandomState(1).randn(BATCH, 3).astype(np.float32)
    mechanism = seq2seq.BahdanauAttention(UNITS, mem, memory_sequence_length=[2, 5],
                                          normalize=normalize)
    alignments, _ = mechanism(tf.constant(query), mechanism.initial_state(BATCH, tf.float32))
    # attention_g and attention_b start at sqrt(1 / units) and 0: other values show their use.
    assign = {"bahdanau_attention/attention_g": np.float32(1.9),
              "bahdanau_attention/attention_b":
                  np.random.RandomState(7).randn(UNITS).astype(np.float32)} if normalize else {}
    got, values = evaluate(alignments, assign=assign)
    keys = masked_memory(mem, [2, 5]) @ values["memory_layer/kernel"]
    processed = query @ values["bahdanau_attention/query_layer/kernel"]
    v = values["bahdanau_attention/attention_v"]
    if normalize:
        g = values["bahdanau_attention/attention_g"]
        np.testing.assert_allclose(g, 1.9, rtol=1e-6)
        normed = g * v / np.sqrt((v ** 2).sum())
        score = (normed * np.tanh(keys + processed[:, None, :] +
                                  values["bahdanau_attention/attention_b"])).sum(-1)
    else:
        score = (v * np.tanh(keys + processed[:, None, :])).sum(-1)
    np.testing.assert_allclose(got, masked_softmax(score, [2, 5]), rtol=1e-5, atol=1e-6)


def test_hardmax_is_one_hot_of_the_largest():
    got, _ = evaluate(seq2seq.hardmax([[1.0, 3.0, 2.0], [5.0, 5.0, 0.0]]))
    np.testing.assert_array_equal(got, [[0, 1, 0], [1, 0, 0]])


def test_a_memory_length_of_zero_fails_the_step():
    mechanism = seq2seq.LuongAttention(UNITS, memory(), memory_sequence_length=[3, 0])
    alignments, _ = mechanism(tf.zeros([BATCH, UNITS]), None)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="All values in memory_sequence_length must be greater than zero"):
        evaluate(alignments)


def one_step_reference(values, inputs, state_h, mem, lengths, attention_prev, layer, prefix):
    """AttentionWrapper(BasicRNNCell, LuongAttention) for one step, in numpy."""
    x = np.concatenate([inputs, attention_prev], 1)
    kernel = values[prefix + "basic_rnn_cell/kernel"]
    bias = values[prefix + "basic_rnn_cell/bias"]
    h = np.tanh(np.concatenate([x, state_h], 1) @ kernel + bias)
    mem = masked_memory(mem, lengths)
    keys = mem @ values["memory_layer/kernel"]
    alignments = masked_softmax(np.einsum("bu,btu->bt", h, keys), lengths)
    context = np.einsum("bt,btd->bd", alignments, mem)
    if layer:
        attention = np.concatenate([h, context], 1) @ values[prefix + "attention_layer/kernel"]
    else:
        attention = context
    return h, alignments, attention


@pytest.mark.parametrize("layer_size", [None, 3])
def test_one_wrapper_step_is_the_cell_the_context_and_the_attention_layer(layer_size):
    mem = memory()
    inputs = np.random.RandomState(2).randn(BATCH, 2).astype(np.float32)
    mechanism = seq2seq.LuongAttention(UNITS, mem, memory_sequence_length=[5, 2])
    wrapper = seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicRNNCell(UNITS), mechanism,
                                       attention_layer_size=layer_size)
    assert wrapper.output_size == (layer_size or MEM_DEPTH)
    state = wrapper.zero_state(BATCH, tf.float32)
    assert isinstance(state, seq2seq.AttentionWrapperState)
    output, next_state = wrapper(tf.constant(inputs), state)
    got, values = evaluate({"out": output, "state": next_state})
    h, alignments, attention = one_step_reference(
        values, inputs, np.zeros([BATCH, UNITS], np.float32), mem, [5, 2],
        np.zeros([BATCH, layer_size or MEM_DEPTH], np.float32), layer_size,
        "attention_wrapper/")
    np.testing.assert_allclose(got["state"].cell_state, h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["state"].alignments, alignments, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["state"].attention, attention, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["out"], attention, rtol=1e-5, atol=1e-6)
    assert got["state"].time == 1


def test_dynamic_rnn_over_the_wrapper_feeds_each_attention_into_the_next_step():
    mem = memory()
    inputs = np.random.RandomState(3).randn(BATCH, 3, 2).astype(np.float32)
    mechanism = seq2seq.LuongAttention(UNITS, mem)
    wrapper = seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicRNNCell(UNITS), mechanism,
                                       attention_layer_size=3, alignment_history=True,
                                       output_attention=False)
    outputs, state = tf.nn.dynamic_rnn(wrapper, tf.constant(inputs),
                                       initial_state=wrapper.zero_state(BATCH, tf.float32))
    assert outputs.shape.as_list() == [BATCH, 3, UNITS]  # the cell's outputs
    history = state.alignment_history.stack()
    got, values = evaluate({"out": outputs, "history": history, "time": state.time})
    assert sorted(values) == ["memory_layer/kernel",
                              "rnn/attention_wrapper/attention_layer/kernel",
                              "rnn/attention_wrapper/basic_rnn_cell/bias",
                              "rnn/attention_wrapper/basic_rnn_cell/kernel"]
    h = np.zeros([BATCH, UNITS], np.float32)
    attention = np.zeros([BATCH, 3], np.float32)
    for t in range(3):
        h, alignments, attention = one_step_reference(values, inputs[:, t], h, mem,
                                                      [MEM_TIME] * BATCH, attention, 3,
                                                      "rnn/attention_wrapper/")
        np.testing.assert_allclose(got["out"][:, t], h, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(got["history"][t], alignments, rtol=1e-4, atol=1e-5)
    assert got["time"] == 3


def test_several_mechanisms_give_a_tuple_of_alignments_and_one_attention():
    mem = memory()
    luong = seq2seq.LuongAttention(UNITS, mem)
    bahdanau = seq2seq.BahdanauAttention(UNITS, mem, memory_sequence_length=[4, 4])
    wrapper = seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicLSTMCell(UNITS), [luong, bahdanau],
                                       attention_layer_size=[3, 2], alignment_history=True)
    assert wrapper.output_size == 5
    state = wrapper.zero_state(BATCH, tf.float32)
    assert isinstance(state.alignments, tuple) and len(state.alignments) == 2
    output, next_state = wrapper(tf.ones([BATCH, 2]), state)
    # (A TensorArray of the state is not a fetch, as in TensorFlow.)
    got, values = evaluate({"out": output, "alignments": next_state.alignments,
                            "history": [h.stack() for h in next_state.alignment_history]})
    assert got["out"].shape == (BATCH, 5)
    for alignments, history in zip(got["alignments"], got["history"]):
        np.testing.assert_allclose(alignments.sum(1), 1.0, rtol=1e-5)
        np.testing.assert_array_equal(history, alignments[None])
    assert (got["alignments"][1][:, 4] == 0).all()
    assert "attention_wrapper/attention_layer/kernel" in values
    assert "attention_wrapper/attention_layer_1/kernel" in values
    assert "attention_wrapper/bahdanau_attention/attention_v" in values
    # The wrapper's variables: all it made, not the memory layers made with the mechanisms.
    assert sorted(v.op.name for v in wrapper.variables) == sorted(
        name for name in values if name.startswith("attention_wrapper/"))


def test_bad_arguments_are_tensorflows_errors():
    mem = memory()
    cell = tf.nn.rnn_cell.BasicRNNCell(UNITS)
    mechanism = seq2seq.LuongAttention(UNITS, mem)
    with pytest.raises(TypeError, match="attention_mechanism must be an AttentionMechanism"):
        seq2seq.AttentionWrapper(cell, "nope")
    with pytest.raises(TypeError, match="must contain only instances of AttentionMechanism"):
        seq2seq.AttentionWrapper(cell, [mechanism, 3])
    with pytest.raises(ValueError, match="exactly one integer per attention_mechanism"):
        seq2seq.AttentionWrapper(cell, mechanism, attention_layer_size=[2, 3])
    with pytest.raises(ValueError, match="Only one of attention_layer_size and attention_layer"):
        seq2seq.AttentionWrapper(cell, mechanism, attention_layer_size=2,
                                 attention_layer=tf.layers.Dense(2))
    with pytest.raises(ValueError, match="to have fully defined inner dims"):
        seq2seq.LuongAttention(UNITS, tf.placeholder(tf.float32, [None, None, None]))
    wrapper = seq2seq.AttentionWrapper(cell, mechanism)
    with pytest.raises(TypeError, match="Expected state to be instance of AttentionWrapperState"):
        wrapper(tf.ones([BATCH, 2]), tf.zeros([BATCH, UNITS]))
    # Two known batch sizes: what TensorFlow 1.15's assert_equal raises while building.
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="Non-matching batch sizes between the memory"):
        wrapper.zero_state(3, tf.float32)
    fed = tf.placeholder(tf.int32, [])
    state = wrapper.zero_state(fed, tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Non-matching batch sizes"):
        evaluate(state.cell_state, {fed: 3})
    narrow = seq2seq.LuongAttention(3, mem)
    with pytest.raises(ValueError, match="Incompatible or unknown inner dimensions"):
        seq2seq.AttentionWrapper(cell, narrow)(tf.ones([BATCH, 2]),
                                               seq2seq.AttentionWrapper(cell, narrow)
                                               .zero_state(BATCH, tf.float32))


def test_clone_replaces_a_field_and_checks_its_shape():
    wrapper = seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicRNNCell(UNITS),
                                       seq2seq.LuongAttention(UNITS, memory()))
    state = wrapper.zero_state(BATCH, tf.float32)
    cloned = state.clone(cell_state=tf.ones([BATCH, UNITS]))
    assert isinstance(cloned, seq2seq.AttentionWrapperState)
    assert evaluate(cloned.cell_state)[0].sum() == BATCH * UNITS
    with pytest.raises(ValueError, match="Invalid shape"):
        state.clone(cell_state=tf.ones([BATCH + 1, UNITS]))


@pytest.mark.parametrize("history,coverage", [(False, 0.0), (True, 0.0), (False, 0.2)])
def test_beam_search_over_an_attentional_cell(history, coverage):
    batch, beam, vocab, steps = 5, 3, 20, 4
    np.random.seed(3)
    encoder_lengths = np.array([3, 2, 3, 1, 1])
    inputs = tf.placeholder_with_default(
        np.random.randn(batch, steps, 7).astype(np.float32), shape=(None, None, 7))
    cell = tf.nn.rnn_cell.LSTMCell(9)
    initial = seq2seq.tile_batch(cell.zero_state(batch, tf.float32), multiplier=beam)
    mechanism = seq2seq.BahdanauAttention(
        6, seq2seq.tile_batch(inputs, multiplier=beam),
        memory_sequence_length=seq2seq.tile_batch(encoder_lengths, multiplier=beam))
    attentional = seq2seq.AttentionWrapper(cell, mechanism, attention_layer_size=6,
                                           alignment_history=history)
    state = attentional.zero_state(batch_size=tf.constant(batch) * beam, dtype=tf.float32)
    state = state.clone(cell_state=initial)
    decoder = seq2seq.BeamSearchDecoder(
        attentional, np.random.randn(vocab, 50).astype(np.float32),
        tf.fill([tf.constant(batch)], 0), vocab - 1, state, beam,
        output_layer=tf.layers.Dense(vocab), coverage_penalty_weight=coverage)
    outputs, final_state, lengths = seq2seq.dynamic_decode(decoder, maximum_iterations=3)
    assert outputs.predicted_ids.shape.as_list() == [batch, None, beam]
    fetches = {"ids": outputs.predicted_ids, "lengths": lengths,
               "scores": outputs.beam_search_decoder_output.scores}
    if history:  # reordered along the beams and stacked by finalize()
        fetches["history"] = final_state.cell_state.alignment_history
    got, _ = evaluate(fetches)
    n = got["lengths"].max()
    assert got["ids"].shape == (batch, n, beam)
    assert got["scores"].shape == (batch, n, beam)
    if history:
        assert got["history"].shape == (n, batch * beam, steps)
        np.testing.assert_allclose(got["history"].sum(-1), 1.0, rtol=1e-5)


def test_the_coverage_penalty_is_gnmts():
    log_probs = tf.zeros([1, 2, 3])
    accumulated = tf.constant([[[0.5, 2.0, 0.0], [0.25, 1.0, 0.5]]])
    finished = tf.constant([[True, False]])
    from troupe.contrib.seq2seq import beam_search_decoder as bsd
    scores = bsd._get_scores(log_probs, tf.constant(1, shape=[1, 2, 3], dtype=tf.int64), 0.0,
                             0.2, finished, accumulated)
    got, _ = evaluate(scores)
    # Only the finished beam is penalised: 0.2 * (log 0.5 + log 1 + log 1 (a zero counts 1)).
    np.testing.assert_allclose(got[0, 0], 0.2 * np.log(0.5), rtol=1e-6)
    np.testing.assert_allclose(got[0, 1], 0.0)


def test_training_through_the_attention_lowers_the_loss():
    # Copy the memory's argmax-bearing positions: a target each step that the attention can find.
    rng = np.random.RandomState(4)
    vocab, steps = 6, 4
    source = rng.randint(0, vocab, size=(8, steps))
    mem = tf.constant(np.eye(vocab, dtype=np.float32)[source])  # [8, steps, vocab]
    mechanism = seq2seq.LuongAttention(8, mem)
    cell = seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicLSTMCell(8), mechanism,
                                    attention_layer_size=8)
    helper = seq2seq.TrainingHelper(tf.zeros([8, steps, 1]), [steps] * 8)
    decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(8, tf.float32),
                                   output_layer=tf.layers.Dense(vocab))
    outputs, _, _ = seq2seq.dynamic_decode(decoder)
    loss = seq2seq.sequence_loss(outputs.rnn_output, tf.constant(source, dtype=tf.int32),
                                 tf.ones([8, steps]))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(60):
            sess.run(train)
        last = sess.run(loss)
    assert last < 0.5 * first, (first, last)


def test_two_mechanisms_of_one_kind_get_scopes_of_their_own():
    mem = memory()
    first = seq2seq.BahdanauAttention(UNITS, mem)
    second = seq2seq.BahdanauAttention(UNITS, mem)
    wrapper = seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicRNNCell(UNITS), [first, second])
    output, state = wrapper(tf.ones([BATCH, 2]), wrapper.zero_state(BATCH, tf.float32))
    got, values = evaluate({"out": output, "alignments": state.alignments})
    for name in ("memory_layer/kernel", "memory_layer_1/kernel",
                 "attention_wrapper/bahdanau_attention/query_layer/kernel",
                 "attention_wrapper/bahdanau_attention_1/query_layer/kernel",
                 "attention_wrapper/bahdanau_attention_1/attention_v"):
        assert name in values, sorted(values)
    # No attention layer: the attention is the two contexts, in the mechanisms' order.
    contexts = [np.einsum("bt,btd->bd", a, mem) for a in got["alignments"]]
    np.testing.assert_allclose(got["out"], np.concatenate(contexts, 1), rtol=1e-5, atol=1e-6)


def test_dynamic_rnn_with_sequence_lengths_keeps_finished_states():
    mechanism = seq2seq.LuongAttention(UNITS, memory())
    wrapper = seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicRNNCell(UNITS), mechanism,
                                       attention_layer_size=3, alignment_history=True)
    inputs = tf.constant(np.random.RandomState(3).randn(BATCH, 4, 2).astype(np.float32))
    outputs, state = tf.nn.dynamic_rnn(wrapper, inputs, sequence_length=[4, 2],
                                       initial_state=wrapper.zero_state(BATCH, tf.float32))
    got, _ = evaluate({"out": outputs, "attention": state.attention, "time": state.time})
    np.testing.assert_array_equal(got["out"][1, 2:], 0)  # past the second sequence's end
    np.testing.assert_allclose(got["attention"][1], got["out"][1, 1], rtol=1e-6)
    assert got["time"] == 4  # the step count goes on, as TensorFlow's


def test_a_wrapper_in_a_multi_rnn_cell_has_its_own_zero_state():
    mechanism = seq2seq.LuongAttention(UNITS, memory())
    stack = tf.nn.rnn_cell.MultiRNNCell([
        seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicLSTMCell(UNITS), mechanism),
        tf.nn.rnn_cell.BasicLSTMCell(5)])
    state = stack.zero_state(BATCH, tf.float32)
    assert isinstance(state[0], seq2seq.AttentionWrapperState)
    inputs = tf.ones([BATCH, 3, 2])
    outputs, final = tf.nn.dynamic_rnn(stack, inputs, dtype=tf.float32)
    got, values = evaluate(outputs)
    assert got.shape == (BATCH, 3, 5)
    assert "rnn/multi_rnn_cell/cell_0/attention_wrapper/basic_lstm_cell/kernel" in values


def test_a_cell_input_fn_of_your_own_makes_its_variables_in_the_wrapper():
    def project(inputs, attention):
        return tf.layers.dense(tf.concat([inputs, attention], -1), 7, name="input_projection")
    mechanism = seq2seq.LuongAttention(UNITS, memory())
    wrapper = seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicRNNCell(UNITS), mechanism,
                                       cell_input_fn=project)
    outputs, _ = tf.nn.dynamic_rnn(wrapper, tf.ones([BATCH, 3, 2]), dtype=tf.float32)
    got, values = evaluate(outputs)
    assert got.shape == (BATCH, 3, MEM_DEPTH)
    assert "rnn/attention_wrapper/input_projection/kernel" in values, sorted(values)
    assert "rnn/attention_wrapper/basic_rnn_cell/kernel" in values
    assert values["rnn/attention_wrapper/basic_rnn_cell/kernel"].shape == (7 + UNITS, UNITS)


def test_an_inference_decoder_reuses_the_training_decoders_variables():
    # TensorFlow 1.x's usual layout: a training decoder, then a beam search decoder over a new
    # wrapper of the tiled memory, in the same variable scope with reuse=True.
    vocab, beam = 7, 2
    mem = tf.constant(memory())
    embedding = tf.get_variable("embedding", [vocab, 3])
    projection = tf.layers.Dense(vocab, name="projection")

    def attentional(memory_, cell):
        mechanism = seq2seq.BahdanauAttention(UNITS, memory_)
        return seq2seq.AttentionWrapper(cell, mechanism, attention_layer_size=4)
    cell = tf.nn.rnn_cell.BasicLSTMCell(UNITS)
    with tf.variable_scope("decode"):
        train_cell = attentional(mem, cell)
        helper = seq2seq.TrainingHelper(tf.ones([BATCH, 3, 3]), [3, 3])
        decoder = seq2seq.BasicDecoder(train_cell, helper,
                                       train_cell.zero_state(BATCH, tf.float32), projection)
        train_outputs, _, _ = seq2seq.dynamic_decode(decoder)
    before = sorted(v.op.name for v in tf.global_variables())
    with tf.variable_scope("decode", reuse=True):
        infer_cell = attentional(seq2seq.tile_batch(mem, beam), cell)
        beams = seq2seq.BeamSearchDecoder(
            infer_cell, embedding, tf.fill([BATCH], 0), vocab - 1,
            infer_cell.zero_state(BATCH * beam, tf.float32), beam, output_layer=projection)
        infer_outputs, _, _ = seq2seq.dynamic_decode(beams, maximum_iterations=4)
    assert sorted(v.op.name for v in tf.global_variables()) == before
    got, _ = evaluate([train_outputs.rnn_output, infer_outputs.predicted_ids])
    assert got[0].shape == (BATCH, 3, vocab)
    assert got[1].shape[0] == BATCH and got[1].shape[2] == beam


# --- monotonic attention ---

def monotonic_reference(p, previous):
    """q[i] = (1 - p[i - 1]) q[i - 1] + previous[i]; attention[i] = p[i] q[i]."""
    attention = np.zeros_like(p)
    for b in range(p.shape[0]):
        q = 0.0
        for i in range(p.shape[1]):
            q = (1 - p[b, i - 1]) * q + previous[b, i] if i > 0 else previous[b, 0]
            attention[b, i] = p[b, i] * q
    return attention


@pytest.mark.parametrize("mode", ["recursive", "parallel"])
def test_monotonic_attention_follows_its_recurrence(mode):
    rng = np.random.RandomState(0)
    p = rng.rand(3, 6).astype(np.float32)
    previous = softmax(rng.randn(3, 6)).astype(np.float32)
    got, _ = evaluate(seq2seq.monotonic_attention(p, previous, mode))
    np.testing.assert_allclose(got, monotonic_reference(p, previous), rtol=1e-4, atol=1e-6)


def test_hard_monotonic_attention_picks_the_first_choice_at_or_after_the_last():
    p = np.array([[0, 1, 0, 1, 1], [1, 0, 1, 1, 0]], np.float32)
    previous = np.array([[0, 0, 1, 0, 0], [1, 0, 0, 0, 0]], np.float32)
    got, _ = evaluate(seq2seq.monotonic_attention(p, previous, "hard"))
    np.testing.assert_array_equal(got, [[0, 0, 0, 1, 0], [1, 0, 0, 0, 0]])
    with pytest.raises(ValueError, match="mode must be 'recursive', 'parallel', or 'hard'"):
        seq2seq.monotonic_attention(p, previous, "soft")


def test_safe_cumprod_is_cumprod_computed_in_log_space():
    x = np.array([[0.5, 0.25, 0.8, 0.1]], np.float32)
    got, _ = evaluate([seq2seq.safe_cumprod(x, axis=1),
                       seq2seq.safe_cumprod(x, axis=1, exclusive=True)])
    np.testing.assert_allclose(got[0], np.cumprod(x, axis=1), rtol=1e-5)
    np.testing.assert_allclose(got[1][0], [1.0, 0.5, 0.125, 0.1], rtol=1e-5)
    # A zero is clipped to the smallest positive number: the gradient stays finite.
    zero = tf.constant([[0.5, 0.0, 0.25]])
    grad, _ = evaluate(tf.gradients(seq2seq.safe_cumprod(zero, axis=1), zero)[0])
    assert np.isfinite(grad).all()


@pytest.mark.parametrize("kind", ["luong", "bahdanau"])
def test_monotonic_mechanisms_add_a_score_bias_and_start_on_the_first_entry(kind):
    mem = memory()
    query = np.random.RandomState(1).randn(BATCH, UNITS).astype(np.float32)
    if kind == "luong":
        mechanism = seq2seq.LuongMonotonicAttention(UNITS, mem, score_bias_init=-1.5)
        scope = "luong_monotonic_attention"
    else:
        mechanism = seq2seq.BahdanauMonotonicAttention(UNITS, mem, score_bias_init=-1.5)
        scope = "bahdanau_monotonic_attention"
    initial = mechanism.initial_alignments(BATCH, tf.float32)
    alignments, _ = mechanism(tf.constant(query), initial)
    (first, got), values = evaluate([initial, alignments])
    np.testing.assert_array_equal(first, np.eye(MEM_TIME)[[0, 0]])
    np.testing.assert_allclose(values[scope + "/attention_score_bias"], -1.5)
    keys = mem @ values["memory_layer/kernel"]
    if kind == "luong":
        score = np.einsum("bu,btu->bt", query, keys)
    else:
        processed = query @ values[scope + "/query_layer/kernel"]
        score = (values[scope + "/attention_v"] * np.tanh(keys + processed[:, None])).sum(-1)
    p = 1 / (1 + np.exp(-(score - 1.5)))
    np.testing.assert_allclose(got, monotonic_reference(p, first), rtol=1e-4, atol=1e-6)


def test_a_wrapper_over_monotonic_attention_moves_only_forward():
    mechanism = seq2seq.BahdanauMonotonicAttention(UNITS, memory(), mode="hard")
    wrapper = seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicRNNCell(UNITS), mechanism,
                                       alignment_history=True)
    inputs = tf.constant(np.random.RandomState(6).randn(BATCH, 4, 2).astype(np.float32))
    _, state = tf.nn.dynamic_rnn(wrapper, inputs,
                                 initial_state=wrapper.zero_state(BATCH, tf.float32))
    history, _ = evaluate(state.alignment_history.stack())
    for b in range(BATCH):
        chosen = [np.argmax(step[b]) if step[b].sum() > 0 else MEM_TIME for step in history]
        assert chosen == sorted(chosen), chosen  # never back to an earlier entry


def test_monotonic_attention_in_a_wrapper_masks_the_memory_and_names_its_variables():
    mechanism = seq2seq.LuongMonotonicAttention(UNITS, memory(), memory_sequence_length=[5, 2],
                                                scale=True, score_bias_init=2.0)
    wrapper = seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicRNNCell(UNITS), mechanism,
                                       alignment_history=True)
    inputs = tf.constant(np.random.RandomState(9).randn(BATCH, 3, 2).astype(np.float32))
    _, state = tf.nn.dynamic_rnn(wrapper, inputs,
                                 initial_state=wrapper.zero_state(BATCH, tf.float32))
    history, values = evaluate(state.alignment_history.stack())
    assert "rnn/attention_wrapper/luong_monotonic_attention/attention_score_bias" in values
    assert "rnn/attention_wrapper/luong_monotonic_attention/attention_g" in values
    np.testing.assert_array_equal(history[:, 1, 2:], 0)  # past the second entry's length
    assert (history.sum(-1) <= 1 + 1e-6).all()


def test_seeded_pre_sigmoid_noise_draws_the_same_in_every_graph():
    def draw(noise=1.0):
        with tf.Graph().as_default():
            mechanism = seq2seq.BahdanauMonotonicAttention(
                UNITS, memory(), sigmoid_noise=noise, sigmoid_noise_seed=5)
            alignments, _ = mechanism(tf.ones([BATCH, UNITS]),
                                      mechanism.initial_alignments(BATCH, tf.float32))
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                variables = by_name(tf.global_variables())
                for name, v in variables.items():  # the same weights in both graphs
                    sess.run(tf.assign(v, np.full(v.shape.as_list(), 0.1, np.float32)))
                return sess.run(alignments)
    first, second = draw(), draw()
    np.testing.assert_array_equal(first, second)
    assert not np.allclose(first, draw(noise=0.0))  # the noise is there
