#!/usr/bin/env python3
"""The main job's wall time: what scripts/main.sh runs (`troupe launch --ps=1 --workers=2 --
troupe train`, TLS with throwaway credentials, the default 15 epochs), started on a fresh
checkpoint directory and timed from launch to exit, data loading and start-up included.
Prints one JSON line for docs/PERFORMANCE.md: the wall time of each of `--reps` runs, with
the test accuracy of the last.

usage: main_job.py TROUPE_CLI [--epochs=N] [--reps=N]
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time


def run_job(command, env=None):
    """Runs a training job `command` (given --checkpoint_dir=<a fresh directory>) to its end:
    (seconds from start to exit, the test accuracy it printed); exits on failure."""
    with tempfile.TemporaryDirectory() as logs:
        start = time.perf_counter()
        run = subprocess.run(command + [f"--checkpoint_dir={logs}"], capture_output=True,
                             text=True, timeout=3600, env=env)
        elapsed = time.perf_counter() - start
    accuracy = re.search(r"test accuracy ([0-9.]+)", run.stdout)
    if run.returncode != 0 or accuracy is None:
        sys.exit(f"{os.path.basename(sys.argv[0])}: the job failed (exit {run.returncode}):\n"
                 f"{run.stdout}{run.stderr}")
    return elapsed, accuracy.group(1)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    troupe, extra = sys.argv[1], sys.argv[2:]
    option = lambda name, default: next(
        (int(a.split("=", 1)[1]) for a in extra if a.startswith(f"--{name}=")), default)
    epochs, reps = option("epochs", 15), option("reps", 3)
    samples = []
    for _ in range(reps):
        seconds, accuracy = run_job([troupe, "launch", "--ps=1", "--workers=2", "--", "troupe",
                                     "train", f"--epochs={epochs}"])
        samples.append(seconds)
    print(json.dumps({
        "bench": "training",
        "case": f"Fashion-MNIST, MLP 784-256-256-10, Adam, batch 128, {epochs} epochs",
        "system": f"troupe main job (launch: 1 ps + 2 workers, TLS, default threads); "
                  f"test accuracy {accuracy}",
        "unit": "s", "samples": samples}), flush=True)


if __name__ == "__main__":
    main()
