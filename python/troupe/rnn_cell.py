"""tf.nn.rnn_cell: the recurrent cells of TensorFlow 1.x (BasicRNNCell, BasicLSTMCell, LSTMCell,
GRUCell, MultiRNNCell, LSTMStateTuple) with TensorFlow's variables, names and formulas. A cell
makes its variables the first time it is called (or built by dynamic_rnn), under the variable
scope of that call and its own name ("basic_lstm_cell", "basic_lstm_cell_1", ...), and reuses
them on every later call: `rnn/basic_lstm_cell/kernel` of shape [input_depth + num_units,
4 * num_units] and `.../bias`, as in TensorFlow, so checkpoints name them alike."""

import collections

from . import dtypes as _dtypes
from .framework import Tensor, convert_to_tensor, name_scope
from .variables import constant_initializer, get_variable, variable_scope, zeros_initializer


class LSTMStateTuple(collections.namedtuple("LSTMStateTuple", ("c", "h"))):
    """The state of an LSTM cell: the cell state c and the output h."""
    __slots__ = ()

    @property
    def dtype(self):
        if self.c.dtype != self.h.dtype:
            raise TypeError("Inconsistent internal state: %s vs %s"
                            % (self.c.dtype, self.h.dtype))
        return self.c.dtype


def _flatten(structure):
    if isinstance(structure, (list, tuple)):
        return [t for part in structure for t in _flatten(part)]
    return [structure]


def _pack_like(structure, flat):
    """`flat` (a list) in the nesting of `structure`; returns (packed, rest)."""
    if isinstance(structure, (list, tuple)):
        parts = []
        for part in structure:
            packed, flat = _pack_like(part, flat)
            parts.append(packed)
        if hasattr(structure, "_fields"):  # a namedtuple: LSTMStateTuple, a wrapper's state
            return type(structure)(*parts), flat
        return type(structure)(parts), flat
    return flat[0], flat[1:]


def _linear(args, kernel, bias):
    """concat(args, 1) @ kernel + bias."""
    from .array_ops import concat
    from .nn import bias_add
    from .ops import matmul
    joined = args[0] if len(args) == 1 else concat(args, 1)
    out = matmul(joined, kernel)
    return out if bias is None else bias_add(out, bias)


