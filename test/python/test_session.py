"""tf.Session: targets, fetch structures, feeds, numpy results, errors, Ctrl-C."""

import collections
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import troupe as tf

from conftest import EXAMPLES, free_ports


def test_hello_example_prints_the_greeting():
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, "hello.py")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "b'Hello, distributed TensorFlow!'"


def test_local_server_and_default_target():
    c = tf.constant([[2.0, 1.0]]) @ tf.constant([[1.0], [2.0]])
    server = tf.train.Server.create_local_server()
    assert server.target.startswith("troupe://127.0.0.1:")
    with tf.Session(server.target) as sess:
        np.testing.assert_array_equal(sess.run(c), [[4.0]])
    with tf.Session() as sess:  # no target: in this process
        assert sess.run(c).dtype == np.float32
    server.stop()


def test_a_local_servers_target_is_usable_from_another_process():
    """As TensorFlow's grpc://localhost:PORT: a session of another process shares the local
    server's variables."""
    v = tf.Variable(41, name="shared")
    server = tf.train.Server.create_local_server()
    with tf.Session(server.target) as sess:
        sess.run(v.initializer)
        program = ("import troupe as tf\n"
                   "v = tf.Variable(0, name='shared')\n"
                   "with tf.Session(%r) as s:\n"
                   "    print(s.run(tf.assign_add(v, 1)))\n" % server.target)
        env = dict(os.environ)
        for name in ("TROUPE_TLS_CERT", "TROUPE_TLS_KEY", "TROUPE_TLS_CA", "TROUPE_INSECURE"):
            env.pop(name, None)
        done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                              timeout=60, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "42"
        assert sess.run(v) == 42
    server.stop()


def test_interactive_session_is_the_default_until_closed():
    a = tf.constant(3)
    sess = tf.InteractiveSession()
    try:
        assert tf.get_default_session() is sess
        assert a.eval() == 3
        v = tf.Variable(5)
        v.initializer.run()
        assert v.eval() == 5
        with tf.Session() as other:  # another default inside, as in TensorFlow
            assert tf.get_default_session() is other
        assert tf.get_default_session() is sess
    finally:
        sess.close()
    assert tf.get_default_session() is None
    with pytest.raises(ValueError, match="No default session"):
        a.eval()


def test_config_proto_takes_every_field_tf1_programs_set():
    config = tf.ConfigProto(allow_soft_placement=True, log_device_placement=False,
                            device_count={"GPU": 0, "CPU": 1},
                            intra_op_parallelism_threads=1, inter_op_parallelism_threads=2,
                            device_filters=["/job:ps", "/job:worker/task:0"],
                            operation_timeout_in_ms=60000, isolate_session_state=True,
                            gpu_options=tf.GPUOptions(per_process_gpu_memory_fraction=0.5),
                            rpc_options=tf.RPCOptions(use_rpc_for_inprocess_master=True),
                            graph_options=tf.GraphOptions(
                                optimizer_options=tf.OptimizerOptions(
                                    opt_level=tf.OptimizerOptions.L0)))
    config.gpu_options.allow_growth = True
    config.rpc_options.compression_algorithm = "gzip"
    config.graph_options.place_pruned_graph = True
    assert config.gpu_options.per_process_gpu_memory_fraction == 0.5
    assert config.device_filters == ["/job:ps", "/job:worker/task:0"]
    native = config._to_native()
    assert native.operation_timeout_ms == 60000 and native.isolate_session_state
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True,
                                          gpu_options=tf.GPUOptions(allow_growth=True))) as s:
        assert s.run(tf.constant(2)) == 2


def test_gpu_queries_agree_with_the_devices_a_session_gets():
    available = tf.test.is_gpu_available()
    assert available == (tf.test.gpu_device_name() == "/device:GPU:0")
    assert tf.test.is_built_with_cuda() or not available
    with tf.Graph().as_default():
        with tf.device("/device:GPU:0"):
            x = tf.constant([1.0, 2.0]) * 2.0
        with tf.Session() as sess:
            if available:
                assert list(sess.run(x)) == [2.0, 4.0]
            else:
                with pytest.raises(tf.errors.InvalidArgumentError, match="GPU:0"):
                    sess.run(x)


