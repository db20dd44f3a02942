"""tf.contrib.seq2seq's decoders and helpers, and tf.nest, checked as TensorFlow 1.15's
basic_decoder_test.py, decoder_test.py and nest_test.py check them (rewritten here): greedy
decoding follows the argmax and stops at the end token, impute_finished zeros the outputs and
keeps the state of finished sequences, maximum_iterations stops early, a TrainingHelper decoder
computes what dynamic_rnn computes and trains, and bad arguments are TensorFlow's errors."""

import collections

import numpy as np
import pytest

import troupe as tf

seq2seq = tf.contrib.seq2seq
V = 5  # vocabulary
END = 3


class IdentityCell(tf.nn.rnn_cell.RNNCell):
    """Outputs its input; its state counts the steps taken."""

    @property
    def state_size(self):
        return 1

    @property
    def output_size(self):
        return V

    def call(self, inputs, state):
        return inputs, state + 1.0


def successor_embedding():
    """Row t is a one-hot (times 10) of t + 1 mod V: the argmax after token t is t + 1."""
    emb = np.zeros([V, V], np.float32)
    for t in range(V):
        emb[t, (t + 1) % V] = 10.0
    return emb


def greedy_decoder(start_tokens=(0, 2), embedding=None):
    cell = IdentityCell()
    helper = seq2seq.GreedyEmbeddingHelper(
        tf.constant(successor_embedding()) if embedding is None else embedding,
        tf.constant(list(start_tokens)), END)
    return seq2seq.BasicDecoder(cell, helper, cell.zero_state(len(start_tokens), tf.float32))


def test_greedy_decoding_follows_the_argmax_until_the_end_token():
    outputs, state, lengths = seq2seq.dynamic_decode(greedy_decoder(), maximum_iterations=10)
    assert isinstance(outputs, seq2seq.BasicDecoderOutput)
    assert outputs.sample_id.dtype == tf.int32
    with tf.Session() as sess:
        ids, rnn, steps, n = sess.run([outputs.sample_id, outputs.rnn_output, state, lengths])
    # From 0: 1, 2, 3 (the end token); from 2: 3 at once, and on until the batch is done.
    np.testing.assert_array_equal(ids, [[1, 2, 3], [3, 4, 0]])
    np.testing.assert_array_equal(n, [3, 1])
    # Each step's output is the embedding of the token fed in: the start token, then the
    # previous step's id.
    emb = successor_embedding()
    np.testing.assert_array_equal(rnn[0], emb[[0, 1, 2]])
    np.testing.assert_array_equal(rnn[1], emb[[2, 3, 4]])
    np.testing.assert_array_equal(steps, [[3.0], [3.0]])


def test_impute_finished_zeros_outputs_and_keeps_the_state():
    outputs, state, lengths = seq2seq.dynamic_decode(greedy_decoder(), impute_finished=True)
    with tf.Session() as sess:
        ids, rnn, steps, n = sess.run([outputs.sample_id, outputs.rnn_output, state, lengths])
    np.testing.assert_array_equal(ids, [[1, 2, 3], [3, 0, 0]])
    np.testing.assert_array_equal(rnn[1, 1:], np.zeros([2, V]))
    np.testing.assert_array_equal(n, [3, 1])
    # The state of the sequence that finished after one step stays as it was then.
    np.testing.assert_array_equal(steps, [[3.0], [1.0]])


