"""tf.train.Scaffold: the ops a monitored session makes the model ready with, as TensorFlow 1.x
defines them. Each one not given comes, at finalize(), from the graph's collection (INIT_OP,
READY_OP, READY_FOR_LOCAL_INIT_OP, LOCAL_INIT_OP, SUMMARY_OP, SAVERS) or else from TensorFlow's
default, which is then recorded in that collection:

  init_op                  global_variables_initializer()
  ready_op                 report_uninitialized_variables()
  ready_for_local_init_op  report_uninitialized_variables(global_variables())
  local_init_op            Scaffold.default_local_init_op(): local_variables_initializer()
  summary_op               tf.summary.merge_all() (None when there are no summaries)
  saver                    Saver(sharded=True, allow_empty=True)

finalize() also finalizes the graph. The session that uses it (apps/training/scaffold.hpp) runs
them: the chief restores a checkpoint or else runs init_op with init_feed_dict and then
init_fn(scaffold, session); every task runs local_init_op once ready_for_local_init_op is empty;
then ready_op must be empty.
"""

import logging

from ..framework import GraphKeys, Operation, Tensor, get_default_graph

logger = logging.getLogger("troupe")


class Scaffold:
    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None,
                 saver=None, copy_from_scaffold=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            # As TensorFlow's: each argument given overrides the copied one; init_fn is
            # copied as the original, unwrapped function.
            pick = lambda given, copied: given if given is not None else copied  # noqa: E731
            init_op = pick(init_op, copy_from_scaffold.init_op)
            init_feed_dict = pick(init_feed_dict, copy_from_scaffold._init_feed_dict)
            init_fn = pick(init_fn, copy_from_scaffold._user_init_fn)
            ready_op = pick(ready_op, copy_from_scaffold.ready_op)
            ready_for_local_init_op = pick(ready_for_local_init_op,
                                           copy_from_scaffold.ready_for_local_init_op)
            local_init_op = pick(local_init_op, copy_from_scaffold.local_init_op)
            summary_op = pick(summary_op, copy_from_scaffold.summary_op)
            saver = pick(saver, copy_from_scaffold.saver)
        if init_fn is not None and not callable(init_fn):
            raise TypeError("Scaffold: init_fn must be callable as init_fn(scaffold, session), "
                            "got %r" % (init_fn,))
        self._user_init_fn = init_fn
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn is not None else None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._summary_op = summary_op
        self._saver = saver

    def finalize(self):
        """Creates the ops not given (see the module's doc) and finalizes the graph."""
        self._create_defaults()
        get_default_graph().finalize()
        logger.info("Graph was finalized.")
        return self

    def _create_defaults(self):
        from ..ops import group
        from ..summary import merge_all
        from ..variables import (global_variables, global_variables_initializer,
                                 report_uninitialized_variables)
        from .saver import Saver
        if self._init_op is None:
            self._init_op = Scaffold.get_or_default(
                "init_op", GraphKeys.INIT_OP, global_variables_initializer)
        if self._ready_op is None:
            self._ready_op = Scaffold.get_or_default(
                "ready_op", GraphKeys.READY_OP, report_uninitialized_variables)
        if self._ready_for_local_init_op is None:
            self._ready_for_local_init_op = Scaffold.get_or_default(
                "ready_for_local_init_op", GraphKeys.READY_FOR_LOCAL_INIT_OP,
                lambda: report_uninitialized_variables(global_variables()))
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default(
                "local_init_op", GraphKeys.LOCAL_INIT_OP, Scaffold.default_local_init_op)
        if self._summary_op is None:
            self._summary_op = Scaffold.get_or_default("summary_op", GraphKeys.SUMMARY_OP,
                                                       merge_all)
        if self._saver is None:
            self._saver = Scaffold.get_or_default("saver", GraphKeys.SAVERS,
                                                  lambda: Saver(sharded=True, allow_empty=True))

    def _check_types(self):
        """TypeError naming the first field a session cannot run (finalize() itself keeps
        whatever it was given, as TensorFlow's)."""
        from .saver import Saver
        expected = (("init_op", self._init_op, Operation),
                    ("local_init_op", self._local_init_op, Operation),
                    ("ready_op", self._ready_op, Tensor),
                    ("ready_for_local_init_op", self._ready_for_local_init_op, Tensor),
                    ("summary_op", self._summary_op, Tensor),
                    ("saver", self._saver, Saver))
        for name, value, kind in expected:
            if value is not None and not isinstance(value, kind):
                raise TypeError("Scaffold: %s must be a %s or None, got %r"
                                % (name, kind.__name__, value))
        if self._init_feed_dict is not None and not isinstance(self._init_feed_dict, dict):
            raise TypeError("Scaffold: init_feed_dict must be a dict, got %r"
                            % (self._init_feed_dict,))

    @property
    def init_fn(self):
        return self._init_fn

    @property
    def init_op(self):
        return self._init_op

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        return self._ready_for_local_init_op

    @property
    def local_init_op(self):
        return self._local_init_op

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def saver(self):
        return self._saver

    @property
    def init_feed_dict(self):
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The one item of the collection `collection_key`, else default_constructor()'s value
        (None stays None), added to the collection."""
        graph = get_default_graph()
        items = graph.get_collection(collection_key)
        if items:
            if len(items) > 1:
                raise RuntimeError("More than one item in the collection \"%s\". Please "
                                   "indicate which one to use by passing it to the "
                                   "tf.Scaffold constructor as:  tf.Scaffold(%s=item to use)"
                                   % (collection_key, arg_name))
            return items[0]
        op = default_constructor()
        if op is not None:
            graph.add_to_collection(collection_key, op)
        return op

    @staticmethod
    def default_local_init_op():
        """Initialises the local variables (TensorFlow's also initialises lookup tables and
        local resources, which troupe does not have)."""
        from ..ops import group
        from ..variables import local_variables_initializer
        return group(local_variables_initializer())
