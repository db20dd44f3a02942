"""The TensorFlow 1.x-style programs of examples/python, each as 1 ps + 2 workers from
TensorFlow's own command lines on loopback (--insecure) and under `troupe launch` (TLS with
throwaway credentials): mnist_replica.py (flags, Supervisor, Adam, --sync_replicas),
supervisor_trainer.py (Supervisor services: checkpoints, summaries), sync_replicas_trainer.py
(SyncReplicasOptimizer, MonitoredTrainingSession, int32 global step), cnn_trainer.py (a
convolutional network of tf.layers, dropout, tf.losses; small here) and lstm_classifier.py
(dynamic_rnn over a DropoutWrapper'd LSTMCell; under troupe launch only). Each reaches an
accuracy far above chance, every process exits cleanly, and the chief's directory holds the
graph, the summaries and the checkpoints."""

import glob
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import troupe as tf
from conftest import EXAMPLES, TROUPE_CLI, free_ports, run_ps_and_workers, without_tls_env

# Accuracy spreads, 10 runs each on 2 cores (chance is 0.5 for the supervisor trainer's two
# classes, 0.1 otherwise):
#  - mnist_replica: 0.83-0.85 validation accuracy after 300 synchronous global steps of batch
#    100, 0.79-0.83 after 600 asynchronous ones (0.72-0.82 after 300: so 600; then the chief,
#    which computes summaries every 100 of its own steps, also surely takes 100 of them);
#  - sync_replicas_trainer: 0.79-0.84 test accuracy after 400 global steps;
#  - supervisor_trainer: 0.99-1.00 after 5000 global steps.
#  - cnn_trainer with 8 and 16 filters, 64 dense units, 300 global steps of batch 64: 0.78-0.80
#    (6 runs).
FLOOR = {"mnist_replica.py": 0.75, "sync_replicas_trainer.py": 0.75,
         "supervisor_trainer.py": 0.95, "cnn_trainer.py": 0.70, "lstm_classifier.py": 0.70}
RESULTS = {
    "mnist_replica.py": re.compile(r"After \d+ training step\(s\), validation cross entropy = "
                                   r"\S+, accuracy = (0\.\d+)"),
    "sync_replicas_trainer.py": re.compile(r"test accuracy (0\.\d+) after"),
    "supervisor_trainer.py": re.compile(r"worker \d: \d+ steps; accuracy (\d\.\d+)"),
    "cnn_trainer.py": re.compile(r"worker 0: \d+ local steps in \S+ s; test accuracy (0\.\d+)"),
    "lstm_classifier.py": re.compile(r"worker 0: \d+ local steps in \S+ s; "
                                     r"test accuracy (0\.\d+)"),
}
# What each program's chief writes: summary tags in its event file, and its directory flag.
# A summary named as an existing op or variable scope ("weights", "logits") is tagged
# "weights_1", "logits_1", as TensorFlow's name scopes make it.
TAGS = {"mnist_replica.py": {"cross_entropy", "accuracy", "global_step/sec"},
        "sync_replicas_trainer.py": {"loss", "train_accuracy", "logits_1", "global_step/sec"},
        "supervisor_trainer.py": {"loss", "batch_accuracy", "weights_1", "global_step/sec"},
        "cnn_trainer.py": {"loss", "global_step/sec"},
        "lstm_classifier.py": {"loss", "global_step/sec"}}
DIR_FLAG = {"mnist_replica.py": "--train_dir", "sync_replicas_trainer.py": "--checkpoint_dir",
            "supervisor_trainer.py": "--logdir", "cnn_trainer.py": "--checkpoint_dir",
            "lstm_classifier.py": "--checkpoint_dir"}
CASES = [("mnist_replica.py", ["--train_steps=600"]),
         ("mnist_replica.py", ["--sync_replicas", "--train_steps=300"]),
         ("supervisor_trainer.py", ["--save_summaries_secs=1", "--save_model_secs=1"]),
         ("sync_replicas_trainer.py", []),
         ("cnn_trainer.py", ["--filters=8", "--dense_units=64", "--batch_size=64",
                             "--train_steps=300"])]
