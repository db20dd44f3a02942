"""tf.nn: the neural-network ops troupe has kernels for."""

import collections

import numpy as np

from . import _troupe
from . import dtypes as _dtypes
from .ops import _graph_of, _input, _scope, _t, sigmoid, tanh  # noqa: F401 - re-exported


def relu(features, name=None):
    g = _graph_of(features)
    return _t(_troupe.relu(_scope(g, name), _input(features, g, "relu features")), g)


def _axis_of(x, axis, what):
    """`axis` of x as a non-negative dimension, or None for the last one (ValueError for an
    axis outside x's rank, or another axis of x of unknown rank)."""
    if axis is None or axis == -1:
        return None
    rank = x.shape.ndims
    if rank is None:
        raise ValueError("%s: axis=%r needs logits of known rank" % (what, axis))
    if not -rank <= axis < rank:
        raise ValueError("%s: axis %d is out of range for logits of rank %d" % (what, axis, rank))
    axis = axis % rank
    return None if axis == rank - 1 else axis


def softmax(logits, axis=None, name=None, dim=None):
    """exp(logits) / sum(exp(logits)) along `axis` (or `dim`; the last by default; another
    axis is swapped with the last around the op, as TensorFlow does)."""
    from .framework import convert_to_tensor
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    logits = convert_to_tensor(logits)
    moved = _axis_of(logits, axis, "softmax")
    g = _graph_of(logits)
    if moved is None:
        return _t(_troupe.softmax(_scope(g, name), _input(logits, g, "softmax logits")), g)
    from .array_ops import transpose
    perm = list(range(logits.shape.ndims))
    perm[moved], perm[-1] = perm[-1], perm[moved]
    last = _t(_troupe.softmax(_scope(g, None), _input(transpose(logits, perm), g,
                                                       "softmax logits")), g)
    return transpose(last, perm, name=name or "transpose")


def bias_add(value, bias, data_format=None, name=None):
    if data_format not in (None, "NHWC", "N...C"):
        raise ValueError("bias_add: troupe supports data_format NHWC only")
    g = _graph_of(value, bias)
    return _t(_troupe.bias_add(_scope(g, name), _input(value, g, "bias_add value"),
                               _input(bias, g, "bias_add bias")), g)


def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None,
                                             name=None):
    """The cross entropy of softmax(logits) against integer class labels, per example."""
    if _sentinel is not None:
        raise ValueError("Only call `sparse_softmax_cross_entropy_with_logits` with named "
                         "arguments (labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("sparse_softmax_cross_entropy_with_logits: both labels and logits "
                         "are required")
    g = _graph_of(logits, labels)
    return _t(_troupe.sparse_softmax_cross_entropy_with_logits(
        _scope(g, name), _input(logits, g, "logits", _dtypes.float32),
        _input(labels, g, "labels", _dtypes.int64)), g)


def xw_plus_b(x, weights, biases, name=None):
    """tf.nn.xw_plus_b: matmul(x, weights) + biases."""
    from .framework import name_scope
    from .ops import matmul
    with name_scope(name or "xw_plus_b"):
        return bias_add(matmul(x, weights), biases)


def l2_loss(t, name=None):
    """tf.nn.l2_loss: sum(t ** 2) / 2."""
    from .framework import name_scope
    from .ops import multiply, reduce_sum, square
    with name_scope(name or "L2Loss"):
        return multiply(reduce_sum(square(t)), 0.5)


def softmax_cross_entropy_with_logits_v2(_sentinel=None, labels=None, logits=None, dim=-1,
                                         name=None, axis=None):
    """The cross entropy of softmax(logits) against `labels` (a probability distribution per
    row), per example: -sum(labels * log_softmax(logits)), computed stably (the row's maximum
    subtracted first)."""
    if _sentinel is not None:
        raise ValueError("Only call `softmax_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("softmax_cross_entropy_with_logits: labels and logits are required")
    from .framework import convert_to_tensor, name_scope
    from .ops import exp, log, multiply, reduce_max, reduce_sum, subtract
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, dtype=logits.dtype)
    chosen = axis if axis is not None else dim
    moved = _axis_of(logits, chosen, "softmax_cross_entropy_with_logits")
    axis = -1 if moved is None else moved  # the class axis; the result has the others
    with name_scope(name or "softmax_cross_entropy_with_logits"):
        shifted = subtract(logits, reduce_max(logits, axis=axis, keepdims=True))
        log_softmax = subtract(shifted, log(reduce_sum(exp(shifted), axis=axis, keepdims=True)))
        return -reduce_sum(multiply(labels, log_softmax), axis=axis)


def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1,
                                      name=None, axis=None):
    """As softmax_cross_entropy_with_logits_v2, but no gradient flows into labels (TensorFlow
    1.x's v1)."""
    if _sentinel is None and labels is not None and logits is not None:
        from .framework import convert_to_tensor
        from .ops import stop_gradient
        logits = convert_to_tensor(logits)
        labels = stop_gradient(convert_to_tensor(labels, dtype=logits.dtype))
    return softmax_cross_entropy_with_logits_v2(_sentinel, labels, logits, dim, name, axis)


def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """Per element, the cross entropy of sigmoid(logits) against labels (probabilities):
    max(x, 0) - x * z + log(1 + exp(-|x|)), which neither overflows nor loses digits."""
    if _sentinel is not None:
        raise ValueError("Only call `sigmoid_cross_entropy_with_logits` with named arguments "
                         "(labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("sigmoid_cross_entropy_with_logits: both labels and logits are "
                         "required")
    from .framework import convert_to_tensor, name_scope
    from .ops import abs as _abs, exp, log1p, multiply, negative, subtract
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, dtype=logits.dtype)
    if logits.shape.is_compatible_with(labels.shape) is False:
        raise ValueError("logits and labels must have the same shape (%s vs %s)"
                         % (logits.shape, labels.shape))
    with name_scope(name or "logistic_loss"):
        return log1p(exp(negative(_abs(logits)))) + subtract(relu(logits),
                                                              multiply(logits, labels))


# --- activations ---

def _activation(op_type):
    def activation(features, name=None):
        from .framework import Tensor, convert_to_tensor
        from .ops import _make
        if not isinstance(features, Tensor):
            features = convert_to_tensor(features)
        return _make(op_type, [features], {}, name).outputs[0]
    activation.__name__ = activation.__qualname__ = op_type.lower()
    return activation