class RNNCell:
    """An RNN cell: cell(inputs [batch, depth], state) -> (output, new_state). A cell of your
    own, as in TensorFlow, gives state_size, output_size and call(inputs, state), and may make
    its variables in build(inputs_shape) with add_variable (or add_weight); or it overrides
    __call__ and makes them with get_variable."""

    _base_name = "rnn_cell"

    def __init__(self, name=None, dtype=None, reuse=None, trainable=True):
        self._name = name
        self._dtype = _dtypes.as_dtype(dtype) if dtype is not None else None
        self._reuse = reuse
        self._trainable = trainable
        self._built = False
        self._variables = []
        self._scope_name = None

    @property
    def state_size(self):
        raise NotImplementedError

    @property
    def output_size(self):
        raise NotImplementedError

    @property
    def name(self):
        return self._scope_name.split("/")[-1] if self._scope_name else self._name

    @property
    def variables(self):
        return list(self._variables)

    trainable_variables = property(lambda self: list(self._variables) if self._trainable
                                   else [])
    weights = variables
    trainable_weights = trainable_variables

    def zero_state(self, batch_size, dtype):
        """Zeros of [batch_size, size] for each part of state_size, nested as it is."""
        from .ops import zeros
        dtype = _dtypes.as_dtype(dtype)

        def zeros_of(size):
            if isinstance(size, (list, tuple)):
                parts = [zeros_of(s) for s in size]
                return LSTMStateTuple(*parts) if isinstance(size, LSTMStateTuple) else \
                    type(size)(parts)
            zero = zeros([batch_size, size], dtype=dtype)
            if isinstance(batch_size, Tensor):  # the batch is known when running
                zero.set_shape([None, size])
            return zero
        with name_scope(None, "%sZeroState" % type(self).__name__):
            return zeros_of(self.state_size)

    def _variable(self, name, shape, dtype, initializer=None, trainable=None):
        trainable = self._trainable if trainable is None else trainable
        v = get_variable(name, shape, dtype=dtype, initializer=initializer, trainable=trainable)
        self._variables.append(v)
        return v

    def add_variable(self, name, shape, dtype=None, initializer=None, regularizer=None,
                     trainable=True, **unused):
        """A variable of this cell, for build(): under the cell's scope."""
        if regularizer is not None:
            raise ValueError("add_variable(regularizer=...) is not supported by troupe's cells")
        return self._variable(name, shape, _dtypes.as_dtype(dtype or self._build_dtype),
                              initializer, trainable)

    add_weight = add_variable

    # What a subclass in TensorFlow's style defines: build(inputs_shape), call(inputs, state).
    def _build(self, depth, dtype):
        build = getattr(self, "build", None)
        if build is not None:
            from .framework import TensorShape
            build(TensorShape([None, depth]))

    def _step(self, inputs, state):
        call = getattr(self, "call", None)
        if call is None:
            raise NotImplementedError("%s must define call(inputs, state)" % type(self).__name__)
        return call(inputs, state)

    def _ensure_built(self, input_depth, dtype, scope=None):
        """Makes the variables under the current variable scope and this cell's name (or, as
        TensorFlow's cells, directly in `scope` when the first call names one)."""
        if self._built:
            return
        from .layers import _unique_scope
        if input_depth is None:
            raise ValueError("The last dimension of the inputs to `%s` should be defined. "
                             "Found `None`." % type(self).__name__)
        dtype = self._dtype or dtype
        self._build_dtype = dtype
        if not dtype.is_floating:
            raise ValueError("%s: the inputs must be floating point, got %s"
                             % (type(self).__name__, dtype.name))
        with variable_scope(scope or self._name or _unique_scope(self._base_name),
                            reuse=self._reuse) as opened:
            self._scope_name = opened.name
            self._build(int(input_depth), dtype)
        self._built = True

    def __call__(self, inputs, state, scope=None):
        inputs = inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs)
        if inputs.shape.ndims is not None and inputs.shape.ndims != 2:
            raise ValueError("%s: inputs must be of rank 2 [batch, depth], got shape %s"
                             % (type(self).__name__, inputs.shape))
        if not self._built:
            depth = inputs.shape[-1] if inputs.shape.ndims is not None else None
            self._ensure_built(depth, inputs.dtype, scope)
        with name_scope(self.name):
            return self._step(inputs, state)


class BasicRNNCell(RNNCell):
    """output = new_state = activation(concat([inputs, state]) @ kernel + bias)."""

    _base_name = "basic_rnn_cell"

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(name, dtype, reuse, **kwargs)
        self._num_units = int(num_units)
        self._activation = activation

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def _build(self, depth, dtype):
        self._kernel = self._variable("kernel", [depth + self._num_units, self._num_units], dtype)
        self._bias = self._variable("bias", [self._num_units], dtype, zeros_initializer())

    def _step(self, inputs, state):
        from .ops import tanh
        out = (self._activation or tanh)(_linear([inputs, state], self._kernel, self._bias))
        return out, out


class BasicLSTMCell(RNNCell):
    """TensorFlow's BasicLSTMCell: gates i, j, f, o = split(concat([x, h]) @ kernel + bias, 4);
    c' = c * sigmoid(f + forget_bias) + sigmoid(i) * activation(j);
    h' = activation(c') * sigmoid(o). The state is LSTMStateTuple(c, h) (or their
    concatenation with state_is_tuple=False)."""

    _base_name = "basic_lstm_cell"

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None, **kwargs):
        super().__init__(name, dtype, reuse, **kwargs)
        self._num_units = int(num_units)
        self._forget_bias = float(forget_bias)
        self._state_is_tuple = state_is_tuple
        self._activation = activation

    @property
    def state_size(self):
        n = self._num_units
        return LSTMStateTuple(n, n) if self._state_is_tuple else 2 * n

    output_size = property(lambda self: self._num_units)

    def _build(self, depth, dtype):
        n = self._num_units
        self._kernel = self._variable("kernel", [depth + n, 4 * n], dtype)
        self._bias = self._variable("bias", [4 * n], dtype, zeros_initializer())

    def _split_state(self, state):
        from .array_ops import split
        if self._state_is_tuple:
            return state
        return split(state, 2, axis=1)

    def _step(self, inputs, state):
        from .array_ops import concat, split
        from .ops import sigmoid, tanh
        act = self._activation or tanh
        c, h = self._split_state(state)
        i, j, f, o = split(_linear([inputs, h], self._kernel, self._bias), 4, axis=1)
        new_c = c * sigmoid(f + self._forget_bias) + sigmoid(i) * act(j)
        new_h = act(new_c) * sigmoid(o)
        new_state = LSTMStateTuple(new_c, new_h) if self._state_is_tuple else \
            concat([new_c, new_h], 1)
        return new_h, new_state


