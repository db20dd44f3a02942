"""Candidate samplers and the sampled losses (TensorFlow 1.x's candidate_sampler_ops_test and
nn_test's NCE and sampled softmax cases, rewritten): the samplers' ranges, uniqueness,
expected counts and distribution; nce_loss and sampled_softmax_loss against numpy renderings
of TensorFlow's formula for given sampled values; and a word2vec-style model that learns."""

import numpy as np
import pytest

import troupe as tf


def _log_uniform_p(k, range_max):
    return np.log((k + 2.0) / (k + 1.0)) / np.log(range_max + 1.0)


@pytest.mark.parametrize("sampler", ["uniform", "log_uniform"])
def test_samplers_shapes_ranges_and_expected_counts(sampler):
    fn = getattr(tf.nn, sampler + "_candidate_sampler")
    true_classes = tf.constant([[1, 2], [0, 4], [3, 3]], dtype=tf.int64)
    plain = fn(true_classes, num_true=2, num_sampled=3, unique=False, range_max=5, seed=7)
    unique = fn(true_classes, num_true=2, num_sampled=8, unique=True, range_max=10, seed=7)
    assert plain.sampled_candidates.shape.as_list() == [3]
    assert plain.true_expected_count.shape.as_list() == [3, 2]
    with tf.Session() as sess:
        s, t, e = sess.run(plain)
        us, ut, ue = sess.run(unique)
    def p(k, range_max=5):
        k = np.asarray(k, np.float64)
        return np.full(k.shape, 1.0 / range_max) if sampler == "uniform" else \
            _log_uniform_p(k, range_max)
    assert s.dtype == np.int64 and np.all((s >= 0) & (s < 5))
    np.testing.assert_allclose(e, p(s) * 3, rtol=1e-6)
    np.testing.assert_allclose(t, p([[1, 2], [0, 4], [3, 3]]) * 3, rtol=1e-6)
    # Unique: 8 distinct classes of 10; the expected counts are p * 8 when no draw was
    # rejected, else 1 - (1 - p)^tries with one number of tries for every class.
    assert len(set(us)) == 8 and np.all((us >= 0) & (us < 10))
    ps, pt = p(us, 10), p([[1, 2], [0, 4], [3, 3]], 10)
    if np.allclose(ue, ps * 8, rtol=1e-6):
        tries = 8
    else:
        rarest = np.argmin(ps)  # its count is furthest from 1 in float32
        tries = np.round(np.log1p(-ue[rarest]) / np.log1p(-ps[rarest]))
        assert tries > 8
    expected = ps * 8 if tries == 8 else -np.expm1(tries * np.log1p(-ps))
    np.testing.assert_allclose(ue, expected, rtol=1e-4)
    np.testing.assert_allclose(ut, pt * 8 if tries == 8 else -np.expm1(tries * np.log1p(-pt)),
                               rtol=1e-4)


def test_log_uniform_draws_follow_zipf_and_seeds_repeat():
    counts = np.zeros(10)
    with tf.Graph().as_default():
        draw = tf.nn.log_uniform_candidate_sampler([[0]], 1, 4000, False, 10, seed=3)
        with tf.Session() as sess:
            for _ in range(5):
                values = sess.run(draw.sampled_candidates)
                counts += np.bincount(values, minlength=10)
            first = values
    expected = _log_uniform_p(np.arange(10.0), 10) * 20000
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected) + 5), (counts, expected)
    with tf.Graph().as_default():
        draw = tf.nn.log_uniform_candidate_sampler([[0]], 1, 4000, False, 10, seed=3)
        with tf.Session() as sess:
            runs = [sess.run(draw.sampled_candidates) for _ in range(5)]
    np.testing.assert_array_equal(runs[-1], first)  # same seed, same numbers


