"""tf.contrib.layers: the names TF1 programs use from it — fully_connected, conv2d, flatten,
max_pool2d, avg_pool2d, embed_sequence, layer_norm, xavier_initializer(_conv2d),
l1_regularizer, l2_regularizer. Variables
are named as TensorFlow names them ("fully_connected/weights", "Conv/biases", ...)."""

import numbers

from .. import layers as _layers
from ..framework import name_scope
from ..variables import (get_variable, glorot_normal_initializer, glorot_uniform_initializer,
                         variable_scope, zeros_initializer)


def xavier_initializer(uniform=True, seed=None, dtype=None):
    """Glorot's initializer: uniform (the default) or truncated normal."""
    from .. import dtypes
    dtype = dtype or dtypes.float32
    if uniform:
        return glorot_uniform_initializer(seed=seed, dtype=dtype)
    return glorot_normal_initializer(seed=seed, dtype=dtype)


xavier_initializer_conv2d = xavier_initializer


def _check_scale(scale, what):
    if isinstance(scale, numbers.Integral):
        raise ValueError("scale cannot be an integer: %s" % (scale,))
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError("Setting a scale less than 0 on a regularizer: %g" % scale)
        return float(scale)
    raise TypeError("%s: scale must be a float, got %r" % (what, scale))


def l2_regularizer(scale, scope=None):
    """A function of a weight tensor: scale * tf.nn.l2_loss(weights) (None when scale is 0)."""
    scale = _check_scale(scale, "l2_regularizer")
    if scale == 0.0:
        return lambda _: None

    def l2(weights):
        from ..nn import l2_loss
        from ..ops import multiply
        with name_scope(scope, "l2_regularizer"):
            return multiply(l2_loss(weights), scale, name="value")
    return l2


def l1_regularizer(scale, scope=None):
    """A function of a weight tensor: scale * sum(|weights|) (None when scale is 0)."""
    scale = _check_scale(scale, "l1_regularizer")
    if scale == 0.0:
        return lambda _: None

    def l1(weights):
        from ..ops import abs as abs_, multiply, reduce_sum
        with name_scope(scope, "l1_regularizer"):
            return multiply(reduce_sum(abs_(weights)), scale, name="value")
    return l1


def _relu(x):
    from ..nn import relu
    return relu(x)


def fully_connected(inputs, num_outputs, activation_fn=_relu, normalizer_fn=None,
                    normalizer_params=None, weights_initializer=xavier_initializer(),
                    weights_regularizer=None, biases_initializer=zeros_initializer(),
                    biases_regularizer=None, reuse=None, variables_collections=None,
                    outputs_collections=None, trainable=True, scope=None):
    """activation_fn(inputs @ weights + biases) (no biases when biases_initializer is None)."""
    _layers._unsupported("contrib.layers.fully_connected", normalizer_fn=normalizer_fn,
                         variables_collections=variables_collections,
                         outputs_collections=outputs_collections)
    scope = scope or _layers._unique_scope("fully_connected")
    with variable_scope(scope, reuse=reuse):
        inputs = _layers._as_tensor(inputs, "fully_connected")
        depth = inputs.shape[-1] if inputs.shape.ndims else None
        if depth is None:
            raise ValueError("fully_connected: the last dimension of inputs must be known, got "
                             "shape %s" % (inputs.shape,))
        from ..ops import matmul
        weights = get_variable("weights", [depth, int(num_outputs)], dtype=inputs.dtype,
                               initializer=weights_initializer,
                               regularizer=weights_regularizer, trainable=trainable)
        if inputs.shape.ndims != 2:
            raise ValueError("fully_connected: troupe takes inputs of rank 2, got shape %s"
                             % (inputs.shape,))
        outputs = matmul(inputs, weights)
        if biases_initializer is not None:
            from ..nn import bias_add
            biases = get_variable("biases", [int(num_outputs)], dtype=inputs.dtype,
                                  initializer=biases_initializer,
                                  regularizer=biases_regularizer, trainable=trainable)
            outputs = bias_add(outputs, biases)
        return activation_fn(outputs) if activation_fn is not None else outputs


