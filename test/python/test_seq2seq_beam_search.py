"""tf.contrib.seq2seq's BeamSearchDecoder and gather_tree, checked as TensorFlow 1.15's
beam_search_ops_test.py and beam_search_decoder_test.py check them (rewritten here, with their
numbers): the GatherTree op, reordering stacked arrays along the chosen beams, masking finished
beams, single steps (with finished beams, with more beams than words), and whole decodes; plus
a decode where the beam finds the sequence greedy decoding misses."""

import itertools

import numpy as np
import pytest

import troupe as tf
from seq2seq_cells import EchoCell

seq2seq = tf.contrib.seq2seq
from troupe.contrib.seq2seq import beam_search_decoder as bsd  # noqa: E402


def batch_time_to_time_batch(x):
    return np.transpose(np.asarray(x), [1, 0, 2]).astype(np.int32)


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


# --- GatherTree ---

def test_gather_tree_follows_the_parents_back_and_fills_with_the_end_token():
    step_ids = batch_time_to_time_batch([[[1, 2, 3], [4, 5, 6], [7, 8, 9], [-1, -1, -1]]])
    parent_ids = batch_time_to_time_batch([[[0, 0, 0], [0, 1, 1], [2, 1, 2], [-1, -1, -1]]])
    beams = seq2seq.gather_tree(step_ids, parent_ids, max_sequence_lengths=[3], end_token=10)
    assert beams.shape.as_list() == [4, 1, 3]
    np.testing.assert_array_equal(
        run(beams),
        batch_time_to_time_batch([[[2, 2, 2], [6, 5, 6], [7, 8, 9], [10, 10, 10]]]))


def test_gather_tree_of_two_batch_entries():
    predicted = np.array([[[1, 2, 3], [4, 5, 6], [7, 8, 9]],
                          [[2, 3, 4], [5, 6, 7], [8, 9, 10]]], np.int32).transpose([1, 0, 2])
    parents = np.array([[[0, 0, 0], [0, 1, 1], [2, 1, 2]],
                        [[0, 0, 0], [1, 2, 0], [2, 1, 1]]], np.int32).transpose([1, 0, 2])
    expected = np.array([[[2, 2, 2], [6, 5, 6], [7, 8, 9]],
                         [[2, 4, 4], [7, 6, 6], [8, 9, 10]]]).transpose([1, 0, 2])
    beams = seq2seq.gather_tree(predicted, parents, max_sequence_lengths=[3, 3], end_token=11)
    np.testing.assert_array_equal(run(beams), expected)


def test_gather_tree_refuses_a_parent_outside_the_beams():
    step_ids = batch_time_to_time_batch([[[1, 2, 3], [4, 5, 6], [7, 8, 9], [-1, -1, -1]]])
    for bad in (-1, 3):  # TensorFlow's CPU kernel lets 3 (beam_width) through
        parent_ids = batch_time_to_time_batch(
            [[[0, 0, 0], [0, bad, 1], [2, 1, 2], [-1, -1, -1]]])
        beams = seq2seq.gather_tree(step_ids, parent_ids, max_sequence_lengths=[3],
                                    end_token=10)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"parent id %d at \(batch, time, beam\) == \(0, 0, 1\)" % bad):
            run(beams)


def test_gather_tree_of_a_random_batch_ends_every_beam_as_tensorflow_does():
    batch_size, beam_width, max_time, end_token = 10, 15, 8, 5
    lengths = [0, 1, 2, 4, 7, 8, 9, 10, 11, 0]
    rng = np.random.RandomState(0)
    step_ids = rng.randint(0, end_token + 1, size=(max_time, batch_size, beam_width))
    parent_ids = rng.randint(0, beam_width - 1, size=(max_time, batch_size, beam_width))
    beams = seq2seq.gather_tree(step_ids.astype(np.int32), parent_ids.astype(np.int32),
                                max_sequence_lengths=lengths, end_token=end_token)
    assert beams.shape.as_list() == [max_time, batch_size, beam_width]
    value = run(beams)
    for b in range(batch_size):
        past = value[lengths[b]:, b, :]
        np.testing.assert_array_equal(past, np.full_like(past, end_token))
    for b, j in itertools.product(range(batch_size), range(beam_width)):
        v = value[:, b, j]
        if end_token in v:
            first = np.where(v == end_token)[0][0]
            np.testing.assert_array_equal(v[first + 1:], end_token)