class LSTMCell(BasicLSTMCell):
    """TensorFlow's LSTMCell: BasicLSTMCell's gates with an `initializer` for the kernel, and
    optionally peepholes (w_f_diag, w_i_diag, w_o_diag), cell_clip, a projection of the output
    to num_proj units (projection/kernel) and proj_clip. State LSTMStateTuple(c, m)."""

    _base_name = "lstm_cell"

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, num_unit_shards=None, num_proj_shards=None,
                 forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None, **kwargs):
        super().__init__(num_units, forget_bias, state_is_tuple, activation, reuse, name, dtype,
                         **kwargs)
        if num_unit_shards is not None or num_proj_shards is not None:
            raise ValueError("LSTMCell: num_unit_shards and num_proj_shards are deprecated and "
                             "not supported by troupe; use a partitioner")
        self._use_peepholes = use_peepholes
        self._cell_clip = cell_clip
        self._initializer = initializer
        self._num_proj = int(num_proj) if num_proj is not None else None
        self._proj_clip = proj_clip

    @property
    def state_size(self):
        n, out = self._num_units, self._num_proj or self._num_units
        return LSTMStateTuple(n, out) if self._state_is_tuple else n + out

    output_size = property(lambda self: self._num_proj or self._num_units)

    def _build(self, depth, dtype):
        n = self._num_units
        self._kernel = self._variable("kernel", [depth + (self._num_proj or n), 4 * n], dtype,
                                      self._initializer)
        self._bias = self._variable("bias", [4 * n], dtype, zeros_initializer())
        if self._use_peepholes:
            self._w_f = self._variable("w_f_diag", [n], dtype, self._initializer)
            self._w_i = self._variable("w_i_diag", [n], dtype, self._initializer)
            self._w_o = self._variable("w_o_diag", [n], dtype, self._initializer)
        if self._num_proj is not None:
            with variable_scope("projection"):
                self._projection = self._variable("kernel", [n, self._num_proj], dtype,
                                                  self._initializer)

    def _split_state(self, state):
        from .array_ops import slice as slice_
        if self._state_is_tuple:
            return state
        n = self._num_units
        return slice_(state, [0, 0], [-1, n]), slice_(state, [0, n], [-1, -1])

    def _step(self, inputs, state):
        from .array_ops import concat, split
        from .ops import clip_by_value, matmul, sigmoid, tanh
        act = self._activation or tanh
        c, m = self._split_state(state)
        i, j, f, o = split(_linear([inputs, m], self._kernel, self._bias), 4, axis=1)
        if self._use_peepholes:
            new_c = sigmoid(f + self._forget_bias + self._w_f * c) * c + \
                sigmoid(i + self._w_i * c) * act(j)
        else:
            new_c = sigmoid(f + self._forget_bias) * c + sigmoid(i) * act(j)
        if self._cell_clip is not None:
            new_c = clip_by_value(new_c, -self._cell_clip, self._cell_clip)
        if self._use_peepholes:
            new_m = sigmoid(o + self._w_o * new_c) * act(new_c)
        else:
            new_m = sigmoid(o) * act(new_c)
        if self._num_proj is not None:
            new_m = matmul(new_m, self._projection)
            if self._proj_clip is not None:
                new_m = clip_by_value(new_m, -self._proj_clip, self._proj_clip)
        new_state = LSTMStateTuple(new_c, new_m) if self._state_is_tuple else \
            concat([new_c, new_m], 1)
        return new_m, new_state


