"""Reading checkpoints outside a session, as TensorFlow 1.x's checkpoint_utils and
NewCheckpointReader do: the variables a checkpoint holds, their shapes and dtypes, and their
values as numpy arrays. troupe's checkpoints are .npz archives (docs/checkpoints.md), each
variable whole under its name (a partitioned one too), or, written by a sharded Saver, a set of
shard archives where a partitioned variable's shards are slices "<name>@<shape and slice>"
(assembled here into the whole variable)."""

import os
import re
import zipfile

import numpy as np

from .. import dtypes as _dtypes
from .. import errors


def _checkpoint_files(ckpt_dir_or_file):
    """The data files of a checkpoint prefix (its .npz, or its shards), or of the newest
    checkpoint of a directory."""
    from .. import _troupe
    from .saver import latest_checkpoint
    if os.path.isdir(ckpt_dir_or_file):
        prefix = latest_checkpoint(ckpt_dir_or_file)
        if prefix is None:
            raise ValueError("Couldn't find 'checkpoint' file or checkpoints in given "
                             "directory %s" % ckpt_dir_or_file)
        ckpt_dir_or_file = prefix
    try:
        return _troupe.checkpoint_data_files(ckpt_dir_or_file)
    except errors.NotFoundError:
        raise errors.NotFoundError(None, None,
                                   "Unsuccessful TensorSliceReader constructor: Failed to find "
                                   "any matching files for %s" % ckpt_dir_or_file) from None


def _array_headers(path):
    """{key: (shape, dtype)} of the .npz at `path`, from each array's .npy header alone (as
    TensorFlow's reader reads only a checkpoint's index)."""
    headers = {}
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            if not info.filename.endswith(".npy"):
                continue
            with archive.open(info) as member:
                version = np.lib.format.read_magic(member)
                if version == (1, 0):
                    shape, _, dtype = np.lib.format.read_array_header_1_0(member)
                else:
                    shape, _, dtype = np.lib.format.read_array_header_2_0(member)
            headers[info.filename[:-len(".npy")]] = (list(shape), dtype)
    return headers


def _parse_slice(spec):
    """(full shape, [(start, length)] per dimension) of a shape-and-slice spec."""
    words = spec.split(" ")
    full = [int(w) for w in words[:-1]]
    box = []
    for dim, part in zip(full, words[-1].split(":")):
        if part == "-":
            box.append((0, dim))
        else:
            start, length = part.split(",")
            box.append((int(start), int(length)))
    if len(box) != len(full):
        raise ValueError("slice %r has %d dimension(s) for a shape of %d"
                         % (spec, len(box), len(full)))
    return full, box


class CheckpointReader:
    """What NewCheckpointReader returns: the tensors of one checkpoint. Names, shapes and
    dtypes come from the arrays' headers; an array is read when get_tensor asks for it (a
    variable saved in slices is assembled from them)."""

    def __init__(self, path):
        self._files = _checkpoint_files(path)
        # What RestoreV2 is given: the one file, or the prefix of the shards.
        self._path = (self._files[0] if len(self._files) == 1 else
                      re.sub(r"\.shard-[0-9]{5}-of-[0-9]{5}\.npz$", "", self._files[0]))
        self._headers = {}  # name: (shape, dtype)
        self._where = {}  # name: [(file, key, slice box or None)]
        self._full_shapes = {}  # name: {whole shapes its slices name}
        try:
            for f in self._files:
                for key, (shape, dtype) in _array_headers(f).items():
                    name, _, spec = key.partition("@")
                    box = None
                    if spec:
                        shape, box = _parse_slice(spec)
                        self._full_shapes.setdefault(name, set()).add(tuple(shape))
                    self._headers[name] = (list(shape), dtype)
                    self._where.setdefault(name, []).append((f, key, box))
        except (zipfile.BadZipFile, ValueError, OSError) as e:
            raise errors.DataLossError(None, None, "Unable to read checkpoint %s: %s"
                                       % (", ".join(self._files), e)) from None

    def get_variable_to_shape_map(self):
        return {name: list(shape) for name, (shape, _) in self._headers.items()}

    def get_variable_to_dtype_map(self):
        return {name: _dtypes.as_dtype(dtype) for name, (_, dtype) in self._headers.items()}

    def has_tensor(self, tensor_str):
        return tensor_str in self._headers

    def get_tensor(self, tensor_str):
        if tensor_str not in self._headers:
            raise errors.NotFoundError(None, None, "Key %s not found in checkpoint"
                                       % tensor_str)
        shape, dtype = self._headers[tensor_str]
        pieces = self._where[tensor_str]
        if pieces[0][2] is None:
            f, key, _ = pieces[0]
            with np.load(f, allow_pickle=False) as archive:
                return archive[key].copy()
        # The slices must tile the whole (the saver writes a tiling): of one whole shape,
        # disjoint, each of the shape its name says and one dtype, together every element.
        if len(self._full_shapes[tensor_str]) > 1:
            raise errors.DataLossError(None, None, "checkpoint %s: slices of %s disagree on its "
                                       "shape: %s" % (self._path, tensor_str,
                                                      sorted(self._full_shapes[tensor_str])))
        boxes = [box for _, _, box in pieces]
        for i, a in enumerate(boxes):
            for b in boxes[:i]:
                if all(x0 < y0 + yn and y0 < x0 + xn for (x0, xn), (y0, yn) in zip(a, b)):
                    raise errors.DataLossError(None, None, "checkpoint %s: slices of %s overlap"
                                               % (self._path, tensor_str))
        if sum(int(np.prod([n for _, n in box])) for box in boxes) != int(np.prod(shape)):
            raise errors.DataLossError(None, None, "checkpoint %s: the slices of %s do not cover "
                                       "its shape %s" % (self._path, tensor_str, shape))
        whole = np.zeros(shape, dtype=dtype)
        for f, key, box in pieces:
            with np.load(f, allow_pickle=False) as archive:
                piece = archive[key]
            if piece.dtype != whole.dtype or list(piece.shape) != [n for _, n in box]:
                raise errors.DataLossError(None, None, "checkpoint %s: slice %r holds %s %s"
                                           % (self._path, key, piece.dtype, list(piece.shape)))
            whole[tuple(slice(a, a + n) for a, n in box)] = piece
        return whole

    def debug_string(self):
        return "".join("%s (%s) %s\n" % (name, np.dtype(dtype).name, list(shape))
                       for name, (shape, dtype) in sorted(self._headers.items())).encode()