relu6 = _activation("Relu6")
elu = _activation("Elu")
selu = _activation("Selu")
softplus = _activation("Softplus")
softsign = _activation("Softsign")


def leaky_relu(features, alpha=0.2, name=None):
    """max(alpha * features, features), as TensorFlow 1.x computes it."""
    from .framework import Tensor, convert_to_tensor, name_scope
    from .ops import maximum, multiply
    with name_scope(name, "LeakyRelu"):
        features = features if isinstance(features, Tensor) else convert_to_tensor(features)
        return maximum(multiply(features, alpha), features)


# --- convolution, pooling, dropout ---

def _nhwc(data_format, what):
    if data_format not in (None, "NHWC"):
        raise ValueError("%s: data_format %r is not supported; troupe's CPU kernels take NHWC "
                         "(as TensorFlow's)" % (what, data_format))


def _four(values, what):
    try:
        values = [int(v) for v in values]
    except TypeError:
        raise TypeError("%s must be a list of 4 ints, got %r" % (what, values)) from None
    if len(values) != 4:
        raise ValueError("%s must have 4 entries (NHWC), got %r" % (what, values))
    return values


def _padding(padding, what):
    if not isinstance(padding, str) or padding.upper() not in ("SAME", "VALID"):
        raise ValueError("%s: padding must be 'SAME' or 'VALID', got %r" % (what, padding))
    return padding.upper()


def _conv_attrs(what, strides, padding, dilations):
    return {"strides": _four(strides, "%s: strides" % what),
            "padding": _padding(padding, what),
            "dilations": _four(dilations, "%s: dilations" % what)}


def conv2d(input, filter=None, strides=None, padding=None, use_cudnn_on_gpu=True,  # noqa: A002
           data_format="NHWC", dilations=(1, 1, 1, 1), name=None, filters=None):
    """tf.nn.conv2d: NHWC `input` convolved with `filter` [height, width, in, out]."""
    from .ops import _make
    filter = filter if filter is not None else filters  # noqa: A001
    _nhwc(data_format, "conv2d")
    attrs = _conv_attrs("conv2d", strides, padding, dilations)
    return _make("Conv2D", [input, filter], attrs, name).outputs[0]


def depthwise_conv2d_native(input, filter, strides, padding, data_format="NHWC",  # noqa: A002
                            dilations=(1, 1, 1, 1), name=None):
    """tf.nn.depthwise_conv2d_native: NHWC `input` [batch, rows, cols, channels], `filter`
    [rows, cols, channels, multiplier]; output channel c * multiplier + m is input channel c
    convolved with filter[:, :, c, m]."""
    from .ops import _make
    _nhwc(data_format, "depthwise_conv2d_native")
    attrs = _conv_attrs("depthwise_conv2d_native", strides, padding, dilations)
    return _make("DepthwiseConv2dNative", [input, filter], attrs, name).outputs[0]


def depthwise_conv2d(input, filter, strides, padding, rate=None, name=None,  # noqa: A002
                     data_format=None):
    """tf.nn.depthwise_conv2d: depthwise_conv2d_native, dilated by `rate` [rows, cols] (as
    TensorFlow 1.x: strides must be 1 where the rate is above 1)."""
    from .framework import name_scope
    rate = [1, 1] if rate is None else [int(r) for r in rate]
    strides = _four(strides, "depthwise_conv2d: strides")
    if len(rate) != 2 or min(rate) < 1:
        raise ValueError("rate must be two positive integers, got %r" % (rate,))
    if max(rate) > 1 and max(strides[1:3]) > 1:
        raise ValueError("strides > 1 not supported in conjunction with rate > 1")
    with name_scope(name, "depthwise"):
        return depthwise_conv2d_native(input, filter, strides, padding, data_format or "NHWC",
                                       [1, rate[0], rate[1], 1], name="depthwise")


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,  # noqa: A002
                     rate=None, name=None, data_format=None):
    """tf.nn.separable_conv2d: a depthwise convolution, then a 1x1 convolution by
    `pointwise_filter` [1, 1, channels * multiplier, out]."""
    from .framework import name_scope
    with name_scope(name, "separable_conv2d"):
        depthwise = depthwise_conv2d(input, depthwise_filter, strides, padding, rate,
                                     name="depthwise", data_format=data_format)
        return conv2d(depthwise, pointwise_filter, [1, 1, 1, 1], "VALID",
                      data_format=data_format or "NHWC", name="pointwise")


def conv2d_backprop_input(input_sizes, filter, out_backprop, strides, padding,  # noqa: A002
                          use_cudnn_on_gpu=True, data_format="NHWC", dilations=(1, 1, 1, 1),
                          name=None):
    from .ops import _make
    _nhwc(data_format, "conv2d_backprop_input")
    attrs = _conv_attrs("conv2d_backprop_input", strides, padding, dilations)
    return _make("Conv2DBackpropInput", [input_sizes, filter, out_backprop], attrs,
                 name).outputs[0]


def conv2d_backprop_filter(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                           use_cudnn_on_gpu=True, data_format="NHWC", dilations=(1, 1, 1, 1),
                           name=None):
    from .ops import _make
    _nhwc(data_format, "conv2d_backprop_filter")
    attrs = _conv_attrs("conv2d_backprop_filter", strides, padding, dilations)
    return _make("Conv2DBackpropFilter", [input, filter_sizes, out_backprop], attrs,
                 name).outputs[0]


