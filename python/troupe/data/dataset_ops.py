"""tf.data.Dataset and tf.data.Iterator, as TensorFlow 1.x defines them.

A Dataset is a description: nothing is built until an iterator is made from it, which builds
the dataset's ops (graph/ops/dataset_ops.hpp) in the default graph, in one chain ending at the
iterator; they run on the worker device that runs the iterator, and read nothing before the
first get_next(). Elements are nested structures (tuples, namedtuples, dicts) of tensors.
Functions given to map(), filter(), flat_map() and interleave() are traced once, into a graph
of their own that the dataset op carries and the worker runs per element
(devices/graph_function.hpp); tensors of the outer graph they use are captured as extra
arguments, evaluated when the iterator is (re)initialized."""

import threading

import numpy as np

from .. import _troupe
from .. import dtypes as _dtypes
from .. import ops as _ops
from ..framework import Operation, Tensor, TensorShape, convert_to_tensor, \
    get_default_graph
from . import nest
from ..function_graph import FunctionGraph, shape_attr

AUTOTUNE = -1


def _flat_shapes(value):
    return [s if isinstance(s, TensorShape) else TensorShape(s) for s in nest.flatten(value)]


_shape_attr = shape_attr


def _most_specific_compatible(a, b):
    if a.ndims is None or b.ndims is None or a.ndims != b.ndims:
        return TensorShape(None)
    return TensorShape([x if x == y else None for x, y in zip(a.dims, b.dims)])


def _int64(value, what):
    """A scalar int64 op input: a Tensor (cast if int32) or a Python int."""
    if isinstance(value, Tensor):
        if value.dtype == _dtypes.int32:
            return _ops.cast(value, _dtypes.int64)
        if value.dtype != _dtypes.int64:
            raise TypeError("%s: expected an int64 scalar, got a %s tensor" % (what,
                                                                            value.dtype.name))
        return value
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError("%s: expected an int, got %r" % (what, value))
    return np.int64(value)


class _Element:
    """The element of a dataset or iterator: _structure (a nested structure whose leaves
    stand for components), _types and _shapes (flat lists)."""

    @property
    def output_types(self):
        return nest.pack_sequence_as(self._structure, self._types)

    @property
    def output_shapes(self):
        return nest.pack_sequence_as(self._structure, self._shapes)

    @property
    def output_classes(self):
        return nest.pack_sequence_as(self._structure, [Tensor] * len(self._types))

    def _set_element(self, structure, types, shapes):
        self._structure = structure
        self._types = [_dtypes.as_dtype(t) for t in types]
        self._shapes = [s if isinstance(s, TensorShape) else TensorShape(s) for s in shapes]

    def _attrs(self):
        return {"output_types": [t.as_datatype_enum for t in self._types],
                "output_shapes": [_shape_attr(s) for s in self._shapes]}