def test_accidental_hits_mask_the_last_copy_and_outside_true_classes_stay_finite():
    weights = np.eye(4, dtype=np.float32)
    biases = np.zeros(4, np.float32)
    inputs = np.ones([1, 4], np.float32)
    # Class 2 sampled twice and true: only its last copy is masked, as TensorFlow's.
    values = (tf.constant([2, 1, 2], tf.int64), tf.constant([[0.5]]),
              tf.constant([0.5, 0.5, 0.5]))
    loss = tf.nn.sampled_softmax_loss(weights, biases, [[2]], inputs, 3, 4,
                                      sampled_values=values)
    # A true class outside the sampler's range: its expected count as TensorFlow's, finite.
    outside = tf.nn.log_uniform_candidate_sampler([[9]], 1, 2, True, 5, seed=1)
    with tf.Session() as sess:
        got, counts = sess.run([loss, outside.true_expected_count])
    logits = np.array([1.0, 1.0, 1.0, np.finfo(np.float32).min]) - np.log(0.5)
    np.testing.assert_allclose(got, [-(logits[0] - np.log(np.exp(logits).sum()))], rtol=1e-5)
    assert np.all(np.isfinite(counts)) and counts[0, 0] > 0


def test_sampler_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="Sampler's range is too small"):
        with tf.Session() as sess:
            sess.run(tf.nn.uniform_candidate_sampler([[0]], 1, 6, True, 5).sampled_candidates)
    with pytest.raises(ValueError, match="true_classes must be a matrix"):
        tf.nn.uniform_candidate_sampler([[0, 1]], 1, 2, False, 5)
    with pytest.raises(ValueError, match="num_sampled must be an int >= 1"):
        tf.nn.uniform_candidate_sampler([[0]], 1, 0, False, 5)


def _numpy_sampled_logits(weights, biases, labels, inputs, sampled, true_expected,
                          sampled_expected, num_true, remove_accidental_hits):
    true_w = weights[labels]                      # [batch, num_true, dim]
    true_logits = np.einsum("bd,btd->bt", inputs, true_w) + biases[labels]
    sampled_logits = inputs @ weights[sampled].T + biases[sampled]
    if remove_accidental_hits:
        hit = (labels[:, :, None] == sampled[None, None, :]).any(axis=1)
        sampled_logits = sampled_logits + hit * np.finfo(np.float32).min
    true_logits -= np.log(true_expected)
    sampled_logits -= np.log(sampled_expected)
    logits = np.concatenate([true_logits, sampled_logits], 1)
    targets = np.concatenate([np.ones_like(true_logits) / num_true,
                              np.zeros_like(sampled_logits)], 1)
    return logits, targets


@pytest.mark.parametrize("num_true", [1, 2])
def test_nce_and_sampled_softmax_losses_match_the_formula(num_true):
    rng = np.random.default_rng(5)
    num_classes, dim, batch = 7, 4, 3
    weights = rng.standard_normal((num_classes, dim)).astype(np.float32)
    biases = rng.standard_normal(num_classes).astype(np.float32)
    inputs = rng.standard_normal((batch, dim)).astype(np.float32)
    labels = rng.integers(0, num_classes, (batch, num_true))
    sampled = np.array([0, 3, 5, 6])
    true_expected = rng.random((batch, num_true)).astype(np.float32) + 0.1
    sampled_expected = rng.random(4).astype(np.float32) + 0.1
    values = (tf.constant(sampled, tf.int64), tf.constant(true_expected),
              tf.constant(sampled_expected))
    nce = tf.nn.nce_loss(weights, biases, labels, inputs, 4, num_classes, num_true=num_true,
                         sampled_values=values)
    softmax = tf.nn.sampled_softmax_loss(weights, biases, labels, inputs, 4, num_classes,
                                         num_true=num_true, sampled_values=values)
    # Two shards of the weights ("mod"), as a partitioned table would be.
    sharded = tf.nn.nce_loss([weights[0::2], weights[1::2]], biases, labels, inputs, 4,
                             num_classes, num_true=num_true, sampled_values=values)
    with tf.Session() as sess:
        got_nce, got_softmax, got_sharded = sess.run([nce, softmax, sharded])
    logits, targets = _numpy_sampled_logits(weights, biases, labels, inputs, sampled,
                                            true_expected, sampled_expected, num_true, False)
    expected_nce = np.sum(np.maximum(logits, 0) - logits * targets +
                          np.log1p(np.exp(-np.abs(logits))), axis=1)
    np.testing.assert_allclose(got_nce, expected_nce, rtol=1e-5)
    np.testing.assert_allclose(got_sharded, expected_nce, rtol=1e-5)
    logits, targets = _numpy_sampled_logits(weights, biases, labels, inputs, sampled,
                                            true_expected, sampled_expected, num_true, True)
    shifted = logits - logits.max(axis=1, keepdims=True)
    log_softmax = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(got_softmax, -np.sum(targets * log_softmax, axis=1),
                               rtol=1e-5)