def test_gather_tree_checks_its_arguments_with_tensorflows_messages():
    ids = np.zeros([2, 1, 3], np.int32)
    with pytest.raises(ValueError, match="Shape must be rank 3 but is rank 2"):
        seq2seq.gather_tree(np.zeros([2, 3], np.int32), ids, [2], 0)
    with pytest.raises(ValueError, match="Dimension 2 in both shapes must be equal, but are 3 "
                                         "and 4"):
        seq2seq.gather_tree(ids, np.zeros([2, 1, 4], np.int32), [2], 0)
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 1 and 2"):
        seq2seq.gather_tree(ids, ids, [2, 2], 0)
    with pytest.raises(TypeError, match="Value passed to parameter 'step_ids' has DataType "
                                        "int64 not in list of allowed values: int32"):
        seq2seq.gather_tree(np.zeros([2, 1, 3], np.int64), ids, [2], 0)


def test_gather_tree_has_no_gradient():
    step = tf.constant(np.zeros([2, 1, 3], np.int32))
    beams = seq2seq.gather_tree(step, step, [2], 0)
    assert tf.gradients(tf.cast(beams, tf.float32), [step]) == [None]


# --- gather_tree_from_array ---

def sorted_from_array(depth_ndims=0, merged_batch_beam=False):
    array = np.array([[[1, 2, 3], [4, 5, 6], [7, 8, 9], [0, 0, 0]],
                      [[2, 3, 4], [5, 6, 7], [8, 9, 10], [11, 12, 0]]]).transpose([1, 0, 2])
    parent_ids = np.array([[[0, 0, 0], [0, 1, 1], [2, 1, 2], [-1, -1, -1]],
                           [[0, 0, 0], [1, 1, 0], [2, 0, 1], [0, 1, 0]]]).transpose([1, 0, 2])
    expected = np.array([[[2, 2, 2], [6, 5, 6], [7, 8, 9], [0, 0, 0]],
                         [[2, 3, 2], [7, 5, 7], [8, 9, 8], [11, 12, 0]]]).transpose([1, 0, 2])
    array = tf.convert_to_tensor(array, dtype=tf.float32)
    expected = tf.convert_to_tensor(expected, dtype=tf.float32)
    max_time, batch_size, beam_width = (tf.shape(array)[i] for i in range(3))
    if merged_batch_beam:
        array = tf.reshape(array, [max_time, batch_size * beam_width])
        expected = tf.reshape(expected, [max_time, batch_size * beam_width])
    for _ in range(depth_ndims):
        array = tf.stack([array, array + 1], -1)
        expected = tf.stack([expected, expected + 1], -1)
    got = bsd.gather_tree_from_array(array, tf.convert_to_tensor(parent_ids, dtype=tf.int32),
                                     [[3, 3, 3], [4, 4, 3]])
    return run([got, expected])


@pytest.mark.parametrize("depth_ndims,merged", [(0, False), (1, False), (1, True), (2, False)])
def test_gather_tree_from_array_reorders_each_step_along_the_beams(depth_ndims, merged):
    got, expected = sorted_from_array(depth_ndims, merged)
    np.testing.assert_array_equal(got, expected)