class GRUCell(RNNCell):
    """TensorFlow's GRUCell: r, u = split(sigmoid(concat([x, h]) @ gates/kernel + gates/bias));
    c = activation(concat([x, r * h]) @ candidate/kernel + candidate/bias);
    h' = u * h + (1 - u) * c. The gates' bias starts at 1.0 unless bias_initializer says."""

    _base_name = "gru_cell"

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None, **kwargs):
        super().__init__(name, dtype, reuse, **kwargs)
        self._num_units = int(num_units)
        self._activation = activation
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer

    state_size = property(lambda self: self._num_units)
    output_size = property(lambda self: self._num_units)

    def _build(self, depth, dtype):
        n = self._num_units
        with variable_scope("gates"):
            self._gate_kernel = self._variable("kernel", [depth + n, 2 * n], dtype,
                                               self._kernel_initializer)
            self._gate_bias = self._variable(
                "bias", [2 * n], dtype, self._bias_initializer or constant_initializer(1.0))
        with variable_scope("candidate"):
            self._candidate_kernel = self._variable("kernel", [depth + n, n], dtype,
                                                    self._kernel_initializer)
            self._candidate_bias = self._variable(
                "bias", [n], dtype, self._bias_initializer or zeros_initializer())

    def _step(self, inputs, state):
        from .array_ops import split
        from .ops import sigmoid, tanh
        r, u = split(sigmoid(_linear([inputs, state], self._gate_kernel, self._gate_bias)), 2,
                     axis=1)
        c = (self._activation or tanh)(
            _linear([inputs, r * state], self._candidate_kernel, self._candidate_bias))
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class MultiRNNCell(RNNCell):
    """Cells stacked: each cell's output is the next one's input; the state is the tuple of
    theirs. Each cell's variables are under "multi_rnn_cell/cell_<i>/"."""

    _base_name = "multi_rnn_cell"

    def __init__(self, cells, state_is_tuple=True):
        super().__init__()
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not state_is_tuple:
            raise ValueError("MultiRNNCell: state_is_tuple=False is deprecated and not supported "
                             "by troupe")
        self._cells = list(cells)

    state_size = property(lambda self: tuple(c.state_size for c in self._cells))
    output_size = property(lambda self: self._cells[-1].output_size)

    def zero_state(self, batch_size, dtype):
        """Each cell's own zero state (an AttentionWrapper's included), as TensorFlow's."""
        with name_scope(None, "MultiRNNCellZeroState"):
            return tuple(cell.zero_state(batch_size, dtype) for cell in self._cells)

    def _build(self, depth, dtype):
        for i, cell in enumerate(self._cells):
            with variable_scope("cell_%d" % i):
                cell._ensure_built(depth, dtype)
            depth = cell.output_size
            self._variables.extend(cell.variables)

    def _step(self, inputs, state):
        if not isinstance(state, (list, tuple)) or len(state) != len(self._cells):
            raise ValueError("Expected state to be a tuple of length %d, but received: %s"
                             % (len(self._cells), state))
        outputs, new_states = inputs, []
        for i, cell in enumerate(self._cells):
            with name_scope("cell_%d" % i):
                outputs, new = cell(outputs, state[i])
            new_states.append(new)
        return outputs, tuple(new_states)


class _Wrapper(RNNCell):
    """A cell around another: its sizes, variables, name, zero state and variables made are
    the wrapped cell's (TensorFlow's wrappers add no variables)."""

    def __init__(self, cell):
        super().__init__()
        if not isinstance(cell, RNNCell):
            raise TypeError("The parameter cell is not a RNNCell.")
        self._cell = cell

    state_size = property(lambda self: self._cell.state_size)
    output_size = property(lambda self: self._cell.output_size)
    variables = property(lambda self: self._cell.variables)
    trainable_variables = property(lambda self: self._cell.trainable_variables)
    name = property(lambda self: self._cell.name)

    def zero_state(self, batch_size, dtype):
        return self._cell.zero_state(batch_size, dtype)

    def _ensure_built(self, input_depth, dtype, scope=None):
        self._cell._ensure_built(input_depth, dtype, scope)


