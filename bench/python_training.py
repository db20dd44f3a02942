#!/usr/bin/env python3
"""Python training against `troupe train`: the same model (Fashion-MNIST MLP 784-256-256-10,
Adagrad 0.05, batch 128) on the same cluster (`troupe launch`, 1 ps + 2 workers, TLS with
throwaway credentials, default threads), trained for the same epochs, once by the C++ trainer
and once by the seed's trainer.py on the Python module, in turn `--reps` times. Each run is
timed from launch to exit (start-up, data loading and the final evaluation included), and its
rate is the examples trained over that time. Prints one JSON line per system for
docs/PERFORMANCE.md.

usage: python_training.py TROUPE_CLI PYTHONPATH [--epochs=N] [--reps=N]
"""
import json
import os
import sys

from main_job import run_job

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETTINGS = ["--batch_size=128", "--learning_rate=0.05"]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    troupe, pythonpath, extra = sys.argv[1], sys.argv[2], sys.argv[3:]
    option = lambda name, default: next(
        (int(a.split("=", 1)[1]) for a in extra if a.startswith(f"--{name}=")), default)
    epochs, reps = option("epochs", 15), option("reps", 3)
    env = dict(os.environ, PYTHONPATH=pythonpath)
    launch = [troupe, "launch", "--ps=1", "--workers=2", "--"]
    systems = {
        "troupe train (C++)": launch + ["troupe", "train", "--optimizer=adagrad",
                                        f"--epochs={epochs}"] + SETTINGS,
        "examples/python/trainer.py (Python module)":
            launch + [sys.executable, os.path.join(REPO, "examples/python/trainer.py"),
                      f"--epochs={epochs}"] + SETTINGS,
    }
    samples = {name: [] for name in systems}
    accuracy = {}
    for _ in range(reps):
        for name, command in systems.items():
            elapsed, accuracy[name] = run_job(command, env)
            samples[name].append(epochs * 60000 / elapsed)
    for name in systems:
        print(json.dumps({
            "bench": "python",
            "case": f"Fashion-MNIST, MLP 784-256-256-10, Adagrad, batch 128, {epochs} epochs, "
                    "launch: 1 ps + 2 workers, TLS (whole job)",
            "system": f"{name}; test accuracy {accuracy[name]}",
            "unit": "examples/s", "samples": samples[name]}), flush=True)


if __name__ == "__main__":
    main()