def test_gather_tree_from_array_follows_a_tangled_trajectory():
    array = np.expand_dims(np.array([[[25, 12, 114, 89, 97]], [[9, 91, 64, 11, 162]],
                                     [[34, 34, 34, 34, 34]], [[2, 4, 2, 2, 4]],
                                     [[2, 3, 6, 2, 2]], [[2, 2, 2, 3, 2]],
                                     [[2, 2, 2, 2, 2]]]), -1)
    parents = np.array([[[0, 0, 0, 0, 0]], [[0, 0, 0, 0, 0]], [[0, 1, 2, 3, 4]],
                        [[0, 0, 1, 2, 1]], [[0, 1, 1, 2, 3]], [[0, 1, 3, 1, 2]],
                        [[0, 1, 2, 3, 4]]])
    expected = np.expand_dims(np.array([[[25, 25, 25, 25, 25]], [[9, 9, 91, 9, 9]],
                                        [[34, 34, 34, 34, 34]], [[2, 4, 2, 4, 4]],
                                        [[2, 3, 6, 3, 6]], [[2, 2, 2, 3, 2]],
                                        [[2, 2, 2, 2, 2]]]), -1)
    got = bsd.gather_tree_from_array(tf.convert_to_tensor(array, dtype=tf.float32),
                                     tf.convert_to_tensor(parents, dtype=tf.int32),
                                     [[4, 6, 4, 7, 6]])
    np.testing.assert_array_equal(run(got), expected.astype(np.float32))


@pytest.mark.parametrize("static,dynamic,valid", [
    ((8, 4, 5, 10), (None, None, 5, 10), True),
    ((8, 20, 10), (None, None, 10), True),
    ((8, 21, 10), (None, None, 10), False),
    ((8, 4, 6, 10), (None, None, None, 10), False),
    ((8, 4), (None, None), False)])
def test_the_array_reordering_checks_batch_and_beam_at_run_time(static, dynamic, valid):
    t = tf.placeholder_with_default(np.random.randn(*static).astype(np.float32), shape=dynamic)
    check = bsd._check_batch_beam(t, tf.constant(4), 5)
    if valid:
        run(check)
    else:
        with pytest.raises(tf.errors.InvalidArgumentError, match="TensorArray reordering"):
            run(check)


# --- one step ---

def test_finished_beams_put_all_their_probability_on_the_end_token():
    probs = tf.constant([[[-.2, -.2, -.2, -.2, -.2], [-.3, -.3, -.3, 3, 0], [5, 6, 0, 0, 0]],
                         [[-.2, -.2, -.2, -.2, 0], [-.3, -.3, -.1, 3, 0], [5, 6, 3, 0, 0]]])
    finished = np.array([[0, 1, 0], [0, 1, 1]], dtype=bool)
    before, masked = run([probs, bsd._mask_probs(probs, 0, finished)])
    for b, j in [(0, 0), (0, 2), (1, 0)]:
        np.testing.assert_array_equal(masked[b][j], before[b][j])
    for b, j in [(0, 1), (1, 1), (1, 2)]:
        assert masked[b][j][0] == 0
        np.testing.assert_array_equal(masked[b][j][1:], np.finfo(np.float32).min)


def step_logits(batch_size, beam_width, vocab_size, tweaks):
    logits = np.full([batch_size, beam_width, vocab_size], 0.0001)
    for index, value in tweaks.items():
        logits[index] = value
    return tf.convert_to_tensor(logits, dtype=tf.float32)


TWEAKS = {(0, 0, 2): 1.9, (0, 0, 3): 2.1, (0, 1, 3): 3.1, (0, 1, 4): 0.9, (1, 0, 1): 0.5,
          (1, 1, 2): 2.7, (1, 2, 2): 10.0, (1, 2, 3): 0.2}


def one_step(beam_state, logits, beam_width):
    return bsd._beam_search_step(
        time=2, logits=logits, next_cell_state=beam_state.cell_state, beam_state=beam_state,
        batch_size=tf.convert_to_tensor(2), beam_width=beam_width, end_token=0,
        length_penalty_weight=0.6, coverage_penalty_weight=0.0)