def NewCheckpointReader(filepattern):  # noqa: N802 - TensorFlow's name
    """A reader of the checkpoint at `filepattern` (a prefix, or its .npz);
    NotFoundError if there is none."""
    return CheckpointReader(filepattern)


def load_checkpoint(ckpt_dir_or_file):
    """A reader of the checkpoint (a directory's newest, or the prefix given)."""
    return CheckpointReader(ckpt_dir_or_file)


def list_variables(ckpt_dir_or_file):
    """[(name, shape)] of the checkpoint's variables, sorted by name."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]


def load_variable(ckpt_dir_or_file, name):
    """The value of variable `name` (a trailing ":0" allowed) in the checkpoint."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def _is_variable(x):
    from ..variables import Variable
    return isinstance(x, Variable)


def _store_variables(graph):
    """The variables tf.get_variable made, by name, each shard of a partitioned one under
    "<name>/part_<i>" (as TensorFlow's variable store keeps them), and those the C++ layer made
    (optimizers' slots, the global step: in TensorFlow, get_variable makes them too)."""
    from ..partitioned_variables import PartitionedVariable
    from ..variables import _state, _variables_of
    found = {v.op.name: v for v in _variables_of(graph, False)
             if getattr(v, "_made_natively", False)}
    for name, v in _state(graph).store.items():
        if isinstance(v, PartitionedVariable):
            for part in v._get_variable_list():
                found[part.op.name] = part
        else:
            found[name] = v
    return found


def _collect_partitioned_variable(name, all_vars):
    """The shards "<name>/part_0", "<name>/part_1", ... of `all_vars`, or None."""
    if name + "/part_0" not in all_vars:
        return None
    parts = []
    while name + "/part_%d" % len(parts) in all_vars:
        parts.append(all_vars[name + "/part_%d" % len(parts)])
    return parts


def _slice_spec(variable):
    """TensorFlow's SaveSliceInfo.spec of a shard: "<full shape> <offset,length:...>"."""
    _, full_shape, offset, part_shape = variable._save_slice_info
    return (" ".join("%d" % d for d in full_shape) + " " +
            ":".join("%d,%d" % (o, s) for o, s in zip(offset, part_shape)))


def _set_checkpoint_initializer(variable, ckpt_file, tensor_name, slice_spec):
    from .. import _troupe
    from ..framework import Operation
    g = variable.graph
    g._check_not_finalized()
    init = _troupe.initialize_from_checkpoint(g._scope, variable.op.name, ckpt_file,
                                              tensor_name, slice_spec)
    variable._initializer = Operation(init, g)


