"""troupe: distributed TensorFlow's execution model on actors, with TensorFlow 1.x's Python
surface. `import troupe as tf` (or `import troupe.compat.v1 as tf`); docs/python.md lists what
is supported and what differs."""

from . import errors  # first: the extension raises its classes
from . import _troupe  # noqa: F401
from . import dtypes
from .dtypes import (DType, as_dtype, bool, double, float32, float64, int32, int64,  # noqa: A004
                     string, uint8)
from .framework import (Graph, GraphKeys, IndexedSlices, IndexedSlicesValue, Operation, Tensor,
                        TensorShape, add_to_collection,
                        add_to_collections, colocate_with, control_dependencies,
                        convert_to_tensor, device, get_collection, get_collection_ref,
                        get_default_graph, name_scope, reset_default_graph)
from .ops import (abs, add, add_n, argmax, assign, assign_add, assign_sub, boolean_mask, cast,
                  ceil, clip_by_value, constant, cos, count_up_to, div, divide, equal, exp,
                  expm1, FIFOQueue, PaddingFIFOQueue, QueueBase, RandomShuffleQueue, fill,
                  floor, gather, greater, greater_equal, group, identity,
                  is_variable_initialized, less, less_equal, log, log1p, logical_not, matmul,
                  maximum, minimum, multiply, negative, no_op, not_equal, ones, ones_like,
                  placeholder, placeholder_with_default, pow, reciprocal, reduce_max,
                  reduce_mean, reduce_min, reduce_prod, reduce_sum, reshape, round, rsqrt,
                  shape, sigmoid,
                  sign, sin, size, sqrt, square, squared_difference, stack, stop_gradient, sub,
                  subtract, tanh, to_float, truediv, unsorted_segment_sum, where, zeros,
                  zeros_like)  # noqa: A004 - TensorFlow's names
from .gradients import gradients
from .accumulators import (ConditionalAccumulator, ConditionalAccumulatorBase,
                           SparseConditionalAccumulator)
from .sparse_ops import sparse_tensor_to_dense, sparse_to_dense
from .sparse_ops import (segment_max, segment_mean, segment_min, segment_prod, segment_sum,
                         unsorted_segment_max, unsorted_segment_mean, unsorted_segment_min,
                         unsorted_segment_prod, unsorted_segment_sqrt_n)
from .sparse_ops import (gather_nd, scatter_nd, scatter_nd_add, scatter_nd_sub,
                         scatter_nd_update, sparse_segment_mean, sparse_segment_sqrt_n,
                         sparse_segment_sum, tensor_scatter_add, tensor_scatter_sub,
                         tensor_scatter_update)
from .sparse_ops import tensor_scatter_add as tensor_scatter_nd_add
from .sparse_ops import tensor_scatter_sub as tensor_scatter_nd_sub
from .sparse_ops import tensor_scatter_update as tensor_scatter_nd_update
from .sparse_ops import (dynamic_partition, dynamic_stitch, scatter_add, scatter_div,
                         scatter_max, scatter_min, scatter_mul, scatter_sub, scatter_update,
                         unique)
from .math_ops import (clip_by_global_norm, clip_by_norm, erf, floor_div, floordiv, floormod,
                       global_norm, logical_and, logical_or, logical_xor, matmul, mod,
                       reduce_all, reduce_any, reduce_logsumexp, tensordot)
from .math_ops import argmin, cumprod, cumsum, matrix_triangular_solve, qr
from .control_flow_ops import Assert, case, cond, while_loop
from .control_flow_ops import tuple_ as tuple  # noqa: A001 - TensorFlow's name
from .check_ops import (add_check_numerics_ops, assert_equal, assert_greater,
                        assert_greater_equal, assert_less, assert_less_equal, assert_negative,
                        assert_non_negative, assert_non_positive, assert_none_equal,
                        assert_positive, assert_rank, assert_type, check_numerics,
                        verify_tensor_all_finite)
from .io_ops import (FixedLengthRecordReader, ReaderBase, TextLineReader, TFRecordReader,
                     WholeFileReader, matching_files)
from .script_ops import py_func
from .array_ops import (concat, expand_dims, invert_permutation, newaxis, one_hot, pad,
                        range, rank, reverse, reverse_sequence, reverse_v2, slice, split,
                        squeeze, strided_slice,
                        tile, transpose, unstack)  # noqa: A004 - TensorFlow's names
from .array_ops import (argsort, broadcast_to, depth_to_space, meshgrid, roll, sequence_mask,
                        setdiff1d, sort, space_to_depth)
from .array_ops import (diag, diag_part, matrix_band_part, matrix_diag, matrix_diag_part,
                        matrix_set_diag)
from .math_ops import (acos, asin, atan, atan2, bincount, confusion_matrix, cosh,
                       count_nonzero, div_no_nan, eye, is_finite, is_inf, is_nan, lin_space, linspace,
                       norm, sinh, tan, to_double, to_int32, to_int64, trace)
from .math_ops import einsum
from . import linalg, manip, sparse
from .check_ops import assert_integer, assert_scalar
from .variables import moving_average_variables
from .sparse_math import (sparse_add, sparse_reduce_sum, sparse_retain,
                          sparse_tensor_dense_matmul)
from .random_ops import (get_seed, multinomial, random_normal, random_shuffle, random_uniform,
                         truncated_normal)
from .config import GPUOptions, GraphOptions, OptimizerOptions, RPCOptions
from .session import (ConfigProto, InteractiveSession, RunMetadata, RunOptions, Session,
                      get_default_session)
from .variables import (AUTO_REUSE, Variable, VariableScope, all_variables,
                        constant_initializer, get_variable, get_variable_scope,
                        global_variables, global_variables_initializer,
                        glorot_normal_initializer, glorot_uniform_initializer,
                        initialize_all_variables, initialize_local_variables,
                        local_variables, local_variables_initializer, ones_initializer,
                        orthogonal_initializer,
                        report_uninitialized_variables, random_normal_initializer,
                        random_uniform_initializer, set_random_seed, trainable_variables,
                        truncated_normal_initializer, variable_scope, variables_initializer,
                        variance_scaling_initializer,
                        zeros_initializer)
from .sparse_tensor import SparseTensor, SparseTensorValue, sparse_placeholder
from .functional_ops import foldl, foldr, map_fn, scan
from .tensor_array_ops import TensorArray
from .parsing_ops import (FixedLenFeature, FixedLenSequenceFeature, SparseFeature,
                          VarLenFeature, decode_csv,
                          decode_raw, parse_example, parse_single_example, string_split,
                          parse_single_sequence_example, string_to_number)
from .partitioned_variables import (PartitionedVariable, fixed_size_partitioner,
                                    min_max_variable_partitioner, variable_axis_size_partitioner)
from . import nn
from . import losses
from . import layers
from . import metrics
from . import train
from . import app
from . import flags
from . import test
from . import summary
from . import python_io
from . import data
from .graph_pb import AttrValue, GraphDef, NodeDef
from .summary_pb import (Event, HistogramProto, LogMessage, SessionLog, Summary,
                         SummaryMetadata, TensorProto, TensorShapeProto)
from . import logging
from . import nest
from . import contrib
from . import distribute
from . import _namespaces  # noqa: E402 - after every name it re-exports, before compat copies
_namespaces.install(__import__(__name__))
from . import compat


__version__ = "0.1.0"

