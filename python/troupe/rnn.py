"""tf.nn.dynamic_rnn and tf.nn.static_rnn, as TensorFlow 1.x defines them. dynamic_rnn runs
the cell in a tf.while_loop over the time steps (troupe's functional loop: one While node, its
body a function of the graph; the gradient reruns the loop, docs/python.md): each step's
output is written into a [time, batch, output_size] tensor with TensorScatterUpdate, so no
TensorArray is needed. With sequence_length, a sequence's outputs past its length are zeros
and its state stops changing, as TensorFlow's. static_rnn unrolls the cell over a list of
inputs."""

from . import dtypes as _dtypes
from .framework import Tensor, convert_to_tensor
from .rnn_cell import RNNCell, _flatten, _pack_like, _prepare_loop, _set_step
from .variables import get_variable_scope, variable_scope


def _check_cell(cell, what):
    if not isinstance(cell, RNNCell):
        raise TypeError("%s: cell must be an instance of RNNCell, got %r" % (what, cell))


def _sequence_length(sequence_length, what):
    if sequence_length is None:
        return None
    from .ops import cast
    length = sequence_length if isinstance(sequence_length, Tensor) else \
        convert_to_tensor(sequence_length)
    if length.shape.ndims not in (None, 1):
        raise ValueError("sequence_length must be a vector of length batch_size, but saw shape: "
                         "%s" % length.shape)
    if not length.dtype.is_integer:
        raise TypeError("%s: sequence_length must be int32 or int64, got %s"
                        % (what, length.dtype.name))
    return cast(length, _dtypes.int32)


def _initial_state(cell, initial_state, batch_size, dtype, what):
    if initial_state is not None:
        return initial_state
    if dtype is None:
        raise ValueError("If there is no initial_state, you must give a dtype.")
    return cell.zero_state(batch_size, dtype)


def _masked(alive, new, old):
    """new where the sequence is alive (a [batch] bool), old where it has ended."""
    from .ops import where
    return where(alive, new, old)


