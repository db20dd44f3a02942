"""Traced steps, timelines and ProfilerHook, as TensorFlow 1.x's timeline_test.py,
basic_session_run_hooks_test.py (ProfilerHookTest) and monitored_session_test.py (the merging
of run options) describe them (rewritten here): Session.run(options=RunOptions(trace_level=
FULL_TRACE), run_metadata=...) fills step_stats, one DeviceStepStats per device of the step;
Timeline turns it into a Chrome trace; ProfilerHook writes one every N steps or seconds."""

import glob
import json
import os
import time

import pytest

import troupe as tf
from conftest import free_ports
from troupe.python.client import timeline


def _validate_trace(chrome_trace_format):
    trace = json.loads(chrome_trace_format)
    assert "traceEvents" in trace
    for event in trace["traceEvents"]:
        assert "ph" in event
    return trace


def _traced_run(sess, fetches):
    run_options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
    run_metadata = tf.RunMetadata()
    sess.run(fetches, options=run_options, run_metadata=run_metadata)
    assert run_metadata.HasField("step_stats")
    return run_metadata


def test_simple_timeline():
    with tf.device("/cpu:0"):
        with tf.Session() as sess:
            run_metadata = _traced_run(sess, tf.constant(1.0))
    trace = timeline.Timeline(run_metadata.step_stats).generate_chrome_trace_format()
    _validate_trace(trace)


def test_timeline_cpu():
    with tf.device("/cpu:0"):
        const1 = tf.constant(1.0, name="const1")
        const2 = tf.constant(2.0, name="const2")
        result = tf.add(const1, const2) + const1 * const2
    with tf.Session() as sess:
        run_metadata = _traced_run(sess, result)
    devices = [d.device for d in run_metadata.step_stats.dev_stats]
    assert "/job:localhost/replica:0/task:0/device:CPU:0" in devices
    for show_dataflow in (False, True):
        for show_memory in (False, True):
            trace = timeline.Timeline(run_metadata.step_stats).generate_chrome_trace_format(
                show_dataflow=show_dataflow, show_memory=show_memory)
            _validate_trace(trace)


def test_the_trace_names_devices_ops_and_their_inputs():
    with tf.device("/cpu:0"):
        a = tf.constant([1.0, 2.0], name="a")
        b = tf.constant([3.0, 4.0], name="b")
        total = tf.add(a, b, name="total")
    with tf.Session() as sess:
        run_metadata = _traced_run(sess, total)
    nodes = {n.node_name: n for d in run_metadata.step_stats.dev_stats for n in d.node_stats}
    assert nodes["total"].timeline_label == "total = Add(a, b)"
    output = nodes["total"].output[0].tensor_description
    assert output.dtype == 1 and [d.size for d in output.shape.dim] == [2]
    assert output.allocation_description.requested_bytes == 8
    trace = _validate_trace(timeline.Timeline(run_metadata.step_stats)
                            .generate_chrome_trace_format())
    events = trace["traceEvents"]
    processes = [e["args"]["name"] for e in events if e["ph"] == "M"]
    assert processes == ["Allocators",
                         "/job:localhost/replica:0/task:0/device:CPU:0 Compute",
                         "/job:localhost/replica:0/task:0/device:CPU:0 Tensors"]
    (add,) = [e for e in events if e["ph"] == "X" and e["args"]["name"] == "total"]
    assert add["name"] == "Add" and add["cat"] == "Op" and add["pid"] == 1
    assert (add["args"]["input0"], add["args"]["input1"]) == ("a", "b")
    assert add["ts"] == nodes["total"].all_start_micros
    assert add["dur"] == nodes["total"].all_end_rel_micros


def test_an_untraced_run_leaves_run_metadata_empty():
    total = tf.constant(1.0) + 2.0
    run_metadata = tf.RunMetadata()
    with tf.Session() as sess:
        _traced_run(sess, total)
        sess.run(total, run_metadata=run_metadata)
        assert not run_metadata.HasField("step_stats")
        sess.run(total, options=tf.RunOptions(timeout_in_ms=10000), run_metadata=run_metadata)
        assert not run_metadata.HasField("step_stats")


