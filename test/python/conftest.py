"""Shared fixtures of the Python module's tests: a fresh default graph per test, free ports,
a gradient check against finite differences, the paths of the troupe binary and the examples,
and a ps and workers run as processes."""

import os
import socket
import subprocess

import numpy as np
import pytest

import troupe as tf

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(REPO, "examples", "python")
TROUPE_CLI = os.environ.get("TROUPE_CLI", os.path.join(REPO, "build", "apps", "troupe"))


@pytest.fixture(autouse=True)
def fresh_graph():
    tf.reset_default_graph()
    yield


def _ephemeral_range_start():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_ports(count):
    """`count` distinct ports free on 127.0.0.1 now (each bound once, then released): random
    ones below the kernel's ephemeral range, which the servers started meanwhile cannot take
    for their outgoing connections (as troupe's pick_free_port chooses them)."""
    import random
    high = _ephemeral_range_start() - 1
    sockets, ports = [], []
    while len(ports) < count:
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", random.randint(10000, high) if high > 10000 else 0))
        except OSError:
            s.close()
            continue
        sockets.append(s)
        ports.append(s.getsockname()[1])
    for s in sockets:
        s.close()
    return ports


def numeric_gradient(f, x, eps=1e-6):
    """The gradient of the scalar function f at x by central differences."""
    grad = np.zeros_like(x)
    it = np.nditer(x, flags=["multi_index"])
    for _ in it:
        i = it.multi_index
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


def check_gradient(build, shape, seed=0):
    """tf.gradients of build(x) (a scalar) against finite differences, x float64 of `shape`."""
    rng = np.random.default_rng(seed)
    value = rng.normal(size=shape)
    x = tf.placeholder(tf.float64, shape)
    y = build(x)
    (dx,) = tf.gradients(y, [x])
    if isinstance(dx, tf.IndexedSlices):  # a gather's: compared as the dense tensor
        dx = tf.convert_to_tensor(dx)
    with tf.Session() as sess:
        symbolic = sess.run(dx, {x: value})
        numeric = numeric_gradient(lambda v: float(sess.run(y, {x: v})), value)
    np.testing.assert_allclose(symbolic, numeric, rtol=1e-5, atol=1e-6)


def without_tls_env():
    """This process's environment without TLS credentials or TROUPE_INSECURE, for a child that
    says itself how it listens."""
    env = dict(os.environ)
    for name in ("TROUPE_TLS_CERT", "TROUPE_TLS_KEY", "TROUPE_TLS_CA", "TROUPE_INSECURE"):
        env.pop(name, None)
    return env


def run_ps_and_workers(argv_for, num_workers=2, timeout=300):
    """Starts argv_for("ps", 0) and argv_for("worker", i) for each worker as processes (without
    TLS credentials in their environment), waits for the workers (a ps serves until it is
    killed), kills them all, and returns each worker's output, once every worker exited 0."""
    def start(job, index):
        return subprocess.Popen(argv_for(job, index), stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env=without_tls_env())

    ps = start("ps", 0)
    workers = [start("worker", i) for i in range(num_workers)]
    try:
        outputs = [w.communicate(timeout=timeout)[0] for w in workers]
    finally:
        for p in [ps] + workers:
            p.kill()
            p.wait()
    assert [w.returncode for w in workers] == [0] * num_workers, "\n".join(outputs)
    return outputs


@pytest.fixture
def insecure(monkeypatch):
    """Servers in this test listen without TLS."""
    for name in ("TROUPE_TLS_CERT", "TROUPE_TLS_KEY", "TROUPE_TLS_CA"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TROUPE_INSECURE", "1")


def _compiled_protos(tmp_path_factory, name):
    """The protobuf module protoc makes of test/python/protos/<name>.proto. Skips where protoc
    or python3-protobuf is missing."""
    import importlib
    import shutil
    import subprocess
    import sys
    if shutil.which("protoc") is None:
        pytest.skip("protoc is not installed (Debian: protobuf-compiler)")
    pytest.importorskip("google.protobuf")
    out = tmp_path_factory.mktemp("protos")
    protos = os.path.join(os.path.dirname(os.path.abspath(__file__)), "protos")
    subprocess.run(["protoc", "-I", protos, "--python_out", str(out),
                    os.path.join(protos, name + ".proto")], check=True)
    sys.path.insert(0, str(out))
    try:
        return importlib.import_module(name + "_pb2")
    finally:
        sys.path.remove(str(out))


@pytest.fixture(scope="session")
def tensorboard_pb2(tmp_path_factory):
    """protobuf's own classes for TensorBoard's records, to decode what troupe writes
    independently of troupe's encoder."""
    return _compiled_protos(tmp_path_factory, "tensorboard_records")


@pytest.fixture(scope="session")
def example_pb2(tmp_path_factory):
    """protobuf's own tf.train.Example classes, to check troupe's encoder and parser."""
    return _compiled_protos(tmp_path_factory, "example_records")


def read_tfrecords(path):
    """The records of a TFRecord file, read and CRC-checked here (not by troupe)."""
    import struct

    def crc32c(data):
        crc = 0xFFFFFFFF
        for byte in data:
            crc ^= byte
            for _ in range(8):
                crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
        return crc ^ 0xFFFFFFFF

    def masked(crc):
        return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF

    records = []
    with open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        length, length_crc = struct.unpack_from("<QI", data, pos)
        assert masked(crc32c(data[pos:pos + 8])) == length_crc
        record = data[pos + 12:pos + 12 + length]
        (data_crc,) = struct.unpack_from("<I", data, pos + 12 + length)
        assert masked(crc32c(record)) == data_crc
        records.append(record)
        pos += 16 + length
    return records
