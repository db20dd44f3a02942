"""tf.train.Saver and tf.train.latest_checkpoint: checkpoints of every variable as numpy .npz
files, "<dir>/model.ckpt-<step>.npz", with TensorFlow's "checkpoint" index file
(apps/training/saver.hpp, docs/checkpoints.md)."""

import numbers
import os

import numpy as np

from .. import _troupe
from ..framework import get_default_graph


class Saver:
    """Saves and restores all the graph's variables (build it after the model)."""

    def __init__(self, var_list=None, max_to_keep=5, **unused):
        if var_list is not None:
            raise ValueError("Saver: troupe saves every variable of the graph; var_list is not "
                             "supported")
        if not isinstance(max_to_keep, int) or max_to_keep < 1:
            raise ValueError("Saver: max_to_keep must be an int >= 1, got %r" % (max_to_keep,))
        self._graph = get_default_graph()
        self._graph._check_not_finalized()
        self._native = _troupe.Saver.create(self._graph._scope.root(), max_to_keep)

    @staticmethod
    def _split(save_path):
        directory, base = os.path.split(save_path)
        if base != "model.ckpt":
            raise ValueError("Saver: save_path must be \"<dir>/model.ckpt\" (troupe writes "
                             "<dir>/model.ckpt-<step>.npz), got %r" % (save_path,))
        return directory or "."

    def save(self, sess, save_path, global_step=None, **unused):
        """Writes the checkpoint; returns its path."""
        step = 0 if global_step is None else global_step
        if isinstance(step, numbers.Integral) or \
                (isinstance(step, np.ndarray) and step.shape == () and step.dtype.kind in "iu"):
            step = int(step)
        else:
            step = int(sess.run(step))  # a Tensor or Variable
        return self._native.save(sess._handle, self._split(save_path), step)

    def _save_handle(self, sess, directory, step):
        return self._native.save(sess._handle, directory, step)

    def restore(self, sess, save_path):
        if not isinstance(save_path, str):
            raise TypeError("Saver.restore: save_path must be a string, got %r" % (save_path,))
        self._native.restore(sess._handle, save_path)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The newest checkpoint's path in checkpoint_dir, or None."""
    return _troupe.latest_checkpoint(checkpoint_dir)
