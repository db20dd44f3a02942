"""Parsing records and text: tf.parse_example, tf.parse_single_example (FixedLenFeature,
FixedLenSequenceFeature, VarLenFeature, SparseFeature), tf.decode_csv, tf.string_split and
tf.decode_raw, as TensorFlow 1.x defines them, on troupe's ParseExample, DecodeCSV,
StringSplit and DecodeRaw ops (devices/cpu/parsing_kernels.cpp)."""

import collections

import numpy as np

from . import dtypes as _dtypes
from . import ops as _ops
from .framework import Tensor, TensorShape, convert_to_tensor
from .sparse_tensor import SparseTensor

_FEATURE_DTYPES = (_dtypes.float32, _dtypes.int64, _dtypes.string)


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A feature of a fixed number of values, parsed into a dense tensor of `shape`; records
    without it get `default_value` (None: it is required)."""

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """A feature of any number of values, parsed into a SparseTensor."""


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A feature of any number of blocks of `shape`, parsed into a dense tensor of
    [batch, most blocks] + shape, padded with `default_value` (0 or "" by default).
    parse_example needs allow_missing=True, as TensorFlow's."""

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """A SparseTensor of dense shape [batch, size] (or [batch] + size for several index keys)
    whose values are the record's `value_key` feature and whose indices its `index_key`
    feature(s), int64 lists as long as the values (TensorFlow's SparseFeature)."""

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


def _feature_dtype(key, dtype):
    dtype = _dtypes.as_dtype(dtype)
    if dtype not in _FEATURE_DTYPES:
        raise ValueError("Unsupported dtype %s for feature '%s': a feature holds float32, int64 "
                         "or string" % (dtype.name, key))
    return dtype


def _shape_list(key, shape):
    dims = shape.as_list() if isinstance(shape, TensorShape) else list(shape)
    for d in dims:
        if d is None or not isinstance(d, (int, np.integer)) or d < 0:
            raise ValueError("Invalid shape %r for feature '%s': a FixedLenFeature needs a fully "
                             "defined shape" % (shape, key))
    return [int(d) for d in dims]


def _default(key, feature, dtype, shape):
    if feature.default_value is None:
        return np.zeros([0], dtype=object if dtype == _dtypes.string else dtype.as_numpy_dtype)
    value = np.asarray(feature.default_value,
                       dtype=object if dtype == _dtypes.string else dtype.as_numpy_dtype)
    count = int(np.prod(shape)) if shape else 1
    if value.size == 1 and count != 1:
        value = np.full(shape, value.reshape(()), dtype=value.dtype)
    if value.size != count:
        raise ValueError("default_value of feature '%s' has %d values, its shape %s needs %d"
                         % (key, value.size, shape, count))
    return value.reshape(shape)


def _sparse_feature_parts(features):
    """The VarLenFeatures each SparseFeature is read from, added to `features` (a copy); and
    {key: (index keys, sizes)} for the SparseFeatures."""
    plain = {k: f for k, f in features.items() if not isinstance(f, SparseFeature)}
    sparse = {}
    for key, feature in features.items():
        if not isinstance(feature, SparseFeature):
            continue
        index_keys = [feature.index_key] if isinstance(feature.index_key, str) else \
            list(feature.index_key)
        sizes = [feature.size] if isinstance(feature.size, (int, np.integer)) else \
            list(feature.size)
        if len(index_keys) != len(sizes) or not index_keys:
            raise ValueError("SparseFeature '%s': index_key and size must have the same length, "
                             "got %r and %r" % (key, feature.index_key, feature.size))
        for size in sizes:
            if not isinstance(size, (int, np.integer)) or size <= 0:
                raise ValueError("SparseFeature '%s': size must be a positive int, got %r"
                                 % (key, feature.size))
        parts = [(k, VarLenFeature(_dtypes.int64)) for k in index_keys] + \
            [(feature.value_key, VarLenFeature(_dtypes.as_dtype(feature.dtype)))]
        for part_key, part in parts:
            known = plain.get(part_key)
            if known is not None and not (isinstance(known, VarLenFeature) and
                                          _dtypes.as_dtype(known.dtype) == part.dtype):
                raise ValueError("SparseFeature '%s' reads '%s' as %r, but features has %r for "
                                 "it" % (key, part_key, part, known))
            plain[part_key] = part
        sparse[key] = (feature, index_keys, [int(s) for s in sizes])
    return plain, sparse


