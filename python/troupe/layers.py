"""tf.layers of TensorFlow 1.x: the functions dense, conv2d, max_pooling2d, average_pooling2d,
flatten, dropout, batch_normalization, conv2d_transpose, and the classes of the same layers
(Dense, Conv2D, ...), which build on their first call and share their variables afterwards.
Each layer makes its variables with tf.get_variable under a variable scope named after it
("dense", "dense_1", ... unless `name` is given; `reuse=True` shares an existing layer's
variables): "<scope>/kernel" and "<scope>/bias", as TensorFlow names them, so checkpoints of the
same program line up. Only channels_last (NHWC) data is supported."""

import numpy as np

from . import dtypes as _dtypes
from .framework import GraphKeys, Tensor, convert_to_tensor, get_default_graph, name_scope
from .variables import (_state, get_variable, ones_initializer, variable_scope,
                        zeros_initializer)


def _unique_scope(base):
    """"base", then "base_1", "base_2", ... within the enclosing variable scope of this
    graph."""
    graph = get_default_graph()
    counts = graph.__dict__.setdefault("_layer_name_counts", {})
    key = "/".join(_state(graph).names + [base])
    count = counts.get(key, 0)
    counts[key] = count + 1
    return base if count == 0 else "%s_%d" % (base, count)


def _as_tensor(inputs, what):
    if isinstance(inputs, Tensor):
        return inputs
    if hasattr(inputs, "_as_graph_element"):
        return inputs._as_graph_element()
    try:
        return convert_to_tensor(inputs)
    except TypeError as e:
        raise TypeError("%s: inputs must be a Tensor, got %r (%s)" % (what, inputs, e)) from None


def _pair(value, what):
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value), int(value)
    try:
        values = tuple(int(v) for v in value)
    except TypeError:
        raise ValueError("The `%s` argument must be a tuple of 2 integers. Received: %r"
                         % (what, value)) from None
    if len(values) != 2:
        raise ValueError("The `%s` argument must be a tuple of 2 integers. Received: %r"
                         % (what, value))
    return values


def _padding(padding):
    if not isinstance(padding, str) or padding.lower() not in ("valid", "same"):
        raise ValueError("The `padding` argument must be one of \"valid\", \"same\". "
                         "Received: %r" % (padding,))
    return padding.upper()


def _channels_last(data_format):
    if data_format not in ("channels_last", None):
        raise ValueError("data_format %r is not supported by troupe: channels_last only "
                         "(NHWC, as TensorFlow's CPU kernels)" % (data_format,))


def _unsupported(layer, **given):
    """ValueError naming the first argument given that troupe does not support."""
    for what, value in given.items():
        if value is not None and value is not False:
            raise ValueError("%s: %s is not supported by troupe" % (layer, what))


def _positive_int(layer, what, value):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
        raise ValueError("%s: %s must be a positive integer, got %r" % (layer, what, value))
    return int(value)


def _activity(outputs, activity_regularizer):
    if activity_regularizer is not None:
        loss = activity_regularizer(outputs)
        if loss is not None:
            get_default_graph().add_to_collection(GraphKeys.REGULARIZATION_LOSSES, loss)
    return outputs