def test_timeline_with_rpcs():
    """A hand-made StepStats whose label is not TensorFlow's form still gives a trace."""
    from troupe.step_stats_pb import StepStats
    step_stats = StepStats()
    dev_stats = step_stats.dev_stats.add(device="/job:worker/replica:0/task:0/cpu:0")
    node = dev_stats.node_stats.add(node_name="RecvTensor", all_start_micros=12345,
                                    op_end_rel_micros=42,
                                    timeline_label="[1024B] edge_160_conv2/biases/read from "
                                                   "/job:ps/replica:0/task:3/cpu:0 to "
                                                   "/job:worker/replica:0/task:0/cpu:0")
    assert node.node_name == "RecvTensor"
    trace = timeline.Timeline(step_stats).generate_chrome_trace_format()
    _validate_trace(trace)


def test_analysis_and_allocations():
    config = tf.ConfigProto(device_count={"CPU": 3})
    with tf.Session(config=config) as sess:
        with tf.device("/cpu:0"):
            num1 = tf.Variable(1.0, name="num1")
        with tf.device("/cpu:1"):
            num2 = tf.Variable(2.0, name="num2")
        with tf.device("/cpu:2"):
            result = num1 + num2 + num1 * num2
        sess.run(tf.global_variables_initializer())
        run_metadata = _traced_run(sess, result)
    devices = [d.device for d in run_metadata.step_stats.dev_stats]
    for cpu in range(3):
        assert "/job:localhost/replica:0/task:0/device:CPU:%d" % cpu in devices
    tl = timeline.Timeline(run_metadata.step_stats)
    step_analysis = tl.analyze_step_stats()
    _validate_trace(step_analysis.chrome_trace.format_to_string())
    maximums = step_analysis.allocator_maximums
    assert "cpu" in maximums
    assert maximums["cpu"].num_bytes >= 8
    assert maximums["cpu"].timestamp > 0
    for show_dataflow in (False, True):
        for show_memory in (False, True):
            _validate_trace(timeline.Timeline(run_metadata.step_stats)
                            .generate_chrome_trace_format(show_dataflow=show_dataflow,
                                                          show_memory=show_memory))


def test_a_distributed_step_reports_each_task_device(insecure):
    ps_port, worker_port = free_ports(2)
    cluster = tf.train.ClusterSpec({"ps": ["127.0.0.1:%d" % ps_port],
                                    "worker": ["127.0.0.1:%d" % worker_port]})
    ps = tf.train.Server(cluster, job_name="ps", task_index=0)
    worker = tf.train.Server(cluster, job_name="worker", task_index=0)
    try:
        with tf.device("/job:ps/task:0"):
            weights = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="weights")
        with tf.device("/job:worker/task:0"):
            x = tf.constant([[1.0, 1.0]], name="x")
            y = tf.matmul(x, weights, name="y")
        with tf.Session(worker.target) as sess:
            sess.run(weights.initializer)
            run_metadata = _traced_run(sess, y)
            graphs = tf.RunMetadata()
            sess.run(y, options=tf.RunOptions(output_partition_graphs=True),
                     run_metadata=graphs)
        assert not graphs.HasField("step_stats")
        ops_by_graph = sorted(sorted(node.op for node in graph.node)
                              for graph in graphs.partition_graphs)
        assert len(ops_by_graph) == 2
        assert any("MatMul" in ops for ops in ops_by_graph)
        assert any("VariableV2" in ops or "Variable" in ops for ops in ops_by_graph)
        by_device = {d.device: [n.node_name for n in d.node_stats]
                     for d in run_metadata.step_stats.dev_stats}
        assert "y" in by_device["/job:worker/replica:0/task:0/device:CPU:0"]
        assert "weights" in by_device["/job:ps/replica:0/task:0/device:CPU:0"]
        trace = _validate_trace(timeline.Timeline(run_metadata.step_stats)
                                .generate_chrome_trace_format())
        assert sum(1 for e in trace["traceEvents"] if e["ph"] == "M") == 5
    finally:
        worker.stop()
        ps.stop()