def _copy_through(alive, new, old):
    """A state past a sequence's end keeps its old value, as TensorFlow's; a TensorArray or a
    scalar (an AttentionWrapper's time) goes on as the step made it."""
    from .tensor_array_ops import TensorArray
    if isinstance(new, TensorArray) or (isinstance(new, Tensor) and new.shape.ndims == 0):
        return new
    return _masked(alive, new, old)


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """Runs `cell` over the time steps of `inputs` ([batch, time, depth], or [time, batch,
    depth] with time_major). Returns (outputs of the same major order with output_size as
    depth, the final state)."""
    from .array_ops import expand_dims, transpose
    from .control_flow_ops import while_loop
    from .ops import gather, less, reshape, shape, zeros, zeros_like
    from .sparse_ops import tensor_scatter_update
    _check_cell(cell, "dynamic_rnn")
    if isinstance(inputs, (list, tuple)):
        raise TypeError("dynamic_rnn: nested inputs are not supported by troupe; pass one "
                        "tensor [batch, time, depth]")
    inputs = inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs)
    if inputs.shape.ndims is not None and inputs.shape.ndims != 3:
        raise ValueError("dynamic_rnn: inputs must be of rank 3, [batch, time, depth] (or "
                         "[time, batch, depth] with time_major), got shape %s" % inputs.shape)
    length = _sequence_length(sequence_length, "dynamic_rnn")
    with variable_scope(scope or "rnn"):
        steps_first = inputs if time_major else transpose(inputs, [1, 0, 2])
        dims = steps_first.shape.as_list() if steps_first.shape.ndims is not None else \
            [None, None, None]
        time_steps = dims[0] if dims[0] is not None else shape(steps_first)[0]
        batch = dims[1] if dims[1] is not None else shape(steps_first)[1]
        state = _initial_state(cell, initial_state, batch, dtype, "dynamic_rnn")
        from .tensor_array_ops import TensorArray
        # TensorArrays (an AttentionWrapper's alignment history) are loop variables as they are.
        flat_state = [s if isinstance(s, (Tensor, TensorArray)) else convert_to_tensor(s)
                      for s in _flatten(state)]
        state_dtype = next((s.dtype for s in flat_state if isinstance(s, Tensor)), None)
        # A cell that overrides __call__ makes its variables with get_variable when called: once
        # here (the result is never run), then reused inside the loop.
        custom_call = type(cell).__call__ is not RNNCell.__call__
        loop_scope = get_variable_scope()
        if custom_call:
            cell(gather(steps_first, 0), state)
        else:
            cell._ensure_built(dims[2], state_dtype)
        out_dtype = state_dtype
        outputs = zeros([time_steps, batch, cell.output_size], dtype=out_dtype)
        prepared = _prepare_loop(cell, time_steps, batch, dims[2], out_dtype)

        def body(t, acc, *flat):
            x_t = gather(steps_first, t)
            _set_step(prepared, t)
            try:
                if custom_call:
                    with variable_scope(loop_scope, reuse=True):
                        out, new_state = cell(x_t, _pack_like(state, list(flat))[0])
                else:
                    out, new_state = cell(x_t, _pack_like(state, list(flat))[0])
            finally:
                _set_step(prepared, None)
            new_flat = _flatten(new_state)
            if length is not None:
                alive = less(t, length)
                out = _masked(alive, out, zeros_like(out))
                new_flat = [_copy_through(alive, n, o) for n, o in zip(new_flat, flat)]
            acc = tensor_scatter_update(acc, reshape(t, [1, 1]), expand_dims(out, 0))
            return [t + 1, acc] + list(new_flat)

        from .ops import constant
        # The outputs are written, never read, by the body: the loop's gradient need not
        # record them (O(time) memory, not O(time^2)).
        results = while_loop(lambda t, *rest: less(t, time_steps), body,
                             [constant(0, name="time"), outputs] + flat_state,
                             parallel_iterations=parallel_iterations or 32,
                             swap_memory=swap_memory, _unstacked=(1,))
        outputs = results[1]
        outputs.set_shape([dims[0], dims[1], cell.output_size])
        for result, initial in zip(results[2:], flat_state):
            if isinstance(initial, Tensor):
                result.set_shape(initial.shape)
        final_state = _pack_like(state, list(results[2:]))[0]
        if not time_major:
            outputs = transpose(outputs, [1, 0, 2])
        return outputs, final_state


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """Runs `cell` over a list of [batch, depth] inputs, unrolled: (the list of outputs, the
    final state)."""
    from .ops import zeros_like
    _check_cell(cell, "static_rnn")
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("inputs must be a sequence")
    if not inputs:
        raise ValueError("inputs must not be empty")
    inputs = [x if isinstance(x, Tensor) else convert_to_tensor(x) for x in inputs]
    length = _sequence_length(sequence_length, "static_rnn")
    with variable_scope(scope or "rnn") as varscope:
        from .ops import shape
        first = inputs[0]
        batch = first.shape[0] if first.shape.ndims is not None and \
            first.shape[0] is not None else shape(first)[0]
        state = _initial_state(cell, initial_state, batch, dtype, "static_rnn")
        outputs = []
        for t, x in enumerate(inputs):
            if t > 0:  # a cell that calls get_variable finds the first step's, as TensorFlow's
                varscope.reuse_variables()
            out, new_state = cell(x, state)
            if length is not None:
                from .ops import less
                alive = less(t, length)
                out = _masked(alive, out, zeros_like(out))
                new_state = _pack_like(state, [_copy_through(alive, n, o) for n, o in
                                               zip(_flatten(new_state), _flatten(state))])[0]
            outputs.append(out)
            state = new_state
        return outputs, state


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False, time_major=False,
                              scope=None):
    """A forward dynamic_rnn over `inputs` and a backward one over each sequence reversed
    (reverse_sequence by sequence_length, else the whole time axis), as TensorFlow's: returns
    ((output_fw, output_bw), (output_state_fw, output_state_bw)), output_bw in the inputs'
    order. Variables under "bidirectional_rnn/fw/..." and ".../bw/..."."""
    from .array_ops import reverse, reverse_sequence
    _check_cell(cell_fw, "bidirectional_dynamic_rnn")
    _check_cell(cell_bw, "bidirectional_dynamic_rnn")
    time_axis, batch_axis = (0, 1) if time_major else (1, 0)

    def reversed_(value):
        if sequence_length is not None:
            return reverse_sequence(value, sequence_length, seq_axis=time_axis,
                                    batch_axis=batch_axis)
        return reverse(value, [time_axis])

    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = dynamic_rnn(
                cell_fw, inputs, sequence_length, initial_state_fw, dtype, parallel_iterations,
                swap_memory, time_major, scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            inputs = inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs)
            output, state_bw = dynamic_rnn(
                cell_bw, reversed_(inputs), sequence_length, initial_state_bw, dtype,
                parallel_iterations, swap_memory, time_major, scope=bw_scope)
        return (output_fw, reversed_(output)), (state_fw, state_bw)


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None):
    """static_rnn forward over `inputs` (a list of [batch, depth]) and backward over each
    sequence reversed, as TensorFlow's: returns (outputs, output_state_fw, output_state_bw),
    each output the forward and backward outputs of its step concatenated."""
    from .array_ops import concat, reverse_sequence, unstack
    from .ops import stack
    _check_cell(cell_fw, "static_bidirectional_rnn")
    _check_cell(cell_bw, "static_bidirectional_rnn")
    if not isinstance(inputs, (list, tuple)):
        raise TypeError("inputs must be a list")
    if not inputs:
        raise ValueError("inputs must not be empty")

    def reversed_(steps):
        if sequence_length is None:
            return list(reversed(steps))
        return unstack(reverse_sequence(stack(steps), sequence_length, seq_axis=0,
                                        batch_axis=1))

    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw") as fw_scope:
            output_fw, state_fw = static_rnn(cell_fw, inputs, initial_state_fw, dtype,
                                             sequence_length, scope=fw_scope)
        with variable_scope("bw") as bw_scope:
            steps = [x if isinstance(x, Tensor) else convert_to_tensor(x) for x in inputs]
            output, state_bw = static_rnn(cell_bw, reversed_(steps), initial_state_bw, dtype,
                                          sequence_length, scope=bw_scope)
        output_bw = reversed_(output)
        outputs = [concat([fw, bw], 1) for fw, bw in zip(output_fw, output_bw)]
        return outputs, state_fw, state_bw