def _set_variable_or_list_initializer(variable_or_list, ckpt_file, tensor_name):
    if isinstance(variable_or_list, (list, tuple)):
        slice_name = None
        for v in variable_or_list:
            info = getattr(v, "_save_slice_info", None)
            if info is None:
                raise ValueError("%s is not a shard of a partitioned variable" % v.name)
            if slice_name is None:
                slice_name = info[0]
            elif slice_name != info[0]:
                raise ValueError("Slices must all be from the same tensor: %s != %s"
                                 % (slice_name, info[0]))
            _set_checkpoint_initializer(v, ckpt_file, tensor_name, _slice_spec(v))
    else:
        _set_checkpoint_initializer(variable_or_list, ckpt_file, tensor_name, "")


def init_from_checkpoint(ckpt_dir_or_file, assignment_map):
    """Replaces the initializers of the variables `assignment_map` names so that they load their
    values from the checkpoint (a directory's newest, or the prefix given), as TensorFlow 1.x's
    tf.train.init_from_checkpoint: nothing is read into the graph; each initializer reads its
    tensor (a shard its slice) when it runs, on the CPU of its variable's task, which must be able
    to read the file. Keys are tensor names in the checkpoint, or scopes ending in "/" ("/" for
    its root); values are variables, lists of shards, or names or scopes of tf.get_variable's
    variables. ValueError for a tensor or variable that is missing or of another shape."""
    from ..framework import get_default_graph
    from ..partitioned_variables import PartitionedVariable
    if not isinstance(assignment_map, dict):
        raise TypeError("init_from_checkpoint: assignment_map must be a dict, got %r"
                        % (assignment_map,))
    reader = load_checkpoint(ckpt_dir_or_file)
    ckpt_file = os.path.abspath(reader._path)
    variable_map = reader.get_variable_to_shape_map()
    store_vars = _store_variables(get_default_graph())
    for tensor_name_in_ckpt, current in sorted(assignment_map.items()):
        if isinstance(current, PartitionedVariable):
            current = current._get_variable_list()
        var = None
        if _is_variable(current) or (isinstance(current, list) and current and
                                     all(_is_variable(v) for v in current)):
            var = current
        elif isinstance(current, str):
            var = store_vars.get(current)
            if var is None:
                var = _collect_partitioned_variable(current, store_vars)
        else:
            raise TypeError("init_from_checkpoint: assignment_map[%r] must be a variable, a list "
                            "of a partitioned variable's shards, or a name, got %r"
                            % (tensor_name_in_ckpt, current))
        if var is not None:
            if tensor_name_in_ckpt not in variable_map:
                raise ValueError("Tensor %s is not found in %s checkpoint %s"
                                 % (tensor_name_in_ckpt, ckpt_dir_or_file, variable_map))
            if _is_variable(var):
                if not var.get_shape().is_compatible_with(variable_map[tensor_name_in_ckpt]):
                    raise ValueError(
                        "Shape of variable %s (%s) doesn't match with shape of tensor %s (%s) "
                        "from checkpoint reader." % (var.name, str(var.get_shape()),
                                                     tensor_name_in_ckpt,
                                                     str(variable_map[tensor_name_in_ckpt])))
            _set_variable_or_list_initializer(var, ckpt_file, tensor_name_in_ckpt)
            continue
        scopes = ""
        if "/" in current:
            scopes = current[:current.rindex("/")]
        if not tensor_name_in_ckpt.endswith("/"):
            raise ValueError("Assignment map with scope only name {} should map to scope only "
                             "{}. Should be 'scope/': 'other_scope/'.".format(
                                 scopes, tensor_name_in_ckpt))
        scope_variables = set()
        for var_name in store_vars:
            if not scopes or var_name.startswith(scopes + "/"):
                if "/part_" in var_name:
                    var_name = var_name[:var_name.index("/part_")]
                scope_variables.add(var_name)
        for var_name in sorted(scope_variables):
            full_tensor_name = var_name[len(scopes):]
            if current != "/":
                full_tensor_name = full_tensor_name[1:]
            if tensor_name_in_ckpt != "/":
                full_tensor_name = tensor_name_in_ckpt + full_tensor_name
            if full_tensor_name.endswith("/"):
                full_tensor_name = full_tensor_name[:-1]
            if full_tensor_name not in variable_map:
                raise ValueError("Tensor %s (%s in %s) is not found in %s checkpoint"
                                 % (full_tensor_name, var_name[len(scopes) + 1:],
                                    tensor_name_in_ckpt, ckpt_dir_or_file))
            var = store_vars.get(var_name)
            if var is None:
                var = _collect_partitioned_variable(var_name, store_vars)
            _set_variable_or_list_initializer(var, ckpt_file, full_tensor_name)