class Dataset(_Element):
    """A sequence of elements. Subclasses set the element (_set_element) and build their op
    in _build()."""

    def _variant(self):
        """Builds this dataset's ops in the default graph; returns its reference tensor."""
        return self._build().outputs[0]

    def _variant_inputs(self):
        """The tensors this dataset and the datasets it reads take from the graph."""
        tensors = [v for v in getattr(self, "_components", []) + getattr(self, "_scalars", []) +
                   getattr(self, "_args", []) + getattr(self, "_inputs", []) +
                   list(getattr(self, "_captured", [])) + list(getattr(self, "_values", [])) +
                   [getattr(self, "_drop", None), getattr(self, "_batch_size", None)]
                   if isinstance(v, Tensor)]
        for name in ("_input", "_other"):
            if hasattr(self, name):
                tensors += getattr(self, name)._variant_inputs()
        for d in getattr(self, "_datasets", []):
            tensors += d._variant_inputs()
        return tensors

    # --- sources ---
    @staticmethod
    def from_tensor_slices(tensors):
        return _TensorSliceDataset(tensors)

    @staticmethod
    def from_tensors(tensors):
        return _TensorDataset(tensors)

    @staticmethod
    def range(*args):
        return _RangeDataset(*args)

    @staticmethod
    def zip(datasets):
        return _ZipDataset(datasets)

    @staticmethod
    def from_generator(generator, output_types, output_shapes=None, args=None):
        """The elements `generator(*args)` yields, each converted to `output_types` and
        checked against `output_shapes`; a new generator each time an iterator starts. The
        generator runs in this process, called by tf.py_func (script_ops.py), so the iterator
        must run on a device of this process, as in TensorFlow."""
        return _GeneratorDataset(generator, output_types, output_shapes, args)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None):
        """The names of the files matching `file_pattern` (a glob, or a list of them), found
        when the iterator starts, shuffled unless `shuffle` is False (seeded as shuffle()).
        No match is InvalidArgumentError "No files matched pattern: ..." then."""
        from ..control_flow_ops import Assert
        from ..framework import control_dependencies, name_scope
        from ..io_ops import matching_files
        with name_scope("list_files"):
            pattern = convert_to_tensor(file_pattern, dtype=_dtypes.string, name="file_pattern")
            matching = matching_files(pattern)
            found = _ops.greater(_ops.size(matching), 0, name="match_not_empty")
            if isinstance(file_pattern, (str, bytes)):
                text = file_pattern.decode() if isinstance(file_pattern, bytes) else file_pattern
                message = ["No files matched pattern: %s" % text]
            else:
                message = ["No files matched pattern:", pattern]
            check = Assert(found, message, summarize=1, name="assert_not_empty")
            with control_dependencies([check]):
                matching = _ops.identity(matching)
            dataset = Dataset.from_tensor_slices(matching)
            if shuffle is None or shuffle:
                buffer_size = _ops.maximum(_ops.size(matching, out_type=_dtypes.int64),
                                           np.int64(1))
                dataset = dataset.shuffle(buffer_size, seed=seed)
            return dataset

    # --- transformations ---
    def batch(self, batch_size, drop_remainder=False):
        return _BatchDataset(self, batch_size, drop_remainder)

    def padded_batch(self, batch_size, padded_shapes, padding_values=None,
                     drop_remainder=False):
        return _PaddedBatchDataset(self, batch_size, padded_shapes, padding_values,
                                   drop_remainder)

    def cache(self, filename=""):
        if not isinstance(filename, str):
            raise TypeError("cache: filename must be a string, got %r" % (filename,))
        return _CacheDataset(self, filename)

    def repeat(self, count=None):
        return _UnaryDataset(self, "RepeatDataset", [("count", -1 if count is None else count)])

    def take(self, count):
        return _UnaryDataset(self, "TakeDataset", [("count", count)])

    def skip(self, count):
        return _UnaryDataset(self, "SkipDataset", [("count", count)])

    def shard(self, num_shards, index):
        if isinstance(num_shards, int) and isinstance(index, int):
            if num_shards <= 0:
                raise ValueError("num_shards must be greater than zero, got %d" % num_shards)
            if not 0 <= index < num_shards:
                raise ValueError("index must be between 0 and %d, got %d"
                                 % (num_shards - 1, index))
        return _UnaryDataset(self, "ShardDataset", [("num_shards", num_shards),
                                                    ("index", index)])

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=None):
        from ..random_ops import get_seed
        seed, seed2 = get_seed(seed)
        return _UnaryDataset(self, "ShuffleDataset",
                             [("buffer_size", buffer_size), ("seed", seed or 0),
                              ("seed2", seed2 or 0)],
                             {"reshuffle_each_iteration":
                              True if reshuffle_each_iteration is None
                              else bool(reshuffle_each_iteration)})

    def prefetch(self, buffer_size):
        return _UnaryDataset(self, "PrefetchDataset", [("buffer_size", buffer_size)])

    def concatenate(self, dataset):
        return _ConcatenateDataset(self, dataset)

    def map(self, map_func, num_parallel_calls=None):
        return _MapDataset(self, map_func, num_parallel_calls)

    def filter(self, predicate):
        return _FilterDataset(self, predicate)

    def flat_map(self, map_func):
        """The elements of the datasets `map_func` returns for each element, one dataset after
        the other."""
        return _NestedDataset(self, map_func, "Dataset.flat_map")

    def interleave(self, map_func, cycle_length=AUTOTUNE, block_length=1,
                   num_parallel_calls=None):
        """The elements of the datasets `map_func` returns, `cycle_length` of them open at a
        time (AUTOTUNE: as many as the worker has cores), `block_length` elements from each in
        turn, in the order TensorFlow's interleave documents. With num_parallel_calls n > 1
        (AUTOTUNE: one per core), n of the open datasets are read ahead at once, each on a
        thread of its own (a tensor n reads them one at a time)."""
        if num_parallel_calls is not None and not isinstance(num_parallel_calls, Tensor) and \
                (num_parallel_calls == 0 or num_parallel_calls < -1):
            raise ValueError("num_parallel_calls must be positive or AUTOTUNE (-1), got %r"
                             % (num_parallel_calls,))
        parallel = 1 if num_parallel_calls is None or isinstance(num_parallel_calls, Tensor) \
            else int(num_parallel_calls)
        return _NestedDataset(self, map_func, "Dataset.interleave", cycle_length, block_length,
                              parallel)

    def unbatch(self):
        """The rows of each element (every component split along its first dimension, which
        they must share): the inverse of batch()."""
        structure = self._structure
        if any(shape.ndims == 0 for shape in self._shapes):
            raise ValueError("Cannot unbatch an input with scalar components.")

        def rows(*args):  # a plain tuple element comes as its items, anything else whole
            element = tuple(args) if type(structure) is tuple else args[0]
            return Dataset.from_tensor_slices(element)
        return self.flat_map(rows)

    def apply(self, transformation_func):
        dataset = transformation_func(self)
        if not isinstance(dataset, Dataset):
            raise TypeError("`transformation_func` must return a Dataset, got %r" % (dataset,))
        return dataset

    # --- iterators ---
    def make_one_shot_iterator(self):
        """An iterator started on this dataset the first time it runs; it cannot be
        restarted."""
        _refuse_placeholders(self._variant_inputs())
        handle = _ops._make("OneShotIterator", [self._variant()], self._attrs(),
                            name="OneShotIterator").outputs[0]
        return Iterator(handle, None, self._structure, self._types, self._shapes)

    def make_initializable_iterator(self, shared_name=None):
        """An iterator whose `initializer` (re)starts it on this dataset, evaluating the
        placeholders the dataset uses at that moment."""
        attrs = self._attrs()
        if shared_name:
            attrs["shared_name"] = shared_name
        handle = _ops._make("Iterator", [], attrs, name="Iterator").outputs[0]
        iterator = Iterator(handle, None, self._structure, self._types, self._shapes)
        iterator._initializer = iterator.make_initializer(self)
        return iterator

    def __iter__(self):
        raise RuntimeError("dataset.__iter__() is only supported when eager execution is "
                           "enabled; use make_one_shot_iterator() or "
                           "make_initializable_iterator().")


