"""tf.train.Saver and the checkpoint functions (latest_checkpoint, get_checkpoint_state,
checkpoint_exists), as TensorFlow 1.x names and uses them, over troupe's .npz checkpoints
(apps/training/saver.hpp, docs/checkpoints.md).

A checkpoint is named by its prefix, as TensorFlow names it: `saver.save(sess, "/dir/model",
global_step=7)` returns "/dir/model-7" and writes "/dir/model-7.npz" (one array per variable;
with sharded=True, each task holding variables writes its own
"/dir/model-7.shard-<i>-of-<n>.npz", as TensorFlow's sharded saver writes a file per device),
then the directory's "checkpoint" index; `restore` and `latest_checkpoint` take and give
prefixes (a path ending in ".npz" is taken too). troupe writes no .meta file.
"""

import numbers
import os

import numpy as np

from .. import _troupe
from .. import errors
from ..framework import get_default_graph


def _prefix(path):
    return path[:-4] if path.endswith(".npz") else path


class CheckpointState:
    """tf.train.CheckpointState: the newest checkpoint and all those kept, as prefixes."""

    def __init__(self, model_checkpoint_path="", all_model_checkpoint_paths=()):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)

    def __repr__(self):
        lines = ['model_checkpoint_path: "%s"' % self.model_checkpoint_path]
        lines += ['all_model_checkpoint_paths: "%s"' % p for p in self.all_model_checkpoint_paths]
        return "\n".join(lines)