def _merge_sparse_feature(key, feature, index_parts, values):
    """The SparseTensor of a SparseFeature from its parsed index and value SparseTensors."""
    from . import array_ops
    from . import control_flow_ops
    from . import math_ops
    from .framework import control_dependencies, name_scope
    from .nn import top_k
    from .math_ops import reduce_all
    from .ops import (cast, constant, equal, gather, greater_equal, less, ones_like, reshape,
                      shape, unsorted_segment_sum)
    spec, index_keys, sizes = feature
    with name_scope(None, "SparseFeature_" + key.replace("/", "_")):
        batch = reshape(array_ops.slice(values.dense_shape, [0], [1]), [])

        def per_record(sp):  # how many entries each record has
            record = reshape(array_ops.slice(sp.indices, [0, 0], [-1, 1]), [-1])
            return unsorted_segment_sum(ones_like(record), record, batch)

        rows = array_ops.slice(values.indices, [0, 0], [-1, 1])
        value_counts = per_record(values)
        checks = []
        for part_key, part in zip(index_keys, index_parts):
            checks.append(control_flow_ops.Assert(
                reduce_all(equal(per_record(part), value_counts)),
                ["SparseFeature '%s': a record's '%s' and '%s' lists differ in length"
                 % (key, part_key, spec.value_key)]))
        index_columns = [reshape(part.values, [-1, 1]) for part in index_parts]
        for part_key, column, size in zip(index_keys, index_columns, sizes):
            checks.append(control_flow_ops.Assert(
                reduce_all(math_ops.logical_and(greater_equal(column, 0), less(column, size))),
                ["SparseFeature '%s': an index of '%s' is outside [0, %d)"
                 % (key, part_key, size)]))
        with control_dependencies(checks):
            indices = array_ops.concat([rows] + index_columns, 1)
        values_out = values.values
        if not spec.already_sorted:
            # Row-major order: by record, then by index (an exact int64 key).
            order_key = cast(reshape(rows, [-1]), _dtypes.int64)
            for column, size in zip(index_columns, sizes):
                order_key = order_key * size + reshape(column, [-1])
            order = top_k(-order_key, k=shape(order_key)[0]).indices
            indices = gather(indices, order)
            values_out = gather(values_out, order)
        dense_shape = array_ops.concat(
            [reshape(batch, [1]), constant(sizes, dtype=_dtypes.int64)], 0)
        return SparseTensor(indices, values_out, dense_shape)