def _refuse_placeholders(tensors):
    """A one-shot iterator's dataset runs with every get_next(), so, as TensorFlow, it may not
    depend on a placeholder (use make_initializable_iterator)."""
    seen, stack = set(), [t.op for t in tensors]
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        if op.type in ("Placeholder", "PlaceholderWithDefault"):
            raise ValueError("Cannot capture a placeholder (name:%s, type:%s) by value: a "
                             "one-shot iterator's dataset may not depend on one; use "
                             "make_initializable_iterator()" % (op.name, op.type))
        stack.extend(t.op for t in op.inputs)


class _TensorSliceDataset(Dataset):
    def __init__(self, tensors):
        flat = [convert_to_tensor(t) for t in nest.flatten(tensors)]
        if not flat:
            raise ValueError("from_tensor_slices: nothing to slice")
        for i, t in enumerate(flat):
            if t.shape.ndims == 0:
                raise ValueError("from_tensor_slices: component %d is a scalar; slicing needs "
                                 "at least one dimension" % i)
        first = [t.shape.dims[0] for t in flat if t.shape.ndims]
        known = [d for d in first if d is not None]
        if len(set(known)) > 1:
            raise ValueError("from_tensor_slices: components have different first "
                             "dimensions: %s" % [t.shape.dims[0] for t in flat])
        self._components = flat
        self._set_element(tensors, [t.dtype for t in flat],
                          [TensorShape(None) if t.shape.ndims is None
                           else TensorShape(t.shape.dims[1:]) for t in flat])

    def _build(self):
        return _ops._make("TensorSliceDataset", [self._components], self._attrs())


class _TensorDataset(Dataset):
    def __init__(self, tensors):
        flat = [convert_to_tensor(t) for t in nest.flatten(tensors)]
        self._components = flat
        self._set_element(tensors, [t.dtype for t in flat], [t.shape for t in flat])

    def _build(self):
        return _ops._make("TensorDataset", [self._components], self._attrs())