def test_allow_soft_placement_runs_gpu_requests_and_updates_where_they_can_run():
    with tf.device("/device:GPU:0"):
        a = tf.constant(2.0) * 3.0
    with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as sess:
        assert sess.run(a) == 6.0
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not exist"):
            sess.run(a)


def test_config_proto_refuses_what_it_cannot_mean():
    with pytest.raises(ValueError, match='ConfigProto has no "bogus" field'):
        tf.ConfigProto(bogus=1)
    config = tf.ConfigProto()
    with pytest.raises(AttributeError, match='no field "bogus"'):
        config.bogus = 1
    with pytest.raises(AttributeError, match='no field "grow"'):
        config.gpu_options.grow = True
    with pytest.raises(TypeError, match="intra_op_parallelism_threads"):
        tf.ConfigProto(intra_op_parallelism_threads="2")
    with pytest.raises(TypeError, match="allow_soft_placement"):
        tf.ConfigProto(allow_soft_placement="yes")
    with pytest.raises(TypeError, match="GPUOptions"):
        tf.ConfigProto(gpu_options=3)
    with pytest.raises(ValueError, match="expected 0 to 256 CPU devices"):
        tf.ConfigProto(device_count={"CPU": 300})
    with pytest.raises(ValueError, match="operation_timeout_in_ms"):
        tf.ConfigProto(operation_timeout_in_ms=-1)


def test_device_count_gives_a_local_session_several_cpu_devices():
    with tf.Graph().as_default():
        with tf.device("/cpu:0"):
            a = tf.constant([1.0, 2.0])
        with tf.device("/cpu:1"):
            b = a * 3.0
        with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
            assert list(sess.run(b)) == [3.0, 6.0]
        with tf.Session() as sess:  # one CPU device: there is no /cpu:1
            with pytest.raises(tf.errors.InvalidArgumentError, match="CPU:1"):
                sess.run(b)


Pair = collections.namedtuple("Pair", ["a", "b"])


def test_fetch_structures():
    a = tf.constant(1.0)
    b = tf.constant([2, 3])
    op = tf.no_op()
    with tf.Session() as sess:
        assert sess.run(a) == np.float32(1.0)
        assert sess.run([a, b])[0] == 1.0
        assert isinstance(sess.run((a, b)), tuple)
        result = sess.run({"a": a, "nested": [b, (a, op)], "pair": Pair(a, b)})
        assert set(result) == {"a", "nested", "pair"}
        np.testing.assert_array_equal(result["nested"][0], [2, 3])
        assert result["nested"][1][1] is None  # an op's value
        assert isinstance(result["pair"], Pair) and result["pair"].a == 1.0
        assert sess.run(op) is None
        assert sess.run([]) == []
        assert sess.run(a.name) == 1.0  # by name
        assert sess.run(collections.OrderedDict([("x", a)])) == {"x": 1.0}
        # The same tensor twice is fetched once and returned twice.
        x, y = sess.run([a, a])
        assert x == y == 1.0


def test_feeds_accept_numpy_scalars_and_lists_and_convert():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    n = tf.placeholder(tf.int64, [], name="n")
    s = tf.placeholder(tf.string, [2], name="s")
    y = tf.reduce_sum(x * 2.0)
    with tf.Session() as sess:
        assert sess.run(y, {x: [[1, 2], [3, 4]]}) == 20.0
        assert sess.run(y, {x: np.ones((3, 2), np.float64)}) == 12.0  # converted
        assert sess.run(y, feed_dict={"x:0": [[1, 1]]}) == 4.0  # by name
        assert sess.run(n, {n: 7}) == 7
        strings = sess.run(s, {s: ["a", b"b\x00c"]})
        assert list(strings) == [b"a", b"b\x00c"]
        assert sess.run(tf.constant("one")) == b"one"
        # A fed tensor may be fetched: the value fed comes back.
        np.testing.assert_array_equal(sess.run(x, {x: [[5, 6]]}), [[5, 6]])