def parse_example(serialized, features, name=None, example_names=None):
    """A dict from `features`' keys to a dense Tensor ([batch] + shape) for each
    FixedLenFeature, a SparseTensor ([batch, longest]) for each VarLenFeature, and a
    SparseTensor ([batch] + size) for each SparseFeature."""
    if not isinstance(features, dict) or not features:
        raise ValueError("Missing: features was %r" % (features,))
    requested = features
    features, sparse_features = _sparse_feature_parts(features)
    sparse_keys, sparse_types, dense_keys, dense_defaults, dense_shapes = [], [], [], [], []
    for key in sorted(features):
        feature = features[key]
        if isinstance(feature, VarLenFeature):
            sparse_keys.append(key)
            sparse_types.append(_feature_dtype(key, feature.dtype))
        elif isinstance(feature, FixedLenFeature):
            dtype = _feature_dtype(key, feature.dtype)
            shape = _shape_list(key, feature.shape)
            dense_keys.append(key)
            dense_defaults.append(_default(key, feature, dtype, shape))
            dense_shapes.append(shape)
        elif isinstance(feature, FixedLenSequenceFeature):
            if not feature.allow_missing:
                raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to "
                                 "be True.")
            dtype = _feature_dtype(key, feature.dtype)
            shape = _shape_list(key, feature.shape)
            padding = feature.default_value
            if padding is None:
                padding = "" if dtype == _dtypes.string else 0
            padding = np.asarray(padding, dtype=object if dtype == _dtypes.string
                                 else dtype.as_numpy_dtype)
            if padding.size != 1:
                raise ValueError("default_value of FixedLenSequenceFeature '%s' is its padding: "
                                 "one value, got %d" % (key, padding.size))
            dense_keys.append(key)
            dense_defaults.append(padding.reshape(()))
            dense_shapes.append([-1] + shape)
        else:
            raise ValueError("Unsupported feature %r for '%s': troupe parses FixedLenFeature, "
                             "FixedLenSequenceFeature and VarLenFeature" % (feature, key))
    serialized = convert_to_tensor(serialized, dtype=_dtypes.string)
    names = np.array([] if example_names is None else list(example_names), dtype=object)
    op = _ops._make("ParseExample",
                    [serialized, names, [np.array(k, dtype=object) for k in sparse_keys],
                     [np.array(k, dtype=object) for k in dense_keys], dense_defaults],
                    {"sparse_types": [t.as_datatype_enum for t in sparse_types],
                     "dense_shapes": dense_shapes},
                    name=name or "ParseExample")
    outputs = op.outputs
    n = len(sparse_keys)
    result = {}
    for i, key in enumerate(sparse_keys):
        result[key] = SparseTensor(outputs[i], outputs[n + i], outputs[2 * n + i])
    for i, key in enumerate(dense_keys):
        result[key] = outputs[3 * n + i]
    for key, feature in sparse_features.items():
        result[key] = _merge_sparse_feature(key, feature, [result[k] for k in feature[1]],
                                            result[feature[0].value_key])
    return {key: result[key] for key in requested}


def parse_single_example(serialized, features, name=None, example_names=None):
    """parse_example of one record: dense values of their feature's shape, SparseTensors of
    rank 1."""
    from . import array_ops
    serialized = convert_to_tensor(serialized, dtype=_dtypes.string)
    if serialized.shape.ndims not in (None, 0):
        raise ValueError("parse_single_example: serialized must be a scalar, got shape %s"
                         % serialized.shape)
    batch = _ops.reshape(serialized, [1])
    parsed = parse_example(batch, features, name=name,
                           example_names=None if example_names is None else [example_names])
    result = {}
    for key, value in parsed.items():
        if isinstance(value, SparseTensor):
            result[key] = SparseTensor(
                array_ops.slice(value.indices, [0, 1], [-1, -1]),
                value.values, array_ops.slice(value.dense_shape, [1], [-1]))
        else:
            shape = _shape_list(key, features[key].shape)
            if isinstance(features[key], FixedLenSequenceFeature):
                shape = [-1] + shape
            result[key] = _ops.reshape(value, np.array(shape, dtype=np.int32))
    return result


