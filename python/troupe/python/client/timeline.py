"""Chrome traces of a traced step, as TensorFlow 1.x's tensorflow.python.client.timeline writes
them: `Timeline(run_metadata.step_stats).generate_chrome_trace_format()` is a JSON document for
chrome://tracing (or Perfetto) with, per device of the step, a "<device> Compute" process whose
events are the step's nodes (name: the op, args: the node and its inputs) and a
"<device> Tensors" process, arrows for the tensors that crossed lanes or devices
(show_dataflow), and tensor lifetimes with per-allocator memory counters (show_memory).

As TensorFlow's: times are the step statistics' own (microseconds since the epoch, not moved
to 0); each node goes on the first lane of its device that is free when it starts, and that
lane number replaces the node's thread_id in the given StepStats; a label that is not
"name = Op(inputs)" shows as op "unknown".
"""

import collections
import copy
import json
import re


AllocationMaximum = collections.namedtuple("AllocationMaximum",
                                           ("timestamp", "num_bytes", "tensors"))
StepStatsAnalysis = collections.namedtuple("StepStatsAnalysis",
                                           ("chrome_trace", "allocator_maximums"))


class _ChromeTraceFormatter:
    """Collects trace events: metadata first, then the rest in the order they were added."""

    def __init__(self, show_memory=False):
        self._show_memory = show_memory
        self._events = []
        self._metadata = []

    def _create_event(self, ph, category, name, pid, tid, timestamp):
        return {"ph": ph, "cat": category, "name": name, "pid": pid, "tid": tid,
                "ts": timestamp}

    def emit_pid(self, name, pid):
        self._metadata.append({"name": "process_name", "ph": "M", "pid": pid,
                               "args": {"name": name}})

    def emit_tid(self, name, pid, tid):
        self._metadata.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                               "args": {"name": name}})

    def emit_region(self, timestamp, duration, pid, tid, category, name, args):
        event = self._create_event("X", category, name, pid, tid, timestamp)
        event["dur"] = duration
        event["args"] = args
        self._events.append(event)

    def _emit_object(self, ph, category, name, timestamp, pid, tid, object_id):
        event = self._create_event(ph, category, name, pid, tid, timestamp)
        event["id"] = object_id
        self._events.append(event)
        return event

    def emit_obj_create(self, category, name, timestamp, pid, tid, object_id):
        self._emit_object("N", category, name, timestamp, pid, tid, object_id)

    def emit_obj_delete(self, category, name, timestamp, pid, tid, object_id):
        self._emit_object("D", category, name, timestamp, pid, tid, object_id)

    def emit_obj_snapshot(self, category, name, timestamp, pid, tid, object_id, snapshot):
        event = self._emit_object("O", category, name, timestamp, pid, tid, object_id)
        event["args"] = {"snapshot": snapshot}

    def emit_flow_start(self, name, timestamp, pid, tid, flow_id):
        self._emit_object("s", "DataFlow", name, timestamp, pid, tid, flow_id)

    def emit_flow_end(self, name, timestamp, pid, tid, flow_id):
        self._emit_object("t", "DataFlow", name, timestamp, pid, tid, flow_id)

    def emit_counter(self, category, name, pid, timestamp, counter, value):
        event = self._create_event("C", category, name, pid, 0, timestamp)
        event["args"] = {counter: value}
        self._events.append(event)

    def emit_counters(self, category, name, pid, timestamp, counters):
        event = self._create_event("C", category, name, pid, 0, timestamp)
        event["args"] = dict(counters)
        self._events.append(event)

    def format_to_string(self, pretty=False):
        trace = {"traceEvents": self._metadata + self._events}
        if pretty:
            return json.dumps(trace, indent=4, separators=(",", ": "))
        return json.dumps(trace, separators=(",", ":"))


class _TensorTracker:
    """One tensor's life: made when its node started, last used when its last consumer ended."""

    def __init__(self, name, object_id, timestamp, pid, allocator, num_bytes):
        self._name = name
        self._pid = pid
        self._object_id = object_id
        self._create_time = timestamp
        self._allocator = allocator
        self._num_bytes = num_bytes
        self._ref_times = []
        self._unref_times = []

    name = property(lambda self: self._name)
    pid = property(lambda self: self._pid)
    create_time = property(lambda self: self._create_time)
    object_id = property(lambda self: self._object_id)
    num_bytes = property(lambda self: self._num_bytes)
    allocator = property(lambda self: self._allocator)

    @property
    def last_unref(self):
        return max(self._unref_times)

    def add_ref(self, timestamp):
        self._ref_times.append(timestamp)

    def add_unref(self, timestamp):
        self._unref_times.append(timestamp)