def test_a_step_keeps_the_best_continuations_of_each_entry():
    cell_state = tf.zeros([2, 3])
    state = bsd.BeamSearchDecoderState(
        cell_state=cell_state, log_probs=tf.nn.log_softmax(tf.ones([2, 3])),
        lengths=tf.constant(2, shape=[2, 3], dtype=tf.int64),
        finished=tf.zeros([2, 3], dtype=tf.bool), accumulated_attention_probs=())
    logits = step_logits(2, 3, 5, TWEAKS)
    outputs, next_state = one_step(state, logits, 3)
    out, nxt, before, log_probs = run([outputs, next_state, state, tf.nn.log_softmax(logits)])
    np.testing.assert_array_equal(out.predicted_ids, [[3, 3, 2], [2, 2, 1]])
    np.testing.assert_array_equal(out.parent_ids, [[1, 0, 0], [2, 1, 0]])
    np.testing.assert_array_equal(nxt.lengths, [[3, 3, 3], [3, 3, 3]])
    np.testing.assert_array_equal(nxt.finished, np.zeros([2, 3], bool))
    expected = [before.log_probs[0][[1, 0, 0]], before.log_probs[1][[2, 1, 0]]]
    expected[0] = expected[0] + [log_probs[0, 1, 3], log_probs[0, 0, 3], log_probs[0, 0, 2]]
    expected[1] = expected[1] + [log_probs[1, 2, 2], log_probs[1, 1, 2], log_probs[1, 0, 1]]
    np.testing.assert_allclose(nxt.log_probs, expected, rtol=1e-6)


def test_a_finished_beam_goes_on_with_the_end_token_at_no_cost():
    tweaks = dict(TWEAKS)
    tweaks[(1, 1, 2)] = 5.7
    tweaks[(1, 2, 2)] = 1.0
    cell_state = tf.zeros([2, 3])
    state = bsd.BeamSearchDecoderState(
        cell_state=cell_state, log_probs=tf.nn.log_softmax(tf.ones([2, 3])),
        lengths=tf.convert_to_tensor([[2, 1, 2], [2, 2, 1]], dtype=tf.int64),
        finished=tf.convert_to_tensor([[False, True, False], [False, False, True]]),
        accumulated_attention_probs=())
    logits = step_logits(2, 3, 5, tweaks)
    outputs, next_state = one_step(state, logits, 3)
    out, nxt, before, log_probs = run([outputs, next_state, state, tf.nn.log_softmax(logits)])
    np.testing.assert_array_equal(out.parent_ids, [[1, 0, 0], [1, 2, 0]])
    np.testing.assert_array_equal(out.predicted_ids, [[0, 3, 2], [2, 0, 1]])
    np.testing.assert_array_equal(nxt.lengths, [[1, 3, 3], [3, 1, 3]])
    np.testing.assert_array_equal(nxt.finished, [[True, False, False], [False, True, False]])
    expected = [before.log_probs[0][[1, 0, 0]], before.log_probs[1][[1, 2, 0]]]
    expected[0] = expected[0] + [0, log_probs[0, 0, 3], log_probs[0, 0, 2]]
    expected[1] = expected[1] + [log_probs[1, 1, 2], 0, log_probs[1, 0, 1]]
    np.testing.assert_allclose(nxt.log_probs, expected, rtol=1e-6)


def test_more_beams_than_words_leaves_the_extra_beams_dead():
    batch_size, beam_width = 2, 8
    first = tf.one_hot(tf.zeros([batch_size], dtype=tf.int32), depth=beam_width,
                       on_value=True, off_value=False, dtype=tf.bool)
    log_probs = tf.where(first, tf.zeros([batch_size, beam_width]),
                         tf.ones([batch_size, beam_width]) * -np.inf)
    lengths = np.zeros([batch_size, beam_width], np.int64)
    lengths[:, 0] = 2
    state = bsd.BeamSearchDecoderState(
        cell_state=tf.zeros([batch_size, beam_width]), log_probs=log_probs,
        lengths=tf.constant(lengths), finished=tf.logical_not(first),
        accumulated_attention_probs=())
    outputs, next_state = one_step(state, step_logits(batch_size, beam_width, 5, TWEAKS),
                                   beam_width)
    out, nxt = run([outputs, next_state])
    assert out.predicted_ids[0, 0] == 3
    assert out.predicted_ids[0, 1] == 2
    assert out.predicted_ids[1, 0] == 1
    np.testing.assert_array_equal(nxt.log_probs[:, -3:], np.full([2, 3], -np.inf))
    assert (nxt.log_probs[:, :-3] > -np.inf).all()
    assert (nxt.lengths[:, :-3] > 0).all()
    np.testing.assert_array_equal(nxt.lengths[:, -3:], np.zeros([2, 3]))


