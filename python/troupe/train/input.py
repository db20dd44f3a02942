"""tf.train's queue-based input pipelines, as TensorFlow 1.x builds them: producers that fill a
queue with file names, indices or slices (string_input_producer, range_input_producer,
slice_input_producer, input_producer, limit_epochs), and batching at the end of a pipeline
(batch, shuffle_batch, batch_join, shuffle_batch_join, and their maybe_ forms, which enqueue
only the elements whose keep_input is true). Each adds a queue to the graph and a
QueueRunner for the threads that fill it (tf.train.start_queue_runners, or a monitored
session, starts them); the end of the input (num_epochs reached, the queue closed) is
OutOfRangeError from the dequeue, which a monitored session and a Coordinator treat as a
clean stop.

match_filenames_once lists the files of a glob once, into a local variable.

Not here yet: SparseTensors in batches."""

import numpy as np

from .. import dtypes as _dtypes
from ..framework import GraphKeys, Tensor, convert_to_tensor, name_scope
from . import queue_runner


def match_filenames_once(pattern, name=None):
    """A local variable holding the names of the files that match `pattern` (a glob, or a list
    of them) when local variables are initialised: the list is computed once, not at every
    step (string_input_producer takes it)."""
    from ..io_ops import matching_files
    from ..variables import Variable
    return Variable(matching_files(pattern), trainable=False, validate_shape=False,
                    collections=[GraphKeys.LOCAL_VARIABLES], name=name or "matching_filenames")