def test_a_word2vec_style_model_learns_with_nce():
    # Pairs (i, (i + 1) mod 20): the embedding of i must predict its successor.
    vocabulary, dim = 20, 8
    centers = np.arange(vocabulary)
    contexts = ((centers + 1) % vocabulary).reshape(-1, 1)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        embeddings = tf.Variable(tf.random_uniform([vocabulary, dim], -1.0, 1.0))
        nce_weights = tf.Variable(tf.truncated_normal([vocabulary, dim], stddev=0.3))
        nce_biases = tf.Variable(tf.zeros([vocabulary]))
        embedded = tf.nn.embedding_lookup(embeddings, centers)
        loss = tf.reduce_mean(tf.nn.nce_loss(nce_weights, nce_biases, contexts, embedded,
                                             num_sampled=5, num_classes=vocabulary))
        train = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
        logits = tf.matmul(embedded, nce_weights, transpose_b=True) + nce_biases
        hits = tf.reduce_mean(tf.cast(tf.equal(tf.argmax(logits, 1),
                                               tf.constant(contexts[:, 0])), tf.float32))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            first = np.mean([sess.run(loss) for _ in range(5)])
            for _ in range(400):
                sess.run(train)
            last = np.mean([sess.run(loss) for _ in range(5)])
            accuracy = sess.run(hits)
    assert last < 0.5 * first, (first, last)
    assert accuracy >= 0.9, accuracy


# --- the other samplers of candidate_sampling_ops: fixed and learned unigram, all; and
# compute_accidental_hits (candidate_sampler_ops_test's cases, rewritten) ---

def test_fixed_unigram_draws_follow_the_distorted_weights(tmp_path):
    unigrams = [1.0, 4.0, 9.0, 16.0]
    draw = tf.nn.fixed_unigram_candidate_sampler([[1]], 1, 4000, False, range_max=5,
                                                 num_reserved_ids=1, unigrams=unigrams,
                                                 distortion=0.5, seed=11)
    vocab = tmp_path / "vocab.csv"
    vocab.write_text("".join("word%d,%g\n" % (i, u) for i, u in enumerate(unigrams)))
    from_file = tf.nn.fixed_unigram_candidate_sampler([[1]], 1, 4000, False, range_max=5,
                                                      num_reserved_ids=1,
                                                      vocab_file=str(vocab), distortion=0.5,
                                                      seed=11)
    with tf.Session() as sess:
        counts = np.zeros(5)
        for _ in range(5):
            sampled, true_expected, sampled_expected = sess.run(draw)
            counts += np.bincount(sampled, minlength=5)
        file_sampled = sess.run(from_file.sampled_candidates)
    weights = np.array([0.0, 1.0, 2.0, 3.0, 4.0])  # the reserved id, then sqrt(unigrams)
    p = weights / weights.sum()
    assert counts[0] == 0  # a reserved id has weight 0
    expected = p * 20000
    assert np.all(np.abs(counts - expected) < 5 * np.sqrt(expected) + 5), (counts, expected)
    np.testing.assert_allclose(true_expected, [[p[1] * 4000]], rtol=1e-5)
    np.testing.assert_allclose(sampled_expected, p[sampled] * 4000, rtol=1e-5)
    assert set(file_sampled) <= {1, 2, 3, 4}