def conv2d_transpose(value, filter, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NHWC", name=None, filters=None, dilations=None):
    """The transpose (gradient) of conv2d: `value` [batch, h, w, out] spread by `filter`
    [height, width, in, out] into a tensor of output_shape [batch, H, W, in]."""
    from .framework import Tensor, convert_to_tensor
    from .ops import _make
    filter = filter if filter is not None else filters  # noqa: A001
    _nhwc(data_format, "conv2d_transpose")
    value = value if isinstance(value, Tensor) else convert_to_tensor(value)
    filt = filter if isinstance(filter, Tensor) or hasattr(filter, "_as_graph_element") else \
        convert_to_tensor(filter, dtype=value.dtype)
    sizes = output_shape if isinstance(output_shape, Tensor) else \
        np.asarray(output_shape, dtype=np.int32)
    attrs = _conv_attrs("conv2d_transpose", strides, padding, dilations or [1, 1, 1, 1])
    return _make("Conv2DBackpropInput", [sizes, filt, value], attrs, name).outputs[0]


def in_top_k(predictions, targets, k, name=None):
    """Whether each target class is among the k largest predictions of its row (a tie with the
    k-th value counts as in, as TensorFlow's)."""
    from .framework import Tensor, convert_to_tensor, name_scope
    from .ops import cast, greater, greater_equal, less, multiply, reduce_sum, shape
    from .array_ops import expand_dims, one_hot
    from .math_ops import logical_and
    with name_scope(name, "in_top_k"):
        predictions = predictions if isinstance(predictions, Tensor) else \
            convert_to_tensor(predictions)
        targets = targets if isinstance(targets, Tensor) else convert_to_tensor(targets)
        classes = shape(predictions)[1]
        target_value = reduce_sum(multiply(predictions, one_hot(targets, classes,
                                                                dtype=predictions.dtype)), 1)
        above = reduce_sum(cast(greater(predictions, expand_dims(target_value, 1)),
                                _dtypes.int32), 1)
        valid = logical_and(greater_equal(targets, 0), less(targets, cast(classes,
                                                                          targets.dtype)))
        return logical_and(less(above, k), valid)


def _pool(op_type, value, ksize, strides, padding, data_format, name):
    from .ops import _make
    _nhwc(data_format, op_type)
    attrs = {"ksize": _four(ksize, "%s: ksize" % op_type),
             "strides": _four(strides, "%s: strides" % op_type),
             "padding": _padding(padding, op_type)}
    return _make(op_type, [value], attrs, name).outputs[0]


def max_pool(value, ksize, strides, padding, data_format="NHWC", name=None):
    """tf.nn.max_pool: the maximum of each window (padding excluded)."""
    return _pool("MaxPool", value, ksize, strides, padding, data_format, name)


def avg_pool(value, ksize, strides, padding, data_format="NHWC", name=None):
    """tf.nn.avg_pool: the mean of each window over its elements inside the input."""
    return _pool("AvgPool", value, ksize, strides, padding, data_format, name)


def dropout(x, keep_prob=None, noise_shape=None, seed=None, name=None, rate=None):
    """tf.nn.dropout: each element kept with probability keep_prob and scaled by 1/keep_prob,
    else 0 (noise_shape: elements sharing a draw along the dimensions where it is 1)."""
    from .framework import Tensor, convert_to_tensor, name_scope
    from .ops import cast, floor, multiply, divide, shape as shape_of
    from .random_ops import random_uniform
    if rate is not None:
        if keep_prob is not None:
            raise ValueError("Cannot specify both 'rate' and 'keep_prob'")
        keep_prob = 1 - rate
    if keep_prob is None:
        raise ValueError("dropout: keep_prob (or rate) is required")
    if isinstance(keep_prob, (int, float)) and not 0 < keep_prob <= 1:
        raise ValueError("keep_prob must be a scalar tensor or a float in the range (0, 1], "
                         "got %g" % keep_prob)
    with name_scope(name, "dropout", [x]):
        x = x if isinstance(x, Tensor) else convert_to_tensor(x)
        if not x.dtype.is_floating:
            raise ValueError("x has to be a floating point tensor since it's going to be "
                             "scaled. Got a %s tensor instead." % x.dtype.name)
        if isinstance(keep_prob, (int, float)) and keep_prob == 1:
            return x
        keep = keep_prob if isinstance(keep_prob, Tensor) else \
            convert_to_tensor(keep_prob, dtype=x.dtype)
        if keep.dtype != x.dtype:
            keep = cast(keep, x.dtype)
        noise = shape_of(x) if noise_shape is None else noise_shape
        random = random_uniform(noise, seed=seed, dtype=x.dtype)
        # floor(keep + U[0, 1)) is 1 with probability keep, else 0.
        return multiply(divide(x, keep), floor(keep + random))


# --- embeddings ---

def _clip_rows(result, ids, max_norm):
    """Each embedding in `result` (the rows looked up for `ids`) clipped to L2 norm max_norm."""
    if max_norm is None:
        return result
    from .math_ops import clip_by_norm
    rank, ids_rank = result.shape.ndims, ids.shape.ndims
    if rank is None or ids_rank is None:
        raise ValueError("embedding_lookup: max_norm needs ids and params of known rank")
    return clip_by_norm(result, max_norm, axes=list(range(ids_rank, rank)))


def _shard_of_ids(flat_ids, params, partition_strategy):
    """For each id, its shard and its row in that shard: "mod" puts id i in shard
    i % len(params), row i // len(params); "div" gives each shard a contiguous range, the first
    (rows % len(params)) shards one row more (TensorFlow's rules)."""
    from .math_ops import floordiv, floormod
    from .ops import cast, maximum, less, where
    n = len(params)
    if partition_strategy == "mod":
        return cast(floormod(flat_ids, n), _dtypes.int32), floordiv(flat_ids, n)
    rows = []
    for p in params:
        dim = p.shape.as_list()[0] if p.shape.ndims else None
        if dim is None:
            raise ValueError("embedding_lookup: partition_strategy='div' needs the row counts of "
                             "the shards known while building; %s has shape %s"
                             % (p.name, p.shape))
        rows.append(dim)
    total = sum(rows)
    per_shard, extras = total // n, total % n
    if per_shard == 0:
        raise ValueError("embedding_lookup: %d rows cannot be split over %d shards"
                         % (total, n))
    assignments = maximum(floordiv(flat_ids, per_shard + 1),
                          floordiv(flat_ids - extras, per_shard))
    new_ids = where(less(assignments, extras), floormod(flat_ids, per_shard + 1),
                    floormod(flat_ids - extras, per_shard))
    return cast(assignments, _dtypes.int32), new_ids


def embedding_lookup(params, ids, partition_strategy="mod", name=None, validate_indices=True,
                     max_norm=None):
    """The rows of `params` at `ids`, each clipped to L2 norm max_norm when given. `params` is
    a tensor or variable, or a list of shards of one table (a PartitionedVariable, or a list of
    variables whose first dimensions add up to the table's) split by `partition_strategy`:
    "mod" (id i in shard i % n) or "div" (contiguous ranges). Each shard's gather runs where
    the shard lives, so on a ps only the rows looked up travel; the gradient with respect to
    each shard is IndexedSlices holding only them. An id outside the table is
    InvalidArgumentError: from the gather, naming the id, for one table; for shards, from the
    gather of the shard it falls in or (an id past the last shard) from DynamicPartition,
    naming its position in the ids."""
    from .framework import Tensor, colocate_with, convert_to_tensor, name_scope
    from .ops import gather, identity, reshape, shape, size
    from .array_ops import concat, range as _range
    from .sparse_ops import dynamic_partition, dynamic_stitch
    if partition_strategy not in ("mod", "div"):
        raise ValueError("Unrecognized partition_strategy: %s" % partition_strategy)
    if hasattr(params, "_get_variable_list"):
        params = params._get_variable_list()
    if not isinstance(params, (list, tuple)):
        params = [params]
    if not params:
        raise ValueError("Need at least one param")
    params = [p if isinstance(p, Tensor) or hasattr(p, "_as_graph_element")
              else convert_to_tensor(p, name="params") for p in params]
    with name_scope(name, "embedding_lookup"):
        ids = ids if isinstance(ids, Tensor) else convert_to_tensor(ids)
        if ids.dtype not in (_dtypes.int32, _dtypes.int64):
            raise TypeError("embedding_lookup: ids must be int32 or int64, got %s"
                            % ids.dtype.name)
        if len(params) == 1:
            with colocate_with(params[0]):
                result = _clip_rows(gather(params[0], ids), ids, max_norm)
            return identity(result)
        flat_ids = reshape(ids, [-1])
        original_positions = _range(size(flat_ids))
        shards, new_ids = _shard_of_ids(flat_ids, params, partition_strategy)
        gather_ids = dynamic_partition(new_ids, shards, len(params))
        positions = dynamic_partition(original_positions, shards, len(params))
        rows = []
        for p, shard_ids in zip(params, gather_ids):
            with colocate_with(p):
                rows.append(gather(p, shard_ids))
        merged = dynamic_stitch(positions, rows)
        dims = params[0].shape.as_list()[1:] if params[0].shape.ndims else None
        ids_dims = ids.shape.as_list() if ids.shape.ndims is not None else None
        if dims is not None and None not in dims and ids_dims is not None and \
                None not in ids_dims:
            result = reshape(merged, np.array(ids_dims + dims, np.int32))
        else:
            tail = np.array(dims, np.int32) if dims is not None and None not in dims \
                else shape(params[0])[1:]
            result = reshape(merged, concat([shape(ids), tail], 0))
        return _clip_rows(result, ids, max_norm)


def _segment_sum(data, segment_ids):
    """Sums of data's rows by segment id (ids >= 0), one row per id up to the largest, as
    TensorFlow's segment_sum (rows of ids no entry has are zero)."""
    from .ops import cast, maximum, reduce_max, unsorted_segment_sum
    count = maximum(cast(reduce_max(segment_ids), _dtypes.int64) + 1, np.int64(0))
    return unsorted_segment_sum(data, segment_ids, count)


def embedding_lookup_sparse(params, sp_ids, sp_weights, partition_strategy="mod", name=None,
                            combiner=None, max_norm=None):
    """One embedding per row of the SparseTensor `sp_ids` ([batch, ids per row], int64 ids):
    the rows of `params` at its ids combined by `combiner` ("sum", "mean" (the default) or
    "sqrtn"), weighted by sp_weights' values if given (a SparseTensor of the same indices, or
    None for weight 1). As TensorFlow's: each distinct id is looked up once (Unique) with
    embedding_lookup (`params` may be partitioned), and the result has a row per batch row up
    to the last that has ids."""
    from .framework import name_scope
    from .ops import cast, gather, ones_like, reshape, sqrt, square
    from .sparse_ops import unique
    from .sparse_tensor import SparseTensor
    if combiner is None:
        combiner = "mean"
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError("combiner must be one of 'mean', 'sqrtn' or 'sum'")
    if not isinstance(sp_ids, SparseTensor):
        raise TypeError("sp_ids must be SparseTensor")
    if sp_weights is not None and not isinstance(sp_weights, SparseTensor):
        raise TypeError("sp_weights must be either None or SparseTensor")
    with name_scope(name, "embedding_lookup_sparse"):
        segment_ids = reshape(sp_ids.indices[:, 0], [-1])
        ids, idx = unique(sp_ids.values)
        embeddings = embedding_lookup(params, ids, partition_strategy=partition_strategy,
                                      max_norm=max_norm)
        rank = embeddings.shape.ndims
        if rank is None:
            raise ValueError("embedding_lookup_sparse: params must have a known rank")
        rows = gather(embeddings, idx)
        # One weight per id (1 without sp_weights), shaped to scale its embedding.
        weights = cast(sp_weights.values if sp_weights is not None else
                       ones_like(segment_ids), embeddings.dtype)
        weights = reshape(weights, [-1] + [1] * (rank - 1))
        if sp_weights is not None:
            rows = rows * weights
        counts = weights if combiner == "mean" else square(weights)
        total = _segment_sum(rows, segment_ids)
        if combiner == "sum":
            return total
        weight_sum = _segment_sum(counts, segment_ids)
        if combiner == "sqrtn":
            weight_sum = sqrt(weight_sum)
        from .ops import equal, where
        # A batch row without ids (below the last that has some) is zero, never 0 / 0.
        safe = where(equal(weight_sum, 0.0), ones_like(weight_sum), weight_sum)
        return total / safe


# --- top k ---

def top_k(input, k=1, sorted=True, name=None):  # noqa: A002 - TensorFlow's names
    """The k largest entries of each row (the last dimension) and their int32 indices, largest
    first (ties: the lower index first)."""
    from .framework import Tensor, convert_to_tensor
    from .ops import _make
    x = input if isinstance(input, Tensor) else convert_to_tensor(input)
    k = k if isinstance(k, Tensor) else np.int32(k)
    op = _make("TopKV2", [x, k], {"sorted": bool(sorted)}, name)
    return _TopK(op.outputs[0], op.outputs[1])


_TopK = collections.namedtuple("TopKV2", ["values", "indices"])


# --- normalization ---

def moments(x, axes, shift=None, name=None, keep_dims=False, keepdims=None):
    """(mean, variance) of x over `axes` (variance about the mean, as TensorFlow computes it
    with a stopped-gradient mean)."""
    from .framework import Tensor, convert_to_tensor, name_scope
    from .ops import reduce_mean, squared_difference, stop_gradient
    from .array_ops import squeeze
    keep = keep_dims if keepdims is None else keepdims
    with name_scope(name, "moments"):
        x = x if isinstance(x, Tensor) else convert_to_tensor(x)
        mean = reduce_mean(x, axes, keepdims=True, name="mean")
        variance = reduce_mean(squared_difference(x, stop_gradient(mean)), axes, keepdims=True,
                               name="variance")
        if not keep:
            mean, variance = squeeze(mean, axes), squeeze(variance, axes)
        return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) * scale / sqrt(variance + epsilon) + offset (offset, scale may be None)."""
    from .framework import name_scope
    from .ops import add, multiply, rsqrt, subtract
    with name_scope(name, "batchnorm"):
        inv = rsqrt(add(variance, variance_epsilon))
        if scale is not None:
            inv = multiply(inv, scale)
        shifted = subtract(offset, multiply(mean, inv)) if offset is not None else \
            multiply(mean, -1.0) * inv
        return add(multiply(x, inv), shifted)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """x / sqrt(max(sum(x^2, axis), epsilon))."""
    from .framework import Tensor, convert_to_tensor, name_scope
    from .ops import maximum, multiply, reduce_sum, rsqrt, square
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'dim' and 'axis'")
        axis = dim
    with name_scope(name, "l2_normalize"):
        x = x if isinstance(x, Tensor) else convert_to_tensor(x)
        square_sum = reduce_sum(square(x), axis, keepdims=True)
        return multiply(x, rsqrt(maximum(square_sum, epsilon)))


def log_softmax(logits, axis=None, name=None, dim=None):
    """logits - log(sum(exp(logits))) over `axis` (the last by default), computed stably."""
    from .framework import name_scope
    from .math_ops import reduce_logsumexp
    from .ops import subtract
    from .framework import convert_to_tensor
    axis = dim if axis is None else axis
    logits = convert_to_tensor(logits)
    moved = _axis_of(logits, axis, "log_softmax")
    with name_scope(name, "LogSoftmax"):
        return subtract(logits, reduce_logsumexp(logits, -1 if moved is None else moved,
                                                 keepdims=True))


def local_response_normalization(input, depth_radius=5, bias=1, alpha=1, beta=0.5,  # noqa: A002
                                 name=None):
    """tf.nn.lrn: each element of a 4-D input over (bias + alpha * the sum of the squares of
    the elements within depth_radius of it along the last dimension) ** beta, with gradient."""
    from .framework import convert_to_tensor
    from .ops import _make
    x = convert_to_tensor(input)
    if x.dtype not in (_dtypes.float32, _dtypes.float64):
        raise TypeError("lrn: input must be float32 or float64, got %s" % x.dtype.name)
    return _make("LRN", [x], {"depth_radius": int(depth_radius), "bias": float(bias),
                              "alpha": float(alpha), "beta": float(beta),
                              "T": x.dtype.as_datatype_enum}, name).outputs[0]


lrn = local_response_normalization


def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None):
    """tf.nn.fused_batch_norm of a 4-D x over its channel axis (last for NHWC, 1 for NCHW):
    (y, batch_mean, batch_variance). Training normalizes with the batch's mean and variance
    and returns the variance Bessel-corrected (n / (n - 1)), as TensorFlow's kernel does;
    inference uses `mean` and `variance` and returns them. Epsilon is at least 1.001e-5, as
    TensorFlow's. Composed of ops (differentiable as they are), not one fused kernel."""
    from .framework import Tensor, convert_to_tensor, name_scope
    from .ops import cast, identity, maximum, multiply, reshape, size
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError("data_format must be NHWC or NCHW, got %r" % (data_format,))
    if not is_training and (mean is None or variance is None):
        raise ValueError("Both 'mean' and 'variance' must be a 1D tensor when is_training is "
                         "False.")
    with name_scope(name, "FusedBatchNorm"):
        x = x if isinstance(x, Tensor) else convert_to_tensor(x)
        if x.shape.ndims is not None and x.shape.ndims != 4:
            raise ValueError("x must be 4-dimensional, got shape %s" % x.shape)
        epsilon = max(float(epsilon), 1.001e-5)
        nchw = data_format == "NCHW"
        axes = [0, 2, 3] if nchw else [0, 1, 2]

        def per_channel(t):
            t = convert_to_tensor(t, dtype=x.dtype)
            return reshape(t, [1, -1, 1, 1]) if nchw else t

        if is_training:
            batch_mean, batch_variance = moments(x, axes)
            y = batch_normalization(x, per_channel(batch_mean), per_channel(batch_variance),
                                    per_channel(offset), per_channel(scale), epsilon)
            count = cast(size(x), x.dtype) / cast(size(batch_mean), x.dtype)
            corrected = multiply(batch_variance, count / maximum(count - 1.0, 1.0))
            return y, batch_mean, corrected
        y = batch_normalization(x, per_channel(mean), per_channel(variance), per_channel(offset),
                                per_channel(scale), epsilon)
        return y, identity(convert_to_tensor(mean, dtype=x.dtype)), \
            identity(convert_to_tensor(variance, dtype=x.dtype))