def test_the_length_penalty_is_gnmts():
    lengths = tf.constant([1, 4], dtype=tf.int64)
    np.testing.assert_allclose(run(bsd._length_penalty(lengths, 0.6)),
                               ((5.0 + np.array([1, 4])) / 6.0) ** 0.6, rtol=1e-6)
    assert bsd._length_penalty(lengths, 0.0) == 1.0


# --- whole decodes ---

@pytest.mark.parametrize("time_major", [False, True])
def test_a_whole_decode_with_an_lstm_and_an_output_layer(time_major):
    batch_size, beam_width, vocab_size, cell_depth = 5, 3, 20, 9
    max_out = 3
    np.random.seed(1)
    embedding = np.random.randn(vocab_size, 50).astype(np.float32)
    cell = tf.nn.rnn_cell.LSTMCell(cell_depth)
    batch = tf.constant(batch_size)
    decoder = seq2seq.BeamSearchDecoder(
        cell=cell, embedding=embedding, start_tokens=tf.fill([batch], 0),
        end_token=vocab_size - 1,
        initial_state=cell.zero_state(dtype=tf.float32, batch_size=batch * beam_width),
        beam_width=beam_width, output_layer=tf.layers.Dense(vocab_size),
        length_penalty_weight=0.0)
    outputs, state, lengths = seq2seq.dynamic_decode(decoder, output_time_major=time_major,
                                                     maximum_iterations=max_out)
    assert isinstance(outputs, seq2seq.FinalBeamSearchDecoderOutput)
    assert isinstance(state, seq2seq.BeamSearchDecoderState)

    def order(shape):
        return (shape[1], shape[0]) + shape[2:] if time_major else shape

    step_outputs = outputs.beam_search_decoder_output
    assert tuple(step_outputs.scores.shape.as_list()) == order((batch_size, None, beam_width))
    assert tuple(outputs.predicted_ids.shape.as_list()) == order((batch_size, None, beam_width))
    got = run({"outputs": outputs, "lengths": lengths})
    steps = np.max(got["lengths"])
    assert got["outputs"].beam_search_decoder_output.scores.shape == \
        order((batch_size, steps, beam_width))
    assert got["outputs"].predicted_ids.shape == order((batch_size, steps, beam_width))


V = 6
END = 5