_LABEL = re.compile(r"(.*) = (.*)\((.*)\)")


class Timeline:
    """A step's statistics as a Chrome trace. `graph` is accepted, as TensorFlow's, and not
    used."""

    def __init__(self, step_stats, graph=None):
        self._step_stats = step_stats
        self._graph = graph
        self._chrome_trace = _ChromeTraceFormatter()
        self._next_pid = 0
        self._device_pids = {}
        self._tensor_pids = {}
        self._tensors = {}
        self._next_flow_id = 0
        self._flow_starts = {}
        self._alloc_times = {}
        self._allocator_maximums = {}

    def _alloc_pid(self):
        pid = self._next_pid
        self._next_pid += 1
        return pid

    def _alloc_flow_id(self):
        flow_id = self._next_flow_id
        self._next_flow_id += 1
        return flow_id

    @staticmethod
    def _parse_op_label(label):
        """(node name, op, inputs) of a label "name = Op(in1, in2)"; unknowns otherwise."""
        match = _LABEL.match(label)
        if match is None:
            return "unknown", "unknown", []
        name, op, inputs = match.groups()
        return name, op, inputs.split(", ") if inputs else []

    def _assign_lanes(self):
        """Puts each node on the first lane of its device free when it starts (its
        thread_id)."""
        for device in self._step_stats.dev_stats:
            lane_ends = [0]
            for node in device.node_stats:
                start = node.all_start_micros
                end = start + node.all_end_rel_micros
                for lane, lane_end in enumerate(lane_ends):
                    if start > lane_end:
                        break
                else:
                    lane = len(lane_ends)
                    lane_ends.append(0)
                lane_ends[lane] = end
                node.thread_id = lane

    def _emit_op(self, node, pid, is_gputrace):
        start = node.all_start_micros
        duration = node.all_end_rel_micros
        node_name = node.node_name
        if is_gputrace:
            fields = node.node_name.split(":") + ["unknown"]
            node_name, op = fields[0], fields[1]
            inputs = []
        elif node.node_name == "RecvTensor":
            op, inputs = "RecvTensor", []
        else:
            _, op, inputs = self._parse_op_label(node.timeline_label)
        args = {"name": node_name, "op": op}
        for i, name in enumerate(inputs):
            args["input%d" % i] = name
        self._chrome_trace.emit_region(start, duration, pid, node.thread_id, "Op", op, args)

    def _emit_tensor_snapshot(self, tensor, timestamp, pid, tid, value):
        description = str(value.tensor_description).replace('"', "")
        self._chrome_trace.emit_obj_snapshot("Tensor", tensor.name, timestamp, pid, tid,
                                             tensor.object_id,
                                             {"tensor_description": description})

    def _produce_tensor(self, name, timestamp, tensors_pid, allocator, num_bytes):
        object_id = len(self._tensors)
        tensor = _TensorTracker(name, object_id, timestamp, tensors_pid, allocator, num_bytes)
        self._tensors[name] = tensor
        return tensor

    @staticmethod
    def _is_gputrace_device(device_name):
        return "/stream:" in device_name or "/memcpy" in device_name

    def _allocate_pids(self):
        self._allocators_pid = self._alloc_pid()
        self._chrome_trace.emit_pid("Allocators", self._allocators_pid)
        for device in self._step_stats.dev_stats:
            device_pid = self._alloc_pid()
            self._device_pids[device.device] = device_pid
            tensors_pid = self._alloc_pid()
            self._tensor_pids[device.device] = tensors_pid
            self._chrome_trace.emit_pid(device.device + " Compute", device_pid)
            self._chrome_trace.emit_pid(device.device + " Tensors", tensors_pid)

    def _analyze_tensors(self, show_memory):
        for device in self._step_stats.dev_stats:
            device_pid = self._device_pids[device.device]
            tensors_pid = self._tensor_pids[device.device]
            for node in device.node_stats:
                tid = node.thread_id
                start = node.all_start_micros
                end = start + node.all_end_rel_micros
                for index, output in enumerate(node.output):
                    name = node.node_name if index == 0 else "%s:%d" % (node.node_name, index)
                    allocation = output.tensor_description.allocation_description
                    tensor = self._produce_tensor(name, start, tensors_pid,
                                                  allocation.allocator_name,
                                                  allocation.requested_bytes)
                    tensor.add_ref(start)
                    tensor.add_unref(end)
                    self._flow_starts[name] = (end, device_pid, tid)
                    if show_memory:
                        self._chrome_trace.emit_obj_create("Tensor", name, start, tensors_pid,
                                                           tid, tensor.object_id)
                        self._emit_tensor_snapshot(tensor, end - 1, tensors_pid, tid, output)

    def _show_compute(self, show_dataflow):
        for device in self._step_stats.dev_stats:
            device_pid = self._device_pids[device.device]
            is_gputrace = self._is_gputrace_device(device.device)
            for node in device.node_stats:
                tid = node.thread_id
                start = node.all_start_micros
                end = start + node.all_end_rel_micros
                self._emit_op(node, device_pid, is_gputrace)
                if is_gputrace or node.node_name == "RecvTensor":
                    continue
                _, _, inputs = self._parse_op_label(node.timeline_label)
                for name in inputs:
                    if name not in self._tensors:
                        # A tensor received from another device: "<name>/_<n>" is its Recv.
                        cut = name.rfind("/_")
                        if cut > 0:
                            name = name[:cut]
                    if name not in self._tensors:
                        continue  # a control input, or a tensor of an untraced device
                    tensor = self._tensors[name]
                    tensor.add_ref(start)
                    tensor.add_unref(end - 1)
                    if not show_dataflow:
                        continue
                    create_time, create_pid, create_tid = self._flow_starts[name]
                    if (create_pid, create_tid) != (device_pid, tid):
                        flow_id = self._alloc_flow_id()
                        self._chrome_trace.emit_flow_start(name, create_time, create_pid,
                                                           create_tid, flow_id)
                        self._chrome_trace.emit_flow_end(name, start, device_pid, tid, flow_id)

    def _show_memory_counters(self):
        allocations = {}
        for name, tensor in self._tensors.items():
            self._chrome_trace.emit_obj_delete("Tensor", name, tensor.last_unref, tensor.pid, 0,
                                               tensor.object_id)
            changes = allocations.setdefault(tensor.allocator, [])
            changes.append((tensor.create_time, tensor.num_bytes, name))
            changes.append((tensor.last_unref, -tensor.num_bytes, name))
        self._allocator_maximums = {}
        for allocator, changes in allocations.items():
            changes.sort()
            total = 0
            maximum = 0
            live = set()
            live_at_maximum = set()
            timestamp_at_maximum = 0
            for timestamp, num_bytes, name in changes:
                total += num_bytes
                if num_bytes < 0:
                    live.discard(name)
                else:
                    live.add(name)
                if total > maximum:
                    maximum = total
                    live_at_maximum = copy.copy(live)
                    timestamp_at_maximum = timestamp
                self._chrome_trace.emit_counter("Memory", allocator, self._allocators_pid,
                                                timestamp, allocator, total)
            self._allocator_maximums[allocator] = AllocationMaximum(
                timestamp=timestamp_at_maximum, num_bytes=maximum, tensors=live_at_maximum)

    def analyze_step_stats(self, show_dataflow=True, show_memory=True):
        """Builds the trace: a StepStatsAnalysis of the formatter and, per allocator, the most
        memory its tensors held at once."""
        self._allocate_pids()
        self._assign_lanes()
        self._analyze_tensors(show_memory)
        self._show_compute(show_dataflow)
        if show_memory:
            self._show_memory_counters()
        return StepStatsAnalysis(chrome_trace=self._chrome_trace,
                                 allocator_maximums=self._allocator_maximums)

    def generate_chrome_trace_format(self, show_dataflow=True, show_memory=False):
        """The step as a Chrome trace: a JSON string (indented)."""
        step_stats_analysis = self.analyze_step_stats(show_dataflow=show_dataflow,
                                                      show_memory=show_memory)
        return step_stats_analysis.chrome_trace.format_to_string(pretty=True)
