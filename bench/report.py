#!/usr/bin/env python3
"""Turns the benchmarks' JSON lines into the results part of docs/PERFORMANCE.md.

usage: report.py NEW.jsonl STORED.jsonl DOC.md

Each input line is one series: {"bench", "case", "system", "unit", "samples"}. The series of
NEW replace those of the same benchmarks in STORED (so one benchmark can be run again alone),
and STORED is rewritten. The results
(machine, tables of medians and spread, and the targets with the ratio each one is measured by,
baseline from the same run) replace what lies between the RESULTS_BEGIN and RESULTS_END
markers of DOC.md; the hand-written analysis around them is kept.
"""
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys

BEGIN, END = "<!-- RESULTS_BEGIN (written by bench/report.py) -->", "<!-- RESULTS_END -->"

TITLES = {
    "transfer": "Transfer: a tensor from a device of one task to a device of another",
    "memory": "Memory: a node receiving a 120 MB tensor",
    "latency": "Step latency: the smallest remote step",
    "executor": "Executor overhead",
    "kernels": "Kernels: MatMul",
    "training": "Training: Fashion-MNIST MLP",
    "python": "Training from Python: the seed's trainer.py on the Python module against troupe train",
    "scale": "Scale: in-process clusters",
    "simulation": "Simulation: the deterministic mode",
}


def percentile(values, p):
    values = sorted(values)
    k = (len(values) - 1) * p
    lo, hi = int(k), min(int(k) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (k - lo)


def fmt(x):
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}" if x >= 0.1 else f"{x:.3f}"