# tf.nn.rnn_cell and the recurrent networks over it (rnn_cell.py, rnn.py).
from . import rnn_cell  # noqa: E402,F401
from .rnn import bidirectional_dynamic_rnn, dynamic_rnn  # noqa: E402,F401
from .rnn import static_bidirectional_rnn, static_rnn  # noqa: E402,F401


# ---- composites, as TensorFlow 1.x builds them from other ops ----

def swish(features, name=None):
    """features * sigmoid(features) (Ramachandran et al.)."""
    from .framework import convert_to_tensor, name_scope
    with name_scope(name, "swish", [features]):
        x = convert_to_tensor(features, name="features")
        return x * sigmoid(x)


def crelu(features, name=None, axis=-1):
    """The ReLUs of features and of -features, concatenated along axis."""
    from .array_ops import concat
    from .framework import convert_to_tensor, name_scope
    with name_scope(name, "CRelu", [features]):
        x = convert_to_tensor(features, name="features")
        return relu(concat([x, -x], axis))


def weighted_cross_entropy_with_logits(targets, logits, pos_weight, name=None):
    """sigmoid_cross_entropy_with_logits with the positive term weighted by pos_weight:
    (1 - z) * x + (1 + (q - 1) * z) * (log(1 + exp(-|x|)) + max(-x, 0))."""
    from .framework import convert_to_tensor, name_scope
    from .ops import abs as abs_, exp, log1p
    with name_scope(name, "logistic_loss", [logits, targets]):
        x = convert_to_tensor(logits, name="logits")
        z = convert_to_tensor(targets, name="targets", dtype=x.dtype)
        if x.shape.is_fully_defined() and z.shape.is_fully_defined() and \
                x.shape.as_list() != z.shape.as_list():
            raise ValueError("logits and targets must have the same shape (%s vs %s)"
                             % (x.shape, z.shape))
        log_weight = 1 + (pos_weight - 1) * z
        return (1 - z) * x + log_weight * (log1p(exp(-abs_(x))) + relu(-x))


