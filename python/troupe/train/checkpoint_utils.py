"""Reading checkpoints outside a session, as TensorFlow 1.x's checkpoint_utils and
NewCheckpointReader do: the variables a checkpoint holds, their shapes and dtypes, and their
values as numpy arrays. troupe's checkpoints are .npz archives (docs/checkpoints.md), each
variable whole under its name (a partitioned one too)."""

import os

import numpy as np

from .. import dtypes as _dtypes
from .. import errors


def _checkpoint_path(ckpt_dir_or_file):
    """The .npz of a checkpoint prefix, or of the newest checkpoint of a directory."""
    from .saver import latest_checkpoint
    if os.path.isdir(ckpt_dir_or_file):
        prefix = latest_checkpoint(ckpt_dir_or_file)
        if prefix is None:
            raise ValueError("Couldn't find 'checkpoint' file or checkpoints in given "
                             "directory %s" % ckpt_dir_or_file)
        ckpt_dir_or_file = prefix
    path = ckpt_dir_or_file if ckpt_dir_or_file.endswith(".npz") else ckpt_dir_or_file + ".npz"
    if not os.path.isfile(path):
        raise errors.NotFoundError(None, None,
                                   "Unsuccessful TensorSliceReader constructor: Failed to find "
                                   "any matching files for %s" % ckpt_dir_or_file)
    return path


class CheckpointReader:
    """What NewCheckpointReader returns: the tensors of one checkpoint."""

    def __init__(self, path):
        self._path = _checkpoint_path(path)
        with np.load(self._path, allow_pickle=False) as archive:
            self._arrays = {name: archive[name] for name in archive.files}

    def get_variable_to_shape_map(self):
        return {name: list(array.shape) for name, array in self._arrays.items()}

    def get_variable_to_dtype_map(self):
        return {name: _dtypes.as_dtype(array.dtype) for name, array in self._arrays.items()}

    def has_tensor(self, tensor_str):
        return tensor_str in self._arrays

    def get_tensor(self, tensor_str):
        if tensor_str not in self._arrays:
            raise errors.NotFoundError(None, None, "Key %s not found in checkpoint"
                                       % tensor_str)
        return self._arrays[tensor_str].copy()

    def debug_string(self):
        return "".join("%s (%s) %s\n" % (name, np.dtype(array.dtype).name, list(array.shape))
                       for name, array in sorted(self._arrays.items())).encode()


def NewCheckpointReader(filepattern):  # noqa: N802 - TensorFlow's name
    """A reader of the checkpoint at `filepattern` (a prefix, or its .npz);
    NotFoundError if there is none."""
    return CheckpointReader(filepattern)


def load_checkpoint(ckpt_dir_or_file):
    """A reader of the checkpoint (a directory's newest, or the prefix given)."""
    return CheckpointReader(ckpt_dir_or_file)


def list_variables(ckpt_dir_or_file):
    """[(name, shape)] of the checkpoint's variables, sorted by name."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]


def load_variable(ckpt_dir_or_file, name):
    """The value of variable `name` (a trailing ":0" allowed) in the checkpoint."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)