def machine():
    def run(*cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return "?"
    cpu = next((line.split(":", 1)[1].strip() for line in run("lscpu").splitlines()
                if line.startswith("Model name")), "?")
    memory = next((int(line.split()[1]) // (1024 * 1024) for line in open("/proc/meminfo")
                   if line.startswith("MemTotal")), 0)
    return (f"{cpu}, {os.cpu_count()} cores, {memory} GiB; Linux {platform.release()}; "
            f"{run('c++', '--version').splitlines()[0] if run('c++', '--version') != '?' else '?'}; "
            f"commit {run('git', 'rev-parse', '--short', 'HEAD')}; "
            f"{datetime.date.today().isoformat()}")


class Results:
    def __init__(self, lines):
        # A series measured in rounds (kernels) comes as several lines: their samples are one.
        merged = {}
        for line in lines:
            if line.startswith("{"):
                s = json.loads(line)
                key = (s["bench"], s["case"], s["system"])
                if key in merged:
                    merged[key]["samples"] += s["samples"]
                else:
                    merged[key] = s
        self.series = list(merged.values())

    def find(self, bench, case, system_prefix):
        # A system named exactly so first ("troupe" is not "troupe TLS"), else by its prefix.
        for exact in (True, False):
            for s in self.series:
                if s["bench"] == bench and s["case"] == case and (
                        s["system"] == system_prefix if exact
                        else s["system"].startswith(system_prefix)):
                    return s
        return None

    def best(self, bench, case, system_prefix, containing):
        """The highest median among the series whose system starts with `system_prefix` and
        contains `containing`."""
        medians = [statistics.median(s["samples"]) for s in self.series
                   if s["bench"] == bench and s["case"] == case
                   and s["system"].startswith(system_prefix) and containing in s["system"]]
        return max(medians, default=None)

    def median(self, bench, case, system_prefix):
        s = self.find(bench, case, system_prefix)
        return statistics.median(s["samples"]) if s else None

    def p99(self, bench, case, system_prefix):
        s = self.find(bench, case, system_prefix)
        return percentile(s["samples"], 0.99) if s else None

    def tables(self):
        out = []
        for bench, title in TITLES.items():
            rows = [s for s in self.series if s["bench"] == bench]
            if not rows:
                continue
            out += [f"### {title}", "",
                    "| case | system | median | p10 - p90 | p99 | runs |",
                    "|---|---|---|---|---|---|"]
            for s in rows:
                v, unit = s["samples"], s["unit"]
                out.append(f"| {s['case']} | {s['system']} | **{fmt(statistics.median(v))}** {unit} "
                           f"| {fmt(percentile(v, 0.1))} - {fmt(percentile(v, 0.9))} "
                           f"| {fmt(percentile(v, 0.99))} | {len(v)} |")
            out.append("")
        return out

    def targets(self):
        rows = []

        def add(what, figure, target, met):
            if figure is not None:
                rows.append(f"| {what} | {figure} | {target} | {'yes' if met else '**no**'} |")

        def ratio(a, b):
            return a / b if a is not None and b else None

        def transfer(cases, system, baseline, label, goal, strictly=False):
            # `goal`: a number, or a function of the case.
            for case in cases:
                r = ratio(self.median("transfer", case, system),
                          self.median("transfer", case, baseline))
                g = goal(case) if callable(goal) else goal
                if r is not None:
                    add(f"transfer {case}, {label}", f"{r:.2f}",
                        f"> {g}" if strictly else f">= {g}", r > g if strictly else r >= g)

        every = ["4 KiB", "64 KiB", "1 MiB", "16 MiB", "64 MiB", "256 MiB"]
        large = ["1 MiB", "16 MiB", "64 MiB", "256 MiB"]
        # TLS first: it is the default.
        transfer(every, "troupe TLS, two processes, channel", "raw TCP",
                 "two processes, TLS (channel socket) / raw TCP",
                 lambda case: 0.5 if "KiB" in case else 0.8)
        transfer(large, "troupe TLS, two processes, channel", "raw TLS stream",
                 "two processes, TLS (channel socket) / raw TLS stream", 0.9)
        transfer(large, "troupe TLS, two processes, same host", "raw TCP",
                 "same host, TLS (shared memory) / raw TCP", 1, strictly=True)
        case = "fetch a scalar variable from another process"
        r = ratio(self.median("latency", case, "troupe TLS"),
                  self.median("latency", case, "raw TCP"))
        if r is not None:
            add("remote step median, TLS / raw TCP round trip median", f"{r:.1f}", "<= 2", r <= 2)
        r = ratio(self.median("latency", case, "troupe TLS, steps as actor messages"),
                  self.median("latency", case, "troupe TLS"))
        if r is not None:
            add("remote step median with TLS, steps as actor messages / as channel calls",
                f"{r:.1f}", ">= 1.3 (calls are kept)", r >= 1.3)
        transfer(every, "troupe, two processes, TCP", "raw TCP",
                 "two processes (TCP channel) / raw TCP",
                 lambda case: 0.5 if "KiB" in case else 0.9)
        transfer(["64 KiB"] + large, "troupe, two processes, same host", "raw TCP",
                 "same host (shared memory) / raw TCP", 1, strictly=True)
        in_process = [(c, self.median("transfer", c, "troupe, one")) for c in
                      ["1 MiB", "16 MiB", "64 MiB", "256 MiB"]]
        in_process = [(c, t) for c, t in in_process if t is not None]
        if len(in_process) >= 2:
            r = in_process[-1][1] / in_process[0][1]
            # Step times of tens of microseconds are noisy; a copy would scale with the size.
            add(f"in-process step time, {in_process[-1][0]} / {in_process[0][0]}", f"{r:.2f}",
                "< 2 (a copy: ~256)", r < 2)
        case = "fetch a scalar variable from another process"
        r = ratio(self.median("latency", case, "troupe"), self.median("latency", case, "raw TCP"))
        if r is not None:
            add("remote step median / raw TCP round trip median", f"{r:.1f}", "<= 1.5", r <= 1.5)
            r = ratio(self.p99("latency", case, "troupe"), self.p99("latency", case, "raw TCP"))
            add("remote step p99 / raw TCP round trip p99", f"{r:.1f}", "<= 2", r <= 2)
        for case in ["chain of 10,000 scalar Adds", "fan-out/fan-in of 10,000 scalar Adds"]:
            m = self.median("executor", case, "troupe")
            if m is not None:
                add(f"executor, {case}", f"{m:.2f} us/node", "<= 1 us", m <= 1)
        m = self.median("executor", "Session::run fixed cost (fetch a constant)", "troupe")
        if m is not None:
            add("local Session::run fixed cost", f"{m:.1f} us", "<= 20 us", m <= 20)
        case = "MLP 784-512-512-10, batch 128, SGD"
        one = self.median("training", case, "troupe, one process")
        dist = self.median("training", case, "troupe TLS, 1 ps")
        torch_one = self.best("training", case, "PyTorch", "one process")
        torch_dist = max([m for m in (self.best("training", case, "PyTorch", "rpc parameter"),
                                      self.best("training", case, "PyTorch", "DDP"))
                          if m is not None], default=None)
        r = ratio(one, torch_one)
        if r is not None:
            add("training, troupe one process / PyTorch's best one-process configuration",
                f"{r:.2f}", ">= 1.0", r >= 1.0)
        r = ratio(dist, torch_dist)
        if r is not None:
            add("training, troupe 1 ps + 2 workers with TLS / PyTorch's best distributed peer "
                "(rpc parameter server or DDP)", f"{r:.2f}", ">= 1.5", r >= 1.5)
        r = ratio(dist, one)
        if r is not None:
            add("training, troupe 1 ps + 2 workers with TLS / troupe one process", f"{r:.2f}",
                ">= 0.8", r >= 0.8)
        for s in self.series:
            if s["bench"] == "python" and s["system"].startswith("examples/python/trainer.py"):
                r = ratio(statistics.median(s["samples"]),
                          self.median("python", s["case"], "troupe train (C++)"))
                if r is not None:
                    add("training from Python (trainer.py) / troupe train, same job", f"{r:.2f}",
                        ">= 0.9", r >= 0.9)
        for s in self.series:
            if s["bench"] == "kernels" and s["system"] == "troupe":
                r = ratio(statistics.median(s["samples"]), self.median("kernels", s["case"], "PyTorch"))
                if r is not None:
                    add(f"{s['case']} / torch.mm", f"{r:.2f}", ">= 0.9", r >= 0.9)
        # A simulated cluster of 10,000 tasks in one process.
        m = self.median("scale", "10000 tasks", "troupe, start-up")
        if m is not None:
            add("10,000 tasks in one process, start-up", f"{m / 1000:.2f} s", "<= 10 s",
                m <= 10000)
        m = self.median("scale", "10000 tasks", "troupe, resident memory per task")
        if m is not None:
            add("10,000 tasks in one process, memory per task", f"{m:.1f} KiB", "<= 150 KB",
                m * 1024 <= 150000)
        m = self.median("scale", "10000 tasks", "troupe, first step touching every task")
        if m is not None:
            add("10,000 tasks in one process, one step touching every task (its first run)",
                f"{m / 1000:.2f} s", "<= 1 s", m <= 1000)
        # The deterministic simulation's training job under faults.
        m = self.median("simulation", "1 ps + 4 workers, 1000 steps each, 3 faults",
                        "troupe, deterministic run (wall time)")
        if m is not None:
            add("deterministic simulation, 1 ps + 4 workers x 1,000 steps under 3 faults, "
                "wall time (two runs of each seed: identical traces)", f"{m:.2f} s", "< 10 s",
                m < 10)
        m = self.median("memory", "120 MB tensor received", "troupe")
        if m is not None:
            add("node peak memory growth receiving a 120 MB tensor", f"{m:.2f} x", "<= 1.5 x",
                m <= 1.5)
        return ["| target | measured | goal | met |", "|---|---|---|---|"] + rows + [""]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    new_path, stored_path, doc_path = sys.argv[1:]
    new = [line for line in open(new_path).read().splitlines() if line.startswith("{")]
    rerun = {json.loads(line)["bench"] for line in new}
    stored = open(stored_path).read().splitlines() if os.path.exists(stored_path) else []
    kept = [line for line in stored if line.startswith("{") and json.loads(line)["bench"] not in rerun]
    with open(stored_path, "w") as out:
        out.write("\n".join(kept + new) + "\n")
    results = Results(kept + new)
    body = [BEGIN, "", f"Measured on: {machine()}.", "",
            "### Targets (each a ratio to a baseline measured in the same run)", ""]
    body += results.targets() + results.tables() + [END]
    doc = open(doc_path).read() if os.path.exists(doc_path) else f"# Performance\n\n{BEGIN}\n{END}\n"
    if BEGIN not in doc or END not in doc:
        sys.exit(f"report.py: {doc_path} lacks the {BEGIN} / {END} markers")
    head, rest = doc.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    with open(doc_path, "w") as out:
        out.write(head + "\n".join(body) + tail)


if __name__ == "__main__":
    main()