def test_scalars_come_back_as_numpy_scalars():
    with tf.Session() as sess:
        value = sess.run(tf.constant(2.5))
        assert isinstance(value, np.float32) and value == 2.5
        assert isinstance(sess.run(tf.constant(3, tf.int64)), np.int64)
        assert isinstance(sess.run(tf.constant(True)), np.bool_)


def test_fetches_are_numpy_and_do_not_change_after_run():
    v = tf.Variable([1.0, 2.0], name="v")
    bump = tf.assign_add(v, [1.0, 1.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        before = sess.run(v)
        sess.run(bump)
        np.testing.assert_array_equal(before, [1.0, 2.0])  # a copy of the live variable
        np.testing.assert_array_equal(sess.run(v), [2.0, 3.0])
        product = sess.run(tf.matmul(tf.ones([64, 64]), tf.ones([64, 64])))
        assert product.flags.writeable and product[0, 0] == 64.0


def test_bad_feeds_raise_naming_the_tensor():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    y = x * 2.0
    with tf.Session() as sess:
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(3,\) for Tensor "
                                             r"'x:0', which has shape '\(\?, 2\)'"):
            sess.run(y, {x: [1, 2, 3]})
        with pytest.raises(TypeError, match="Cannot feed a value of type"):
            sess.run(y, {x: [["a", "b"]]})
        with pytest.raises(TypeError, match="The value of a feed cannot be a tf.Tensor"):
            sess.run(y, {x: y})
        with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor"):
            sess.run(y, {3: [[1, 2]]})
        with pytest.raises(TypeError, match="Cannot interpret feed_dict key as Tensor"):
            sess.run(y, {"nope:0": [[1, 2]]})
        with pytest.raises(TypeError, match="feed_dict must be a dictionary"):
            sess.run(y, [(x, [[1, 2]])])
        # A placeholder that is needed but not fed: InvalidArgument naming it.
        with pytest.raises(tf.errors.InvalidArgumentError, match="x"):
            sess.run(y)


def test_bad_fetches_raise():
    other = tf.Graph()
    with other.as_default():
        foreign = tf.constant(1)
    a = tf.constant(1)
    with tf.Session() as sess:
        with pytest.raises(TypeError, match="Fetch argument None has invalid type"):
            sess.run(None)
        with pytest.raises(TypeError, match="Fetch argument 3 has invalid type"):
            sess.run([a, 3])
        with pytest.raises(ValueError, match="is not an element of this graph"):
            sess.run(foreign)
        with pytest.raises(ValueError, match="cannot be interpreted as a Tensor"):
            sess.run("missing:0")
        assert sess.run(a) == 1  # the session is still usable


def test_errors_carry_codes_and_node_names():
    v = tf.Variable(1.0, name="never_initialised")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError) as info:
            sess.run(v)
        assert info.value.error_code == tf.errors.FAILED_PRECONDITION
        assert "never_initialised" in info.value.message
    assert issubclass(tf.errors.NotFoundError, tf.errors.OpError)
    assert tf.errors.exception_type_from_error_code(14) is tf.errors.UnavailableError


