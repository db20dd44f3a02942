"""Synthetic click-through data with a planted logistic model, for the wide-and-deep example
and benchmark: 26 categorical features whose ids are Zipf-distributed over one table of
`table_rows` rows (feature f owns rows [f * rows / 26, (f + 1) * rows / 26)), 13 dense
features drawn from a standard normal, and a click drawn with probability sigmoid(planted
logit): a weight per id, a weight per dense feature and a bias. The planted model's own AUC on
a sample is the best any model can reach there, so a trained model's AUC is checkable."""

import numpy as np

NUM_CATEGORICAL = 26
NUM_DENSE = 13


class PlantedCtr:
    def __init__(self, table_rows, zipf=1.5, seed=0):
        if table_rows < NUM_CATEGORICAL:
            raise ValueError("table_rows must be at least %d" % NUM_CATEGORICAL)
        rng = np.random.default_rng(seed)
        self.table_rows = table_rows
        self.rows_per_feature = table_rows // NUM_CATEGORICAL
        self.zipf = zipf
        self.id_weights = rng.normal(0.0, 0.6, table_rows).astype(np.float32)
        self.dense_weights = rng.normal(0.0, 0.5, NUM_DENSE).astype(np.float32)
        self.bias = -1.0

    def sample(self, n, rng):
        """(ids int64 [n, 26], dense float32 [n, 13], labels float32 [n], planted logits)."""
        ranks = rng.zipf(self.zipf, size=(n, NUM_CATEGORICAL)) - 1
        ranks = np.minimum(ranks, self.rows_per_feature - 1)
        ids = ranks + np.arange(NUM_CATEGORICAL) * self.rows_per_feature
        dense = rng.normal(0.0, 1.0, (n, NUM_DENSE)).astype(np.float32)
        logits = self.id_weights[ids].sum(axis=1) + dense @ self.dense_weights + self.bias
        labels = (rng.random(n) < 1.0 / (1.0 + np.exp(-logits))).astype(np.float32)
        return ids.astype(np.int64), dense, labels, logits


def auc(labels, scores):
    """The area under the ROC curve: the chance a random positive scores above a random
    negative (ties count half)."""
    labels = np.asarray(labels) > 0.5
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    sorted_scores = np.asarray(scores)[order]
    i = 0
    while i < len(order):  # average ranks over ties
        j = i
        while j + 1 < len(order) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    positives = labels.sum()
    negatives = len(labels) - positives
    if positives == 0 or negatives == 0:
        raise ValueError("auc needs both classes")
    return (ranks[labels].sum() - positives * (positives + 1) / 2.0) / (positives * negatives)
