"""tf.contrib.seq2seq's scheduled-sampling helpers, checked as TensorFlow 1.15's
basic_decoder_test.py checks them (rewritten here): with sampling probability 0 they are
TrainingHelper, with 1 every entry is fed what it sampled (the embedding of an id drawn from
its outputs, or the outputs themselves, through next_inputs_fn and with auxiliary inputs), and
a decoder trains with them."""

import numpy as np
import pytest

import troupe as tf
from seq2seq_cells import EchoCell

seq2seq = tf.contrib.seq2seq
BATCH, TIME, DEPTH, VOCAB = 3, 4, 5, 5


def teacher_inputs():
    rng = np.random.RandomState(0)
    return (rng.randn(BATCH, TIME, DEPTH) * 0.1).astype(np.float32)


def run(fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches)


def peaked_embedding():
    """Row t is 100 at t + 1 (mod VOCAB): a draw from its softmax is t + 1, surely."""
    emb = np.zeros([VOCAB, DEPTH], np.float32)
    for t in range(VOCAB):
        emb[t, (t + 1) % VOCAB] = 100.0
    return emb


def decode(helper):
    cell = EchoCell(DEPTH)
    decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(BATCH, tf.float32))
    outputs, _, _ = seq2seq.dynamic_decode(decoder)
    return outputs


def test_scheduled_embedding_with_probability_zero_is_teacher_forcing():
    inputs = teacher_inputs()
    helper = seq2seq.ScheduledEmbeddingTrainingHelper(
        inputs, [TIME] * BATCH, peaked_embedding(), sampling_probability=0.0, seed=1,
        scheduling_seed=2)
    outputs = run(decode(helper))
    np.testing.assert_allclose(outputs.rnn_output, inputs, rtol=1e-6)
    np.testing.assert_array_equal(outputs.sample_id, -1)


def test_scheduled_embedding_with_probability_one_feeds_the_sampled_ids():
    inputs = teacher_inputs()
    inputs[:, 0] = peaked_embedding()[[0, 2, 3]]  # the first step's logits: ids 1, 3, 4
    helper = seq2seq.ScheduledEmbeddingTrainingHelper(
        inputs, [TIME] * BATCH, peaked_embedding(), sampling_probability=1.0, seed=1)
    outputs = run(decode(helper))
    # Each step samples the successor of the last id, and feeds its embedding.
    np.testing.assert_array_equal(outputs.sample_id[:, 0], [1, 3, 4])
    np.testing.assert_array_equal(outputs.sample_id[:, 1], [2, 4, 0])
    np.testing.assert_allclose(outputs.rnn_output[:, 1], peaked_embedding()[[1, 3, 4]])


def test_scheduled_output_feeds_the_outputs_through_next_inputs_fn_with_auxiliary_inputs():
    inputs = teacher_inputs()
    auxiliary = np.full([BATCH, TIME, 2], 7.0, np.float32)

    class Half(tf.nn.rnn_cell.RNNCell):  # reads DEPTH + 2 inputs, outputs the first DEPTH
        state_size = property(lambda self: 1)
        output_size = property(lambda self: DEPTH)

        def call(self, x, state):
            return x[:, :DEPTH], state
    helper = seq2seq.ScheduledOutputTrainingHelper(
        inputs, [TIME] * BATCH, sampling_probability=1.0, next_inputs_fn=lambda o: o * 2.0,
        auxiliary_inputs=auxiliary, seed=3)
    cell = Half()
    decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(BATCH, tf.float32))
    outputs = run(seq2seq.dynamic_decode(decoder)[0])
    np.testing.assert_array_equal(outputs.sample_id, 1)
    # Step 0 reads the input; each later step, twice the previous output.
    for t in range(TIME):
        np.testing.assert_allclose(outputs.rnn_output[:, t], inputs[:, 0] * 2 ** t, rtol=1e-5)


def test_scheduled_output_with_probability_zero_reads_the_inputs():
    inputs = teacher_inputs()
    helper = seq2seq.ScheduledOutputTrainingHelper(inputs, [TIME] * BATCH, 0.0)
    outputs = run(decode(helper))
    np.testing.assert_array_equal(outputs.sample_id, 0)
    np.testing.assert_allclose(outputs.rnn_output, inputs, rtol=1e-6)


def test_bernoulli_draws_have_the_sample_shape_then_the_probabilities_shape():
    from troupe.contrib.seq2seq.helper import bernoulli_sample
    draws = bernoulli_sample(probs=0.5, sample_shape=[1000], seed=4)
    pair = bernoulli_sample(probs=[0.0, 1.0], sample_shape=3, seed=4)
    got, got_pair = run([draws, pair])
    assert got.shape == (1000,) and 400 < got.sum() < 600
    np.testing.assert_array_equal(got_pair, [[0, 1]] * 3)


