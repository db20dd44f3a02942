"""tf.ConfigProto and the messages it holds (GPUOptions, RPCOptions, GraphOptions,
OptimizerOptions), as TensorFlow 1.x's protocol buffers behave for the programs that set them:
keyword arguments or attributes, nested messages present by default (so
`config.gpu_options.allow_growth = True` works), repeated fields as lists, `device_count` as a
dict, an unknown field a ValueError naming it.

What troupe does with each field is in its message's FIELDS table: `acts` (used), or
`no effect` with the reason (docs/python.md lists them). A value of the wrong type is a
TypeError naming the field, as protobuf's is. A setting troupe cannot honour with the meaning
TensorFlow gives it (several CPU devices per task, as `device_count={"CPU": 4}` asks) is a
ValueError saying so, never a silent different meaning.
"""

_SCALARS = {"int": int, "float": (int, float), "bool": bool, "string": str, "bytes": bytes}


class _Message:
    """A protocol-buffer-like message: FIELDS maps a field name to (kind, default, note)."""

    FIELDS = {}

    def __init__(self, **fields):
        for name, (kind, default, _note) in self.FIELDS.items():
            if isinstance(kind, type) and issubclass(kind, _Message):
                value = kind()
            elif kind in ("repeated", "map"):
                value = [] if kind == "repeated" else {}
            else:
                value = default
            object.__setattr__(self, name, value)
        for name, value in fields.items():
            if name not in self.FIELDS:
                raise ValueError('Protocol message %s has no "%s" field.'
                                 % (type(self).__name__, name))
            setattr(self, name, value)

    def __setattr__(self, name, value):
        field = self.FIELDS.get(name)
        if field is None:
            raise AttributeError('Assignment not allowed (no field "%s" in protocol message '
                                 '%s object).' % (name, type(self).__name__))
        kind = field[0]
        if isinstance(kind, type) and issubclass(kind, _Message):
            if isinstance(value, dict):
                value = kind(**value)
            if not isinstance(value, kind):
                raise TypeError("Parameter to MergeFrom() must be instance of same class: "
                                "expected %s got %s." % (kind.__name__, type(value).__name__))
        elif kind == "repeated":
            if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
                raise TypeError("%s.%s: expected a list, got %r" % (type(self).__name__, name,
                                                                    value))
            value = list(value)
        elif kind == "map":
            if not isinstance(value, dict):
                raise TypeError("%s.%s: expected a dict, got %r" % (type(self).__name__, name,
                                                                    value))
            value = dict(value)
        else:
            expected = _SCALARS[kind]
            ok = isinstance(value, expected) and not (kind in ("int", "float") and
                                                      isinstance(value, bool))
            if kind == "bool" and isinstance(value, int) and value in (0, 1):
                ok, value = True, bool(value)
            if not ok:
                raise TypeError("%r has type %s, but expected one of: %s (field %s.%s)"
                                % (value, type(value).__name__, kind, type(self).__name__, name))
        self._check(name, value)
        object.__setattr__(self, name, value)

    def _check(self, name, value):
        """Subclasses refuse values troupe cannot honour."""

    def __eq__(self, other):
        return type(self) is type(other) and all(
            getattr(self, n) == getattr(other, n) for n in self.FIELDS)

    def __repr__(self):
        parts = []
        for name, (kind, default, _note) in self.FIELDS.items():
            value = getattr(self, name)
            if isinstance(value, _Message):
                if value != type(value)():
                    parts.append("%s {%r}" % (name, value))
            elif value != default and value not in ([], {}):
                parts.append("%s: %r" % (name, value))
        return " ".join(parts)

    def CopyFrom(self, other):
        for name in self.FIELDS:
            object.__setattr__(self, name, getattr(other, name))

    def HasField(self, name):
        if name not in self.FIELDS:
            raise ValueError('Protocol message has no "%s" field.' % name)
        value = getattr(self, name)
        return value != type(value)() if isinstance(value, _Message) else \
            value != self.FIELDS[name][1]


_NO_GPU = ("no effect: a task takes the GPUs CUDA_VISIBLE_DEVICES leaves it and their memory "
           "as it needs it (docs/gpu.md)")
_NO_RPC = "no effect: troupe's tasks talk over its own transport, not gRPC"
_NO_OPT = "no effect: troupe runs the graph as written (no graph rewriting)"