def test_run_metadata_is_tensorflows_message(tensorboard_pb2):
    """What troupe fills parses with protobuf's own classes of TensorFlow's field numbers."""
    total = tf.add(tf.constant([1, 2], name="a"), 3, name="plus_three")
    with tf.Session() as sess:
        run_metadata = _traced_run(sess, total)
    decoded = tensorboard_pb2.RunMetadata.FromString(run_metadata.SerializeToString())
    nodes = {n.node_name: n for d in decoded.step_stats.dev_stats for n in d.node_stats}
    node = nodes["plus_three"]
    assert node.timeline_label.startswith("plus_three = Add(a, ")
    assert node.all_start_micros > 1600000000 * 10**6
    assert node.op_end_rel_micros <= node.all_end_rel_micros
    description = node.output[0].tensor_description
    assert description.dtype == 3  # DT_INT32
    assert [d.size for d in description.shape.dim] == [2]
    assert description.allocation_description.requested_bytes == 8


def test_bad_options_and_run_metadata_are_errors_naming_them():
    total = tf.constant(1.0)
    with tf.Session() as sess:
        with pytest.raises(TypeError, match="options: expected a tf.RunOptions"):
            sess.run(total, options={"trace_level": 3})
        with pytest.raises(TypeError, match="run_metadata: expected a tf.RunMetadata"):
            sess.run(total, run_metadata=[])
    with pytest.raises(ValueError, match="RunOptions.trace_level: expected NO_TRACE"):
        tf.RunOptions(trace_level=7)
    with pytest.raises(TypeError, match="trace_level"):
        tf.RunOptions(trace_level="FULL_TRACE")
    with pytest.raises(ValueError, match='has no "trace" field'):
        tf.RunOptions(trace=3)
    assert tf.RunOptions.TraceLevel.Name(3) == "FULL_TRACE"
    assert tf.RunOptions.TraceLevel.Value("SOFTWARE_TRACE") == 1


# --- ProfilerHook (basic_session_run_hooks_test.py's ProfilerHookTest) ---

@pytest.fixture
def profiler_graph(tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        global_step = tf.train.get_or_create_global_step()
        train_op = tf.assign_add(global_step, 1)
    return graph, train_op, str(tmp_path)


def _timelines(output_dir):
    return glob.glob(os.path.join(output_dir, "timeline-*.json"))


def test_profiler_hook_needs_exactly_one_of_secs_and_steps(profiler_graph):
    _, _, output_dir = profiler_graph
    with pytest.raises(ValueError, match="Can not provide both"):
        tf.train.ProfilerHook(save_secs=10, save_steps=20, output_dir=output_dir)
    with pytest.raises(ValueError, match="Either every_secs or every_steps"):
        tf.train.ProfilerHook(save_secs=None, save_steps=None, output_dir=output_dir)


def test_profiler_hook_needs_a_global_step(tmp_path):
    graph = tf.Graph()
    with graph.as_default():
        hook = tf.train.ProfilerHook(save_steps=1, output_dir=str(tmp_path))
        with pytest.raises(RuntimeError,
                           match="Global step should be created to use ProfilerHook."):
            hook.begin()


def test_profiler_hook_save_secs_does_not_save_in_first_step(profiler_graph):
    graph, train_op, output_dir = profiler_graph
    with graph.as_default():
        hook = tf.train.ProfilerHook(save_secs=2, output_dir=output_dir)
        with tf.train.SingularMonitoredSession(hooks=[hook]) as sess:
            sess.run(train_op)
    assert _timelines(output_dir) == []


def test_profiler_hook_save_secs_saves_periodically(profiler_graph, monkeypatch):
    graph, train_op, output_dir = profiler_graph
    start = 1484695987.209386
    now = [start]
    from troupe.train import hooks as hooks_module
    monkeypatch.setattr(hooks_module.time, "time", lambda: now[0])
    with graph.as_default():
        hook = tf.train.ProfilerHook(save_secs=2, output_dir=output_dir)
        with tf.train.SingularMonitoredSession(hooks=[hook]) as sess:
            sess.run(train_op)  # not saved
            assert len(_timelines(output_dir)) == 0
            now[0] = start + 2.5
            sess.run(train_op)  # saved
            assert len(_timelines(output_dir)) == 1
            now[0] = start + 2.6
            sess.run(train_op)  # not saved
            assert len(_timelines(output_dir)) == 1
            now[0] = start + 4.4
            sess.run(train_op)  # not saved
            assert len(_timelines(output_dir)) == 1
            now[0] = start + 4.5
            sess.run(train_op)  # saved
            assert len(_timelines(output_dir)) == 2


def test_profiler_hook_save_steps_does_not_save_in_first_step(profiler_graph):
    graph, train_op, output_dir = profiler_graph
    with graph.as_default():
        hook = tf.train.ProfilerHook(save_steps=1, output_dir=output_dir)
        with tf.train.SingularMonitoredSession(hooks=[hook]) as sess:
            sess.run(train_op)
    assert _timelines(output_dir) == []


def test_profiler_hook_save_steps_saves_periodically(profiler_graph):
    graph, train_op, output_dir = profiler_graph
    with graph.as_default():
        hook = tf.train.ProfilerHook(save_steps=2, output_dir=output_dir)
        counts = []
        with tf.train.SingularMonitoredSession(hooks=[hook]) as sess:
            for _ in range(5):
                sess.run(train_op)
                counts.append(len(_timelines(output_dir)))
    assert counts == [0, 1, 1, 2, 2]
    with open(os.path.join(output_dir, "timeline-2.json")) as f:
        trace = _validate_trace(f.read())
    assert any(e["ph"] == "X" and e["name"] == "AssignAdd" for e in trace["traceEvents"])


def test_profiler_hook_writes_run_metadata_for_tensorboard(profiler_graph, tensorboard_pb2):
    graph, train_op, output_dir = profiler_graph
    with graph.as_default():
        hook = tf.train.ProfilerHook(save_steps=1, output_dir=output_dir)
        with tf.train.SingularMonitoredSession(hooks=[hook]) as sess:
            sess.run(train_op)  # not saved
            sess.run(train_op)  # saved
    tf.summary.FileWriterCache.clear()
    tags = []
    for path in glob.glob(os.path.join(output_dir, "events.out.tfevents.*")):
        for event in tf.train.summary_iterator(path):
            if event.HasField("tagged_run_metadata"):
                tags.append(event.tagged_run_metadata.tag)
                metadata = tensorboard_pb2.RunMetadata.FromString(
                    event.tagged_run_metadata.run_metadata)
                assert metadata.step_stats.dev_stats[0].node_stats
    assert tags == ["step_2"]


def test_a_run_metadata_tag_is_written_once(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path))
    writer.add_run_metadata(tf.RunMetadata(), "step_1")
    with pytest.raises(ValueError, match="The provided tag was already used"):
        writer.add_run_metadata(tf.RunMetadata(), "step_1")
    with pytest.raises(TypeError, match="expected a tf.RunMetadata"):
        writer.add_run_metadata(b"", "step_2")
    writer.close()