def test_a_sampling_probability_of_rank_two_is_refused():
    with pytest.raises(ValueError, match="sampling_probability must be either a scalar or a "
                                         "vector"):
        seq2seq.ScheduledOutputTrainingHelper(teacher_inputs(), [TIME] * BATCH, [[0.5]])
    with pytest.raises(ValueError, match="sampling_probability must be either a scalar or a "
                                         "vector"):
        seq2seq.ScheduledEmbeddingTrainingHelper(teacher_inputs(), [TIME] * BATCH,
                                                 peaked_embedding(), [[0.5]])


def test_a_decoder_trains_with_scheduled_sampling():
    # Each sequence counts up from a random start (mod VOCAB): the next token follows from the
    # last one fed, whether it was read (teacher forcing) or sampled from the decoder's outputs.
    rng = np.random.RandomState(5)
    starts = rng.randint(0, VOCAB, size=8)
    tokens = (starts[:, None] + np.arange(TIME + 1)) % VOCAB
    embedding = tf.get_variable("embedding", [VOCAB, 4])
    inputs = tf.nn.embedding_lookup(embedding, tf.constant(tokens[:, :-1]))
    helper = seq2seq.ScheduledEmbeddingTrainingHelper(inputs, [TIME] * 8, embedding, 0.25,
                                                      seed=6, scheduling_seed=7)
    cell = tf.nn.rnn_cell.BasicLSTMCell(16)
    decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(8, tf.float32),
                                   output_layer=tf.layers.Dense(VOCAB))
    outputs, _, _ = seq2seq.dynamic_decode(decoder)
    loss = seq2seq.sequence_loss(outputs.rnn_output, tf.constant(tokens[:, 1:], dtype=tf.int32),
                                 tf.ones([8, TIME]))
    train = tf.train.AdamOptimizer(0.02).minimize(loss)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run(loss)
        for _ in range(150):
            sess.run(train)
        last = sess.run(loss)
    assert last < 0.3 * first, (first, last)


def test_scheduled_output_mixes_rows_by_their_draws_with_a_projection_and_auxiliary_inputs():
    inputs = teacher_inputs()
    rng = np.random.RandomState(8)
    auxiliary = rng.randn(BATCH, TIME, 2).astype(np.float32)  # different at every step
    projection = tf.layers.Dense(DEPTH, name="proj")  # makes variables: before the loop
    helper = seq2seq.ScheduledOutputTrainingHelper(
        inputs, [TIME] * BATCH, sampling_probability=0.5, next_inputs_fn=projection,
        auxiliary_inputs=auxiliary, seed=11)
    cell = EchoCell(DEPTH + 2)  # shows what each step was fed
    decoder = seq2seq.BasicDecoder(cell, helper, cell.zero_state(BATCH, tf.float32))
    outputs = seq2seq.dynamic_decode(decoder)[0]
    got = run({"out": outputs, "kernel": projection.kernel, "bias": projection.bias})
    assert projection.kernel.op.name == "decoder/proj/kernel"
    out, ids = got["out"].rnn_output, got["out"].sample_id
    teacher = np.concatenate([inputs, auxiliary], -1)
    np.testing.assert_allclose(out[:, 0], teacher[:, 0], rtol=1e-6)
    mixed = set()
    for t in range(1, TIME):
        for b in range(BATCH):
            if ids[b, t - 1]:
                fed = np.concatenate([out[b, t - 1] @ got["kernel"] + got["bias"],
                                      auxiliary[b, t]])
            else:
                fed = teacher[b, t]
            mixed.add(int(ids[b, t - 1]))
            np.testing.assert_allclose(out[b, t], fed, rtol=1e-5, atol=1e-6)
    assert mixed == {0, 1}  # both kinds of rows were checked


def test_scheduled_embedding_mixes_rows_by_their_draws():
    inputs = teacher_inputs()
    helper = seq2seq.ScheduledEmbeddingTrainingHelper(
        inputs, [TIME] * BATCH, peaked_embedding(), sampling_probability=0.5, seed=12,
        scheduling_seed=13)
    outputs = run(decode(helper))
    out, ids = outputs.rnn_output, outputs.sample_id
    kinds = set()
    for t in range(1, TIME):
        for b in range(BATCH):
            sampled = ids[b, t - 1] > -1
            kinds.add(bool(sampled))
            want = peaked_embedding()[ids[b, t - 1]] if sampled else inputs[b, t]
            np.testing.assert_allclose(out[b, t], want, rtol=1e-6)
    assert kinds == {True, False}