class _RangeDataset(Dataset):
    def __init__(self, *args):
        if len(args) == 1:
            start, stop, step = 0, args[0], 1
        elif len(args) == 2:
            (start, stop), step = args, 1
        elif len(args) == 3:
            start, stop, step = args
        else:
            raise ValueError("Invalid arguments to RangeDataset: %r" % (args,))
        if isinstance(step, int) and step == 0:
            raise ValueError("step must be a non-zero integer")
        self._args = [_int64(start, "range start"), _int64(stop, "range stop"),
                      _int64(step, "range step")]
        self._set_element(0, [_dtypes.int64], [TensorShape([])])

    def _build(self):
        return _ops._make("RangeDataset", self._args, self._attrs())


class _UnaryDataset(Dataset):
    """A transformation whose arguments are int64 scalars, the element unchanged."""

    def __init__(self, input_dataset, op_type, scalars, attrs=None):
        if not isinstance(input_dataset, Dataset):
            raise TypeError("%s: expected a Dataset, got %r" % (op_type, input_dataset))
        self._input = input_dataset
        self._op_type = op_type
        self._scalars = [_int64(value, "%s %s" % (op_type, what)) for what, value in scalars]
        self._extra = attrs or {}
        self._set_element(input_dataset._structure, input_dataset._types, input_dataset._shapes)

    def _build(self):
        attrs = self._attrs()
        attrs.update(self._extra)
        return _ops._make(self._op_type, [self._input._variant()] + self._scalars, attrs)


class _BatchDataset(_UnaryDataset):
    def __init__(self, input_dataset, batch_size, drop_remainder):
        if isinstance(batch_size, int) and batch_size <= 0:
            raise ValueError("batch_size must be greater than zero, got %d" % batch_size)
        super().__init__(input_dataset, "BatchDatasetV2", [("batch_size", batch_size)])
        if isinstance(drop_remainder, Tensor):
            self._drop = drop_remainder
            static = None
        else:
            self._drop = np.bool_(bool(drop_remainder))
            static = bool(drop_remainder)
        outer = batch_size if static and isinstance(batch_size, int) else None
        self._shapes = [TensorShape(None) if s.ndims is None else TensorShape([outer] + s.dims)
                        for s in input_dataset._shapes]

    def _build(self):
        return _ops._make("BatchDatasetV2",
                          [self._input._variant(), self._scalars[0], self._drop], self._attrs())


class _PaddedBatchDataset(Dataset):
    def __init__(self, input_dataset, batch_size, padded_shapes, padding_values,
                 drop_remainder):
        if isinstance(batch_size, int) and batch_size <= 0:
            raise ValueError("batch_size must be greater than zero, got %d" % batch_size)
        self._input = input_dataset
        self._batch_size = _int64(batch_size, "padded_batch batch_size")
        shapes = _flatten_shapes(input_dataset._structure, padded_shapes) \
            if nest.is_sequence(input_dataset._structure) else [padded_shapes]
        if len(shapes) != len(input_dataset._types):
            raise ValueError("padded_shapes has %d shapes for elements of %d components"
                             % (len(shapes), len(input_dataset._types)))
        self._padded = []
        out_shapes = []
        static_batch = batch_size if isinstance(batch_size, int) and drop_remainder is True \
            else None
        for i, (shape, element_shape) in enumerate(zip(shapes, input_dataset._shapes)):
            dims = shape.as_list() if isinstance(shape, TensorShape) else list(shape)
            dims = [-1 if d is None else int(d) for d in dims]
            if element_shape.ndims is not None and element_shape.ndims != len(dims):
                raise ValueError("padded shape %s of component %d has another rank than its "
                                 "elements' shape %s" % (dims, i, element_shape))
            self._padded.append(np.array(dims, dtype=np.int64))
            out_shapes.append(TensorShape([static_batch] + [None if d < 0 else d for d in dims]))
        if padding_values is None:
            values = [None] * len(shapes)
        elif nest.is_sequence(input_dataset._structure):
            values = nest.flatten(padding_values)
        else:
            values = [padding_values]
        self._values = []
        for value, dtype in zip(values, input_dataset._types):
            if value is None:
                value = "" if dtype == _dtypes.string else 0
            if isinstance(value, Tensor):
                if value.dtype != dtype:
                    raise TypeError("padding value of dtype %s for a %s component"
                                    % (value.dtype.name, dtype.name))
                self._values.append(value)
            else:
                self._values.append(convert_to_tensor(value, dtype=dtype))
        self._drop = drop_remainder if isinstance(drop_remainder, Tensor) \
            else np.bool_(bool(drop_remainder))
        self._set_element(input_dataset._structure, input_dataset._types, out_shapes)

    def _build(self):
        attrs = self._attrs()
        attrs["Toutput_types"] = [t.as_datatype_enum for t in self._types]
        return _ops._make("PaddedBatchDatasetV2",
                          [self._input._variant(), self._batch_size, self._padded, self._values,
                           self._drop], attrs)