def limit_epochs(tensor, num_epochs=None, name=None):
    """`tensor`, num_epochs times, then OutOfRangeError (a local variable counts the epochs)."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError("num_epochs must be > 0 not %d." % num_epochs)
    from ..ops import control_dependencies, identity
    from ..variables import Variable
    with name_scope(name, "limit_epochs", [tensor]):
        epochs = Variable(np.int64(0), name="epochs", trainable=False,
                          collections=[GraphKeys.LOCAL_VARIABLES])
        counter = epochs.count_up_to(num_epochs)
        with control_dependencies([counter]):
            return identity(tensor)


def input_producer(input_tensor, element_shape=None, num_epochs=None, shuffle=True, seed=None,
                   capacity=32, shared_name=None, summary_name=None, name=None, cancel_op=None):
    """A FIFOQueue filled with the rows of `input_tensor` (shuffled each epoch when `shuffle`),
    num_epochs times (forever if None), by a QueueRunner."""
    from ..ops import FIFOQueue, cast
    from ..random_ops import random_shuffle
    from .. import summary
    with name_scope(name, "input_producer", [input_tensor]):
        input_tensor = input_tensor if isinstance(input_tensor, Tensor) else \
            convert_to_tensor(input_tensor, name="input_tensor")
        dims = input_tensor.shape.dims
        if dims is not None and not dims:
            raise ValueError("input_producer: input_tensor must have rank >= 1 (its rows are "
                             "the elements), got a scalar %s" % input_tensor)
        known = None if dims is None else dims[1:]
        if element_shape is not None:
            given = [None if d is None else int(d) for d in element_shape]
            if known is not None and (len(known) != len(given) or any(
                    a is not None and b is not None and a != b for a, b in zip(known, given))):
                raise ValueError("element_shape %s is not compatible with the rows of %s"
                                 % (given, input_tensor))
            known = given if known is None else \
                [b if a is None else a for a, b in zip(known, given)]
        if known is None or any(d is None for d in known):
            raise ValueError("Either `input_tensor` must have a fully defined shape or "
                             "`element_shape` must be specified")
        if shuffle:
            input_tensor = random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        q = FIFOQueue(capacity=capacity, dtypes=[input_tensor.dtype], shapes=[known],
                      shared_name=shared_name)
        enq = q.enqueue_many([input_tensor])
        queue_runner.add_queue_runner(queue_runner.QueueRunner(q, [enq], cancel_op=cancel_op))
        if summary_name is not None:
            summary.scalar(summary_name, cast(q.size(), _dtypes.float32) * (1. / capacity))
        return q


def string_input_producer(string_tensor, num_epochs=None, shuffle=True, seed=None, capacity=32,
                          shared_name=None, name=None, cancel_op=None):
    """A queue of the strings (file names) of `string_tensor`, for a reader."""
    not_null_err = "string_input_producer requires a non-null input tensor"
    if hasattr(string_tensor, "_as_graph_element"):  # a Variable (match_filenames_once's)
        string_tensor = string_tensor._as_graph_element()
    if not isinstance(string_tensor, Tensor) and not len(string_tensor):
        raise ValueError(not_null_err)
    from ..control_flow_ops import Assert
    from ..ops import control_dependencies, greater, identity, size
    with name_scope(name, "input_producer", [string_tensor]):
        string_tensor = string_tensor if isinstance(string_tensor, Tensor) else \
            convert_to_tensor(string_tensor, dtype=_dtypes.string)
        if string_tensor.dtype != _dtypes.string:
            raise TypeError("string_input_producer: string_tensor must be strings, got %s"
                            % string_tensor.dtype.name)
        with control_dependencies([Assert(greater(size(string_tensor), 0), [not_null_err])]):
            string_tensor = identity(string_tensor)
        return input_producer(input_tensor=string_tensor, element_shape=[],
                              num_epochs=num_epochs, shuffle=shuffle, seed=seed,
                              capacity=capacity, shared_name=shared_name,
                              summary_name="fraction_of_%d_full" % capacity, cancel_op=cancel_op)


def range_input_producer(limit, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """A queue of the integers 0 .. limit-1."""
    from ..array_ops import range as _range
    with name_scope(name, "input_producer", [limit]):
        return input_producer(_range(limit), [], num_epochs, shuffle, seed, capacity,
                              shared_name, "fraction_of_%d_full" % capacity)


def slice_input_producer(tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32,
                         shared_name=None, name=None):
    """One row of each tensor of `tensor_list` (the same row of each) per dequeue."""
    from ..ops import gather, shape
    with name_scope(name, "input_producer", tensor_list):
        tensor_list = [t if isinstance(t, Tensor) else convert_to_tensor(t)
                       for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        range_size = shape(tensor_list[0])[0]
        queue = range_input_producer(range_size, num_epochs=num_epochs, shuffle=shuffle,
                                     seed=seed, capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [gather(t, index) for t in tensor_list]


# --- batching ---

def _as_tensor_list(tensors):
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors, key=str)]
    if isinstance(tensors, Tensor):
        raise TypeError("batch: tensors must be a list or a dict of tensors, got a single Tensor "
                        "(wrap it in a list: [tensor])")
    return list(tensors)


def _as_original_type(original, dequeued):
    if isinstance(original, dict):
        if len(original) == 1:
            dequeued = [dequeued]  # a queue of one component dequeues a Tensor, not a list
        return {k: dequeued[i] for i, k in enumerate(sorted(original, key=str))}
    return dequeued


def _validate(tensor_list, what):
    from ..sparse_tensor import SparseTensor
    if not tensor_list:
        raise ValueError("Expected at least one tensor in %s()." % what)
    out = []
    for t in tensor_list:
        if isinstance(t, SparseTensor):
            raise TypeError("%s: SparseTensors cannot be batched by troupe yet" % what)
        out.append(t if isinstance(t, Tensor) else convert_to_tensor(t))
    return out


def _shapes(tensor_list_list, shapes, enqueue_many, dynamic_pad=False):
    # dynamic_pad: known ranks are enough (a PaddingFIFOQueue pads the unknown dimensions).
    def defined(dims):
        return dims is not None and (dynamic_pad or all(d is not None for d in dims))

    if shapes is not None:
        from ..framework import TensorShape
        # TensorFlow's rule: one shape (a TensorShape, or ints and Nones) is a list of one.
        if isinstance(shapes, TensorShape) or all(d is None or isinstance(d, int)
                                                  for d in shapes):
            shapes = [shapes]
        out = []
        for s in shapes:
            dims = s.dims if isinstance(s, TensorShape) else s
            if not defined(dims):
                raise ValueError("All shapes must be fully defined: %s" % (list(shapes),))
            out.append([None if d is None else int(d) for d in dims])
        return out
    out = []
    for i, t in enumerate(tensor_list_list[0]):
        dims = t.shape.dims
        if dims is not None and enqueue_many:
            dims = dims[1:]
        for other in tensor_list_list[1:]:
            other_dims = other[i].shape.dims
            if other_dims is not None and enqueue_many:
                other_dims = other_dims[1:]
            if dims is None or other_dims is None:
                dims = dims if other_dims is None else (other_dims if dims is None else dims)
                continue
            if len(dims) != len(other_dims) or any(
                    a is not None and b is not None and a != b for a, b in zip(dims, other_dims)):
                raise ValueError("Shapes %s and %s are incompatible (component %d of the inputs)"
                                 % (dims, other_dims, i))
            dims = [a if a is not None else b for a, b in zip(dims, other_dims)]
        if not defined(dims):
            raise ValueError("All shapes must be fully defined: %s" % tensor_list_list[0])
        out.append(dims)
    return out


def _validate_keep_input(keep_input, enqueue_many):
    """keep_input as a bool Tensor of rank 0, or 1 with enqueue_many (TensorFlow's checks). As
    TensorFlow, a Python number keeps by its truth and a numeric vector keeps its ones; a
    numeric scalar Tensor is a TypeError (TensorFlow's cond takes only bool)."""
    if not isinstance(keep_input, Tensor) and np.ndim(keep_input) == 0:
        keep_input = bool(keep_input)
    keep_input = convert_to_tensor(keep_input)
    if keep_input.shape.ndims is None:
        raise ValueError("`keep_input` dimensions must be known at graph construction.")
    if not enqueue_many and keep_input.shape.ndims == 1:
        raise ValueError("`keep_input` cannot be a vector when `enqueue_many=False`.")
    if keep_input.shape.ndims > 1:
        raise ValueError("`keep_input` must be 0 or 1 dimensions.")
    if keep_input.dtype != _dtypes.bool:
        if keep_input.shape.ndims == 0:
            raise TypeError("`keep_input` must be a bool scalar, got %s" % keep_input.dtype.name)
        from ..ops import cast, equal
        keep_input = equal(cast(keep_input, _dtypes.int32), 1)
    return keep_input


def _kept(tensor_list, keep_input, enqueue_many):
    """The rows of `tensor_list` to enqueue (with enqueue_many) where keep_input holds: an
    element is a batch of one kept or dropped; a batch is masked row by row (keep_input a
    vector), or kept or dropped whole (a scalar)."""
    from ..array_ops import expand_dims
    from ..ops import boolean_mask, fill, reshape, shape
    if not enqueue_many:
        mask = reshape(keep_input, [1])
        return [boolean_mask(expand_dims(t, 0), mask) for t in tensor_list]
    if keep_input.shape.ndims == 0:
        keep_input = fill(shape(tensor_list[0])[:1], keep_input)
    return [boolean_mask(t, keep_input) for t in tensor_list]


def _enqueue(queue, tensor_list_list, threads, enqueue_many, keep_input=None):
    if keep_input is not None:
        tensor_list_list = [_kept(tl, keep_input, enqueue_many) for tl in tensor_list_list]
        enqueue_many = True
    enqueue = queue.enqueue_many if enqueue_many else queue.enqueue
    if len(tensor_list_list) == 1:
        enqueue_ops = [enqueue(tensor_list_list[0])] * threads
    else:
        enqueue_ops = [enqueue(tl) for tl in tensor_list_list]
    queue_runner.add_queue_runner(queue_runner.QueueRunner(queue, enqueue_ops))


def _batch(tensors_list, batch_size, threads, capacity, enqueue_many, shapes, shuffle_args,
           allow_smaller_final_batch, shared_name, name, what, dynamic_pad=False,
           keep_input=None):
    from ..ops import FIFOQueue, PaddingFIFOQueue, RandomShuffleQueue, cast, maximum
    from .. import summary
    originals = tensors_list
    lists = [_as_tensor_list(t) for t in tensors_list]
    flat = [t for tl in lists for t in tl if isinstance(t, Tensor)]
    if isinstance(keep_input, Tensor):
        flat.append(keep_input)
    with name_scope(name, what, flat):
        lists = [_validate(tl, what) for tl in lists]
        if keep_input is not None:
            keep_input = _validate_keep_input(keep_input, enqueue_many)
        if len({len(tl) for tl in lists}) != 1:
            raise ValueError("%s: every input must have the same number of tensors" % what)
        types = [t.dtype for t in lists[0]]
        for tl in lists[1:]:
            if [t.dtype for t in tl] != types:
                raise TypeError("%s: every input must have the same dtypes: %s and %s"
                                % (what, [d.name for d in types], [t.dtype.name for t in tl]))
        shapes = _shapes(lists, shapes, enqueue_many, dynamic_pad)
        if shuffle_args is None:
            kind = PaddingFIFOQueue if dynamic_pad else FIFOQueue
            queue = kind(capacity=capacity, dtypes=types, shapes=shapes, shared_name=shared_name)
            full = cast(queue.size(), _dtypes.float32) * (1. / capacity)
            summary_name = "fraction_of_%d_full" % capacity
        else:
            min_after_dequeue, seed = shuffle_args
            queue = RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue,
                                       seed=seed, dtypes=types, shapes=shapes,
                                       shared_name=shared_name)
            over = maximum(0, queue.size() - min_after_dequeue)
            full = cast(over, _dtypes.float32) * (1. / (capacity - min_after_dequeue))
            summary_name = "fraction_over_%d_of_%d_full" % (min_after_dequeue,
                                                           capacity - min_after_dequeue)
        _enqueue(queue, lists, threads, enqueue_many, keep_input)
        summary.scalar(summary_name, full)
        if allow_smaller_final_batch:
            dequeued = queue.dequeue_up_to(batch_size)
        else:
            dequeued = queue.dequeue_many(batch_size)
        return _as_original_type(originals[0], dequeued)


def batch(tensors, batch_size, num_threads=1, capacity=32, enqueue_many=False, shapes=None,
          dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """Batches of `batch_size` of `tensors` (a list or dict), in the order they were produced
    (with one thread), through a FIFOQueue of `capacity` filled by `num_threads` threads; with
    `dynamic_pad`, a PaddingFIFOQueue: elements may differ in their unknown dimensions, and
    each batch pads them to its largest."""
    return _batch([tensors], batch_size, num_threads, capacity, enqueue_many, shapes, None,
                  allow_smaller_final_batch, shared_name, name, "batch", dynamic_pad)


def batch_join(tensors_list, batch_size, capacity=32, enqueue_many=False, shapes=None,
               dynamic_pad=False, allow_smaller_final_batch=False, shared_name=None, name=None):
    """As batch, with one enqueuing thread per element of `tensors_list` (e.g. one reader each)."""
    if not tensors_list:
        raise ValueError("Expected at least one input in batch_join().")
    return _batch(list(tensors_list), batch_size, 1, capacity, enqueue_many, shapes, None,
                  allow_smaller_final_batch, shared_name, name, "batch_join", dynamic_pad)


def shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, num_threads=1, seed=None,
                  enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                  shared_name=None, name=None):
    """Batches drawn at random from a RandomShuffleQueue holding at least `min_after_dequeue`
    elements (until the input ends)."""
    return _batch([tensors], batch_size, num_threads, capacity, enqueue_many, shapes,
                  (min_after_dequeue, seed), allow_smaller_final_batch, shared_name, name,
                  "shuffle_batch")


def shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, seed=None,
                       enqueue_many=False, shapes=None, allow_smaller_final_batch=False,
                       shared_name=None, name=None):
    """As shuffle_batch, with one enqueuing thread per element of `tensors_list`."""
    if not tensors_list:
        raise ValueError("Expected at least one input in shuffle_batch_join().")
    return _batch(list(tensors_list), batch_size, 1, capacity, enqueue_many, shapes,
                  (min_after_dequeue, seed), allow_smaller_final_batch, shared_name, name,
                  "shuffle_batch_join")