class GPUOptions(_Message):
    FIELDS = {
        "per_process_gpu_memory_fraction": ("float", 0.0, _NO_GPU),
        "allow_growth": ("bool", False, _NO_GPU),
        "allocator_type": ("string", "", _NO_GPU),
        "deferred_deletion_bytes": ("int", 0, _NO_GPU),
        "visible_device_list": ("string", "", _NO_GPU),
        "polling_active_delay_usecs": ("int", 0, _NO_GPU),
        "polling_inactive_delay_msecs": ("int", 0, _NO_GPU),
        "force_gpu_compatible": ("bool", False, _NO_GPU),
    }


class RPCOptions(_Message):
    FIELDS = {
        "use_rpc_for_inprocess_master": ("bool", False, _NO_RPC),
        "compression_algorithm": ("string", "", _NO_RPC),
        "compression_level": ("int", 0, _NO_RPC),
        "cache_rpc_response": ("bool", False, _NO_RPC),
        "disable_session_connection_sharing": ("bool", False, _NO_RPC),
    }


class OptimizerOptions(_Message):
    L1 = 0
    L0 = -1
    DEFAULT = 0
    OFF = -1
    ON_1 = 1
    ON_2 = 2
    FIELDS = {
        "do_common_subexpression_elimination": ("bool", False, _NO_OPT),
        "do_constant_folding": ("bool", False, _NO_OPT),
        "max_folded_constant_in_bytes": ("int", 0, _NO_OPT),
        "do_function_inlining": ("bool", False, _NO_OPT),
        "opt_level": ("int", 0, _NO_OPT),
        "global_jit_level": ("int", 0, "no effect: troupe has no XLA"),
    }


class GraphOptions(_Message):
    FIELDS = {
        "enable_recv_scheduling": ("bool", False, _NO_OPT),
        "optimizer_options": (OptimizerOptions, None, _NO_OPT),
        "build_cost_model": ("int", 0, "no effect: troupe keeps no cost model"),
        "build_cost_model_after": ("int", 0, "no effect: troupe keeps no cost model"),
        "infer_shapes": ("bool", False, "no effect: troupe always infers shapes"),
        "place_pruned_graph": ("bool", False, "no effect: troupe always places the pruned graph"),
        "enable_bfloat16_sendrecv": ("bool", False, "no effect: troupe has no bfloat16"),
        "timeline_step": ("int", 0, "no effect: troupe writes no timeline"),
    }


class ConfigProto(_Message):
    """tf.ConfigProto: session settings. See FIELDS for what each does in troupe."""

    FIELDS = {
        "device_count": ("map", None, "acts: {'CPU': k} gives a session's own local server "
                                      "CPU devices CPU:0 .. CPU:k-1; GPU (use "
                                      "CUDA_VISIBLE_DEVICES) and others have no effect"),
        "intra_op_parallelism_threads": ("int", 0, "acts: threads of a step's kernels"),
        "inter_op_parallelism_threads": ("int", 0, "no effect: troupe's actors schedule ops"),
        "use_per_session_threads": ("bool", False, "no effect: troupe's actors schedule ops"),
        "session_inter_op_thread_pool": ("repeated", None,
                                         "no effect: troupe's actors schedule ops"),
        "placement_period": ("int", 0, "no effect: troupe places each graph once"),
        "device_filters": ("repeated", None, "acts: the devices a session sees"),
        "gpu_options": (GPUOptions, None, _NO_GPU),
        "allow_soft_placement": ("bool", False, "acts: a node asking for a device that does "
                                                "not exist, or conflicting with the variable it "
                                                "updates, is placed where it can run"),
        "log_device_placement": ("bool", False, "no effect: placement is not logged"),
        "graph_options": (GraphOptions, None, _NO_OPT),
        "operation_timeout_in_ms": ("int", 0, "acts: the default deadline of every step"),
        "rpc_options": (RPCOptions, None, _NO_RPC),
        "isolate_session_state": ("bool", False, "acts: variables and queues of this session "
                                                 "are its own"),
    }

    def _check(self, name, value):
        if name == "device_count":
            for device, count in value.items():
                if not isinstance(device, str) or not isinstance(count, int):
                    raise TypeError("ConfigProto.device_count: expected {str: int}, got %r"
                                    % (value,))
                if device.upper() == "CPU" and not 0 <= count <= 256:
                    raise ValueError(
                        "ConfigProto.device_count={'CPU': %d}: expected 0 to 256 CPU devices "
                        "(0 means one)" % count)
        if name in ("operation_timeout_in_ms", "intra_op_parallelism_threads",
                    "inter_op_parallelism_threads") and value < 0:
            raise ValueError("ConfigProto.%s: expected an int >= 0, got %r" % (name, value))

    def _to_native(self):
        from . import _troupe
        config = _troupe.SessionConfig()
        config.operation_timeout_ms = self.operation_timeout_in_ms
        config.intra_op_threads = self.intra_op_parallelism_threads
        config.device_filters = [str(f) for f in self.device_filters]
        config.isolate_session_state = self.isolate_session_state
        config.allow_soft_placement = self.allow_soft_placement
        counts = {str(k).upper(): v for k, v in (self.device_count or {}).items()}
        config.cpu_devices = counts.get("CPU", 0)
        return config