class _CacheDataset(_UnaryDataset):
    def __init__(self, input_dataset, filename):
        super().__init__(input_dataset, "CacheDataset", [])
        self._filename = np.array(filename, dtype=object)

    def _build(self):
        return _ops._make("CacheDataset", [self._input._variant(), self._filename],
                          self._attrs())


class _ZipDataset(Dataset):
    def __init__(self, datasets):
        flat = nest.flatten(datasets)
        for d in flat:
            if not isinstance(d, Dataset):
                raise TypeError("zip: expected a (nested) structure of Datasets, got %r" % (d,))
        if not flat:
            raise ValueError("zip: no datasets")
        self._datasets = flat
        structure = nest.pack_sequence_as(datasets, [d._structure for d in flat])
        self._set_element(structure, [t for d in flat for t in d._types],
                          [s for d in flat for s in d._shapes])

    def _variant(self):
        handle = self._datasets[0]._variant()
        for other in self._datasets[1:]:
            handle = _ops._make("ZipDataset", [handle, other._variant()], {}).outputs[0]
        return handle


class _ConcatenateDataset(Dataset):
    def __init__(self, input_dataset, dataset):
        if input_dataset._types != dataset._types:
            raise TypeError("Two datasets to concatenate have different types %s and %s"
                            % (input_dataset.output_types, dataset.output_types))
        nest.assert_same_structure(input_dataset._structure, dataset._structure)
        self._input, self._other = input_dataset, dataset
        self._set_element(input_dataset._structure, input_dataset._types,
                          [_most_specific_compatible(a, b)
                           for a, b in zip(input_dataset._shapes, dataset._shapes)])

    def _build(self):
        return _ops._make("ConcatenateDataset", [self._input._variant(), self._other._variant()],
                          self._attrs())


def _trace(func, dataset, what, returns_dataset=False):
    """Traces `func` on `dataset`'s elements: (serialized body, result structure, result
    tensors, captured outer tensors). With `returns_dataset`, `func` must return a Dataset:
    the body returns its reference, and the result is that Dataset."""
    outer = get_default_graph()
    graph = FunctionGraph(outer, len(dataset._types))
    with graph.as_default():
        flat = [graph.arg(i, t, s, "arg_%d" % i)
                for i, (t, s) in enumerate(zip(dataset._types, dataset._shapes))]
        args = nest.pack_sequence_as(dataset._structure, flat)
        if isinstance(args, tuple) and not hasattr(args, "_fields"):
            result = func(*args)
        else:
            result = func(args)
        if returns_dataset:
            if not isinstance(result, Dataset):
                raise TypeError("%s: `map_func` must return a `Dataset` object, got %r"
                                % (what, result))
            _ops._make("_RetvalRef", [result._variant()], {"index": 0}, name="result_0",
                       graph=graph)
            return _troupe.serialize_graph(graph._root), result, [], graph._captures
        if isinstance(result, (Operation,)) or result is None:
            raise TypeError("%s: the function must return tensors, got %r" % (what, result))
        results = []
        for value in nest.flatten(result):
            t = convert_to_tensor(value)
            if t.graph is not graph:
                t = graph._capture(t)
            results.append(t)
        for j, t in enumerate(results):
            _ops._make("_Retval", [t], {"index": j}, name="result_%d" % j, graph=graph)
    body = _troupe.serialize_graph(graph._root)
    return body, result, results, graph._captures


class _MapDataset(Dataset):
    def __init__(self, input_dataset, map_func, num_parallel_calls):
        self._input = input_dataset
        self._body, structure, results, self._captured = _trace(map_func, input_dataset,
                                                                 "Dataset.map")
        self._set_element(structure, [t.dtype for t in results], [t.shape for t in results])
        if num_parallel_calls is not None and not isinstance(num_parallel_calls, Tensor) and \
                (num_parallel_calls == 0 or num_parallel_calls < -1):
            raise ValueError("num_parallel_calls must be positive or AUTOTUNE (-1), got %r"
                             % (num_parallel_calls,))
        self._parallel = 1 if num_parallel_calls is None or isinstance(num_parallel_calls,
                                                                       Tensor) \
            else int(num_parallel_calls)

    def _build(self):
        attrs = self._attrs()
        attrs.update({"f": self._body, "num_parallel_calls": self._parallel,
                      "Targuments": [t.dtype.as_datatype_enum for t in self._captured]})
        return _ops._make("MapDataset", [self._input._variant(), list(self._captured)], attrs)