def test_graph_errors_raise_at_build_and_keep_the_graph_usable():
    a = tf.constant([[1.0, 2.0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="MatMul"):
        tf.matmul(a, a)  # [1,2] x [1,2]
    b = tf.matmul(a, tf.constant([[1.0], [1.0]]))
    with tf.Session() as sess:
        assert sess.run(b)[0, 0] == 3.0


def test_closed_session_raises():
    sess = tf.Session()
    sess.close()
    sess.close()  # idempotent
    with pytest.raises(tf.errors.FailedPreconditionError, match="closed Session"):
        sess.run(tf.constant(1))
    with pytest.raises(RuntimeError):  # TensorFlow raises RuntimeError: both hold
        sess.run(tf.constant(1))


def test_bad_arguments_raise_type_and_value_errors():
    with pytest.raises(TypeError, match="device: expected a device string"):
        with tf.device(5):
            pass
    with pytest.raises(tf.errors.InvalidArgumentError, match="not_a_device"):
        with tf.device("/not_a_device:0"):
            tf.constant(1)
    with pytest.raises(TypeError, match="target must be a string"):
        tf.Session(3)
    with pytest.raises(TypeError, match="Cannot convert value 'float16'"):
        tf.placeholder("float16")
    with pytest.raises(TypeError, match="expected int32"):
        tf.constant(1.5, dtype=tf.int32)


def test_device_functions_and_scopes():
    def on_ps(op):
        return "/job:localhost/task:0" if op.type == "Variable" else ""

    with tf.name_scope("layer"):
        with tf.device(on_ps):
            v = tf.Variable(1.0, name="w")
        c = tf.constant(2.0, name="c")
    with tf.name_scope("layer"):
        d = tf.constant(3.0, name="c")
    assert v.op.name == "layer/w" and v.device == "/job:localhost/task:0"
    assert c.op.name == "layer/c" and d.op.name == "layer_1/c"
    with tf.control_dependencies([c]):
        e = tf.identity(d)
    assert [op.name for op in e.op.control_inputs] == ["layer/c"]

    def broken(op):
        return 7

    with pytest.raises(TypeError, match="returned 7 for node"):
        with tf.device(broken):
            tf.constant(1.0)

    def raising(op):
        raise KeyError("from the device function")

    nodes = len(tf.get_default_graph().get_operations())
    with pytest.raises(KeyError, match="from the device function"):
        with tf.device(raising):
            tf.constant(1.0)
    assert len(tf.get_default_graph().get_operations()) == nodes  # nothing was added
    assert tf.constant(1.0).op.type == "Const"  # the graph is usable


def test_replica_device_setter_places_variables_round_robin():
    cluster = tf.train.ClusterSpec({"ps": ["p0:1", "p1:1"], "worker": ["w0:1", "w1:1"]})
    with tf.device(tf.train.replica_device_setter(worker_device="/job:worker/task:1",
                                                  cluster=cluster)):
        a = tf.Variable(1.0, name="a")
        b = tf.Variable(1.0, name="b")
        c = tf.Variable(1.0, name="c")
        x = a + b
    assert a.device == "/job:ps/replica:0/task:0" or a.device.startswith("/job:ps")
    assert [v.device.split("/task:")[1][0] for v in (a, b, c)] == ["0", "1", "0"]
    assert x.device.startswith("/job:worker") and "task:1" in x.device
    assert tf.train.replica_device_setter(cluster=tf.train.ClusterSpec({"worker": ["w:1"]})) \
        is None


def test_config_timeout_and_run_options():
    q = tf.FIFOQueue(10, [tf.int32])
    item = q.dequeue()
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=100)) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError, match="100 ms"):
            sess.run(item)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError, match="50 ms"):
            sess.run(item, options=tf.RunOptions(timeout_in_ms=50))
        # As TensorFlow's: a timeout of 0 or less is the session's (none here).
        assert sess.run(tf.constant(1), options=tf.RunOptions(timeout_in_ms=-1)) == 1


def test_queues_between_runs():
    q = tf.FIFOQueue(3, [tf.float32, tf.int32], shapes=[[2], []])
    x = tf.placeholder(tf.float32, [2])
    put = q.enqueue([x, 7])
    take = q.dequeue()
    size = q.size()
    with tf.Session() as sess:
        sess.run(put, {x: [1, 2]})
        assert sess.run(size) == 1
        values = sess.run(take)
        np.testing.assert_array_equal(values[0], [1, 2])
        assert values[1] == 7
        sess.run(q.close())
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(take)


def test_ctrl_c_interrupts_a_blocked_run_and_cancels_only_that_step():
    q = tf.FIFOQueue(10, [tf.int32])
    take = q.dequeue()
    put = q.enqueue([5])
    with tf.Session() as sess:
        timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            sess.run(take)
        assert time.monotonic() - started < 5
        # The cancelled dequeue took nothing, and the session still works.
        sess.run(put)
        assert sess.run(take) == 5