class _TraceLevel:
    """RunOptions.TraceLevel: the enum's values, and Name/Value as protobuf's enum wrappers."""

    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3
    _NAMES = {0: "NO_TRACE", 1: "SOFTWARE_TRACE", 2: "HARDWARE_TRACE", 3: "FULL_TRACE"}

    @classmethod
    def Name(cls, number):
        if number not in cls._NAMES:
            raise ValueError("Enum TraceLevel has no name defined for value %r" % (number,))
        return cls._NAMES[number]

    @classmethod
    def Value(cls, name):
        for number, known in cls._NAMES.items():
            if known == name:
                return number
        raise ValueError("Enum TraceLevel has no value defined for name %r" % (name,))


_NO_DEBUG = "no effect: troupe has no tfdbg"


class DebugOptions(_Message):
    """RunOptions.debug_options (tfdbg's watches), accepted with no effect."""

    FIELDS = {
        "debug_tensor_watch_opts": ("repeated", None, _NO_DEBUG),
        "global_step": ("int", 0, _NO_DEBUG),
        "reset_disk_byte_usage": ("bool", False, _NO_DEBUG),
    }


class _RunExperimental(_Message):
    FIELDS = {
        "collective_graph_key": ("int", 0, "no effect: troupe has no collectives"),
        "use_run_handler_pool": ("bool", False, "no effect: troupe's actors schedule ops"),
    }


class RunOptions(_Message):
    """tf.RunOptions: settings of one Session.run. See FIELDS for what each does in troupe."""

    TraceLevel = _TraceLevel
    Experimental = _RunExperimental
    NO_TRACE = _TraceLevel.NO_TRACE
    SOFTWARE_TRACE = _TraceLevel.SOFTWARE_TRACE
    HARDWARE_TRACE = _TraceLevel.HARDWARE_TRACE
    FULL_TRACE = _TraceLevel.FULL_TRACE

    FIELDS = {
        "trace_level": ("int", 0, "acts: above NO_TRACE, run_metadata.step_stats records when "
                                  "each node of the step ran on which device, and its outputs "
                                  "(every level records the same: there are no hardware "
                                  "counters)"),
        "timeout_in_ms": ("int", 0, "acts: the step's deadline (0 or less: the session's)"),
        "inter_op_thread_pool": ("int", 0, "no effect: troupe's actors schedule ops"),
        "debug_options": (DebugOptions, None, _NO_DEBUG),
        "output_partition_graphs": ("bool", False, "acts: run_metadata.partition_graphs has "
                                                   "the graph each device of the step ran"),
        "report_tensor_allocations_upon_oom": ("bool", False, "no effect: an out-of-memory "
                                                              "error names the node only"),
        "experimental": (_RunExperimental, None, "no effect (its fields have none)"),
    }

    def _check(self, name, value):
        if name == "trace_level" and value not in _TraceLevel._NAMES:
            raise ValueError("RunOptions.trace_level: expected NO_TRACE (0), SOFTWARE_TRACE (1), "
                             "HARDWARE_TRACE (2) or FULL_TRACE (3), got %r" % (value,))
        if name == "inter_op_thread_pool" and value < -1:
            raise ValueError("RunOptions.inter_op_thread_pool: expected an int >= -1 (-1: the "
                             "caller's thread), got %r" % (value,))

    def _merge(self, other):
        """Merges `other` in as TensorFlow merges its hooks' options: the larger of each number,
        either of each flag, the debug watches appended (experimental is not merged)."""
        for name, (kind, _default, _note) in self.FIELDS.items():
            mine, theirs = getattr(self, name), getattr(other, name)
            if name == "debug_options":
                mine.debug_tensor_watch_opts = (list(mine.debug_tensor_watch_opts) +
                                                list(theirs.debug_tensor_watch_opts))
                mine.reset_disk_byte_usage = (mine.reset_disk_byte_usage or
                                              theirs.reset_disk_byte_usage)
            elif kind == "bool":
                setattr(self, name, mine or theirs)
            elif kind == "int":
                setattr(self, name, max(mine, theirs))