def test_maximum_iterations_stops_decoding():
    outputs, _, lengths = seq2seq.dynamic_decode(greedy_decoder(), maximum_iterations=2)
    none, _, no_lengths = seq2seq.dynamic_decode(greedy_decoder(), maximum_iterations=0)
    with tf.Session() as sess:
        ids, n, empty, zero = sess.run([outputs.sample_id, lengths, none.sample_id, no_lengths])
    np.testing.assert_array_equal(ids, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(n, [2, 1])
    assert empty.shape == (2, 0)
    np.testing.assert_array_equal(zero, [0, 0])


def test_output_time_major_and_the_embedding_as_a_function():
    emb = tf.constant(successor_embedding())
    decoder = greedy_decoder(embedding=lambda ids: tf.nn.embedding_lookup(emb, ids))
    outputs, _, _ = seq2seq.dynamic_decode(decoder, output_time_major=True)
    with tf.Session() as sess:
        ids, rnn = sess.run([outputs.sample_id, outputs.rnn_output])
    np.testing.assert_array_equal(ids, [[1, 3], [2, 4], [3, 0]])
    assert rnn.shape == (3, 2, V)


def test_training_helper_decodes_what_dynamic_rnn_computes():
    rng = np.random.RandomState(3)
    inputs = rng.randn(3, 4, 2).astype(np.float32)
    lengths = [4, 2, 3]
    cell = tf.nn.rnn_cell.BasicLSTMCell(6)
    layer = tf.layers.Dense(V)
    helper = seq2seq.TrainingHelper(tf.constant(inputs), tf.constant(lengths))
    decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(3, tf.float32),
                                   output_layer=layer)
    assert decoder.output_size.rnn_output.as_list() == [V]
    outputs, state, decoded_lengths = seq2seq.dynamic_decode(decoder)
    expected, _ = tf.nn.dynamic_rnn(cell, tf.constant(inputs), sequence_length=lengths,
                                    dtype=tf.float32)
    expected = layer(expected)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got, ids, n, want = sess.run([outputs.rnn_output, outputs.sample_id, decoded_lengths,
                                      expected])
    assert got.shape == (3, 4, V)
    np.testing.assert_array_equal(n, lengths)
    for b, length in enumerate(lengths):
        np.testing.assert_allclose(got[b, :length], want[b, :length], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(ids, got.argmax(-1))
    # One set of variables, the decoder's, which dynamic_rnn reused.
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["decoder/basic_lstm_cell/bias", "decoder/basic_lstm_cell/kernel",
                     "decoder/dense/bias", "decoder/dense/kernel"], names


def test_a_training_decoder_trains():
    rng = np.random.RandomState(5)
    batch, steps = 4, 5
    targets = rng.randint(0, V, size=[batch, steps]).astype(np.int32)
    lengths = [5, 3, 4, 2]
    mask = np.array([[1.0 if t < n else 0.0 for t in range(steps)] for n in lengths],
                    np.float32)
    embedding = tf.get_variable("embedding", [V, 3])
    # Teacher forcing: the input at step t is the target of step t - 1 (a start token 0 first).
    shifted = np.concatenate([np.zeros([batch, 1], np.int32), targets[:, :-1]], axis=1)
    inputs = tf.nn.embedding_lookup(embedding, tf.constant(shifted))
    cell = tf.nn.rnn_cell.GRUCell(8)
    decoder = seq2seq.BasicDecoder(cell, seq2seq.TrainingHelper(inputs, lengths),
                                   cell.zero_state(batch, tf.float32),
                                   output_layer=tf.layers.Dense(V))
    outputs, _, _ = seq2seq.dynamic_decode(decoder, impute_finished=True)
    loss = seq2seq.sequence_loss(outputs.rnn_output, tf.constant(targets), tf.constant(mask))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    grads = tf.gradients(loss, tf.trainable_variables())
    assert all(g is not None for g in grads)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(60):
            sess.run(train)
        last = sess.run(loss)
    assert last < 0.3 * first, (first, last)


def test_sample_embedding_helper_draws_from_the_softmax():
    emb = tf.constant(successor_embedding())
    cell = IdentityCell()
    # At a low temperature the draws are the argmax: the greedy sequence.
    cold = seq2seq.SampleEmbeddingHelper(emb, tf.constant([0, 2]), END,
                                         softmax_temperature=0.01, seed=7)
    cold_out, _, _ = seq2seq.dynamic_decode(
        seq2seq.BasicDecoder(cell, cold, cell.zero_state(2, tf.float32)), maximum_iterations=10)
    # Uniform logits (an all-zero embedding) at temperature 1: any id, seeded.
    batch = 200
    hot = seq2seq.SampleEmbeddingHelper(tf.zeros([V, V]), tf.zeros([batch], tf.int32), END,
                                        seed=11)
    hot_out, _, _ = seq2seq.dynamic_decode(
        seq2seq.BasicDecoder(cell, hot, cell.zero_state(batch, tf.float32)),
        maximum_iterations=1)
    with tf.Session() as sess:
        ids, drawn = sess.run([cold_out.sample_id, hot_out.sample_id])
        again = sess.run(hot_out.sample_id)
    np.testing.assert_array_equal(ids, [[1, 2, 3], [3, 4, 0]])
    assert drawn.shape == (batch, 1)
    assert set(drawn.ravel()) == set(range(V))
    assert not np.array_equal(drawn, again)  # each run draws anew


def test_inference_and_custom_helpers():
    emb = successor_embedding()
    cell = IdentityCell()
    inference = seq2seq.InferenceHelper(
        sample_fn=lambda outputs: tf.argmax(outputs, axis=-1, output_type=tf.int32),
        sample_shape=[], sample_dtype=tf.int32,
        start_inputs=tf.constant(emb[[0, 2]]),
        end_fn=lambda ids: tf.equal(ids, END),
        next_inputs_fn=lambda ids: tf.nn.embedding_lookup(tf.constant(emb), ids))
    out, _, n = seq2seq.dynamic_decode(
        seq2seq.BasicDecoder(cell, inference, cell.zero_state(2, tf.float32)))
    # A custom helper that feeds a constant input for exactly two steps.
    custom = seq2seq.CustomHelper(
        initialize_fn=lambda: (tf.constant([False, False]), tf.constant(emb[[1, 1]])),
        sample_fn=lambda time, outputs, state: tf.argmax(outputs, -1, output_type=tf.int32),
        next_inputs_fn=lambda time, outputs, state, sample_ids: (
            tf.fill([2], time + 1 >= 2), tf.constant(emb[[1, 1]]), state))
    custom_out, _, custom_n = seq2seq.dynamic_decode(
        seq2seq.BasicDecoder(cell, custom, cell.zero_state(2, tf.float32)))
    with tf.Session() as sess:
        ids, lengths, cids, clengths = sess.run([out.sample_id, n, custom_out.sample_id,
                                                 custom_n])
    np.testing.assert_array_equal(ids, [[1, 2, 3], [3, 4, 0]])
    np.testing.assert_array_equal(lengths, [3, 1])
    np.testing.assert_array_equal(cids, [[2, 2], [2, 2]])
    np.testing.assert_array_equal(clengths, [2, 2])
    assert custom.batch_size is not None


def test_tile_batch_repeats_each_entry():
    t = tf.constant([[1, 2], [3, 4]])
    tiled = seq2seq.tile_batch(t, 3)
    nested = seq2seq.tile_batch((t, {"x": tf.constant([5, 6])}), 2)
    assert tiled.shape.as_list() == [6, 2]
    with tf.Session() as sess:
        values, (a, b) = sess.run([tiled, nested])
    np.testing.assert_array_equal(values, [[1, 2]] * 3 + [[3, 4]] * 3)
    np.testing.assert_array_equal(a, [[1, 2], [1, 2], [3, 4], [3, 4]])
    np.testing.assert_array_equal(b["x"], [5, 5, 6, 6])
    with pytest.raises(ValueError, match="statically known rank"):
        seq2seq.tile_batch(tf.constant(1), 2)


def test_bad_arguments_are_tensorflows_errors():
    cell = IdentityCell()
    helper = seq2seq.GreedyEmbeddingHelper(tf.constant(successor_embedding()),
                                           tf.constant([0]), END)
    state = cell.zero_state(1, tf.float32)
    with pytest.raises(TypeError, match="helper must be a Helper"):
        seq2seq.BasicDecoder(cell, "greedy", state)
    with pytest.raises(TypeError, match="output_layer must be a Layer"):
        seq2seq.BasicDecoder(cell, helper, state, output_layer=lambda x: x)
    with pytest.raises(TypeError, match="is not an RNNCell"):
        seq2seq.BasicDecoder(object(), helper, state)
    with pytest.raises(ValueError, match="start_tokens must be a vector"):
        seq2seq.GreedyEmbeddingHelper(tf.zeros([V, V]), tf.constant([[0]]), END)
    with pytest.raises(ValueError, match="end_token must be a scalar"):
        seq2seq.GreedyEmbeddingHelper(tf.zeros([V, V]), tf.constant([0]), [END])
    with pytest.raises(ValueError, match="Expected sequence_length to be a vector"):
        seq2seq.TrainingHelper(tf.zeros([2, 3, 4]), tf.constant([[3], [3]]))
    with pytest.raises(TypeError, match="Expected decoder to be type Decoder"):
        seq2seq.dynamic_decode(cell)
    with pytest.raises(ValueError, match="maximum_iterations must be a scalar"):
        seq2seq.dynamic_decode(seq2seq.BasicDecoder(cell, helper, state),
                               maximum_iterations=[1, 2])
    with pytest.raises(ValueError, match="batch_size accessed before initialize was called"):
        seq2seq.CustomHelper(None, None, None).batch_size
    with pytest.raises(TypeError, match="Expected outputs to be a single Tensor"):
        helper.sample(0, (tf.zeros([1, V]),), None)
    with pytest.raises(ValueError, match="innermost dimension of input_shape must be defined"):
        tf.layers.Dense(3).compute_output_shape(tf.TensorShape([None, None]))
    assert tf.layers.Dense(3).compute_output_shape([None, 7]).as_list() == [None, 3]


Point = collections.namedtuple("Point", ["x", "y"])


def test_nest_flattens_and_packs_as_tensorflow():
    structure = {"b": (1, [2, 3]), "a": Point(4, {"z": 5, "y": 6})}
    # Dicts by sorted key, namedtuples by field, depth first.
    assert tf.nest.flatten(structure) == [4, 6, 5, 1, 2, 3]
    assert tf.nest.flatten(None) == [None]
    assert tf.nest.flatten("ab") == ["ab"]
    packed = tf.nest.pack_sequence_as(structure, list("ABCDEF"))
    assert packed == {"b": ("D", ["E", "F"]), "a": Point("A", {"z": "C", "y": "B"})}
    assert list(packed) == ["b", "a"]  # the structure's own key order
    doubled = tf.nest.map_structure(lambda u, v: u + v, structure, structure)
    assert doubled["a"].y["z"] == 10 and isinstance(doubled["a"], Point)
    tf.nest.assert_same_structure((1, [2]), ("a", ["b"]))
    assert tf.contrib.framework.nest.is_nested([1]) and not tf.nest.is_nested("ab")
    with pytest.raises(ValueError, match="don't have the same nested structure"):
        tf.nest.assert_same_structure((1, 2), (1, (2, 3)))
    with pytest.raises(ValueError, match="same number of elements"):
        tf.nest.assert_same_structure((1, 2), (1, 2, 3))
    with pytest.raises(TypeError, match="same sequence type"):
        tf.nest.assert_same_structure((1, 2), [1, 2])
    tf.nest.assert_same_structure((1, 2), [1, 2], check_types=False)
    with pytest.raises(ValueError, match="Structure had 2 elements, but flat_sequence had 3"):
        tf.nest.pack_sequence_as((1, 2), [1, 2, 3])
    with pytest.raises(TypeError, match="flat_sequence must be a sequence"):
        tf.nest.pack_sequence_as((1, 2), 5)
    with pytest.raises(ValueError, match="Must provide at least one structure"):
        tf.nest.map_structure(lambda x: x)
    with pytest.raises(ValueError, match="Only valid keyword arguments"):
        tf.nest.map_structure(lambda x: x, (1,), bogus=True)


def test_decoded_outputs_keep_their_static_shapes():
    inputs = tf.zeros([3, 4, 2])
    cell = tf.nn.rnn_cell.BasicLSTMCell(6)
    decoder = seq2seq.BasicDecoder(cell, seq2seq.TrainingHelper(inputs, [4, 2, 3]),
                                   cell.zero_state(3, tf.float32),
                                   output_layer=tf.layers.Dense(V))
    outputs, _, lengths = seq2seq.dynamic_decode(decoder)
    assert outputs.rnn_output.shape.as_list() == [3, None, V]
    assert outputs.sample_id.shape.as_list() == [3, None]
    assert lengths.shape.as_list() == [3]
    # So a projection after decoding, as TF1 programs write it, builds.
    no_layer = seq2seq.BasicDecoder(cell, seq2seq.TrainingHelper(inputs, [4, 2, 3]),
                                    cell.zero_state(3, tf.float32))
    raw, _, _ = seq2seq.dynamic_decode(no_layer, output_time_major=True)
    assert raw.rnn_output.shape.as_list() == [None, 3, 6]
    assert tf.layers.dense(raw.rnn_output, 4).shape.as_list() == [None, 3, 4]


def test_a_layer_called_from_another_scope_keeps_its_variables_and_the_numbering():
    with tf.variable_scope("a"):
        first = tf.layers.Dense(3)
        h = first(tf.zeros([1, 2]))
        with tf.variable_scope("sub"):
            first(tf.zeros([1, 2]))
        tf.layers.dense(h, 3)
    names = sorted(v.op.name for v in tf.global_variables())
    assert names == ["a/dense/bias", "a/dense/kernel", "a/dense_1/bias", "a/dense_1/kernel"]


def test_nest_follows_tensorflows_sequence_and_mapping_rules():
    import collections as c
    # Any mapping matches any mapping, any list type any list type; keys only with check_types.
    tf.nest.assert_same_structure({"a": 1, "b": 2}, c.OrderedDict([("b", 3), ("a", 4)]))
    tf.nest.assert_same_structure({"a": 1}, {"b": 1}, check_types=False)
    with pytest.raises(ValueError, match="don't have the same set of keys"):
        tf.nest.assert_same_structure({"a": 1}, {"b": 1})
    # Sequences that are not strings are structures; ranges and views pack back as lists.
    assert tf.nest.flatten(range(3)) == [0, 1, 2]
    assert tf.nest.flatten({"b": 1, "a": 2}.values()) == [1, 2]
    assert tf.nest.pack_sequence_as(range(2), ["x", "y"]) == ["x", "y"]
    d = c.defaultdict(list, {"k": 1})
    packed = tf.nest.map_structure(lambda v: v + 1, d)
    assert isinstance(packed, c.defaultdict) and packed["k"] == 2 and packed["new"] == []
    # TensorFlow's messages: the whole structures, then what differs, then their outlines.
    with pytest.raises(ValueError) as error:
        tf.nest.assert_same_structure((((1, 2), 3), 4, (5, 6)), ("spam", "eggs"))
    message = str(error.value)
    assert message.startswith("The two structures don't have the same nested structure.")
    assert "More specifically: Substructure \"type=tuple str=((1, 2), 3)\" is a sequence, " \
        "while substructure \"type=str str=spam\" is not" in message
    assert "Entire first structure:\n(((., .), .), ., (., .))" in message
    with pytest.raises(TypeError, match="don't have the same sequence type"):
        tf.nest.assert_same_structure((1, 2), [1, 2])
    assert tf.TensorShape(tf.TensorShape(None)).ndims is None
    assert tf.TensorShape(8).as_list() == [8]
    assert tf.size(tf.zeros([2, 3])).op.type == "Const"
    with pytest.raises(ValueError, match="must have rank at least 2"):
        tf.layers.Dense(3).compute_output_shape([4])