def log_poisson_loss(targets, log_input, compute_full_loss=False, name=None):
    """exp(log_input) - log_input * targets, plus Stirling's approximation of log(targets!)
    (where targets > 1) with compute_full_loss."""
    import math
    from .framework import convert_to_tensor, name_scope
    from .ops import exp, log, ones_like, where, zeros_like
    with name_scope(name, "log_poisson_loss", [log_input, targets]):
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, name="targets", dtype=log_input.dtype)
        result = exp(log_input) - log_input * targets
        if compute_full_loss:
            safe = where(targets > 1, targets, ones_like(targets))
            stirling = safe * log(safe) - safe + 0.5 * log(2 * math.pi * safe)
            result += where(targets > 1, stirling, zeros_like(targets))
        return result


def conv1d(value=None, filters=None, stride=None, padding=None, use_cudnn_on_gpu=None,
           data_format=None, name=None, input=None, dilations=None):  # noqa: A002
    """A 1-D convolution of value [batch, width, in] by filters [width, in, out]: conv2d over
    an added dimension of 1."""
    from .array_ops import expand_dims, squeeze
    from .framework import convert_to_tensor, name_scope
    value = input if value is None else value
    if data_format not in (None, "NWC", "NHWC"):
        raise ValueError("conv1d: data_format %r is not supported by troupe (NWC)"
                         % (data_format,))
    def width_entry(value, what, default):
        """An int, or a list of 1 or 3 (NWC: the width's is the middle one)."""
        if value is None:
            return default
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return int(value)
        if isinstance(value, (list, tuple)) and len(value) in (1, 3):
            return int(value[0] if len(value) == 1 else value[1])
        raise ValueError("conv1d: %s must be an int or a list of 1 or 3 ints, got %r"
                         % (what, value))
    stride = width_entry(stride, "stride", None)
    if stride is None:
        raise TypeError("conv1d: stride is required")
    rate = width_entry(dilations, "dilations", 1)
    with name_scope(name, "conv1d", [value, filters]):
        x = expand_dims(convert_to_tensor(value, name="value"), 1)
        f = expand_dims(convert_to_tensor(filters, name="filters"), 0)
        y = conv2d(x, f, strides=[1, 1, stride, 1], padding=padding,
                   dilations=[1, 1, rate, 1])
        return squeeze(y, [1])


