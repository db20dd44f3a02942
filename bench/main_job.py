#!/usr/bin/env python3
"""The main job's wall time: what scripts/main.sh runs (`troupe launch --ps=1 --workers=2 --
troupe train`, TLS with throwaway credentials, the default 15 epochs), started on a fresh
checkpoint directory and timed from launch to exit, data loading and start-up included.
Prints one JSON line for docs/PERFORMANCE.md: the wall time of each of `--reps` runs, with
the test accuracy of the last.

usage: main_job.py TROUPE_CLI [--epochs=N] [--reps=N]
"""
import json
import re
import subprocess
import sys
import tempfile
import time


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    troupe, extra = sys.argv[1], sys.argv[2:]
    option = lambda name, default: next(
        (int(a.split("=", 1)[1]) for a in extra if a.startswith(f"--{name}=")), default)
    epochs, reps = option("epochs", 15), option("reps", 3)
    samples = []
    for _ in range(reps):
        with tempfile.TemporaryDirectory() as logs:
            start = time.perf_counter()
            run = subprocess.run([troupe, "launch", "--ps=1", "--workers=2", "--", "troupe",
                                  "train", f"--checkpoint_dir={logs}", f"--epochs={epochs}"],
                                 capture_output=True, text=True, timeout=3600)
            samples.append(time.perf_counter() - start)
        accuracy = re.search(r"test accuracy ([0-9.]+)", run.stdout)
        if run.returncode != 0 or accuracy is None:
            sys.exit(f"main_job: the job failed (exit {run.returncode}):\n{run.stdout}{run.stderr}")
    print(json.dumps({
        "bench": "training",
        "case": f"Fashion-MNIST, MLP 784-256-256-10, Adam, batch 128, {epochs} epochs",
        "system": f"troupe main job (launch: 1 ps + 2 workers, TLS, default threads); "
                  f"test accuracy {accuracy.group(1)}",
        "unit": "s", "samples": samples}), flush=True)


if __name__ == "__main__":
    main()