# --- merging run options (monitored_session_test.py) ---

class _RunOptionsHook(tf.train.SessionRunHook):
    def __init__(self, trace_level, timeout_in_ms, output_partition_graphs,
                 report_tensor_allocations_upon_oom):
        self._options = tf.RunOptions(
            trace_level=trace_level, timeout_in_ms=timeout_in_ms,
            output_partition_graphs=output_partition_graphs,
            report_tensor_allocations_upon_oom=report_tensor_allocations_upon_oom)
        self.seen = []

    def before_run(self, run_context):
        return tf.train.SessionRunArgs(None, None, options=self._options)

    def after_run(self, run_context, run_values):
        self.seen.append((run_values.options, run_values.run_metadata))


def test_run_options_from_hooks_are_merged():
    first = _RunOptionsHook(2, 30000, False, False)
    second = _RunOptionsHook(3, 60000, True, True)
    total = tf.constant(1.0) + 1.0
    with tf.train.MonitoredSession(hooks=[first, second]) as sess:
        sess.run(total)
    options, metadata = second.seen[0]
    assert options == tf.RunOptions(trace_level=3, timeout_in_ms=60000,
                                    output_partition_graphs=True,
                                    report_tensor_allocations_upon_oom=True)
    assert first.seen[0][0] is options and first.seen[0][1] is metadata
    assert metadata.step_stats.dev_stats  # traced
    assert len(metadata.partition_graphs) == 1
    assert any(node.op in ("Add", "AddV2") for node in metadata.partition_graphs[0].node)