def dense(inputs, units, activation=None, use_bias=True, kernel_initializer=None,
          bias_initializer=zeros_initializer(), kernel_regularizer=None, bias_regularizer=None,
          activity_regularizer=None, kernel_constraint=None, bias_constraint=None,
          trainable=True, name=None, reuse=None):
    """tf.layers.dense: activation(inputs @ kernel + bias), over the last dimension of inputs
    (rank >= 2; its size must be known)."""
    from .ops import matmul, reshape, shape
    from .nn import bias_add
    inputs = _as_tensor(inputs, "dense")
    _positive_int("dense", "units", units)
    _unsupported("dense", kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
    rank = inputs.shape.ndims
    if rank is not None and rank < 2:
        raise ValueError("Input 0 of layer dense is incompatible with the layer: expected "
                         "min_ndim=2, found ndim=%d" % rank)
    depth = inputs.shape[-1] if rank is not None else None
    if depth is None:
        raise ValueError("The last dimension of the inputs to `Dense` should be defined. "
                         "Found `None`.")
    scope = name or _unique_scope("dense")
    with variable_scope(scope, reuse=reuse):
        kernel = get_variable("kernel", [depth, int(units)], dtype=inputs.dtype,
                              initializer=kernel_initializer, regularizer=kernel_regularizer,
                              trainable=trainable)
        bias = get_variable("bias", [int(units)], dtype=inputs.dtype,
                            initializer=bias_initializer, regularizer=bias_regularizer,
                            trainable=trainable) if use_bias else None
        if rank == 2:
            outputs = matmul(inputs, kernel)
        else:  # a matrix product over the last dimension, the others kept
            flat = matmul(reshape(inputs, [-1, depth]), kernel)
            from .array_ops import concat
            outputs = reshape(flat, concat([shape(inputs)[:-1], [int(units)]], 0))
            outputs.set_shape(inputs.shape.as_list()[:-1] + [int(units)])  # as tensordot's
        if bias is not None:
            outputs = bias_add(outputs, bias)
        if activation is not None:
            outputs = activation(outputs)
        return _activity(outputs, activity_regularizer)


def _conv_channels(inputs, layer):
    """The channels of `inputs`, which a convolution layer needs NHWC with them known."""
    if inputs.shape.ndims != 4:
        raise ValueError("Input 0 of layer %s is incompatible with the layer: expected ndim=4, "
                         "found ndim=%s. Full shape received: %s"
                         % (layer, inputs.shape.ndims, inputs.shape))
    channels = inputs.shape[-1]
    if channels is None:
        raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
    return channels


def _bias_and_activation(outputs, filters, use_bias, bias_initializer, bias_regularizer,
                         trainable, activation, activity_regularizer):
    """A convolution layer's last steps, in its variable scope: the bias, the activation."""
    from .nn import bias_add
    if use_bias:
        bias = get_variable("bias", [int(filters)], dtype=outputs.dtype,
                            initializer=bias_initializer, regularizer=bias_regularizer,
                            trainable=trainable)
        outputs = bias_add(outputs, bias)
    if activation is not None:
        outputs = activation(outputs)
    return _activity(outputs, activity_regularizer)


def conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
           data_format="channels_last", dilation_rate=(1, 1), activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """tf.layers.conv2d: a 2-D convolution of NHWC inputs with `filters` output channels."""
    from .nn import conv2d as nn_conv2d
    inputs = _as_tensor(inputs, "conv2d")
    _channels_last(data_format)
    _positive_int("conv2d", "filters", filters)
    _unsupported("conv2d", kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(strides, "strides")
    dh, dw = _pair(dilation_rate, "dilation_rate")
    channels = _conv_channels(inputs, "conv2d")
    scope = name or _unique_scope("conv2d")
    with variable_scope(scope, reuse=reuse):
        kernel = get_variable("kernel", [kh, kw, channels, int(filters)], dtype=inputs.dtype,
                              initializer=kernel_initializer, regularizer=kernel_regularizer,
                              trainable=trainable)
        outputs = nn_conv2d(inputs, kernel, [1, sh, sw, 1], _padding(padding),
                            dilations=[1, dh, dw, 1])
        return _bias_and_activation(outputs, filters, use_bias, bias_initializer,
                                    bias_regularizer, trainable, activation,
                                    activity_regularizer)


def separable_conv2d(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", dilation_rate=(1, 1), depth_multiplier=1,
                     activation=None, use_bias=True, depthwise_initializer=None,
                     pointwise_initializer=None, bias_initializer=zeros_initializer(),
                     depthwise_regularizer=None, pointwise_regularizer=None,
                     bias_regularizer=None, activity_regularizer=None, depthwise_constraint=None,
                     pointwise_constraint=None, bias_constraint=None, trainable=True, name=None,
                     reuse=None):
    """tf.layers.separable_conv2d: a depthwise convolution of NHWC inputs (`depth_multiplier`
    filters per channel, variable `depthwise_kernel`), then a 1x1 one to `filters` channels
    (`pointwise_kernel`), plus `bias`."""
    from .nn import separable_conv2d as nn_separable_conv2d
    inputs = _as_tensor(inputs, "separable_conv2d")
    _channels_last(data_format)
    _positive_int("separable_conv2d", "filters", filters)
    _positive_int("separable_conv2d", "depth_multiplier", depth_multiplier)
    _unsupported("separable_conv2d", depthwise_constraint=depthwise_constraint,
                 pointwise_constraint=pointwise_constraint, bias_constraint=bias_constraint)
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(strides, "strides")
    dh, dw = _pair(dilation_rate, "dilation_rate")
    channels = _conv_channels(inputs, "separable_conv2d")
    scope = name or _unique_scope("separable_conv2d")
    with variable_scope(scope, reuse=reuse):
        depthwise = get_variable("depthwise_kernel", [kh, kw, channels, int(depth_multiplier)],
                                 dtype=inputs.dtype, initializer=depthwise_initializer,
                                 regularizer=depthwise_regularizer, trainable=trainable)
        pointwise = get_variable("pointwise_kernel",
                                 [1, 1, channels * int(depth_multiplier), int(filters)],
                                 dtype=inputs.dtype, initializer=pointwise_initializer,
                                 regularizer=pointwise_regularizer, trainable=trainable)
        outputs = nn_separable_conv2d(inputs, depthwise, pointwise, [1, sh, sw, 1],
                                      _padding(padding), rate=[dh, dw])
        return _bias_and_activation(outputs, filters, use_bias, bias_initializer,
                                    bias_regularizer, trainable, activation,
                                    activity_regularizer)


def _pooling(op, base, inputs, pool_size, strides, padding, data_format, name):
    inputs = _as_tensor(inputs, base)
    _channels_last(data_format)
    ph, pw = _pair(pool_size, "pool_size")
    sh, sw = _pair(strides, "strides")
    with name_scope(name or _unique_scope(base)):
        return op(inputs, [1, ph, pw, 1], [1, sh, sw, 1], _padding(padding))


def max_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """tf.layers.max_pooling2d: the maximum of each pool_size window of NHWC inputs."""
    from .nn import max_pool
    return _pooling(max_pool, "max_pooling2d", inputs, pool_size, strides, padding, data_format,
                    name)


def average_pooling2d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                      name=None):
    """tf.layers.average_pooling2d: the mean of each pool_size window of NHWC inputs."""
    from .nn import avg_pool
    return _pooling(avg_pool, "average_pooling2d", inputs, pool_size, strides, padding,
                    data_format, name)


def flatten(inputs, name=None, data_format="channels_last"):
    """tf.layers.flatten: [batch, everything else]."""
    from .ops import reshape, shape, stack
    inputs = _as_tensor(inputs, "flatten")
    _channels_last(data_format)
    with name_scope(name or _unique_scope("flatten")):
        dims = inputs.shape.as_list() if inputs.shape.ndims is not None else None
        if dims is not None and len(dims) < 1:
            raise ValueError("flatten: inputs must have a batch dimension, got a scalar")
        if dims is not None and all(d is not None for d in dims[1:]):
            return reshape(inputs, [-1, int(np.prod(dims[1:], dtype=np.int64))])
        return reshape(inputs, stack([shape(inputs)[0], -1]))


def dropout(inputs, rate=0.5, noise_shape=None, seed=None, training=False, name=None):
    """tf.layers.dropout: while `training` (a bool or a bool scalar tensor), each element is
    dropped with probability `rate` and the rest scaled by 1 / (1 - rate); otherwise the
    inputs unchanged."""
    from .nn import dropout as nn_dropout
    from .ops import identity, where
    inputs = _as_tensor(inputs, "dropout")
    if isinstance(rate, (int, float)) and not 0 <= rate < 1:
        raise ValueError("dropout: rate must be in [0, 1), got %r" % (rate,))
    with name_scope(name or _unique_scope("dropout")):
        if isinstance(training, Tensor):
            if training.dtype != _dtypes.bool:
                raise TypeError("dropout: training must be a bool, got a %s tensor"
                                % training.dtype.name)
            dropped = nn_dropout(inputs, rate=rate, noise_shape=noise_shape, seed=seed)
            return where(training, dropped, inputs)
        if training:
            return nn_dropout(inputs, rate=rate, noise_shape=noise_shape, seed=seed)
        return identity(inputs)


def batch_normalization(inputs, axis=-1, momentum=0.99, epsilon=1e-3, center=True, scale=True,
                        beta_initializer=zeros_initializer(), gamma_initializer=ones_initializer(),
                        moving_mean_initializer=zeros_initializer(),
                        moving_variance_initializer=ones_initializer(), beta_regularizer=None,
                        gamma_regularizer=None, beta_constraint=None, gamma_constraint=None,
                        training=False, trainable=True, name=None, reuse=None, renorm=False,
                        renorm_clipping=None, renorm_momentum=0.99, fused=None,
                        virtual_batch_size=None, adjustment=None):
    """tf.layers.batch_normalization over the dimension `axis` (the channels): while training
    (a bool or a bool tensor), normalizes by the batch's moments and adds the updates of
    moving_mean and moving_variance (by `momentum`) to GraphKeys.UPDATE_OPS — run them with the
    train op, as TensorFlow requires; otherwise normalizes by the moving averages. Variables
    "<scope>/gamma", "beta", "moving_mean", "moving_variance" (the last two not trainable)."""
    from .nn import batch_normalization as normalize, moments
    from .ops import assign_sub, multiply, subtract, where
    _unsupported("batch_normalization", renorm=renorm, virtual_batch_size=virtual_batch_size,
                 adjustment=adjustment, beta_constraint=beta_constraint,
                 gamma_constraint=gamma_constraint)
    inputs = _as_tensor(inputs, "batch_normalization")
    rank = inputs.shape.ndims
    if rank is None:
        raise ValueError("batch_normalization: inputs must have a known rank")
    if not isinstance(axis, int) or not -rank <= axis < rank:
        raise ValueError("Invalid axis: %r for inputs of rank %d" % (axis, rank))
    axis %= rank
    depth = inputs.shape[axis]
    if depth is None:
        raise ValueError("Input has undefined `axis` dimension. Input shape: %s" % inputs.shape)
    reduce_axes = [d for d in range(rank) if d != axis]
    param_shape = [depth]
    graph = get_default_graph()
    with variable_scope(name or _unique_scope("batch_normalization"), reuse=reuse):
        gamma = get_variable("gamma", param_shape, dtype=inputs.dtype,
                             initializer=gamma_initializer, regularizer=gamma_regularizer,
                             trainable=trainable) if scale else None
        beta = get_variable("beta", param_shape, dtype=inputs.dtype,
                            initializer=beta_initializer, regularizer=beta_regularizer,
                            trainable=trainable) if center else None
        moving_mean = get_variable("moving_mean", param_shape, dtype=inputs.dtype,
                                   initializer=moving_mean_initializer, trainable=False)
        moving_variance = get_variable("moving_variance", param_shape, dtype=inputs.dtype,
                                       initializer=moving_variance_initializer, trainable=False)
        # Broadcast the [depth] parameters along `axis` (channels last: as they are).
        def along_axis(t):
            if axis == rank - 1:
                return t
            from .ops import reshape
            return reshape(t, [depth if d == axis else 1 for d in range(rank)])
        batch_mean, batch_variance = moments(inputs, reduce_axes)
        if isinstance(training, Tensor) or training:
            is_training = training
            mean = where(is_training, batch_mean, moving_mean) \
                if isinstance(training, Tensor) else batch_mean
            variance = where(is_training, batch_variance, moving_variance) \
                if isinstance(training, Tensor) else batch_variance
            decay = 1.0 - momentum
            for var, value in ((moving_mean, mean), (moving_variance, variance)):
                update = assign_sub(var, multiply(subtract(var, value), decay))
                graph.add_to_collection(GraphKeys.UPDATE_OPS, update)
        else:
            mean, variance = moving_mean, moving_variance
        return normalize(inputs, along_axis(mean), along_axis(variance),
                         along_axis(beta) if beta is not None else None,
                         along_axis(gamma) if gamma is not None else None, epsilon)


def conv2d_transpose(inputs, filters, kernel_size, strides=(1, 1), padding="valid",
                     data_format="channels_last", activation=None, use_bias=True,
                     kernel_initializer=None, bias_initializer=zeros_initializer(),
                     kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                     kernel_constraint=None, bias_constraint=None, trainable=True, name=None,
                     reuse=None):
    """tf.layers.conv2d_transpose: the transpose of a convolution (upsampling by `strides`),
    kernel [height, width, filters, in_channels]; VALID gives (in - 1) * stride + kernel
    outputs per dimension, SAME in * stride."""
    from .nn import bias_add, conv2d_transpose as nn_conv2d_transpose
    from .ops import shape, stack
    inputs = _as_tensor(inputs, "conv2d_transpose")
    _channels_last(data_format)
    _positive_int("conv2d_transpose", "filters", filters)
    _unsupported("conv2d_transpose", kernel_constraint=kernel_constraint,
                 bias_constraint=bias_constraint)
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(strides, "strides")
    pad = _padding(padding)
    if inputs.shape.ndims != 4 or inputs.shape[-1] is None:
        raise ValueError("conv2d_transpose: inputs must be NHWC with known channels, got "
                         "shape %s" % (inputs.shape,))
    height, width = inputs.shape[1], inputs.shape[2]
    if height is None or width is None:
        raise ValueError("conv2d_transpose: troupe needs the inputs' height and width known, "
                         "got shape %s" % (inputs.shape,))

    def out_size(size, k, s):
        return size * s if pad == "SAME" else (size - 1) * s + k
    with variable_scope(name or _unique_scope("conv2d_transpose"), reuse=reuse):
        kernel = get_variable("kernel", [kh, kw, int(filters), inputs.shape[-1]],
                              dtype=inputs.dtype, initializer=kernel_initializer,
                              regularizer=kernel_regularizer, trainable=trainable)
        output_shape = stack([shape(inputs)[0], out_size(height, kh, sh),
                              out_size(width, kw, sw), int(filters)])
        outputs = nn_conv2d_transpose(inputs, kernel, output_shape, [1, sh, sw, 1], pad)
        if use_bias:
            bias = get_variable("bias", [int(filters)], dtype=inputs.dtype,
                                initializer=bias_initializer, regularizer=bias_regularizer,
                                trainable=trainable)
            outputs = bias_add(outputs, bias)
        if activation is not None:
            outputs = activation(outputs)
        return _activity(outputs, activity_regularizer)


# --- the layer classes: tf.layers.Dense(...)(inputs) ---

class Layer:
    """A layer object as TensorFlow 1.x's tf.layers classes are: built (its variables made) on
    the first call, which fixes its name ("dense", "dense_1", ... unless given); later calls
    share those variables. `variables`, `trainable_variables` (`trainable_weights`),
    `non_trainable_variables` and `weights` list them."""

    _base_name = "layer"

    def __init__(self, name=None, trainable=True, **kwargs):
        self._given_name = name
        self._scope_name = None  # where its variables are: made unique at the first call
        self.trainable = trainable
        self._kwargs = kwargs
        self.built = False
        self._variables = []

    def _apply(self, inputs, reuse, **call_kwargs):
        raise NotImplementedError

    def __call__(self, inputs, *args, **kwargs):
        from .variables import (get_variable_scope, global_variables, local_variables,
                                variable_scope)
        if not self.built:
            # As TensorFlow's layer objects: a given name is a base too, made unique in the
            # enclosing scope for the variables ("memory_layer", "memory_layer_1" for two
            # attention mechanisms), while the layer's name stays the one given.
            self._scope_name = _unique_scope(self._given_name or self._base_name)
            before = set(id(v) for v in global_variables() + local_variables())
            self._outer_scope = get_variable_scope()
        elif get_variable_scope().name != self._outer_scope.name:
            # Called again from another variable scope: its variables are where it was built,
            # as a TensorFlow layer keeps them. Re-entering that scope must not restart the
            # numbering of the layers made in it (a later tf.layers.dense there is dense_1).
            from .framework import get_default_graph
            counts = get_default_graph().__dict__.get("_layer_name_counts")
            saved = dict(counts) if counts is not None else None
            try:
                with variable_scope(self._outer_scope, reuse=True):
                    return self._apply(inputs, True, *args, **kwargs)
            finally:
                if saved is not None:
                    counts.clear()
                    counts.update(saved)
        outputs = self._apply(inputs, self.built, *args, **kwargs)
        if not self.built:
            self._variables = [v for v in global_variables() + local_variables()
                               if id(v) not in before]
            self.built = True
        return outputs

    apply = __call__

    @property
    def name(self):
        """The name given, as TensorFlow's (two Dense(name="fc") are both "fc", their variables
        under "fc/" and "fc_1/"); unnamed, the unique one of its first call ("dense_1")."""
        return self._given_name or self._scope_name

    @property
    def variables(self):
        return list(self._variables)

    weights = variables

    @property
    def trainable_variables(self):
        from .variables import trainable_variables
        trainable = set(id(v) for v in trainable_variables())
        return [v for v in self._variables if id(v) in trainable]

    trainable_weights = trainable_variables

    @property
    def non_trainable_variables(self):
        trainable = set(id(v) for v in self.trainable_variables)
        return [v for v in self._variables if id(v) not in trainable]

    non_trainable_weights = non_trainable_variables

    def _variable(self, suffix):
        """The layer's variable `suffix` ("kernel"), wherever its scope was (a layer built
        inside a variable scope has outer/.../name/kernel)."""
        own = "%s/%s" % (self._scope_name, suffix)
        for v in self._variables:
            if v.op.name == own or v.op.name.endswith("/" + own):
                return v
        return None


class Dense(Layer):
    _base_name = "dense"

    def __init__(self, units, activation=None, use_bias=True, name=None, trainable=True,
                 **kwargs):
        super().__init__(name, trainable, **kwargs)
        self.units, self.activation, self.use_bias = units, activation, use_bias

    def _apply(self, inputs, reuse):
        return dense(inputs, self.units, self.activation, self.use_bias, name=self._scope_name,
                     reuse=reuse or None, trainable=self.trainable, **self._kwargs)

    kernel = property(lambda self: self._variable("kernel"))
    bias = property(lambda self: self._variable("bias"))

    def compute_output_shape(self, input_shape):
        """The shape of the outputs for inputs of `input_shape`: its last dimension becomes
        units (ValueError if it is not known, as TensorFlow's)."""
        from .framework import TensorShape
        input_shape = TensorShape(input_shape)
        if input_shape.ndims is not None and input_shape.ndims < 2:
            raise ValueError("Shape %s must have rank at least 2" % input_shape)
        if input_shape.ndims is None or input_shape.as_list()[-1] is None:
            raise ValueError("The innermost dimension of input_shape must be defined, but saw: "
                             "%s" % input_shape)
        return TensorShape(input_shape.as_list()[:-1] + [self.units])


class Conv2D(Layer):
    _base_name = "conv2d"

    def __init__(self, filters, kernel_size, strides=(1, 1), padding="valid", name=None,
                 trainable=True, **kwargs):
        super().__init__(name, trainable, **kwargs)
        self.filters, self.kernel_size, self.strides, self.padding = (filters, kernel_size,
                                                                      strides, padding)

    def _apply(self, inputs, reuse):
        return conv2d(inputs, self.filters, self.kernel_size, self.strides, self.padding,
                      name=self._scope_name, reuse=reuse or None, trainable=self.trainable,
                      **self._kwargs)

    kernel = property(lambda self: self._variable("kernel"))
    bias = property(lambda self: self._variable("bias"))


class Conv2DTranspose(Conv2D):
    _base_name = "conv2d_transpose"

    def _apply(self, inputs, reuse):
        return conv2d_transpose(inputs, self.filters, self.kernel_size, self.strides,
                                self.padding, name=self._scope_name, reuse=reuse or None,
                                trainable=self.trainable, **self._kwargs)


class SeparableConv2D(Conv2D):
    _base_name = "separable_conv2d"

    def _apply(self, inputs, reuse):
        return separable_conv2d(inputs, self.filters, self.kernel_size, self.strides,
                                self.padding, name=self._scope_name, reuse=reuse or None,
                                trainable=self.trainable, **self._kwargs)

    depthwise_kernel = property(lambda self: self._variable("depthwise_kernel"))
    pointwise_kernel = property(lambda self: self._variable("pointwise_kernel"))


class _Pooling2D(Layer):
    _function = None

    def __init__(self, pool_size, strides, padding="valid", data_format="channels_last",
                 name=None, **kwargs):
        super().__init__(name, True, **kwargs)
        self.pool_size, self.strides, self.padding = pool_size, strides, padding
        self.data_format = data_format

    def _apply(self, inputs, reuse):
        return type(self)._function(inputs, self.pool_size, self.strides, self.padding,
                                    self.data_format, name=self._scope_name if not reuse else None)


class MaxPooling2D(_Pooling2D):
    _base_name = "max_pooling2d"
    _function = staticmethod(max_pooling2d)


class AveragePooling2D(_Pooling2D):
    _base_name = "average_pooling2d"
    _function = staticmethod(average_pooling2d)


class Flatten(Layer):
    _base_name = "flatten"

    def _apply(self, inputs, reuse):
        return flatten(inputs, name=self._scope_name if not reuse else None, **self._kwargs)


class Dropout(Layer):
    _base_name = "dropout"

    def __init__(self, rate=0.5, noise_shape=None, seed=None, name=None, **kwargs):
        super().__init__(name, True, **kwargs)
        self.rate, self.noise_shape, self.seed = rate, noise_shape, seed

    def _apply(self, inputs, reuse, training=False):
        return dropout(inputs, self.rate, self.noise_shape, self.seed, training=training,
                       name=self._scope_name if not reuse else None)


class BatchNormalization(Layer):
    _base_name = "batch_normalization"

    def __init__(self, axis=-1, momentum=0.99, epsilon=1e-3, name=None, trainable=True,
                 **kwargs):
        super().__init__(name, trainable, **kwargs)
        self.axis, self.momentum, self.epsilon = axis, momentum, epsilon

    def _apply(self, inputs, reuse, training=False):
        return batch_normalization(inputs, self.axis, self.momentum, self.epsilon,
                                   training=training, trainable=self.trainable, name=self._scope_name,
                                   reuse=reuse or None, **self._kwargs)


# ---- 1-D layers: the 2-D ones over an added dimension of 1 ----

def _single(value, what):
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    try:
        values = tuple(int(v) for v in value)
    except TypeError:
        raise ValueError("The `%s` argument must be a tuple of 1 integers. Received: %r"
                         % (what, value)) from None
    if len(values) != 1:
        raise ValueError("The `%s` argument must be a tuple of 1 integers. Received: %r"
                         % (what, value))
    return values[0]


def _rank3(inputs, layer):
    if inputs.shape.ndims != 3:
        raise ValueError("Input 0 of layer %s is incompatible with the layer: expected ndim=3, "
                         "found ndim=%s. Full shape received: %s"
                         % (layer, inputs.shape.ndims, inputs.shape))


def conv1d(inputs, filters, kernel_size, strides=1, padding="valid",
           data_format="channels_last", dilation_rate=1, activation=None, use_bias=True,
           kernel_initializer=None, bias_initializer=zeros_initializer(),
           kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
           kernel_constraint=None, bias_constraint=None, trainable=True, name=None, reuse=None):
    """tf.layers.conv1d: a 1-D convolution of [batch, width, channels] inputs with `filters`
    output channels (variables kernel [kernel_size, channels, filters] and bias)."""
    from .array_ops import expand_dims, squeeze
    from .nn import conv2d as nn_conv2d
    inputs = _as_tensor(inputs, "conv1d")
    _channels_last(data_format)
    _positive_int("conv1d", "filters", filters)
    _unsupported("conv1d", kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
    k = _single(kernel_size, "kernel_size")
    s = _single(strides, "strides")
    d = _single(dilation_rate, "dilation_rate")
    _rank3(inputs, "conv1d")
    channels = inputs.shape[-1]
    if channels is None:
        raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
    scope = name or _unique_scope("conv1d")
    with variable_scope(scope, reuse=reuse):
        kernel = get_variable("kernel", [k, channels, int(filters)], dtype=inputs.dtype,
                              initializer=kernel_initializer, regularizer=kernel_regularizer,
                              trainable=trainable)
        outputs = squeeze(nn_conv2d(expand_dims(inputs, 1), expand_dims(kernel, 0),
                                    [1, 1, s, 1], _padding(padding), dilations=[1, 1, d, 1]),
                          [1])
        return _bias_and_activation(outputs, filters, use_bias, bias_initializer,
                                    bias_regularizer, trainable, activation,
                                    activity_regularizer)


def _pooling1d(op, base, inputs, pool_size, strides, padding, data_format, name):
    from .array_ops import expand_dims, squeeze
    inputs = _as_tensor(inputs, base)
    _channels_last(data_format)
    _rank3(inputs, base)
    p = _single(pool_size, "pool_size")
    s = _single(strides, "strides")
    with name_scope(name or _unique_scope(base)):
        return squeeze(op(expand_dims(inputs, 1), [1, 1, p, 1], [1, 1, s, 1],
                          _padding(padding)), [1])


def max_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                  name=None):
    """tf.layers.max_pooling1d: the maximum of each pool_size window of [batch, width,
    channels] inputs."""
    from .nn import max_pool
    return _pooling1d(max_pool, "max_pooling1d", inputs, pool_size, strides, padding,
                      data_format, name)


def average_pooling1d(inputs, pool_size, strides, padding="valid", data_format="channels_last",
                      name=None):
    """tf.layers.average_pooling1d: the mean of each pool_size window."""
    from .nn import avg_pool
    return _pooling1d(avg_pool, "average_pooling1d", inputs, pool_size, strides, padding,
                      data_format, name)