def test_a_signal_handler_may_run_steps_while_a_step_waits():
    q = tf.FIFOQueue(10, [tf.int32])
    take = q.dequeue()
    put = q.enqueue([8])
    with tf.Session() as sess:
        previous = signal.signal(signal.SIGUSR1, lambda *_: sess.run(put))
        try:
            timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGUSR1))
            timer.start()
            assert sess.run(take, options=tf.RunOptions(timeout_in_ms=10000)) == 8
        finally:
            signal.signal(signal.SIGUSR1, previous)


def test_other_threads_run_steps_concurrently_without_the_gil():
    q = tf.FIFOQueue(10, [tf.int32])
    take = q.dequeue()
    put = q.enqueue([1])
    results = []
    with tf.Session() as sess:
        thread = threading.Thread(target=lambda: results.append(sess.run(take)))
        thread.start()
        time.sleep(0.1)  # the dequeue waits; this thread still runs Python
        sess.run(put)
        thread.join(10)
        assert results == [1]


def test_server_join_is_interrupted_by_ctrl_c(insecure):
    port = free_ports(1)[0]
    code = ("import os, signal, threading, troupe as tf\n"
            "s = tf.train.Server({'worker': ['127.0.0.1:%d']}, job_name='worker', task_index=0)\n"
            "threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
            "try:\n    s.join()\nexcept KeyboardInterrupt:\n    print('interrupted')\n" % port)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "interrupted"


def test_a_tasks_server_serves_health_checks_on_troupe_health_port(insecure, monkeypatch,
                                                                    capsys):
    """As `troupe node --health_port`: with TROUPE_HEALTH_PORT (troupe k8s's manifests set
    it), a task's Server answers Kubernetes' probes, 200 while it runs and 503 once stopped."""
    import urllib.error
    import urllib.request
    task_port, health_port = free_ports(2)
    monkeypatch.setenv("TROUPE_HEALTH_PORT", str(health_port))
    server = tf.train.Server({"worker": ["127.0.0.1:%d" % task_port]}, job_name="worker",
                             task_index=0)
    assert ("/job:worker/replica:0/task:0: health checks at http://0.0.0.0:%d/healthz"
            % health_port) in capsys.readouterr().out
    url = "http://127.0.0.1:%d/" % health_port
    for path in ("healthz", "readyz"):
        with urllib.request.urlopen(url + path, timeout=10) as answer:
            assert (answer.status, answer.read()) == (200, b"ok\n")
    server.stop()
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(url + "readyz", timeout=10)
    assert refused.value.code == 503
    assert b"is stopping" in refused.value.read()


def test_a_bad_troupe_health_port_is_a_value_error_naming_it(insecure, monkeypatch):
    monkeypatch.setenv("TROUPE_HEALTH_PORT", "80x")
    port = free_ports(1)[0]
    with pytest.raises(ValueError, match=r"TROUPE_HEALTH_PORT='80x' is not a port"):
        tf.train.Server({"worker": ["127.0.0.1:%d" % port]}, job_name="worker", task_index=0)
    monkeypatch.setenv("TROUPE_HEALTH_PORT", "0")  # 0: none, as the flag's default
    server = tf.train.Server({"worker": ["127.0.0.1:%d" % port]}, job_name="worker",
                             task_index=0)
    assert getattr(server, "_health", None) is None
    server.stop()
    # A port already taken: the error names it, and the task is not left running.
    task_port, health_port = free_ports(2)
    monkeypatch.setenv("TROUPE_HEALTH_PORT", str(health_port))
    first = tf.train.Server({"worker": ["127.0.0.1:%d" % port]}, job_name="worker", task_index=0)
    second = tf.train.Server({"worker": ["127.0.0.1:%d" % task_port]}, job_name="worker",
                             task_index=0, start=False)
    with pytest.raises(tf.errors.UnavailableError, match=str(health_port)):
        second.start()
    assert second._native is None
    first.stop()