def test_the_callers_run_options_and_metadata_are_merged_and_filled():
    hook = _RunOptionsHook(2, 60000, False, False)
    caller_options = tf.RunOptions(trace_level=3, timeout_in_ms=30000,
                                   output_partition_graphs=True)
    caller_metadata = tf.RunMetadata()
    total = tf.constant(1.0) + 1.0
    with tf.train.MonitoredSession(hooks=[hook]) as sess:
        sess.run(total, options=caller_options, run_metadata=caller_metadata)
    options, metadata = hook.seen[0]
    assert options is caller_options and metadata is caller_metadata
    assert caller_options == tf.RunOptions(trace_level=3, timeout_in_ms=60000,
                                           output_partition_graphs=True)
    assert caller_metadata.step_stats.dev_stats


def test_a_hooks_bad_options_are_a_type_error():
    class BadHook(tf.train.SessionRunHook):
        def before_run(self, run_context):
            return tf.train.SessionRunArgs(None, options={"trace_level": 3})

    one = tf.constant(1.0)
    with pytest.raises(TypeError, match="SessionRunArgs.options must be a tf.RunOptions"):
        with tf.train.MonitoredSession(hooks=[BadHook()]) as sess:
            sess.run(one)


def test_the_raw_session_traces_too():
    total = tf.constant(1.0) + 1.0
    with tf.train.SingularMonitoredSession() as sess:
        run_metadata = tf.RunMetadata()
        sess.raw_session().run(total, options=tf.RunOptions(trace_level=3),
                               run_metadata=run_metadata)
        assert run_metadata.step_stats.dev_stats


def test_timing_is_plausible():
    """A step's node times fall inside the wall-clock time of the run."""
    total = tf.reduce_sum(tf.ones([100, 100]))
    with tf.Session() as sess:
        before = int(time.time() * 1e6)
        run_metadata = _traced_run(sess, total)
        after = int(time.time() * 1e6)
    for device in run_metadata.step_stats.dev_stats:
        for node in device.node_stats:
            assert before - 1000 <= node.all_start_micros <= after + 1000
            assert node.all_start_micros + node.all_end_rel_micros <= after + 1000


def test_a_cond_traces_its_merge_and_only_the_taken_branch():
    x = tf.placeholder(tf.float32, [], name="x")
    result = tf.cond(x > 0, lambda: x * 2.0, lambda: x - 100.0) + 1.0
    with tf.Session() as sess:
        run_metadata = tf.RunMetadata()
        sess.run(result, feed_dict={x: 3.0},
                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                 run_metadata=run_metadata)
    ops = {n.timeline_label.split(" = ")[1].split("(")[0]
           for d in run_metadata.step_stats.dev_stats for n in d.node_stats}
    assert "Merge" in ops and "Mul" in ops
    assert "Sub" not in ops  # the branch not taken never ran
    _validate_trace(timeline.Timeline(run_metadata.step_stats).generate_chrome_trace_format())


def test_run_options_fields_tensorflow_programs_set():
    options = tf.RunOptions(inter_op_thread_pool=-1, report_tensor_allocations_upon_oom=True)
    options.debug_options.debug_tensor_watch_opts.append("watch")
    options.experimental.use_run_handler_pool = True
    with pytest.raises(ValueError, match="inter_op_thread_pool: expected an int >= -1"):
        tf.RunOptions(inter_op_thread_pool=-2)
    merged = tf.RunOptions(timeout_in_ms=10)
    merged._merge(options)
    assert merged.debug_options.debug_tensor_watch_opts == ["watch"]
    assert merged.report_tensor_allocations_upon_oom
    assert not merged.experimental.use_run_handler_pool  # not merged, as TensorFlow
    assert merged.timeout_in_ms == 10
    with tf.Session() as sess:
        assert sess.run(tf.constant(2), options=options) == 2


def test_profiler_hook_takes_a_path(profiler_graph):
    import pathlib
    graph, train_op, output_dir = profiler_graph
    with graph.as_default():
        hook = tf.train.ProfilerHook(save_steps=1, output_dir=pathlib.Path(output_dir))
        with tf.train.SingularMonitoredSession(hooks=[hook]) as sess:
            sess.run(train_op)
            sess.run(train_op)
    assert [os.path.basename(p) for p in _timelines(output_dir)] == ["timeline-2.json"]
    with pytest.raises(TypeError, match="output_dir must be a path"):
        tf.train.ProfilerHook(save_steps=1, output_dir=3)
