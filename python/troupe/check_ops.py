"""Checks that fail a step, as TensorFlow 1.x's check_ops and numerics: tf.assert_equal and its
companions (an Assert op on the element-wise condition, with TensorFlow's messages),
tf.assert_rank and tf.assert_type (checked when the graph is built where the rank or dtype is
known), tf.check_numerics (a CheckNumerics op), tf.verify_tensor_all_finite and
tf.add_check_numerics_ops. The comparisons take the run-time values: unlike TensorFlow, two
constants that fail are not refused while the graph is built, but when the check runs."""

from . import dtypes as _dtypes
from .control_flow_ops import Assert
from .framework import (Tensor, control_dependencies, convert_to_tensor, get_default_graph,
                        name_scope)
from .ops import _make, equal, greater, greater_equal, group, identity, less, less_equal, \
    no_op, not_equal

_FLOATS = (_dtypes.float32, _dtypes.float64)


def _binary_assert(compare, symbol, default_name, x, y, data, summarize, message, name):
    from .math_ops import reduce_all
    with name_scope(name, default_name, [x, y]):
        x = convert_to_tensor(x, name="x")
        y = convert_to_tensor(y, name="y", dtype=x.dtype)
        if data is None:
            data = [message or "", "Condition x %s y did not hold element-wise:" % symbol,
                    "x (%s) = " % x.name, x, "y (%s) = " % y.name, y]
        return Assert(reduce_all(compare(x, y)), data, summarize=summarize)


def assert_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert(equal, "==", "assert_equal", x, y, data, summarize, message, name)


def assert_none_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert(not_equal, "!=", "assert_none_equal", x, y, data, summarize, message,
                          name)


def assert_less(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert(less, "<", "assert_less", x, y, data, summarize, message, name)


def assert_less_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert(less_equal, "<=", "assert_less_equal", x, y, data, summarize, message,
                          name)


def assert_greater(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert(greater, ">", "assert_greater", x, y, data, summarize, message, name)


def assert_greater_equal(x, y, data=None, summarize=None, message=None, name=None):
    return _binary_assert(greater_equal, ">=", "assert_greater_equal", x, y, data, summarize,
                          message, name)


def _sign_assert(compare, symbol, default_name, x, data, summarize, message, name):
    from .math_ops import reduce_all
    with name_scope(name, default_name, [x]):
        x = convert_to_tensor(x, name="x")
        zero = convert_to_tensor(0, dtype=x.dtype)
        if data is None:
            data = [message or "", "Condition x %s 0 did not hold element-wise:" % symbol,
                    "x (%s) = " % x.name, x]
        return Assert(reduce_all(compare(x, zero)), data, summarize=summarize)


def assert_positive(x, data=None, summarize=None, message=None, name=None):
    return _sign_assert(greater, ">", "assert_positive", x, data, summarize, message, name)


def assert_negative(x, data=None, summarize=None, message=None, name=None):
    return _sign_assert(less, "<", "assert_negative", x, data, summarize, message, name)


def assert_non_negative(x, data=None, summarize=None, message=None, name=None):
    return _sign_assert(greater_equal, ">=", "assert_non_negative", x, data, summarize, message,
                        name)


def assert_non_positive(x, data=None, summarize=None, message=None, name=None):
    return _sign_assert(less_equal, "<=", "assert_non_positive", x, data, summarize, message,
                        name)


def assert_rank(x, rank, data=None, summarize=None, message=None, name=None):
    """ValueError now where x's rank is known and differs; else an Assert on tf.rank(x)."""
    from .array_ops import rank as _rank
    with name_scope(name, "assert_rank", [x]):
        x = convert_to_tensor(x, name="x")
        if not isinstance(rank, Tensor) and x.shape.ndims is not None:
            if x.shape.ndims != int(rank):
                raise ValueError("%s.  Tensor %s must have rank %d.  Received rank %d, shape %s"
                                 % (message or "", x.name, int(rank), x.shape.ndims, x.shape))
            return no_op(name="static_checks_determined_all_ok")
        rank = convert_to_tensor(rank, dtype=_dtypes.int32)
        if data is None:
            data = [message or "", "Tensor %s must have rank" % x.name, rank,
                    "Received shape: ", _make("Shape", [x], {}).outputs[0]]
        return Assert(equal(_rank(x), rank), data, summarize=summarize)


def assert_type(tensor, tf_type, message=None, name=None):
    """TypeError now unless `tensor` has dtype `tf_type`; else a no-op."""
    with name_scope(name, "assert_type", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.dtype != _dtypes.as_dtype(tf_type):
            raise TypeError("%s  %s must be of type %s" % (message or "", tensor.name,
                                                           _dtypes.as_dtype(tf_type).name))
        return no_op("statically_determined_correct_type")


def check_numerics(tensor, message, name=None):
    """`tensor`, checked at run time: NaN or Inf in it fails the step with
    InvalidArgumentError "<message> : Tensor had NaN values" (Inf, NaN and Inf)."""
    tensor = convert_to_tensor(tensor)
    return _make("CheckNumerics", [tensor], {"message": message},
                 name=name or "CheckNumerics").outputs[0]


def verify_tensor_all_finite(t, msg, name=None):
    """`t`, once check_numerics(t, msg) has passed."""
    with name_scope(name, "VerifyFinite", [t]):
        t = convert_to_tensor(t, name="t")
        with control_dependencies([check_numerics(t, msg)]):
            return identity(t)


def add_check_numerics_ops():
    """A check_numerics of every float32 and float64 output in the default graph (not the
    variables themselves, whose reads are checked where they are used), grouped into one op
    that runs them all."""
    checks = []
    for op in get_default_graph().get_operations():
        if op.type in ("CheckNumerics", "Switch", "Merge", "VariableV2", "Variable"):
            continue
        for output in op.outputs:
            if output.dtype in _FLOATS:
                message = op.name + ":" + str(output.value_index)
                checks.append(check_numerics(output, message))
    return group(*checks) if checks else no_op()


def assert_integer(x, message=None, name=None):
    """TypeError now unless x has an integer dtype; else a no-op."""
    with name_scope(name, "assert_integer", [x]):
        x = convert_to_tensor(x, name="x")
        if not x.dtype.is_integer:
            raise TypeError("%sExpected Tensor %s to be of integer type, got %s."
                            % ((message + " ") if message else "", x.name, x.dtype.name))
        return no_op("statically_determined_was_integer")


def assert_scalar(tensor, name=None):
    """`tensor`, after a ValueError now if its shape is known and not a scalar's."""
    with name_scope(name, "assert_scalar", [tensor]):
        tensor = convert_to_tensor(tensor, name="tensor")
        if tensor.shape.ndims is None:
            raise ValueError("Expected scalar shape for %s, saw unknown shape." % tensor.name)
        if tensor.shape.ndims != 0:
            raise ValueError("Expected scalar shape for %s, saw shape: %s."
                             % (tensor.name, tensor.shape))
        return tensor