def atrous_conv2d(value, filters, rate, padding, name=None):
    """conv2d with holes: the filter's taps `rate` apart (dilations [1, rate, rate, 1])."""
    if not isinstance(rate, int) or rate < 1:
        raise ValueError("rate %r should be larger than or equal to 1" % (rate,))
    return conv2d(value, filters, strides=[1, 1, 1, 1], padding=padding,
                  dilations=[1, rate, rate, 1], name=name)


# ---- candidate sampling and the sampled losses ----

_Candidates = collections.namedtuple(
    "Candidates", ["sampled_candidates", "true_expected_count", "sampled_expected_count"])


def _candidate_sampler(op_type, true_classes, num_true, num_sampled, unique, range_max, seed,
                       name, **attrs):
    from .framework import convert_to_tensor
    from .ops import _make
    from .random_ops import get_seed
    checked = [("num_true", num_true), ("num_sampled", num_sampled)]
    if range_max is not None:
        checked.append(("range_max", range_max))
    for what, value in checked:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError("%s: %s must be an int >= 1, got %r" % (op_type, what, value))
    true_classes = convert_to_tensor(true_classes, dtype=_dtypes.int64, name="true_classes")
    seed1, seed2 = get_seed(seed)
    attrs.update({"num_true": int(num_true), "num_sampled": int(num_sampled),
                  "unique": bool(unique), "seed": seed1 or 0, "seed2": seed2 or 0})
    if range_max is not None:
        attrs["range_max"] = int(range_max)
    op = _make(op_type, [true_classes], attrs, name=name or op_type)
    return _Candidates(*op.outputs)


def uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max, seed=None,
                              name=None):
    """num_sampled classes drawn uniformly from [0, range_max) (distinct if unique), with
    the expected count of each true class [batch, num_true] and of each sampled one."""
    return _candidate_sampler("UniformCandidateSampler", true_classes, num_true, num_sampled,
                              unique, range_max, seed, name)


def log_uniform_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                  seed=None, name=None):
    """As uniform_candidate_sampler, class k drawn with probability log((k + 2) / (k + 1)) /
    log(range_max + 1) (Zipf's law: classes sorted by decreasing frequency)."""
    return _candidate_sampler("LogUniformCandidateSampler", true_classes, num_true,
                              num_sampled, unique, range_max, seed, name)