def maybe_batch(tensors, keep_input, batch_size, num_threads=1, capacity=32, enqueue_many=False,
                shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                shared_name=None, name=None):
    """As batch, enqueuing only what `keep_input` keeps: a bool scalar (the element, or with
    enqueue_many the whole batch), or with enqueue_many a bool vector (row by row)."""
    return _batch([tensors], batch_size, num_threads, capacity, enqueue_many, shapes, None,
                  allow_smaller_final_batch, shared_name, name, "batch", dynamic_pad,
                  keep_input)


def maybe_batch_join(tensors_list, keep_input, batch_size, capacity=32, enqueue_many=False,
                     shapes=None, dynamic_pad=False, allow_smaller_final_batch=False,
                     shared_name=None, name=None):
    """As batch_join, enqueuing only what `keep_input` keeps (see maybe_batch)."""
    if not tensors_list:
        raise ValueError("Expected at least one input in batch_join().")
    return _batch(list(tensors_list), batch_size, 1, capacity, enqueue_many, shapes, None,
                  allow_smaller_final_batch, shared_name, name, "batch_join", dynamic_pad,
                  keep_input)


def maybe_shuffle_batch(tensors, batch_size, capacity, min_after_dequeue, keep_input,
                        num_threads=1, seed=None, enqueue_many=False, shapes=None,
                        allow_smaller_final_batch=False, shared_name=None, name=None):
    """As shuffle_batch, enqueuing only what `keep_input` keeps (see maybe_batch)."""
    return _batch([tensors], batch_size, num_threads, capacity, enqueue_many, shapes,
                  (min_after_dequeue, seed), allow_smaller_final_batch, shared_name, name,
                  "shuffle_batch", keep_input=keep_input)


def maybe_shuffle_batch_join(tensors_list, batch_size, capacity, min_after_dequeue, keep_input,
                             seed=None, enqueue_many=False, shapes=None,
                             allow_smaller_final_batch=False, shared_name=None, name=None):
    """As shuffle_batch_join, enqueuing only what `keep_input` keeps (see maybe_batch)."""
    if not tensors_list:
        raise ValueError("Expected at least one input in shuffle_batch_join().")
    return _batch(list(tensors_list), batch_size, 1, capacity, enqueue_many, shapes,
                  (min_after_dequeue, seed), allow_smaller_final_batch, shared_name, name,
                  "shuffle_batch_join", keep_input=keep_input)
