"""File ops of TensorFlow 1.x's io_ops that input pipelines use: tf.matching_files
(tf.io.matching_files), run by the worker that reads the files."""

from . import dtypes as _dtypes
from . import ops as _ops
from .framework import convert_to_tensor


def matching_files(pattern, name=None):
    """The sorted names of the files matching glob `pattern` (a string, or a vector of them),
    as a string vector; empty where nothing matches."""
    pattern = convert_to_tensor(pattern, dtype=_dtypes.string, name="pattern")
    return _ops._make("MatchingFiles", [pattern], name=name or "MatchingFiles").outputs[0]