IDS = ["mnist_replica", "mnist_replica_sync", "supervisor_trainer", "sync_replicas_trainer",
       "cnn_trainer"]


def check_chief_directory(program, directory):
    files = glob.glob(os.path.join(directory, "events.out.tfevents.*"))
    assert files, os.listdir(directory)
    tags, graphs = set(), 0
    for path in files:
        for event in tf.train.summary_iterator(path):
            graphs += bool(event.graph_def)
            tags.update(value.tag for value in event.summary.value)
    assert graphs >= 1
    assert TAGS[program] <= tags, tags
    if program != "mnist_replica.py":  # its Supervisor saves every 600 s: none in a short run
        assert tf.train.latest_checkpoint(directory) is not None, os.listdir(directory)


def check_results(program, text, launched=False):
    """Each worker's accuracy (sync_replicas_trainer: the chief's only) is above the floor.
    Under troupe launch the job ends when the chief exits, which may cut another worker's final
    evaluation short: there the chief's ("[worker0] ...") must be present."""
    accuracies = [float(a) for a in RESULTS[program].findall(text)]
    if launched:
        chief = [line for line in text.splitlines() if line.startswith("[worker0] ")]
        assert RESULTS[program].findall("\n".join(chief)), text
    else:
        expected = 1 if program in ("sync_replicas_trainer.py", "cnn_trainer.py") else 2
        assert len(accuracies) == expected, text
    assert min(accuracies) >= FLOOR[program], text


@pytest.mark.parametrize("program,flags", CASES, ids=IDS)
def test_from_tensorflow_command_lines(tmp_path, program, flags):
    ports = free_ports(3)
    hosts = ["--ps_hosts=localhost:%d" % ports[0],
             "--worker_hosts=localhost:%d,localhost:%d" % tuple(ports[1:])]

    def argv(job, index):
        directory = "%s=%s" % (DIR_FLAG[program], tmp_path / ("task%d" % index))
        return ([sys.executable, os.path.join(EXAMPLES, program)] + hosts +
                ["--job_name=%s" % job, "--task_index=%d" % index, "--insecure", directory] +
                flags)

    text = "\n".join(run_ps_and_workers(argv))
    check_results(program, text)
    check_chief_directory(program, str(tmp_path / "task0"))


# lstm_classifier with 32 units, 600 global steps of batch 64: 0.80-0.81 test accuracy (3 runs,
# 7 s each).
LSTM_FLAGS = ["--units=32", "--batch_size=64", "--train_steps=600"]


@pytest.mark.parametrize("program,flags", CASES + [("lstm_classifier.py", LSTM_FLAGS)],
                         ids=IDS + ["lstm_classifier"])
def test_under_troupe_launch_with_tls(tmp_path, program, flags):
    out = subprocess.run([TROUPE_CLI, "launch", "--ps", "1", "--workers", "2", "--",
                          sys.executable, os.path.join(EXAMPLES, program),
                          "%s=%s" % (DIR_FLAG[program], tmp_path)] + flags,
                         capture_output=True, text=True, timeout=300, env=without_tls_env())
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    assert "TLS with throwaway credentials" in text
    check_results(program, text, launched=True)
    check_chief_directory(program, str(tmp_path))


# wide_deep.py with a 20,000-row table over 2 ps, MLP 32-32, 1500 global steps of batch 256:
# test AUC 0.011 below the planted model's (0.9077 vs 0.9186) in a run of 7 s; the default
# configuration (1M rows, MLP 400-400, 3000 steps of batch 512) comes within 0.007.
WIDE_DEEP_AUC = re.compile(r"\[worker0\] worker 0: \d+ local steps in \S+ s; test AUC (0\.\d+), "
                           r"planted model's AUC (0\.\d+)")