class _FilterDataset(Dataset):
    def __init__(self, input_dataset, predicate):
        self._input = input_dataset
        self._body, _, results, self._captured = _trace(predicate, input_dataset,
                                                        "Dataset.filter")
        if len(results) != 1 or results[0].dtype != _dtypes.bool or \
                results[0].shape.ndims not in (None, 0):
            raise ValueError("`predicate` must return a scalar boolean tensor, got %s"
                             % [(t.dtype.name, str(t.shape)) for t in results])
        self._set_element(input_dataset._structure, input_dataset._types,
                          input_dataset._shapes)

    def _build(self):
        attrs = self._attrs()
        attrs.update({"predicate": self._body,
                      "Targuments": [t.dtype.as_datatype_enum for t in self._captured]})
        return _ops._make("FilterDataset", [self._input._variant(), list(self._captured)], attrs)


class _NestedDataset(Dataset):
    """flat_map (no cycle_length) and interleave: map_func returns a dataset per element."""

    def __init__(self, input_dataset, map_func, what, cycle_length=None, block_length=None,
                 parallel=1):
        self._input = input_dataset
        self._parallel = parallel
        self._body, nested, _, self._captured = _trace(map_func, input_dataset, what,
                                                       returns_dataset=True)
        self._set_element(nested._structure, nested._types, nested._shapes)
        self._interleave = cycle_length is not None
        self._scalars = []
        if self._interleave:
            for value, arg in ((cycle_length, "cycle_length"), (block_length, "block_length")):
                scalar = _int64(value, "%s %s" % (what, arg))  # TypeError unless an int
                if not isinstance(value, Tensor) and value <= 0 and \
                        not (arg == "cycle_length" and value == AUTOTUNE):
                    raise ValueError("%s: %s must be greater than zero, got %d"
                                     % (what, arg, value))
                self._scalars.append(scalar)

    def _build(self):
        attrs = self._attrs()
        attrs.update({"f": self._body,
                      "Targuments": [t.dtype.as_datatype_enum for t in self._captured]})
        op = "InterleaveDataset" if self._interleave else "FlatMapDataset"
        if self._interleave and self._parallel != 1:
            attrs["num_parallel_calls"] = self._parallel
        return _ops._make(op, [self._input._variant(), list(self._captured)] + self._scalars,
                          attrs)


class _Signature:
    """A function's arguments for _trace: dtypes, shapes and how they nest."""

    def __init__(self, types, shapes, structure=None):
        self._types, self._shapes = list(types), list(shapes)
        self._structure = tuple(range(len(self._types))) if structure is None else structure


class _GeneratorState:
    """The generators of a from_generator dataset, one per iterator, by id (TensorFlow's)."""

    def __init__(self, generator):
        self._generator = generator
        self._lock = threading.Lock()
        self._next_id = 0
        self._args = {}
        self._iterators = {}

    def get_next_id(self, *args):
        with self._lock:
            iterator_id = self._next_id
            self._next_id += 1
            self._args[iterator_id] = args
        return np.array(iterator_id, dtype=np.int64)

    def get_iterator(self, iterator_id):
        with self._lock:
            iterator = self._iterators.get(iterator_id)
            if iterator is None:
                args = self._args.pop(iterator_id, ())
        if iterator is None:
            iterator = iter(self._generator(*args))
            with self._lock:
                self._iterators[iterator_id] = iterator
        return iterator

    def iterator_completed(self, iterator_id):
        with self._lock:
            self._iterators.pop(iterator_id, None)
            self._args.pop(iterator_id, None)