_CSV_DTYPES = (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64, _dtypes.string)


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """CSV records (RFC 4180) into a list of tensors, one per column (or per column of
    `select_cols`), each of the shape of `records`. `record_defaults` has a default per column:
    a scalar or one value (its dtype is the column's: float32, float64, int32, int64 or string),
    or an empty tensor for a required column. An empty field, or one equal to `na_value`, takes
    the default; numbers may have spaces around them."""
    if select_cols is not None:
        select_cols = [int(c) for c in select_cols]
        if any(select_cols[i] >= select_cols[i + 1] for i in range(len(select_cols) - 1)):
            raise ValueError("select_cols is not strictly increasing.")
        if select_cols and select_cols[0] < 0:
            raise ValueError("select_cols contains negative values.")
        if len(select_cols) != len(record_defaults):
            raise ValueError("Length of select_cols and record_defaults do not match.")
    if not isinstance(field_delim, str) or len(field_delim) != 1:
        raise ValueError("decode_csv: field_delim must be one character, got %r" % (field_delim,))
    if not isinstance(records, Tensor):
        records = convert_to_tensor(records, dtype=_dtypes.string)
    defaults = []
    for i, value in enumerate(record_defaults):
        if not isinstance(value, Tensor):
            value = convert_to_tensor(value)
        if value.dtype.base_dtype not in _CSV_DTYPES:
            raise TypeError("decode_csv: record_defaults[%d] is %s; expected float32, float64, "
                            "int32, int64 or string" % (i, value.dtype.name))
        shape = value.get_shape()
        if shape.ndims is not None and shape.ndims > 1:
            raise ValueError("Shape must be at most rank 1 but is rank %d for record_defaults[%d] "
                             "of 'DecodeCSV' (shape %s)" % (shape.ndims, i, shape))
        if shape.ndims == 1 and shape.as_list()[0] is not None and shape.as_list()[0] > 1:
            raise ValueError("Shape of a default must be a length-0 or length-1 vector, or a "
                             "scalar: record_defaults[%d] has shape %s" % (i, shape))
        defaults.append(value)
    op = _ops._make("DecodeCSV", [records, defaults],
                    {"field_delim": field_delim, "use_quote_delim": bool(use_quote_delim),
                     "na_value": str(na_value), "select_cols": select_cols or []},
                    name=name or "DecodeCSV")
    return list(op.outputs)


def string_split(source, sep=None, skip_empty=True, delimiter=None, result_type="SparseTensor",
                 name=None):
    """The tokens of each string of the vector `source` as a SparseTensor of shape
    [len(source), most tokens]: split at any character of `sep` (" " by default; `delimiter` is
    its older name), into single bytes when it is empty; empty tokens dropped if `skip_empty`."""
    if sep is not None and delimiter is not None:
        raise ValueError("Cannot specify both 'sep' and 'delimiter'")
    if sep is None:
        sep = delimiter if delimiter is not None else " "
    if result_type != "SparseTensor":
        raise ValueError("string_split: result_type %r is not supported by troupe (it has no "
                         "RaggedTensor); expected 'SparseTensor'" % (result_type,))
    if not isinstance(sep, Tensor):
        sep = convert_to_tensor(sep, dtype=_dtypes.string)
    if not isinstance(source, Tensor):
        source = convert_to_tensor(source, dtype=_dtypes.string)
    for what, t, rank in (("source", source, 1), ("sep", sep, 0)):
        ndims = t.get_shape().ndims
        if ndims is not None and ndims != rank:
            raise ValueError("Shape must be rank %d but is rank %d for %s of 'StringSplit' "
                             "(shape %s)" % (rank, ndims, what, t.get_shape()))
    op = _ops._make("StringSplit", [source, sep], {"skip_empty": bool(skip_empty)},
                    name=name or "StringSplit")
    indices, values, shape = op.outputs
    return SparseTensor(indices, values, shape)


def decode_raw(bytes, out_type, little_endian=True, name=None):  # noqa: A002 - TF's name
    """The bytes of each string as numbers of `out_type`: a shape of bytes.shape + [n]."""
    out_type = _dtypes.as_dtype(out_type)
    if out_type not in (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64,
                        _dtypes.uint8):
        raise TypeError("decode_raw: out_type %s is not supported by troupe (float32, float64, "
                        "int32, int64, uint8)" % out_type.name)
    if not isinstance(bytes, Tensor):
        bytes = convert_to_tensor(bytes, dtype=_dtypes.string)
    return _ops._make("DecodeRaw", [bytes],
                      {"out_type": out_type.as_datatype_enum,
                       "little_endian": bool(little_endian)},
                      name=name or "DecodeRaw").outputs[0]


