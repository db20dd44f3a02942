"""tf.train.warm_start, as TensorFlow 1.x's warm_starting_util: a model's variables start from
another run's checkpoint (each by tf.train.init_from_checkpoint), chosen by a regular expression,
names or Variables, and found in the checkpoint under their own names or the ones
var_name_to_prev_var_name gives. Vocabulary remapping (var_name_to_vocab_info) is not
supported."""

import collections

from .. import logging
from ..framework import GraphKeys, get_collection
from .checkpoint_utils import _is_variable, init_from_checkpoint


class VocabInfo(collections.namedtuple("VocabInfo", [
        "new_vocab", "new_vocab_size", "num_oov_buckets", "old_vocab", "old_vocab_size",
        "backup_initializer", "axis"])):
    """tf.train.VocabInfo: what TensorFlow needs to remap an embedding's rows to a new
    vocabulary. troupe accepts the value but warm_start does not remap (NotImplementedError)."""

    def __new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab, old_vocab_size=-1,
                backup_initializer=None, axis=0):
        if axis not in (0, 1):
            raise ValueError("The only supported values for the axis argument are 0 and 1.  "
                             "Provided axis: {}".format(axis))
        return super().__new__(cls, new_vocab, new_vocab_size, num_oov_buckets, old_vocab,
                               old_vocab_size, backup_initializer, axis)


def _infer_var_name(variables):
    """The name a variable has in a checkpoint: its own, or a shard's whole variable's."""
    names = set()
    for v in variables:
        info = getattr(v, "_save_slice_info", None)
        names.add(info[0] if info is not None else v.op.name)
    if len(names) > 1:
        raise TypeError("`var` = %s passed as arg violates the constraints.  name_to_var_dict = %s"
                        % (variables, sorted(names)))
    return names.pop()


def _get_grouped_variables(vars_to_warm_start):
    if isinstance(vars_to_warm_start, str) or vars_to_warm_start is None:
        logging.info("Warm-starting variables only in TRAINABLE_VARIABLES.")
        list_of_vars = get_collection(GraphKeys.TRAINABLE_VARIABLES, scope=vars_to_warm_start)
    elif isinstance(vars_to_warm_start, list):
        if all(isinstance(v, str) for v in vars_to_warm_start):
            list_of_vars = []
            for v in vars_to_warm_start:
                list_of_vars += get_collection(GraphKeys.GLOBAL_VARIABLES, scope=v)
        elif all(_is_variable(v) for v in vars_to_warm_start):
            list_of_vars = vars_to_warm_start
        else:
            raise ValueError("If `vars_to_warm_start` is a list, it must be all `Variable` or all "
                             "`str`.  Given types are {}".format(
                                 [type(v) for v in vars_to_warm_start]))
    else:
        raise ValueError("`vars_to_warm_start must be a `list` or `str`.  Given type is {}"
                         .format(type(vars_to_warm_start)))
    grouped = {}
    for v in list_of_vars:
        grouped.setdefault(_infer_var_name([v]), []).append(v)
    return grouped


def warm_start(ckpt_to_initialize_from, vars_to_warm_start=".*", var_name_to_vocab_info=None,
               var_name_to_prev_var_name=None):
    """Makes the initializers of the chosen variables read them from the checkpoint (a
    directory's newest, or a prefix): build global_variables_initializer() after this call."""
    if var_name_to_vocab_info:
        raise NotImplementedError("warm_start: var_name_to_vocab_info (remapping an embedding "
                                  "to a new vocabulary) is not supported by troupe; warm-start "
                                  "those variables by name or leave them out")
    logging.info("Warm-starting from: {}".format(ckpt_to_initialize_from))
    grouped_variables = _get_grouped_variables(vars_to_warm_start)
    var_name_to_prev_var_name = var_name_to_prev_var_name or {}
    prev_var_name_used = set()
    assignment = {}
    for var_name, variables in grouped_variables.items():
        prev_var_name = var_name_to_prev_var_name.get(var_name)
        if prev_var_name:
            prev_var_name_used.add(var_name)
        if vars_to_warm_start:
            variable = variables[0] if len(variables) == 1 else variables
            assignment[prev_var_name or var_name] = variable
    init_from_checkpoint(ckpt_to_initialize_from, assignment)
    logging.info("Warm-started %d variables.", len(assignment))
    not_used = set(var_name_to_prev_var_name.keys()) - prev_var_name_used
    if not_used:
        raise ValueError("You provided the following variables in var_name_to_prev_var_name that "
                         "were not used: {0}.  Perhaps you misspelled them?  Here is the list of "
                         "viable variable names: {1}".format(not_used, grouped_variables.keys()))
