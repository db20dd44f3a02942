"""The graph a Python function is traced into, to run as a function of the graph: the bodies
of Dataset.map/filter/flat_map/interleave and of tf.while_loop (devices/graph_function.hpp).

Its _Arg nodes are the function's arguments; tensors of an enclosing graph that the function
uses are captured (see ops._input): each becomes one more _Arg, after the arguments, and the
node that runs the function passes the outer tensor in that place. A function traced inside
another one's tracing (a while_loop in a while_loop's body) captures through it."""

from . import _troupe
from . import ops as _ops
from .framework import Graph


def shape_attr(shape):
    """A TensorShape as a shape attribute: None for an unknown rank, else its dims."""
    return None if shape.ndims is None else shape.as_list()


class FunctionGraph(Graph):
    _is_function = True
    # While a loop's body is traced again for its gradient: the record of the first run's
    # random draws, which take the place of the random ops the body makes (control_flow_ops).
    _replay = None
    # The first random op a function nested in this one made (a loop's body in this body):
    # this function's loop cannot replay it for its gradient.
    _nested_draws = None

    def __init__(self, outer, first_capture_index):
        super().__init__()
        self.seed = outer.seed
        self._outer = outer
        self._next_index = first_capture_index
        self._captures = []  # outer tensors, in _Arg order
        self._captured = {}  # outer tensor -> its _Arg tensor here

    def arg(self, index, dtype, shape, name):
        """The function's argument `index`: an _Arg node of `dtype` and `shape`."""
        return _ops._make("_Arg", [], {"T": dtype.as_datatype_enum, "index": index,
                                       "shape": shape_attr(shape)},
                          name=name, graph=self).outputs[0]

    def retval(self, tensor, index, allow_dead=False):
        """Makes `tensor` the function's result `index` (allow_dead: it may be in the branch of
        a cond not taken; the caller then gets no value there)."""
        attrs = {"index": index, "allow_dead": True} if allow_dead else {"index": index}
        _ops._make("_Retval", [tensor], attrs, name="result_%d" % index, graph=self)

    def _replayed_draw(self, op_type, name):
        """The first run's draw standing for the random op `op_type` being made here, while a
        loop body is traced again for its gradient; None when no body is being replayed."""
        if self._replay is not None:
            return self._replay.next(op_type, name)
        outer = self._outer
        while getattr(outer, "_is_function", False):
            if outer._nested_draws is None:
                outer._nested_draws = op_type
            outer = outer._outer
        return None

    def serialize(self):
        return _troupe.serialize_graph(self._root)

    def _capture(self, tensor):
        if tensor.graph is not self._outer:
            if getattr(self._outer, "_is_function", False):
                tensor = self._outer._capture(tensor)  # through the enclosing function
            else:
                raise ValueError("Tensor %s is from a graph that is neither the function's nor "
                                 "the one the function is built in" % tensor.name)
        if tensor not in self._captured:
            with self._push(self._root, ""):
                arg = self.arg(self._next_index, tensor.dtype, tensor.shape,
                               "captured_%d" % len(self._captures))
            self._next_index += 1
            self._captures.append(tensor)
            self._captured[tensor] = arg
        return self._captured[tensor]