def test_the_beam_finds_the_sequence_greedy_decoding_misses():
    # From the start token 0: token 1 at 0.5, token 2 at 0.4, token 3 at 0.1. After 1, three
    # tokens at a third
    # each; after 2 (or 3), the end at once. Greedy takes 1 (then 1/3: 0.17 in all); a beam of 2
    # keeps 2 and ends it (0.4).
    probs = np.full([V, V], 1e-6)
    probs[0, 1], probs[0, 2], probs[0, 3] = 0.5, 0.4, 0.1
    probs[1, 3] = probs[1, 4] = probs[1, END] = 1.0 / 3
    probs[2, END] = 1.0
    probs[3, END] = probs[4, END] = probs[END, END] = 1.0
    embedding = np.log(probs / probs.sum(axis=1, keepdims=True)).astype(np.float32)
    cell = EchoCell(V)
    decoder = seq2seq.BeamSearchDecoder(
        cell=cell, embedding=embedding, start_tokens=tf.constant([0]), end_token=END,
        initial_state=cell.zero_state(2, tf.float32), beam_width=2)
    outputs, state, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=5)
    ids, scores, log_probs = run([outputs.predicted_ids,
                                  outputs.beam_search_decoder_output.scores, state.log_probs])
    # The decode runs until both beams ended; a beam is the end token after its first.
    np.testing.assert_array_equal(ids[0, :, 0], [2, END, END])
    np.testing.assert_allclose(np.exp(log_probs[0, 0]), 0.4, rtol=1e-4)
    # The other beam is greedy's choice, then the first of three equal thirds (top_k takes
    # the lowest index of a tie), then the end.
    np.testing.assert_array_equal(ids[0, :, 1], [1, 3, END])
    np.testing.assert_allclose(np.exp(log_probs[0, 1]), 0.5 / 3, rtol=1e-4)
    assert scores.shape == (1, 3, 2)


def reference_beam_search(embedding, start, end, beam, length_penalty, max_steps):
    """TensorFlow 1.15's beam search in numpy, for a cell whose logits are the embedding of
    the last token: (predicted_ids [batch, time, beam], scores [batch, time, beam])."""
    batch, vocab = len(start), embedding.shape[1]
    low = np.finfo(np.float32).min
    log_probs = np.full([batch, beam], -np.inf)
    log_probs[:, 0] = 0
    finished = np.ones([batch, beam], bool)
    finished[:, 0] = False
    lengths = np.zeros([batch, beam], np.int64)
    tokens = np.tile(np.asarray(start)[:, None], [1, beam])
    all_ids, all_parents, all_scores = [], [], []
    for _ in range(max_steps):
        logits = embedding[tokens].astype(np.float64)
        shifted = logits - logits.max(-1, keepdims=True)
        step = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))  # log_softmax
        eos_row = np.full(vocab, low)
        eos_row[end] = 0
        step = np.where(finished[:, :, None], eos_row, step)
        total = log_probs[:, :, None] + step
        add = np.ones([batch, beam, vocab], np.int64)
        add[:, :, end] = 0
        new_lengths = lengths[:, :, None] + add * (~finished)[:, :, None]
        scores = total / (((5.0 + new_lengths) / 6.0) ** length_penalty)
        flat = scores.reshape(batch, -1)
        order = np.argsort(-flat, axis=1, kind="stable")[:, :beam]
        words, parents = order % vocab, order // vocab
        rows = np.arange(batch)[:, None]
        log_probs = total.reshape(batch, -1)[rows, order]
        previously = finished[rows, parents]
        finished = previously | (words == end)
        lengths = lengths[rows, parents] + (~previously)
        all_ids.append(words)
        all_parents.append(parents)
        all_scores.append(flat[rows, order])
        tokens = words
        if finished.all():
            break
    steps = len(all_ids)
    ids, parents = np.stack(all_ids), np.stack(all_parents)  # [time, batch, beam]
    beams = np.full_like(ids, end)
    for b in range(batch):
        n = min(steps, lengths[b].max())
        for j in range(beam):
            if n <= 0:
                continue
            beams[n - 1, b, j] = ids[n - 1, b, j]
            parent = parents[n - 1, b, j]
            for t in range(n - 2, -1, -1):
                beams[t, b, j] = ids[t, b, parent]
                parent = parents[t, b, parent]
            ended = False
            for t in range(n):
                if ended:
                    beams[t, b, j] = end
                elif beams[t, b, j] == end:
                    ended = True
    return beams.transpose(1, 0, 2), np.stack(all_scores).transpose(1, 0, 2)