class _GeneratorDataset(Dataset):
    """from_generator: a GeneratorDataset whose functions call the generator by py_func."""

    def __init__(self, generator, output_types, output_shapes, args):
        from ..script_ops import _convert, py_func
        if not callable(generator):
            raise TypeError("`generator` must be callable.")
        if output_shapes is None:
            output_shapes = nest.map_structure(lambda _: TensorShape(None), output_types)
        flat_types = [_dtypes.as_dtype(t) for t in nest.flatten(output_types)]
        flat_shapes = _flat_shapes(output_shapes)
        if len(flat_shapes) != len(flat_types):
            raise ValueError("from_generator: output_shapes has %d components, output_types %d"
                             % (len(flat_shapes), len(flat_types)))
        self._set_element(output_types, flat_types, flat_shapes)
        self._args = [convert_to_tensor(a) for a in (args or ())]
        state = _GeneratorState(generator)

        def next_values(iterator_id):
            values = next(state.get_iterator(int(iterator_id)))
            try:
                flat = nest.flatten(values)
                nest.pack_sequence_as(output_types, flat)
            except (TypeError, ValueError):
                raise TypeError("`generator` yielded an element that did not match the "
                                "expected structure. The expected structure was %s, but the "
                                "yielded element was %s." % (output_types, values))
            arrays = []
            for value, dtype, shape in zip(flat, flat_types, flat_shapes):
                try:
                    array = _convert(value, dtype)
                except (TypeError, ValueError):
                    raise TypeError("`generator` yielded an element that could not be "
                                    "converted to the expected type. The expected type was "
                                    "%s, but the yielded element was %s." % (dtype.name, value))
                if not shape.is_compatible_with(TensorShape(array.shape)):
                    raise ValueError("`generator` yielded an element of shape %s where an "
                                     "element of shape %s was expected."
                                     % (array.shape, shape))
                arrays.append(array)
            return arrays

        def finalize(iterator_id):
            state.iterator_completed(int(iterator_id))
            return np.array(0, dtype=np.int64)

        scalar_id = _Signature([_dtypes.int64], [TensorShape([])])
        self._init = _trace(lambda *a: py_func(state.get_next_id, list(a), _dtypes.int64),
                            _Signature([a.dtype for a in self._args],
                                       [a.shape for a in self._args]),
                            "Dataset.from_generator")
        self._next = _trace(lambda i: tuple(py_func(next_values, [i], flat_types)),
                            scalar_id, "Dataset.from_generator")
        self._finalize = _trace(lambda i: py_func(finalize, [i], _dtypes.int64), scalar_id,
                                "Dataset.from_generator")
        self._captured = self._args + self._init[3] + self._next[3] + self._finalize[3]

    def _build(self):
        attrs = self._attrs()
        attrs.update({"init_func": self._init[0], "next_func": self._next[0],
                      "finalize_func": self._finalize[0],
                      "Tinit_func_args": [t.dtype.as_datatype_enum
                                          for t in self._args + self._init[3]],
                      "Tnext_func_args": [t.dtype.as_datatype_enum for t in self._next[3]],
                      "Tfinalize_func_args": [t.dtype.as_datatype_enum
                                              for t in self._finalize[3]]})
        return _ops._make("GeneratorDataset",
                          [self._args + list(self._init[3]), list(self._next[3]),
                           list(self._finalize[3])], attrs)


def _filenames(filenames, what):
    if isinstance(filenames, Tensor):
        if filenames.dtype != _dtypes.string:
            raise TypeError("%s: filenames must be a tf.string tensor, got %s"
                            % (what, filenames.dtype.name))
        return filenames
    if isinstance(filenames, (str, bytes)):
        filenames = [filenames]
    names = [f.decode() if isinstance(f, bytes) else f for f in filenames]
    for f in names:
        if not isinstance(f, str):
            raise TypeError("%s: filenames must be strings, got %r" % (what, f))
    return convert_to_tensor(np.array(names, dtype=object), dtype=_dtypes.string)


class _FileDataset(Dataset):
    def __init__(self, op_type, filenames, inputs):
        self._op_type = op_type
        self._inputs = [_filenames(filenames, op_type)] + inputs
        self._set_element(0, [_dtypes.string], [TensorShape([])])

    def _build(self):
        return _ops._make(self._op_type, self._inputs, self._attrs())


def _compression(compression_type):
    if compression_type is None:
        return np.array("", dtype=object)
    if compression_type not in ("", "NONE", "ZLIB", "GZIP"):
        raise ValueError("compression_type must be '', 'ZLIB' or 'GZIP', got %r"
                         % (compression_type,))
    return np.array(compression_type, dtype=object)


class TFRecordDataset(_FileDataset):
    """The records of TFRecord files, in order (tf.data.TFRecordDataset)."""

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None):
        super().__init__("TFRecordDataset", filenames,
                         [_compression(compression_type),
                          _int64(0 if buffer_size is None else buffer_size, "buffer_size")])