def fixed_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                    vocab_file="", distortion=1.0, num_reserved_ids=0,
                                    num_shards=1, shard=0, unigrams=(), seed=None, name=None):
    """As uniform_candidate_sampler, classes drawn by fixed weights: `unigrams`, or the last
    field of each line of the CSV file `vocab_file` (exactly one), each raised to `distortion`,
    after num_reserved_ids classes of weight 0; with num_shards, only the classes of `shard`
    (k % num_shards == shard), numbered in order. range_max must be how many there are."""
    for what, value in (("num_reserved_ids", num_reserved_ids), ("num_shards", num_shards),
                        ("shard", shard)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError("fixed_unigram_candidate_sampler: %s must be an int >= 0, got %r"
                             % (what, value))
    if num_shards < 1 or shard >= num_shards:
        raise ValueError("fixed_unigram_candidate_sampler: shard %r of %r shards does not "
                         "exist" % (shard, num_shards))
    if not isinstance(vocab_file, str):
        raise TypeError("fixed_unigram_candidate_sampler: vocab_file must be a path string, "
                        "got %r" % (vocab_file,))
    unigrams = [float(u) for u in unigrams]
    if bool(vocab_file) == bool(unigrams):
        raise ValueError("fixed_unigram_candidate_sampler: give exactly one of vocab_file and "
                         "unigrams")
    if any(u < 0 for u in unigrams):
        raise ValueError("fixed_unigram_candidate_sampler: unigram weights must be >= 0")
    return _candidate_sampler("FixedUnigramCandidateSampler", true_classes, num_true,
                              num_sampled, unique, range_max, seed, name,
                              vocab_file=vocab_file, distortion=float(distortion),
                              num_reserved_ids=int(num_reserved_ids), num_shards=int(num_shards),
                              shard=int(shard), unigrams=unigrams)


def learned_unigram_candidate_sampler(true_classes, num_true, num_sampled, unique, range_max,
                                      seed=None, name=None):
    """As uniform_candidate_sampler, classes drawn by how often they were true classes so far:
    every class of [0, range_max) starts with weight 1 and gains 1 each time a step has it as
    a true class (not saved in checkpoints)."""
    return _candidate_sampler("LearnedUnigramCandidateSampler", true_classes, num_true,
                              num_sampled, unique, range_max, seed, name)


def all_candidate_sampler(true_classes, num_true, num_sampled, unique, seed=None, name=None):
    """Every class of [0, num_sampled), each expected once (for testing sampled losses)."""
    return _candidate_sampler("AllCandidateSampler", true_classes, num_true, num_sampled,
                              unique, None, seed, name)


def compute_accidental_hits(true_classes, sampled_candidates, num_true, seed=None, name=None):
    """Where sampled candidates are true classes: (indices, ids, weights), the row of
    true_classes, the place in sampled_candidates (the last, for a class sampled twice) and
    -FLT_MAX, to add to the sampled logits (tf.nn.compute_accidental_hits)."""
    from .framework import convert_to_tensor
    from .ops import _make
    if isinstance(num_true, bool) or not isinstance(num_true, (int, np.integer)) or num_true < 1:
        raise ValueError("compute_accidental_hits: num_true must be an int >= 1, got %r"
                         % (num_true,))
    true_classes = convert_to_tensor(true_classes, dtype=_dtypes.int64, name="true_classes")
    sampled = convert_to_tensor(sampled_candidates, dtype=_dtypes.int64,
                                name="sampled_candidates")
    op = _make("ComputeAccidentalHits", [true_classes, sampled], {"num_true": int(num_true)},
               name=name or "ComputeAccidentalHits")
    return tuple(op.outputs)


def _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes,
                            num_true, sampled_values, subtract_log_q, remove_accidental_hits,
                            partition_strategy, name, seed=None):
    """TensorFlow's: the logits of the true classes and of num_sampled sampled ones
    [batch, num_true + num_sampled], and their labels (1 / num_true for the true ones)."""
    from .array_ops import concat, expand_dims, slice as slice_
    from .framework import convert_to_tensor, name_scope
    from .math_ops import reduce_any
    from .ops import (cast, equal, log, matmul, ones_like, reduce_sum, reshape, shape, size,
                      stack, stop_gradient, zeros_like)
    from .partitioned_variables import PartitionedVariable
    if isinstance(weights, PartitionedVariable):
        weights = list(weights)
    if not isinstance(weights, list):
        weights = [weights]
    with name_scope(name, "compute_sampled_logits", weights + [biases, inputs, labels]):
        labels = cast(convert_to_tensor(labels, name="labels"), _dtypes.int64)
        labels_flat = reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(
                true_classes=labels, num_true=num_true, num_sampled=num_sampled, unique=True,
                range_max=num_classes, seed=seed)
        sampled, true_expected_count, sampled_expected_count = (
            stop_gradient(s) for s in sampled_values)
        sampled = cast(sampled, _dtypes.int64)
        all_ids = concat([labels_flat, sampled], 0)
        all_w = embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
        n_true = size(labels_flat)
        true_w = slice_(all_w, [0, 0], stack([n_true, -1]))
        sampled_w = slice_(all_w, stack([n_true, 0]), [-1, -1])
        inputs = convert_to_tensor(inputs, name="inputs")
        sampled_logits = matmul(inputs, sampled_w, transpose_b=True)
        all_b = embedding_lookup(biases, all_ids, partition_strategy=partition_strategy)
        true_b = slice_(all_b, [0], reshape(n_true, [1]))
        sampled_b = slice_(all_b, reshape(n_true, [1]), [-1])
        dim = slice_(shape(true_w), [1], [1])
        rows = expand_dims(inputs, 1) * reshape(true_w, concat([[-1, num_true], dim], 0))
        true_logits = reshape(reduce_sum(rows, axis=2), [-1, num_true]) + \
            reshape(true_b, [-1, num_true])
        sampled_logits = sampled_logits + sampled_b
        if remove_accidental_hits:
            # A sampled class that is one of a row's true classes: its logit made -FLT_MAX,
            # at the last place it was sampled (TensorFlow's ComputeAccidentalHits).
            from .array_ops import range as range_
            from .math_ops import logical_and
            from .ops import logical_not
            places = range_(size(sampled))
            later_copy = reduce_any(logical_and(
                equal(expand_dims(sampled, 1), expand_dims(sampled, 0)),
                expand_dims(places, 1) < expand_dims(places, 0)), axis=1)
            hit = reduce_any(equal(expand_dims(reshape(labels, [-1, num_true]), 2),
                                   reshape(sampled, [1, 1, -1])), axis=1)
            hit = logical_and(hit, expand_dims(logical_not(later_copy), 0))
            sampled_logits = sampled_logits + cast(hit, sampled_logits.dtype) * \
                np.finfo(np.float32).min
        if subtract_log_q:
            true_logits = true_logits - log(true_expected_count)
            sampled_logits = sampled_logits - log(sampled_expected_count)
        out_logits = concat([true_logits, sampled_logits], 1)
        out_labels = concat([ones_like(true_logits) / num_true, zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, partition_strategy="mod",
             name="nce_loss"):
    """Noise-contrastive estimation (word2vec's loss): for each row of inputs, logistic
    losses of its true classes against num_sampled classes drawn log-uniformly (or
    sampled_values), summed: a [batch] tensor. weights [num_classes, dim] (or a list or
    PartitionedVariable of shards), biases [num_classes], labels [batch, num_true]."""
    from .ops import reduce_sum
    logits, labels = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
        True, remove_accidental_hits, partition_strategy, name)
    losses = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits,
                                               name="sampled_losses")
    return reduce_sum(losses, axis=1)


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
                         sampled_values=None, remove_accidental_hits=True,
                         partition_strategy="mod", name="sampled_softmax_loss", seed=None):
    """The softmax cross entropy over the true classes and num_sampled sampled ones (Jean et
    al.): a [batch] tensor, for training a large softmax cheaply."""
    from .ops import stop_gradient
    logits, labels = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values,
        True, remove_accidental_hits, partition_strategy, name, seed=seed)
    labels = stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)