@pytest.mark.parametrize("length_penalty", [0.0, 0.6])
def test_a_decode_of_several_entries_equals_tensorflows_beam_search_in_numpy(length_penalty):
    rng = np.random.RandomState(5)
    embedding = (rng.randn(V, V) * 2).astype(np.float32)
    start = [0, 3, 1]
    cell = EchoCell(V)
    decoder = seq2seq.BeamSearchDecoder(
        cell=cell, embedding=embedding, start_tokens=tf.constant(start), end_token=END,
        initial_state=cell.zero_state(len(start) * 3, tf.float32), beam_width=3,
        length_penalty_weight=length_penalty)
    outputs, _, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=6)
    ids, scores = run([outputs.predicted_ids, outputs.beam_search_decoder_output.scores])
    want_ids, want_scores = reference_beam_search(embedding, start, END, 3, length_penalty, 6)
    np.testing.assert_array_equal(ids, want_ids)
    np.testing.assert_allclose(scores, want_scores, rtol=1e-5, atol=1e-5)


class CountingCell(tf.nn.rnn_cell.RNNCell):
    """EchoCell with a TensorArray of scalars in its state: TensorFlow warns that
    such an array cannot be reordered along the beams, and returns it as it is."""

    @property
    def state_size(self):
        return (1, tf.TensorShape([]))

    @property
    def output_size(self):
        return V

    def call(self, inputs, state):
        return inputs, state


def test_a_tensor_array_of_scalars_in_the_state_is_left_as_it_is():
    cell = CountingCell()
    array = tf.TensorArray(tf.float32, size=0, dynamic_size=True, element_shape=[])
    decoder = seq2seq.BeamSearchDecoder(
        cell=cell, embedding=np.zeros([V, V], np.float32), start_tokens=tf.constant([0]),
        end_token=END, initial_state=(tf.zeros([2, 1]), array), beam_width=2)
    _, state, _ = seq2seq.dynamic_decode(decoder, maximum_iterations=2)
    assert isinstance(state.cell_state[1], tf.TensorArray)


def test_bad_arguments_are_tensorflows_errors():
    cell = EchoCell(V)
    embedding = np.zeros([V, V], np.float32)
    state = cell.zero_state(2, tf.float32)
    with pytest.raises(ValueError, match="start_tokens must be a vector"):
        seq2seq.BeamSearchDecoder(cell, embedding, tf.constant(0), END, state, 2)
    with pytest.raises(ValueError, match="end_token must be a scalar"):
        seq2seq.BeamSearchDecoder(cell, embedding, tf.constant([0]), [END], state, 2)
    with pytest.raises(TypeError, match="output_layer must be a Layer"):
        seq2seq.BeamSearchDecoder(cell, embedding, tf.constant([0]), END, state, 2,
                                  output_layer=lambda x: x)
    # A state not made for batch * beam_width: TensorFlow's shape inference sees it while
    # building (a ValueError from Reshape); troupe's, which does not evaluate shape(state),
    # when the decode runs.
    untiled = seq2seq.BeamSearchDecoder(cell, embedding, tf.constant([0]), END,
                                        cell.zero_state(3, tf.float32), 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="reshape"):
        run(seq2seq.dynamic_decode(untiled, maximum_iterations=3)[0].predicted_ids)
    decoder = seq2seq.BeamSearchDecoder(cell, embedding, tf.constant([0]), END, state, 2,
                                        coverage_penalty_weight=0.2)
    with pytest.raises(ValueError, match="coverage_penalty_weight must be 0.0 if no cell is "
                                         "attentional"):
        seq2seq.dynamic_decode(decoder, maximum_iterations=3)


def test_impute_finished_with_a_beam_search_is_tensorflows_value_error():
    # Its finished flags are [batch, beam] and its outputs [batch, beam]: TensorFlow's Select
    # refuses the pair while building (a ValueError), as troupe's does.
    cell = EchoCell(V)
    decoder = seq2seq.BeamSearchDecoder(cell, np.zeros([V, V], np.float32), tf.constant([0, 1]),
                                        END, cell.zero_state(4, tf.float32), 2)
    with pytest.raises(ValueError):
        seq2seq.dynamic_decode(decoder, impute_finished=True, maximum_iterations=3)