class TextLineDataset(_FileDataset):
    """The lines of text files, without their line ends (tf.data.TextLineDataset)."""

    def __init__(self, filenames, compression_type=None, buffer_size=None):
        super().__init__("TextLineDataset", filenames,
                         [_compression(compression_type),
                          _int64(0 if buffer_size is None else buffer_size, "buffer_size")])


class FixedLengthRecordDataset(_FileDataset):
    """Records of `record_bytes` bytes from files with a header and footer of fixed sizes
    (tf.data.FixedLengthRecordDataset)."""

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None,
                 buffer_size=None):
        super().__init__("FixedLengthRecordDataset", filenames,
                         [_int64(header_bytes or 0, "header_bytes"),
                          _int64(record_bytes, "record_bytes"),
                          _int64(footer_bytes or 0, "footer_bytes"),
                          _int64(0 if buffer_size is None else buffer_size, "buffer_size")])


class Iterator(_Element):
    """tf.data.Iterator: get_next() yields the next element (OutOfRangeError at the end)."""

    def __init__(self, handle, initializer, structure, types, shapes):
        self._handle = handle
        self._initializer = initializer
        self._set_element(structure, types, shapes)

    @staticmethod
    def _declared(output_types, output_shapes):
        """An iterator's element as from_structure and from_string_handle are given it:
        (structure, dtypes, shapes)."""
        types = [_dtypes.as_dtype(t) for t in nest.flatten(output_types)]
        shapes = [TensorShape(None)] * len(types) if output_shapes is None else \
            _flatten_shapes(output_types, output_shapes)
        return nest.map_structure(lambda t: 0, output_types), types, shapes

    @staticmethod
    def from_structure(output_types, output_shapes=None, shared_name=None,
                       output_classes=None):
        """An iterator of the given element structure, not yet on any dataset: each
        make_initializer(dataset) gives an op that starts it on `dataset`."""
        element = _Element()
        element._set_element(*Iterator._declared(output_types, output_shapes))
        attrs = element._attrs()
        if shared_name:
            attrs["shared_name"] = shared_name
        handle = _ops._make("Iterator", [], attrs, name="Iterator").outputs[0]
        return Iterator(handle, None, element._structure, element._types, element._shapes)

    @staticmethod
    def from_string_handle(string_handle, output_types, output_shapes=None,
                           output_classes=None):
        """A feedable iterator: get_next() reads from the iterator whose string_handle() is
        fed to `string_handle` (a tf.string scalar, usually a placeholder)."""
        string_handle = convert_to_tensor(string_handle, dtype=_dtypes.string)
        element = _Element()
        element._set_element(*Iterator._declared(output_types, output_shapes))
        handle = _ops._make("IteratorFromStringHandle", [string_handle], element._attrs(),
                            name="IteratorFromStringHandle").outputs[0]
        return Iterator(handle, None, element._structure, element._types, element._shapes)

    def string_handle(self, name=None):
        """A tf.string scalar naming this iterator, to feed a from_string_handle() iterator."""
        return _ops._make("IteratorToStringHandle", [self._handle], {},
                          name=name or "IteratorToStringHandle").outputs[0]

    @property
    def initializer(self):
        if self._initializer is None:
            raise ValueError("Iterator does not have an initializer.")
        return self._initializer

    def make_initializer(self, dataset, name=None):
        if dataset._types != self._types:
            raise TypeError("Expected output types %r but got dataset with output types %r."
                            % (self.output_types, dataset.output_types))
        for mine, theirs in zip(self._shapes, dataset._shapes):
            if not mine.is_compatible_with(theirs):
                raise TypeError("Expected output shapes compatible with %r but got dataset "
                                "with output shapes %r."
                                % (self.output_shapes, dataset.output_shapes))
        return _ops._make("MakeIterator", [dataset._variant(), self._handle], {},
                          name=name or "MakeIterator")

    def get_next(self, name=None):
        """The next element, as tensors arranged as output_types."""
        op = _ops._make("IteratorGetNext", [self._handle], self._attrs(),
                        name=name or "IteratorGetNext")
        return nest.pack_sequence_as(self._structure, op.outputs)


def _flatten_shapes(types, shapes):
    """`shapes` flattened as `types` is: a shape (list or TensorShape) is a leaf."""
    if isinstance(types, dict):
        return [s for k in sorted(types) for s in _flatten_shapes(types[k], shapes[k])]
    if isinstance(types, tuple):
        return [s for t, sh in zip(types, shapes) for s in _flatten_shapes(t, sh)]
    return [shapes]
