#!/usr/bin/env python3
"""training peer: PyTorch's parameter-server pattern with torch.distributed.rpc.

The same job as bench/training_bench.cpp measures for troupe: the MLP 784-512-512-10 (ReLU,
softmax cross entropy, SGD with learning rate 0.01), batch 128 of synthetic data per worker,
1 ps + 2 workers as processes on loopback, asynchronous updates. Each worker step fetches the
parameters from the ps (rpc_sync), computes the gradients locally and sends them back; the ps
applies them under a lock. Threads per process as mlp.py chooses them. Prints one JSON line:
examples/s over the measured steps, summed over the workers, for each of `--reps` runs.
"""
import threading

import torch
import torch.distributed.rpc as rpc

import mlp

PROCESSES = 3


class ParameterServer:
    def __init__(self):
        torch.manual_seed(0)
        self.model = mlp.make_model()
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


def run(rank, port, steps, config, results):
    mlp.set_threads(config)
    options = rpc.TensorPipeRpcBackendOptions(init_method=f"tcp://127.0.0.1:{port}",
                                              rpc_timeout=600)
    name = "ps" if rank == 0 else f"worker{rank}"
    if rank == 0:
        global _ps
        _ps = ParameterServer()
    rpc.init_rpc(name, rank=rank, world_size=PROCESSES, rpc_backend_options=options)
    if rank != 0:
        images, labels = mlp.synthetic_batch(rank)
        model = mlp.make_model()
        loss_fn = torch.nn.CrossEntropyLoss()

        def step():
            with torch.no_grad():
                for p, value in zip(model.parameters(), rpc.rpc_sync("ps", get_parameters)):
                    p.copy_(value)
            model.zero_grad()
            loss_fn(model(images), labels).backward()
            rpc.rpc_sync("ps", apply_gradients, args=([p.grad for p in model.parameters()],))

        results.put(mlp.examples_per_second_of(step, steps))
    rpc.shutdown()


def examples_per_second(steps, config):
    return mlp.run_processes("torch_ps", run, PROCESSES, steps, config)


if __name__ == "__main__":
    mlp.main(__doc__, "rpc parameter server (1 ps + 2 workers, processes)", PROCESSES,
             examples_per_second)