def test_fixed_unigram_shards_and_errors():
    # Two shards of ids 0..5 (ids 0, 1 reserved): shard 1 holds ids 1, 3, 5 as 0, 1, 2.
    shard = tf.nn.fixed_unigram_candidate_sampler([[0]], 1, 1000, False, range_max=3,
                                                  num_reserved_ids=2, num_shards=2, shard=1,
                                                  unigrams=[1.0, 1.0, 1.0, 1.0], seed=2)
    wrong_range = tf.nn.fixed_unigram_candidate_sampler([[0]], 1, 2, False, range_max=7,
                                                        unigrams=[1.0, 2.0])
    with tf.Session() as sess:
        sampled = sess.run(shard.sampled_candidates)
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="range is 7 must be equal to weights size 2"):
            sess.run(wrong_range.sampled_candidates)
    # Shard 1's ids: reserved 1 (weight 0), then the vocabulary's 3rd and 5th entries.
    assert set(sampled) == {1, 2}
    with pytest.raises(ValueError, match="exactly one of vocab_file and unigrams"):
        tf.nn.fixed_unigram_candidate_sampler([[0]], 1, 1, False, 2)
    with pytest.raises(ValueError, match="shard 2 of 2 shards does not exist"):
        tf.nn.fixed_unigram_candidate_sampler([[0]], 1, 1, False, 2, unigrams=[1, 1],
                                              num_shards=2, shard=2)
    missing = tf.nn.fixed_unigram_candidate_sampler([[0]], 1, 1, False, 2,
                                                    vocab_file="/nonexistent/vocab.csv")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.NotFoundError, match="/nonexistent/vocab.csv"):
            sess.run(missing.sampled_candidates)


def test_learned_unigram_learns_the_true_classes():
    true_classes = tf.placeholder(tf.int64, [None, 1])
    draw = tf.nn.learned_unigram_candidate_sampler(true_classes, 1, 2000, False, range_max=4,
                                                   seed=5)
    with tf.Session() as sess:
        # First draw: every class weighs 1 (class 3, the true one, counts after the draw).
        first, _, first_expected = sess.run(draw, {true_classes: [[3]] * 996})
        np.testing.assert_allclose(first_expected, np.full(2000, 0.25 * 2000), rtol=1e-5)
        # Now class 3 weighs 997 of 1000.
        later, true_expected, _ = sess.run(draw, {true_classes: [[3]]})
    assert abs(np.mean(first == 3) - 0.25) < 0.05
    assert np.mean(later == 3) > 0.98
    np.testing.assert_allclose(true_expected, [[997 / 1000 * 2000]], rtol=1e-5)


def test_all_candidate_sampler_and_accidental_hits():
    everything = tf.nn.all_candidate_sampler([[1, 3], [0, 0]], 2, 4, True)
    hits = tf.nn.compute_accidental_hits([[1, 3], [0, 5]], [3, 0, 1, 3], num_true=2)
    with tf.Session() as sess:
        sampled, true_expected, sampled_expected = sess.run(everything)
        indices, ids, weights = sess.run(hits)
    np.testing.assert_array_equal(sampled, [0, 1, 2, 3])
    np.testing.assert_array_equal(true_expected, np.ones([2, 2]))
    np.testing.assert_array_equal(sampled_expected, np.ones(4))
    # Row 0: class 1 at place 2, class 3 at its last place, 3; row 1: class 0 at place 1.
    np.testing.assert_array_equal(indices, [0, 0, 1])
    np.testing.assert_array_equal(ids, [2, 3, 1])
    np.testing.assert_array_equal(weights, np.full(3, np.finfo(np.float32).min))
    assert tf.random.all_candidate_sampler is tf.nn.all_candidate_sampler
    with pytest.raises(ValueError, match="num_true must be an int >= 1"):
        tf.nn.compute_accidental_hits([[1]], [1], num_true=0)