def test_wide_deep_with_its_tables_over_two_ps_tasks(tmp_path):
    out = subprocess.run([TROUPE_CLI, "launch", "--ps", "2", "--workers", "2", "--",
                          sys.executable, os.path.join(EXAMPLES, "wide_deep.py"),
                          "--checkpoint_dir=%s" % tmp_path, "--table_rows=20000",
                          "--deep_units=32,32", "--train_steps=1500", "--batch_size=256"],
                         capture_output=True, text=True, timeout=300, env=without_tls_env())
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    (trained, planted), = [tuple(map(float, m)) for m in WIDE_DEEP_AUC.findall(text)]
    assert trained >= planted - 0.03, text
    # The checkpoint holds each partitioned table (and its optimizer slot) by its whole name
    # (each ps wrote its slices: the MonitoredTrainingSession's saver is sharded).
    shapes = tf.train.NewCheckpointReader(
        tf.train.latest_checkpoint(str(tmp_path))).get_variable_to_shape_map()
    assert shapes["deep/embeddings"] == [20000, 16]
    assert shapes["wide/weights"] == [20000, 1]
    assert shapes["deep/embeddings/Adagrad"] == [20000, 16]  # slots are whole too
    assert not any("part_" in name for name in shapes), shapes
    assert len([f for f in os.listdir(str(tmp_path)) if ".shard-" in f]) >= 2


# word2vec.py over 2 ps, 1500 global steps of 128 pairs: neighbour precision 0.86 (4 s); at
# random 0.004.
WORD2VEC_PRECISION = re.compile(r"\[worker0\] worker 0: \d+ local steps in \S+ s; neighbour "
                                r"precision (0\.\d+|1\.0+)")


def test_word2vec_learns_with_nce_loss_and_tables_over_two_ps_tasks(tmp_path):
    out = subprocess.run([TROUPE_CLI, "launch", "--ps", "2", "--workers", "2", "--",
                          sys.executable, os.path.join(EXAMPLES, "word2vec.py"),
                          "--checkpoint_dir=%s" % tmp_path, "--train_steps=1500"],
                         capture_output=True, text=True, timeout=300, env=without_tls_env())
    text = out.stdout + out.stderr
    assert out.returncode == 0, text
    precision, = [float(m) for m in WORD2VEC_PRECISION.findall(text)]
    assert precision >= 0.6, text
    reader = tf.train.NewCheckpointReader(tf.train.latest_checkpoint(str(tmp_path)))
    assert reader.get_tensor("word2vec/embeddings").shape == (1000, 32)
    assert reader.get_tensor("word2vec/nce_weights").shape == (1000, 32)


def test_wide_deep_recovers_when_a_ps_task_is_killed(tmp_path):
    """kill -9 of the ps holding half of each table, mid-training, then the same task started
    again: the workers' sessions recover from the newest checkpoint and training ends with an
    AUC as good as without the failure."""
    ports = free_ports(4)
    hosts = ["--ps_hosts=localhost:%d,localhost:%d" % tuple(ports[:2]),
             "--worker_hosts=localhost:%d,localhost:%d" % tuple(ports[2:])]
    common = hosts + ["--insecure", "--table_rows=20000", "--deep_units=32,32",
                      "--train_steps=1500", "--batch_size=256", "--save_checkpoint_steps=100"]

    def start(job, index, directory="unused"):
        return subprocess.Popen(
            [sys.executable, "-u", os.path.join(EXAMPLES, "wide_deep.py"),
             "--job_name=%s" % job, "--task_index=%d" % index,
             "--checkpoint_dir=%s" % (tmp_path / directory)] + common,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=without_tls_env())

    ps = [start("ps", 0), start("ps", 1)]
    workers = [start("worker", 0, "chief"), start("worker", 1)]
    chief_lines = []
    try:
        for line in workers[0].stdout:  # until the chief is past global step 400
            chief_lines.append(line)
            match = re.search(r"global step (\d+)", line)
            if match and int(match.group(1)) >= 400:
                break
        ps[1].kill()
        ps[1].wait()
        ps[1] = start("ps", 1)
        rest, _ = workers[0].communicate(timeout=240)
        other, _ = workers[1].communicate(timeout=60)
    finally:
        for p in ps + workers:
            p.kill()
            p.wait()
    text = "".join(chief_lines) + rest
    assert workers[0].returncode == 0, text + other
    assert "recovering the training session" in text + other, text + other
    (trained, planted), = [tuple(map(float, m)) for m in re.findall(
        r"worker 0: \d+ local steps in \S+ s; test AUC (0\.\d+), planted model's AUC (0\.\d+)",
        text)]
    assert trained >= planted - 0.03, text