def conv2d(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None,
           rate=1, activation_fn=_relu, normalizer_fn=None, normalizer_params=None,
           weights_initializer=xavier_initializer(), weights_regularizer=None,
           biases_initializer=zeros_initializer(), biases_regularizer=None, reuse=None,
           variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    """A 2-D convolution of NHWC inputs: variables "Conv/weights" and "Conv/biases"."""
    from ..nn import bias_add, conv2d as nn_conv2d
    _layers._unsupported("contrib.layers.conv2d", normalizer_fn=normalizer_fn,
                         variables_collections=variables_collections,
                         outputs_collections=outputs_collections)
    if data_format not in (None, "NHWC"):
        raise ValueError("contrib.layers.conv2d: data_format %r is not supported (NHWC only)"
                         % (data_format,))
    kh, kw = _layers._pair(kernel_size, "kernel_size")
    sh, sw = _layers._pair(stride, "stride")
    dh, dw = _layers._pair(rate, "rate")
    scope = scope or _layers._unique_scope("Conv")
    with variable_scope(scope, reuse=reuse):
        inputs = _layers._as_tensor(inputs, "conv2d")
        if inputs.shape.ndims != 4 or inputs.shape[-1] is None:
            raise ValueError("contrib.layers.conv2d: inputs must be NHWC with known channels, "
                             "got shape %s" % (inputs.shape,))
        weights = get_variable("weights", [kh, kw, inputs.shape[-1], int(num_outputs)],
                               dtype=inputs.dtype, initializer=weights_initializer,
                               regularizer=weights_regularizer, trainable=trainable)
        outputs = nn_conv2d(inputs, weights, [1, sh, sw, 1], _layers._padding(padding),
                            dilations=[1, dh, dw, 1])
        if biases_initializer is not None:
            biases = get_variable("biases", [int(num_outputs)], dtype=inputs.dtype,
                                  initializer=biases_initializer,
                                  regularizer=biases_regularizer, trainable=trainable)
            outputs = bias_add(outputs, biases)
        return activation_fn(outputs) if activation_fn is not None else outputs


def flatten(inputs, outputs_collections=None, scope=None):
    _layers._unsupported("contrib.layers.flatten", outputs_collections=outputs_collections)
    return _layers.flatten(inputs, name=scope or _layers._unique_scope("Flatten"))


def max_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    from ..nn import max_pool
    _layers._unsupported("contrib.layers.max_pool2d", outputs_collections=outputs_collections)
    kh, kw = _layers._pair(kernel_size, "kernel_size")
    sh, sw = _layers._pair(stride, "stride")
    with name_scope(scope, "MaxPool2D"):
        return max_pool(inputs, [1, kh, kw, 1], [1, sh, sw, 1], _layers._padding(padding),
                        data_format=data_format)


def avg_pool2d(inputs, kernel_size, stride=2, padding="VALID", data_format="NHWC",
               outputs_collections=None, scope=None):
    from ..nn import avg_pool
    _layers._unsupported("contrib.layers.avg_pool2d", outputs_collections=outputs_collections)
    kh, kw = _layers._pair(kernel_size, "kernel_size")
    sh, sw = _layers._pair(stride, "stride")
    with name_scope(scope, "AvgPool2D"):
        return avg_pool(inputs, [1, kh, kw, 1], [1, sh, sw, 1], _layers._padding(padding),
                        data_format=data_format)


def embed_sequence(ids, vocab_size=None, embed_dim=None, unique=False, initializer=None,
                   regularizer=None, trainable=True, scope=None, reuse=None):
    """The embeddings of a sequence of ids ([batch, doc_length] -> [batch, doc_length,
    embed_dim]) from a table "EmbedSequence/embeddings" [vocab_size, embed_dim] (a model
    variable, as TensorFlow's). `unique` looks each distinct id up once."""
    from ..framework import GraphKeys
    from ..nn import embedding_lookup
    from ..ops import gather, reshape
    from ..sparse_ops import unique as unique_ids
    if not (reuse or (vocab_size and embed_dim)):
        raise ValueError("Must specify vocab size and embedding dimension when not reusing. "
                         "Got vocab_size=%s and embed_dim=%s" % (vocab_size, embed_dim))
    with variable_scope(scope, "EmbedSequence", [ids], reuse=reuse):
        shape = [vocab_size, embed_dim] if vocab_size and embed_dim else None
        embeddings = get_variable(
            "embeddings", shape=shape, initializer=initializer, regularizer=regularizer,
            trainable=trainable,
            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.MODEL_VARIABLES])
        ids = _layers._as_tensor(ids, "embed_sequence")
        if not unique:
            return embedding_lookup(embeddings, ids)
        flat = reshape(ids, [-1])
        distinct, positions = unique_ids(flat)
        looked_up = gather(embedding_lookup(embeddings, distinct), positions)
        from ..array_ops import concat
        from ..ops import shape as shape_of
        out = reshape(looked_up, concat([shape_of(ids), shape_of(looked_up)[1:]], 0))
        if ids.shape.ndims is not None:
            out.set_shape(ids.shape.as_list() + embeddings.shape.as_list()[1:])
        return out


def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """Layer normalization (Ba et al.), as tf.contrib.layers.layer_norm: inputs normalized by
    their mean and variance over the dimensions from begin_norm_axis on, then scaled by gamma
    and shifted by beta (variables "LayerNorm/gamma", "LayerNorm/beta" of the dimensions from
    begin_params_axis on); epsilon 1e-12, as TensorFlow's."""
    from ..nn import batch_normalization, moments
    from ..variables import ones_initializer
    _layers._unsupported("contrib.layers.layer_norm",
                         variables_collections=variables_collections,
                         outputs_collections=outputs_collections)
    with variable_scope(scope, "LayerNorm", [inputs], reuse=reuse):
        inputs = _layers._as_tensor(inputs, "layer_norm")
        rank = inputs.shape.ndims
        if rank is None:
            raise ValueError("Inputs %s has undefined rank." % inputs.name)
        if begin_norm_axis < 0:
            begin_norm_axis = rank + begin_norm_axis
        if begin_params_axis >= rank or begin_norm_axis >= rank:
            raise ValueError("begin_params_axis (%d) and begin_norm_axis (%d) must be < "
                             "rank(inputs) (%d)" % (begin_params_axis, begin_norm_axis, rank))
        params_shape = inputs.shape.as_list()[begin_params_axis:]
        if any(d is None for d in params_shape):
            raise ValueError("Inputs %s: shape[begin_params_axis:] is not fully defined: %s"
                             % (inputs.name, params_shape))
        beta = get_variable("beta", params_shape, dtype=inputs.dtype,
                            initializer=zeros_initializer(), trainable=trainable) \
            if center else None
        gamma = get_variable("gamma", params_shape, dtype=inputs.dtype,
                             initializer=ones_initializer(), trainable=trainable) \
            if scale else None
        mean, variance = moments(inputs, list(range(begin_norm_axis, rank)), keep_dims=True)
        outputs = batch_normalization(inputs, mean, variance, offset=beta, scale=gamma,
                                      variance_epsilon=1e-12)
        outputs.set_shape(inputs.shape)
        return activation_fn(outputs) if activation_fn is not None else outputs