def string_to_number(string_tensor, out_type=_dtypes.float32, name=None):
    """Each string as a number of `out_type` (TensorFlow's StringToNumber): white space around
    it allowed, reals also as "inf", "nan" or hexadecimal; a string that is not a number is
    InvalidArgumentError "StringToNumberOp could not correctly convert string: ..."."""
    out_type = _dtypes.as_dtype(out_type)
    if out_type not in (_dtypes.float32, _dtypes.float64, _dtypes.int32, _dtypes.int64):
        raise TypeError("Value passed to parameter 'out_type' has DataType %s not in list of "
                        "allowed values: float32, float64, int32, int64" % out_type.name)
    if not isinstance(string_tensor, Tensor):
        string_tensor = convert_to_tensor(string_tensor, dtype=_dtypes.string)
    if string_tensor.dtype != _dtypes.string:
        raise TypeError("Input 'string_tensor' of 'StringToNumber' Op has type %s that does not "
                        "match expected type of string." % string_tensor.dtype.name)
    return _ops._make("StringToNumber", [string_tensor], {"out_type": out_type.as_datatype_enum},
                      name=name or "StringToNumber").outputs[0]


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None,
                                  example_name=None, name=None):
    """One serialized SequenceExample -> (context, feature_lists): dicts of a dense Tensor for
    each FixedLenFeature of `context_features` (a SparseTensor for each VarLenFeature), and of
    a dense Tensor [steps] + shape for each FixedLenSequenceFeature of `sequence_features` (a
    SparseTensor [steps, longest] for each VarLenFeature). A feature list that is missing is
    InvalidArgumentError, unless it is a VarLenFeature or allow_missing is set (then it has
    no steps)."""
    from .framework import name_scope
    context_features = dict(context_features or {})
    sequence_features = dict(sequence_features or {})
    if not context_features and not sequence_features:
        raise ValueError("Missing features.")
    for key, feature in context_features.items():
        if not isinstance(feature, (FixedLenFeature, VarLenFeature)):
            raise ValueError("Unsupported %s %s." % (type(feature).__name__, feature))
    for key, feature in sequence_features.items():
        if not isinstance(feature, (FixedLenSequenceFeature, VarLenFeature)):
            raise ValueError("Unsupported %s %s." % (type(feature).__name__, feature))
        if isinstance(feature, FixedLenSequenceFeature) and feature.default_value is not None:
            raise ValueError("Value feature_list_dense_defaults[%s] must be None" % key)
    with name_scope(name, "ParseSingleSequenceExample"):
        serialized = convert_to_tensor(serialized, dtype=_dtypes.string, name="serialized")
        if serialized.shape.ndims not in (None, 0):
            raise ValueError("parse_single_sequence_example: serialized must be a scalar, got "
                             "shape %s" % serialized.shape)
        debug_name = convert_to_tensor("" if example_name is None else example_name,
                                       dtype=_dtypes.string, name="debug_name")
        # A SequenceExample read as an Example is its context (field 1, the same Features).
        context = parse_single_example(serialized, context_features,
                                       example_names=example_name) if context_features else {}
        feature_lists = {}
        for key in sorted(sequence_features):
            feature = sequence_features[key]
            fixed = isinstance(feature, FixedLenSequenceFeature)
            steps = _ops._make("SequenceExampleFeatureList", [serialized, debug_name],
                               {"feature_list_key": key,
                                "required": fixed and not feature.allow_missing},
                               name="FeatureList").outputs[0]
            as_example = FixedLenFeature(feature.shape, feature.dtype) if fixed \
                else VarLenFeature(feature.dtype)
            feature_lists[key] = parse_example(steps, {key: as_example})[key]
        return context, feature_lists