class DropoutWrapper(_Wrapper):
    """Dropout on a cell's inputs, outputs and new state (TensorFlow's DropoutWrapper): each
    element kept with its keep probability (a float in (0, 1] or a scalar tensor, e.g. a
    placeholder switched off for evaluation) and scaled by its inverse. The state of an LSTM
    cell drops only h, never c (TensorFlow's default filter). variational_recurrent=True keeps
    one mask ([1, size], for every batch entry too, as TensorFlow's) for every call. In
    dynamic_rnn the masks of all time steps are drawn before the loop, so the loop's gradient
    (which runs the body again) sees the same ones. Each part's masks have a seed of their own
    derived from `seed`."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        super().__init__(cell)
        if dropout_state_filter_visitor is not None:
            raise ValueError("DropoutWrapper(dropout_state_filter_visitor=...) is not supported "
                             "by troupe")
        for what, value in (("input_keep_prob", input_keep_prob),
                            ("output_keep_prob", output_keep_prob),
                            ("state_keep_prob", state_keep_prob)):
            if isinstance(value, (int, float)) and not 0 < float(value) <= 1:
                raise ValueError("Parameter %s must be between 0 and 1: %s" % (what, value))
        self._keep = {"input": input_keep_prob, "output": output_keep_prob,
                      "state": state_keep_prob}
        self._variational = variational_recurrent
        self._seed = seed
        self._step_masks = None  # {"input": [mask], ...} while dynamic_rnn's body runs
        self._step = None
        self._variational_masks = {}  # (part, index) -> [1, size], with variational_recurrent

    def _active(self, part):
        keep = self._keep[part]
        return isinstance(keep, Tensor) or float(keep) < 1

    def _part_seed(self, part, index):
        """A seed of its own for each part's masks (TensorFlow's _gen_seed): with one seed
        for all, masks of one shape would be the same numbers."""
        if self._seed is None:
            return None
        import hashlib
        digest = hashlib.md5(("%s%s_%d" % (self._seed, part, index)).encode()).hexdigest()
        return int(digest[:8], 16) & 0x7FFFFFFF

    def _mask(self, part, shape, dtype, index=0):
        """floor(keep + U[0, 1)) / keep: 1 / keep with probability keep, else 0."""
        from .ops import cast, floor
        from .random_ops import random_uniform
        keep = self._keep[part]
        keep = keep if isinstance(keep, Tensor) else convert_to_tensor(keep, dtype=dtype)
        if keep.dtype != dtype:
            keep = cast(keep, dtype)
        noise = random_uniform(shape, seed=self._part_seed(part, index), dtype=dtype)
        return floor(keep + noise) / keep

    def _variational_mask(self, part, index, size, dtype):
        """The one mask of a part for every step and every batch entry ([1, size], as
        TensorFlow's variational dropout), drawn at its first use."""
        key = (part, index)
        if key not in self._variational_masks:
            self._variational_masks[key] = self._mask(part, [1, size], dtype, index)
        return self._variational_masks[key]

    def _prepare_loop(self, time_steps, batch, depth, dtype):
        """The masks of every time step of a dynamic_rnn, drawn before its loop."""
        masks = {}
        sizes = {"input": [depth], "output": [self.output_size],
                 "state": self._state_mask_sizes()}
        for part in ("input", "output", "state"):
            if not self._active(part):
                continue
            drawn = []
            for index, size in enumerate(sizes[part]):
                if size is None:
                    drawn.append(None)
                elif self._variational:
                    drawn.append(self._variational_mask(part, index, size, dtype))
                else:
                    drawn.append(self._mask(part, [time_steps, batch, size], dtype, index))
            masks[part] = drawn
        return masks

    def _state_mask_sizes(self):
        """One entry per flat state part: its size, or None where it is not dropped (an LSTM
        state's c)."""
        def sizes(size):
            if isinstance(size, LSTMStateTuple):
                return [None] + sizes(size.h)
            if isinstance(size, (list, tuple)):
                return [s for part in size for s in sizes(part)]
            return [size]
        return sizes(self._cell.state_size)

    def _apply(self, part, value, index=0):
        from .ops import gather, shape
        if not self._active(part):
            return value
        if part == "state" and self._state_mask_sizes()[index] is None:
            return value
        if self._step_masks is not None and self._step is not None:
            mask = self._step_masks[part][index]
            return value * (mask if self._variational else gather(mask, self._step))
        if self._variational:
            size = value.shape[-1] if value.shape.ndims is not None and \
                value.shape[-1] is not None else shape(value)[-1]
            return value * self._variational_mask(part, index, size, value.dtype)
        return value * self._mask(part, shape(value), value.dtype, index)

    def __call__(self, inputs, state, scope=None):
        inputs = inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs)
        inputs = self._apply("input", inputs)
        output, new_state = self._cell(inputs, state, scope)
        if self._active("state"):
            parts = _flatten(new_state)
            parts = [self._apply("state", p, i) for i, p in enumerate(parts)]
            new_state = _pack_like(new_state, parts)[0]
        return self._apply("output", output), new_state