def log_sigmoid(x, name=None):
    """log(sigmoid(x)) = -softplus(-x), stable for large |x|."""
    from .framework import convert_to_tensor, name_scope
    with name_scope(name, "LogSigmoid", [x]):
        x = convert_to_tensor(x, name="x")
        return -softplus(-x)


def zero_fraction(value, name=None):
    """The fraction of value's elements that are 0 (a float32 scalar), as the summaries of
    TF1's examples track activations' sparsity."""
    from .framework import convert_to_tensor, name_scope
    from .ops import cast, equal, reduce_mean
    with name_scope(name, "zero_fraction", [value]):
        value = convert_to_tensor(value, name="value")
        return reduce_mean(cast(equal(value, cast(0, value.dtype)), _dtypes.float32))


def relu_layer(x, weights, biases, name=None):
    """relu(matmul(x, weights) + biases)."""
    from .framework import name_scope
    with name_scope(name, "relu_layer", [x, weights, biases]):
        return relu(xw_plus_b(x, weights, biases))


def sufficient_statistics(x, axes, shift=None, keep_dims=False, name=None, keepdims=None):
    """(count, sum of x - shift, sum of (x - shift)^2, shift) over axes, the parts of the mean
    and variance (normalize_moments)."""
    from .framework import convert_to_tensor, name_scope
    from .ops import cast, gather, reduce_prod, reduce_sum, shape, square
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "sufficient_statistics", [x, shift]):
        x = convert_to_tensor(x, name="x")
        count = cast(reduce_prod(gather(shape(x), list(axes))), x.dtype, name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, name="shift", dtype=x.dtype)
            centred = x - shift
        else:
            centred = x
        mean_ss = reduce_sum(centred, axes, keepdims=keep, name="mean_ss")
        var_ss = reduce_sum(square(centred), axes, keepdims=keep, name="var_ss")
        return count, mean_ss, var_ss, shift


def normalize_moments(counts, mean_ss, variance_ss, shift, name=None):
    """(mean, variance) from sufficient_statistics' parts."""
    from .framework import name_scope
    from .ops import square
    with name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = 1.0 / counts
        shifted_mean = mean_ss * divisor
        mean = shifted_mean + shift if shift is not None else shifted_mean
        variance = variance_ss * divisor - square(shifted_mean)
        return mean, variance


def convolution(input, filter, padding, strides=None, dilation_rate=None,  # noqa: A002
                name=None, data_format=None, filters=None):
    """An N-D convolution of an input [batch, spatial..., channels]: conv1d or conv2d (N = 1
    or 2), with strides and dilation_rate of N entries each (1 by default)."""
    filter = filters if filter is None else filter
    from .framework import convert_to_tensor
    x = convert_to_tensor(input, name="input")
    rank = x.shape.ndims
    if rank not in (3, 4):
        raise ValueError("convolution: troupe convolves 1-D and 2-D inputs ([batch, width, "
                         "channels] or NHWC), got shape %s" % x.shape)
    if data_format not in (None, "NWC", "NHWC"):
        raise ValueError("convolution: data_format %r is not supported by troupe (channels "
                         "last)" % (data_format,))
    n = rank - 2
    strides = [1] * n if strides is None else list(strides)
    dilation_rate = [1] * n if dilation_rate is None else list(dilation_rate)
    if len(strides) != n or len(dilation_rate) != n:
        raise ValueError("convolution: strides and dilation_rate need %d entries each, got %r "
                         "and %r" % (n, strides, dilation_rate))
    if n == 1:
        return conv1d(x, filter, stride=strides[0], padding=padding,
                      dilations=dilation_rate[0], name=name)
    return conv2d(x, filter, strides=[1] + strides + [1], padding=padding,
                  dilations=[1] + dilation_rate + [1], name=name)


def pool(input, window_shape, pooling_type, padding, dilation_rate=None,  # noqa: A002
         strides=None, name=None, data_format=None):
    """N-D pooling ("MAX" or "AVG") of [batch, spatial..., channels] inputs, N = 1 or 2."""
    from .array_ops import expand_dims, squeeze
    from .framework import convert_to_tensor
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError("Invalid pooling_type: %s" % (pooling_type,))
    x = convert_to_tensor(input, name="input")
    rank = x.shape.ndims
    if rank not in (3, 4):
        raise ValueError("pool: troupe pools 1-D and 2-D inputs, got shape %s" % x.shape)
    if data_format not in (None, "NWC", "NHWC"):
        raise ValueError("pool: data_format %r is not supported by troupe (channels last)"
                         % (data_format,))
    n = rank - 2
    window = list(window_shape)
    strides = [1] * n if strides is None else list(strides)
    if dilation_rate is not None and any(d != 1 for d in dilation_rate):
        raise ValueError("pool: dilation_rate other than 1 is not supported by troupe")
    if len(window) != n or len(strides) != n:
        raise ValueError("pool: window_shape and strides need %d entries each" % n)
    op = max_pool if pooling_type == "MAX" else avg_pool
    if n == 1:
        return squeeze(op(expand_dims(x, 1), [1, 1, window[0], 1], [1, 1, strides[0], 1],
                          padding, name=name), [1])
    return op(x, [1] + window + [1], [1] + strides + [1], padding, name=name)
