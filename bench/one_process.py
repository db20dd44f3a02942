"""What the one-process model benchmarks (cnn_single.py, lstm_single.py, wide_deep_single.py)
share: timing a training step function, and running each system in a fresh process of its own,
alternating between them `--reps` times, with 1 and with 2 intra-op threads (the faster counts
for each system, as peers run in their best configuration). Prints one JSON line per system for
docs/PERFORMANCE.md: examples/s of each run of its best thread count, and the other count's.

A benchmark script calls main(__file__, {"troupe": troupe_rate, "torch": torch_rate}, ...),
where each rate function takes (steps, threads) and returns measure(...)'s examples/s.
"""
import json
import os
import subprocess
import sys
import time

NAMES = {"troupe": "troupe", "torch": "PyTorch"}


def measure(step, steps, batch, warmup):
    """examples/s of `steps` calls step(i) after `warmup` unmeasured ones."""
    for i in range(warmup):
        step(i)
    started = time.perf_counter()
    for i in range(steps):
        step(i)
    return steps * batch / (time.perf_counter() - started)


def main(script, rates, bench, case, steps=100, reps=3, threads=(1, 2)):
    """`script`'s command line: `--run SYSTEM THREADS STEPS` measures one run (the child);
    `PYTHONPATH [--steps=N] [--reps=N]` runs them all, alternating, and prints the results.
    `threads`: the intra-op thread counts tried for every system, or a dict of them by
    system."""
    if len(sys.argv) >= 5 and sys.argv[1] == "--run":
        print(rates[sys.argv[2]](int(sys.argv[4]), int(sys.argv[3])))
        return
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(sys.modules["__main__"].__doc__)
    option = lambda name, default: next(  # noqa: E731
        (int(a.split("=", 1)[1]) for a in sys.argv[2:] if a.startswith(f"--{name}=")), default)
    steps, reps = option("steps", steps), option("reps", reps)
    env = dict(os.environ, PYTHONPATH=sys.argv[1])
    counts = threads if isinstance(threads, dict) else {system: threads for system in rates}
    samples = {(system, n): [] for system in rates for n in counts[system]}
    for _ in range(reps):
        for system, n in samples:
            out = subprocess.run([sys.executable, script, "--run", system, str(n), str(steps)],
                                 capture_output=True, text=True, env=env)
            if out.returncode != 0:
                sys.exit(f"{os.path.basename(script)}: {system} with {n} thread(s) failed:\n"
                         f"{out.stdout}{out.stderr}")
            samples[(system, n)].append(float(out.stdout.split()[-1]))
    median = lambda key: sorted(samples[key])[len(samples[key]) // 2]  # noqa: E731
    for system in rates:
        best = max(((system, n) for n in counts[system]), key=median)
        line = {"bench": bench, "case": case,
                "system": "%s %d thread(s)" % (NAMES.get(system, system), best[1]),
                "unit": "examples/s", "samples": samples[best]}
        others = {str(n): samples[(system, n)] for n in counts[system] if n != best[1]}
        if others:
            line["other_threads"] = others
        print(json.dumps(line))
