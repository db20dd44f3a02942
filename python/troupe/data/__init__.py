"""tf.data: input pipelines as graph ops run by the worker (dataset_ops.py)."""

from .dataset_ops import (AUTOTUNE, Dataset, FixedLengthRecordDataset, Iterator,  # noqa: F401
                          TextLineDataset, TFRecordDataset)
from . import experimental  # noqa: F401
