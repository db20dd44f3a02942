"""examples/python/mnist_replica.py, TensorFlow 1.x's mnist_replica pattern (flags, Supervisor,
replica_device_setter, Adam, SyncReplicasOptimizer), as 1 ps + 2 workers: asynchronous from
TensorFlow's own command lines on loopback, and --sync_replicas under `troupe launch` (TLS).
Both reach an accuracy far above chance and exit cleanly, and the chief's event file holds the
graph and the summaries it computed."""

import glob
import os
import re
import subprocess
import sys

import troupe as tf
from conftest import EXAMPLES, TROUPE_CLI, free_ports

REPLICA = os.path.join(EXAMPLES, "mnist_replica.py")
ACCURACY = re.compile(r"After (\d+) training step\(s\), validation cross entropy = \S+, "
                      r"accuracy = (0\.\d+)")
# Validation accuracy on Fashion-MNIST, 10 runs each on 2 cores: 0.83-0.85 after 300 synchronous
# global steps of batch 100, 0.79-0.83 after 600 asynchronous ones (0.72-0.82 after 300, so the
# asynchronous run takes 600; then the chief, which computes the summaries every 100 of its own
# steps, also surely takes 100 of them). Chance is 0.1.
FLOOR = 0.75


def without_tls_env():
    env = dict(os.environ)
    for name in ("TROUPE_TLS_CERT", "TROUPE_TLS_KEY", "TROUPE_TLS_CA", "TROUPE_INSECURE"):
        env.pop(name, None)
    return env


def check_event_file(train_dir):
    files = glob.glob(os.path.join(train_dir, "events.out.tfevents.*"))
    assert files, os.listdir(train_dir)
    tags, graphs = set(), 0
    for path in files:
        for event in tf.train.summary_iterator(path):
            graphs += bool(event.graph_def)
            tags.update(value.tag for value in event.summary.value)
    assert graphs >= 1
    assert {"cross_entropy", "accuracy"} <= tags, tags


def test_asynchronous_from_tensorflow_command_lines(tmp_path):
    ports = free_ports(3)
    hosts = ["--ps_hosts=localhost:%d" % ports[0],
             "--worker_hosts=localhost:%d,localhost:%d" % tuple(ports[1:])]

    def start(job, index):
        return subprocess.Popen(
            [sys.executable, REPLICA] + hosts +
            ["--job_name=%s" % job, "--task_index=%d" % index, "--insecure",
             "--train_steps=600", "--train_dir=%s" % (tmp_path / ("train%d" % index))],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=without_tls_env())

    ps = start("ps", 0)
    workers = [start("worker", i) for i in range(2)]
    try:
        outputs = [w.communicate(timeout=300)[0] for w in workers]
    finally:
        for p in [ps] + workers:
            p.kill()
            p.wait()
    assert [w.returncode for w in workers] == [0, 0], "\n".join(outputs)
    for output in outputs:
        steps, accuracy = ACCURACY.findall(output)[-1]
        assert int(steps) == 600 and float(accuracy) >= FLOOR, output
    assert "Worker 1: Waiting for session to be initialized..." in outputs[1]
    check_event_file(str(tmp_path / "train0"))


def test_sync_replicas_under_troupe_launch_with_tls(tmp_path):
    out = subprocess.run([TROUPE_CLI, "launch", "--ps", "1", "--workers", "2", "--",
                          sys.executable, REPLICA, "--sync_replicas", "--train_steps=300",
                          "--train_dir=%s" % tmp_path],
                         capture_output=True, text=True, timeout=300, env=without_tls_env())
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    assert "TLS with throwaway credentials" in text
    results = ACCURACY.findall(text)
    assert len(results) == 2, text
    for steps, accuracy in results:
        assert int(steps) == 300 and float(accuracy) >= FLOOR, text
    check_event_file(str(tmp_path))
