"""The seed's trainer (examples/python/trainer.py) as 2 ps + 2 workers: from the seed's own
command lines on loopback, and started by `troupe launch` (TLS with throwaway credentials);
it reaches the test accuracy `troupe train` reaches with the same settings."""

import os
import re
import subprocess
import sys

import pytest

from conftest import EXAMPLES, TROUPE_CLI, free_ports

TRAINER = os.path.join(EXAMPLES, "trainer.py")
SETTINGS = ["--epochs", "4", "--batch_size", "128", "--learning_rate", "0.05"]
# Asynchronous training orders the two workers' updates differently in every run, so one run's
# accuracy varies, and more so when other processes compete for the cores: the workers' updates
# are then staler. After 2 epochs, this trainer from these command lines gave 0.803-0.852 in 10
# runs beside two busy processes on 2 cores, and a full CI run saw 0.7663 against a reference of
# 0.8487. After 4 epochs, the same 10 runs beside two busy processes gave 0.841-0.865 (beside
# one: 0.853-0.864), and training takes about 5 s. One run of each trainer is compared with a
# margin that covers that spread, and a floor far above chance (0.1).
MARGIN = 0.06
FLOOR = 0.80
ACCURACY = re.compile(r"test accuracy (0\.\d+)")


def troupe_train_accuracy(tmp_path):
    out = subprocess.run([TROUPE_CLI, "launch", "--ps", "2", "--workers", "2", "--insecure",
                          "--", "troupe", "train", "--optimizer", "adagrad",
                          "--checkpoint_dir", str(tmp_path / "cpp")] + SETTINGS,
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    return float(ACCURACY.findall(out.stdout + out.stderr)[-1])


@pytest.fixture(scope="module")
def reference_accuracy(tmp_path_factory):
    return troupe_train_accuracy(tmp_path_factory.mktemp("reference"))


def test_seed_command_lines_train_to_the_accuracy_of_troupe_train(tmp_path,
                                                                  reference_accuracy):
    ports = free_ports(4)
    hosts = ["--ps_hosts=localhost:%d,localhost:%d" % tuple(ports[:2]),
             "--worker_hosts=localhost:%d,localhost:%d" % tuple(ports[2:])]
    env = dict(os.environ)
    for name in ("TROUPE_TLS_CERT", "TROUPE_TLS_KEY", "TROUPE_TLS_CA"):
        env.pop(name, None)

    def start(job, index):
        return subprocess.Popen(
            [sys.executable, TRAINER] + hosts + ["--job_name=%s" % job, "--task_index=%d" % index,
                                                 "--insecure", "--checkpoint_dir",
                                                 str(tmp_path / "py")] + SETTINGS,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)

    ps = [start("ps", i) for i in range(2)]
    workers = [start("worker", i) for i in range(2)]
    try:
        outputs = [w.communicate(timeout=300)[0] for w in workers]
    finally:
        for p in ps + workers:
            p.kill()
            p.wait()
    assert [w.returncode for w in workers] == [0, 0], "\n".join(outputs)
    accuracy = float(ACCURACY.findall(outputs[0])[-1])
    print("python trainer: %.4f, troupe train: %.4f" % (accuracy, reference_accuracy))
    assert accuracy >= reference_accuracy - MARGIN, "\n".join(outputs)
    assert accuracy >= FLOOR, "\n".join(outputs)
    assert "examples/s" in outputs[1]


def test_troupe_launch_starts_the_trainer_with_tls(tmp_path):
    env = dict(os.environ)
    for name in ("TROUPE_TLS_CERT", "TROUPE_TLS_KEY", "TROUPE_TLS_CA", "TROUPE_INSECURE"):
        env.pop(name, None)
    out = subprocess.run([TROUPE_CLI, "launch", "--ps", "2", "--workers", "2", "--",
                          sys.executable, TRAINER, "--epochs", "1",
                          "--checkpoint_dir", str(tmp_path)],
                         capture_output=True, text=True, timeout=300, env=env)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    assert "TLS with throwaway credentials" in text
    # One asynchronous epoch: 0.80-0.83 on an idle machine (5 runs), 0.72 seen once while the
    # rest of the test suite ran beside it; far above chance (0.1) either way.
    assert float(ACCURACY.findall(text)[-1]) >= 0.65, text
    assert os.path.exists(os.path.join(str(tmp_path), "checkpoint"))
