"""Fashion-MNIST for the examples, read with numpy from the IDX files of Debian's
dataset-fashion-mnist, served as TensorFlow 1.x's tutorial reader serves MNIST:
`read_data_set(data_dir, "train", seed).next_batch(100)`."""

import gzip
import os

import numpy as np

IMAGE_PIXELS = 28
NUM_CLASSES = 10


class DataSet(object):
    """Images [n, 784] in [0, 1] and labels ([n, 10] one-hot, or [n] int64), served in batches
    reshuffled every epoch."""

    def __init__(self, images, labels, seed):
        self.images = images
        self.labels = labels
        self._rng = np.random.RandomState(seed)
        self._order = self._rng.permutation(len(images))
        self._at = 0

    @property
    def num_examples(self):
        return len(self.images)

    def next_batch(self, batch_size):
        if self._at + batch_size > len(self._order):
            self._order = self._rng.permutation(len(self.images))
            self._at = 0
        chosen = self._order[self._at:self._at + batch_size]
        self._at += batch_size
        return self.images[chosen], self.labels[chosen]


def read_data_set(data_dir, prefix, seed=0, one_hot=True):
    """The "train" or "t10k" part of the data set in `data_dir`."""
    with gzip.open(os.path.join(data_dir, prefix + "-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, IMAGE_PIXELS ** 2)
    with gzip.open(os.path.join(data_dir, prefix + "-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)
    labels = np.eye(NUM_CLASSES, dtype=np.float32)[labels] if one_hot else labels.astype(np.int64)
    return DataSet(images.astype(np.float32) / 255.0, labels, seed)