class ResidualWrapper(_Wrapper):
    """A cell whose output is its wrapped cell's output plus its input (or residual_fn(inputs,
    outputs)), as TensorFlow's ResidualWrapper; the state is the wrapped cell's."""

    def __init__(self, cell, residual_fn=None):
        super().__init__(cell)
        self._residual_fn = residual_fn

    def __call__(self, inputs, state, scope=None):
        inputs = inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs)
        outputs, new_state = self._cell(inputs, state, scope)
        if self._residual_fn is not None:
            return self._residual_fn(inputs, outputs), new_state
        if inputs.shape.ndims is not None and outputs.shape.ndims is not None and \
                inputs.shape[-1] is not None and outputs.shape[-1] is not None and \
                inputs.shape[-1] != outputs.shape[-1]:
            raise ValueError("ResidualWrapper: the inputs (%s) and the cell's outputs (%s) "
                             "must have one size" % (inputs.shape, outputs.shape))
        return inputs + outputs, new_state


class DeviceWrapper(_Wrapper):
    """A cell whose ops are placed on `device` (tf.device), as TensorFlow's DeviceWrapper;
    zero_state too. Inside dynamic_rnn's loop every op runs on the loop's own device (troupe's
    loop is one node): there the wrapper places nothing."""

    def __init__(self, cell, device):
        super().__init__(cell)
        self._device = device

    def zero_state(self, batch_size, dtype):
        from .framework import device as device_scope
        with device_scope(self._device):
            return self._cell.zero_state(batch_size, dtype)

    def _ensure_built(self, input_depth, dtype, scope=None):
        # The variables too (a MultiRNNCell builds its cells before calling them).
        from .framework import device as device_scope
        with device_scope(self._device):
            self._cell._ensure_built(input_depth, dtype, scope)

    def __call__(self, inputs, state, scope=None):
        from .framework import device as device_scope, get_default_graph
        if getattr(get_default_graph(), "_is_function", False):
            return self._cell(inputs, state, scope)
        with device_scope(self._device):
            return self._cell(inputs, state, scope)


def _prepare_loop(cell, time_steps, batch, depth, dtype, prepared=None):
    """Lets the cells that draw random numbers (DropoutWrapper) draw those of every step of a
    dynamic_rnn before its loop, the loop's gradient reruns the body and must see the same:
    {wrapper: its masks}."""
    prepared = {} if prepared is None else prepared
    if isinstance(cell, DropoutWrapper):
        prepared[cell] = cell._prepare_loop(time_steps, batch, depth, dtype)
    if isinstance(cell, _Wrapper):
        _prepare_loop(cell._cell, time_steps, batch, depth, dtype, prepared)
    elif isinstance(cell, MultiRNNCell):
        for inner in cell._cells:
            _prepare_loop(inner, time_steps, batch, depth, dtype, prepared)
            depth = inner.output_size
    return prepared


def _set_step(prepared, t):
    """While the body of a dynamic_rnn runs (and again when its gradient reruns it), each
    wrapper reads its prepared masks at step t; with t None, the wrappers draw their own."""
    for wrapper, masks in prepared.items():
        wrapper._step_masks = masks if t is not None else None
        wrapper._step = t
