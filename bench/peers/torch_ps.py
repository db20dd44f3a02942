#!/usr/bin/env python3
"""training peer: PyTorch's parameter-server pattern with torch.distributed.rpc.

The same job as bench/training_bench.cpp measures for troupe: the MLP 784-512-512-10 (ReLU,
softmax cross entropy, SGD with learning rate 0.01), batch 128 of synthetic data per worker,
1 ps + 2 workers as processes on loopback, asynchronous updates. Each worker step fetches the
parameters from the ps (rpc_sync), computes the gradients locally and sends them back; the ps
applies them under a lock. Prints one JSON line: examples/s over the measured steps, summed
over the workers, for each of `--reps` runs.
"""
import argparse
import json
import os
import socket
import threading
import time

import torch
import torch.distributed.rpc as rpc
import torch.multiprocessing as mp

BATCH, PIXELS, CLASSES, WARMUP = 128, 784, 10, 20


def make_model():
    return torch.nn.Sequential(
        torch.nn.Linear(PIXELS, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, CLASSES))


class ParameterServer:
    def __init__(self):
        self.model = make_model()
        self.lock = threading.Lock()

    def parameters(self):
        with self.lock:
            return [p.detach().clone() for p in self.model.parameters()]

    def apply(self, gradients, learning_rate=0.01):
        with self.lock, torch.no_grad():
            for p, g in zip(self.model.parameters(), gradients):
                p.add_(g, alpha=-learning_rate)


_ps = None  # the ParameterServer, in the ps process


def get_parameters():
    return _ps.parameters()


def apply_gradients(gradients):
    _ps.apply(gradients)


def run(rank, port, steps, threads, results):
    torch.set_num_threads(threads)
    options = rpc.TensorPipeRpcBackendOptions(init_method=f"tcp://127.0.0.1:{port}",
                                              rpc_timeout=600)
    name = "ps" if rank == 0 else f"worker{rank}"
    if rank == 0:
        global _ps
        _ps = ParameterServer()
    rpc.init_rpc(name, rank=rank, world_size=3, rpc_backend_options=options)
    if rank != 0:
        generator = torch.Generator().manual_seed(rank)
        images = torch.rand(BATCH, PIXELS, generator=generator)
        labels = torch.randint(0, CLASSES, (BATCH,), generator=generator)
        model = make_model()
        loss_fn = torch.nn.CrossEntropyLoss()

        def step():
            with torch.no_grad():
                for p, value in zip(model.parameters(), rpc.rpc_sync("ps", get_parameters)):
                    p.copy_(value)
            model.zero_grad()
            loss_fn(model(images), labels).backward()
            rpc.rpc_sync("ps", apply_gradients, args=([p.grad for p in model.parameters()],))

        for _ in range(WARMUP):
            step()
        start = time.perf_counter()
        for _ in range(steps):
            step()
        results.put(steps * BATCH / (time.perf_counter() - start))
    rpc.shutdown()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=int, default=300, help="measured steps per worker")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="intra-op threads per process (troupe's default: one per core)")
    args = parser.parse_args()
    samples = []
    for _ in range(args.reps):
        results = mp.get_context("spawn").SimpleQueue()
        port = free_port()
        processes = [mp.get_context("spawn").Process(
            target=run, args=(rank, port, args.steps, args.threads, results)) for rank in range(3)]
        for p in processes:
            p.start()
        for p in processes:
            p.join(600)
            if p.exitcode != 0:
                raise SystemExit(f"torch_ps: a process failed (exit code {p.exitcode})")
        samples.append(results.get() + results.get())
    print(json.dumps({"bench": "training", "case": "MLP 784-512-512-10, batch 128, SGD",
                      "system": f"PyTorch {torch.__version__} rpc parameter server "
                                "(1 ps + 2 workers, processes)",
                      "unit": "examples/s", "samples": samples}), flush=True)


if __name__ == "__main__":
    main()