class Saver:
    """Saves and restores variables (all of the graph's by default; build it after the
    model)."""

    def __init__(self, var_list=None, reshape=False, sharded=False, max_to_keep=5,
                 keep_checkpoint_every_n_hours=10000.0, name=None, restore_sequentially=False,
                 saver_def=None, builder=None, defer_build=False, allow_empty=False,
                 write_version=2, pad_step_number=False, save_relative_paths=False,
                 filename=None):
        for flag, what in ((reshape, "reshape"), (saver_def is not None, "saver_def"),
                           (builder is not None, "builder"), (defer_build, "defer_build"),
                           (pad_step_number, "pad_step_number")):
            if flag:
                raise ValueError("Saver(%s=...) is not supported by troupe" % what)
        if max_to_keep is None:
            max_to_keep = 0
        if not isinstance(max_to_keep, int) or max_to_keep < 0:
            raise ValueError("Saver: max_to_keep must be None or an int >= 0, got %r"
                             % (max_to_keep,))
        self._graph = get_default_graph()
        self._graph._check_not_finalized()
        pairs = self._var_list(var_list)
        self._empty = False
        if var_list is None and not self._graph_has_variables():
            if not allow_empty:
                raise ValueError("No variables to save")
            self._empty = True
            self._native = None
        else:
            self._native = _troupe.Saver.create(self._graph._scope.root(), max_to_keep,
                                                float(keep_checkpoint_every_n_hours), pairs,
                                                bool(sharded))
        self._max_to_keep = max_to_keep
        self._last_checkpoints = []

    def _graph_has_variables(self):
        from ..variables import global_variables
        with self._graph.as_default():
            return bool(global_variables())

    @staticmethod
    def _var_list(var_list):
        """[(name in the checkpoint, variable node)] for var_list (a list or a dict)."""
        if var_list is None:
            return []
        if isinstance(var_list, dict):
            items = []
            for name, v in var_list.items():
                # A partitioned variable: its shards, saved as one variable under `name`.
                parts = v._get_variable_list() if hasattr(v, "_get_variable_list") else [v]
                items.extend((name, part) for part in parts)
        elif isinstance(var_list, (list, tuple, set)):
            items = []
            for v in var_list:
                if hasattr(v, "_get_variable_list"):
                    items.extend((v.name, part) for part in v._get_variable_list())
                    continue
                op = getattr(v, "op", None)
                if op is None:
                    raise TypeError("Saver: var_list must hold Variables, got %r" % (v,))
                items.append((op.name, v))
        else:
            raise TypeError("Saver: var_list must be a list or a dict, got %r" % (var_list,))
        if not items:
            raise ValueError("Saver: var_list is empty")
        pairs = []
        for name, v in items:
            op = getattr(v, "op", None)
            if not isinstance(name, str) or op is None or op.type != "Variable":
                raise TypeError("Saver: var_list must map names to Variables, got %r: %r"
                                % (name, v))
            pairs.append((name, op.name))
        return pairs

    def save(self, sess, save_path, global_step=None, latest_filename=None,
             meta_graph_def=None, write_meta_graph=True, write_state=True,
             strip_default_attrs=False, save_debug_info=False):
        """Writes the checkpoint "<save_path>-<global_step>" (or "<save_path>"); returns that
        prefix, or None for an empty Saver."""
        if latest_filename not in (None, "checkpoint"):
            raise ValueError("Saver.save: latest_filename other than 'checkpoint' is not "
                             "supported by troupe")
        if not write_state:
            raise ValueError("Saver.save(write_state=False) is not supported by troupe")
        if not isinstance(save_path, str) or not save_path:
            raise ValueError("Saver.save: save_path must be a non-empty string, got %r"
                             % (save_path,))
        if self._empty:
            return None
        step = None
        if global_step is not None:
            if isinstance(global_step, numbers.Integral) or (
                    isinstance(global_step, np.ndarray) and global_step.shape == () and
                    global_step.dtype.kind in "iu"):
                step = int(global_step)
            else:
                step = int(sess.run(global_step))  # a Tensor or Variable
        path = _prefix(self._native.save(sess._handle, save_path, step))
        if path in self._last_checkpoints:
            self._last_checkpoints.remove(path)
        self._last_checkpoints.append(path)
        if self._max_to_keep > 0:
            del self._last_checkpoints[:-self._max_to_keep]
        return path

    def _save_handle(self, sess, directory, step):
        return self._native.save(sess._handle, os.path.join(directory, "model.ckpt"), step)

    def restore(self, sess, save_path):
        """Assigns the variables from the checkpoint `save_path` (a prefix)."""
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        if not isinstance(save_path, str):
            raise TypeError("Saver.restore: save_path must be a string, got %r" % (save_path,))
        if not checkpoint_exists(save_path):
            raise ValueError("The passed save_path is not a valid checkpoint: " + save_path)
        if self._empty:
            return
        self._native.restore(sess._handle, save_path)

    @property
    def last_checkpoints(self):
        """The prefixes of the checkpoints this Saver wrote and keeps, oldest first."""
        return list(self._last_checkpoints)

    def set_last_checkpoints(self, last_checkpoints):
        if not isinstance(last_checkpoints, list):
            raise TypeError("last_checkpoints must be a list, got %r" % (last_checkpoints,))
        self._last_checkpoints = list(last_checkpoints)

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time):
        self.set_last_checkpoints([path for path, _ in last_checkpoints_with_time])

    def recover_last_checkpoints(self, checkpoint_paths):
        self.set_last_checkpoints([p for p in checkpoint_paths if checkpoint_exists(p)])

    def export_meta_graph(self, *args, **kwargs):
        raise NotImplementedError("Saver.export_meta_graph: troupe writes no MetaGraphDef")

    def as_saver_def(self):
        raise NotImplementedError("Saver.as_saver_def: troupe has no SaverDef")


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The CheckpointState of `checkpoint_dir`'s index (rebuilt from the files when it is lost
    or damaged), with the paths as prefixes joined to the directory; None if there is none."""
    if latest_filename not in (None, "checkpoint"):
        raise ValueError("latest_filename other than 'checkpoint' is not supported by troupe")
    state = _troupe.checkpoint_state(checkpoint_dir)
    if state is None:
        return None
    newest, kept = state

    def full(p):
        return _prefix(p if os.path.isabs(p) else os.path.join(checkpoint_dir, p))
    return CheckpointState(full(newest), [full(p) for p in kept])


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """The newest checkpoint's prefix in `checkpoint_dir`, or None."""
    if latest_filename not in (None, "checkpoint"):
        raise ValueError("latest_filename other than 'checkpoint' is not supported by troupe")
    path = _troupe.latest_checkpoint(checkpoint_dir)
    return None if path is None else _prefix(path)


def _data_files(checkpoint_prefix):
    """The files of a checkpoint (its .npz, or all its shards), or [] when it is not complete."""
    try:
        return _troupe.checkpoint_data_files(checkpoint_prefix)
    except (errors.NotFoundError, errors.DataLossError):
        return []


def checkpoint_exists(checkpoint_prefix):
    """Whether a checkpoint of that prefix (or that .npz path) exists: its .npz, or every one of
    its shards."""
    return bool(_data_files(checkpoint_prefix))


def get_checkpoint_mtimes(checkpoint_prefixes):
    """The modification time of each checkpoint that exists (of its newest file), in order."""
    mtimes = []
    for prefix in checkpoint_prefixes:
        files = _data_files(prefix)
        if files:
            mtimes.append(max(os.path.getmtime(f) for f in files))
    return mtimes
