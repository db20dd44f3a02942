#!/usr/bin/env python3
"""The wide-and-deep model distributed, asynchronous, on this machine's cores: troupe's main
job against PyTorch's two distributed forms of it.

The model (as bench/wide_deep_single.py and examples/python/wide_deep.py): 26 categorical
features looked up in an embedding table of 1,000,000 x 16 and a wide table of 1,000,000 x 1,
13 dense features, MLP 400-400-1, sigmoid cross entropy, Adagrad 0.2 with sparse updates,
batch 512 per worker step, synthetic click-through data with a planted model.

- troupe: `troupe launch --ps=2 --workers=2 -- troupe train --model=wide_deep` (TLS, the
  launcher's throwaway credentials): each table in one shard per ps, each worker step looks up
  its rows on the ps tasks and sends back their sparse gradients; the dense layers live on the
  ps tasks too. Rate: global steps x 512 per second between the chief's progress lines at the
  end of the warm-up and at the last step (the data drawn in the loop, not before).
- PyTorch parameter servers (torch.distributed.rpc, TensorPipe over loopback, no TLS): 2 ps
  processes each hold half of both tables (rows split as troupe's "div") with their Adagrad
  accumulators, ps 0 the MLP too; each worker step looks its rows up on both ps (rpc_async),
  fetches the MLP, computes the gradients locally and sends the rows' gradients and the MLP's
  back, where the ps applies Adagrad under a lock (duplicate ids summed first).
- PyTorch DDP with sparse gradients (gloo): 2 worker processes, each a whole replica with
  nn.Embedding(sparse=True) tables; DDP all-reduces the gradients (the tables' sparse) and each
  replica applies torch.optim.Adagrad.

The PyTorch peers get their batches made before timing; one torch and one OpenBLAS thread per
process (4 and 2 processes on 2 cores: their best configuration, bench/peers/mlp.py). The
troupe runs also report each ps task's peak resident memory. Each run: 20 unmeasured steps per
worker, then --steps measured; prints one JSON line per system (examples/s summed over the
workers, per run).

usage: wide_deep_cluster.py TROUPE_CLI [--steps=N] [--reps=N] [--systems=troupe,rpc,ddp]
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "peers"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples", "python"))

ROWS, DIM, BATCH, UNITS, LR, FEATURES, DENSE = 1000000, 16, 512, 400, 0.2, 26, 13
WARMUP, NUM_PS, NUM_WORKERS = 20, 2, 2
CASE = ("wide-and-deep CTR, 1M x 16 embeddings + 1M wide weights, MLP 400-400-1, Adagrad, "
        "batch 512 per worker, 2 workers, asynchronous")


def troupe_rate(troupe, steps, ps_memory):
    """Examples/s of the main job between the chief's progress at WARMUP global steps per
    worker and at the last step; appends each ps task's peak resident memory (MiB, read at the
    last step) to `ps_memory`."""
    first, last = WARMUP * NUM_WORKERS, WARMUP * NUM_WORKERS + steps * NUM_WORKERS
    with tempfile.TemporaryDirectory() as logs:
        job = subprocess.Popen(
            [troupe, "launch", f"--ps={NUM_PS}", f"--workers={NUM_WORKERS}", "--", "troupe",
             "train", "--model=wide_deep", f"--train_steps={last}", "--test_examples=1000",
             "--eval_every_steps=100000000", "--save_checkpoint_steps=100000000",
             "--log_every=100000000", f"--checkpoint_dir={logs}"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        marks = []  # (seconds, global step) of each progress line
        output, ps_pids = [], []
        for line in job.stdout:
            output.append(line)
            pid = re.search(r"/job:ps/replica:0/task:\d+ is pid (\d+)", line)
            if pid:
                ps_pids.append(int(pid.group(1)))
            progress = re.search(r"progress: (\d+)/\d+", line)
            if progress:
                marks.append((time.perf_counter(), int(progress.group(1))))
                if marks[-1][1] >= last:
                    ps_memory.extend(peak_mib(pid) for pid in ps_pids)
        if job.wait() != 0:
            sys.exit("wide_deep_cluster.py: the troupe job failed:\n" + "".join(output))
    start = next(m for m in marks if m[1] >= first)
    end = marks[-1]
    return (end[1] - start[1]) * BATCH / (end[0] - start[0])


def peak_mib(pid):
    with open(f"/proc/{pid}/status") as status:
        kib = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    return kib / 1024.0


def planted_batches(seed, count=40):
    import numpy as np
    import torch
    from ctr_data import PlantedCtr
    data, rng = PlantedCtr(ROWS, 2.0, seed=0), np.random.default_rng(seed)
    out = []
    for _ in range(count):
        ids, dense, labels, _ = data.sample(BATCH, rng)
        out.append((torch.from_numpy(ids), torch.from_numpy(dense), torch.from_numpy(labels)))
    return out


def mlp_parameters():
    import torch
    torch.manual_seed(0)
    sizes, params = [FEATURES * DIM + DENSE, UNITS, UNITS, 1], []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        limit = (6.0 / (fan_in + fan_out)) ** 0.5
        params += [torch.empty(fan_out, fan_in).uniform_(-limit, limit), torch.zeros(fan_out)]
    return params


def mlp_forward(params, x):
    import torch.nn.functional as F
    for i in range(0, len(params) - 2, 2):
        x = F.relu(F.linear(x, params[i], params[i + 1]))
    return F.linear(x, params[-2], params[-1]).squeeze(1)


def _adagrad_rows(param, accumulator, rows, gradient):
    """Adagrad on rows of tensors held here, duplicate rows' gradients summed first."""
    import torch
    unique, inverse = torch.unique(rows, return_inverse=True)
    summed = torch.zeros(len(unique), gradient.shape[1]).index_add_(0, inverse, gradient)
    accumulator[unique] += summed * summed
    param[unique] -= LR * summed / accumulator[unique].sqrt()


def _examples_per_second(step, steps):
    """A worker's rate: WARMUP unmeasured steps, then `steps` measured ones of BATCH."""
    for i in range(WARMUP):
        step(i)
    start = time.perf_counter()
    for i in range(steps):
        step(i)
    return steps * BATCH / (time.perf_counter() - start)


class _Shard:
    def __init__(self, rows, with_mlp):
        import torch
        torch.manual_seed(1)
        self.deep = torch.empty(rows, DIM).normal_(0.0, 0.05)
        self.wide = torch.zeros(rows, 1)
        self.deep_acc = torch.full((rows, DIM), 0.1)
        self.wide_acc = torch.full((rows, 1), 0.1)
        self.mlp = mlp_parameters() if with_mlp else []
        self.mlp_acc = [torch.full_like(p, 0.1) for p in self.mlp]
        self.lock = threading.Lock()


_shard = None  # this ps process's


def _lookup(rows):
    with _shard.lock:
        return _shard.deep[rows], _shard.wide[rows]


def _apply_rows(rows, deep_grad, wide_grad):
    with _shard.lock:
        _adagrad_rows(_shard.deep, _shard.deep_acc, rows, deep_grad)
        _adagrad_rows(_shard.wide, _shard.wide_acc, rows, wide_grad)


def _get_mlp():
    with _shard.lock:
        return [p.clone() for p in _shard.mlp]


def _apply_mlp(grads):
    with _shard.lock:
        for p, acc, g in zip(_shard.mlp, _shard.mlp_acc, grads):
            acc += g * g
            p -= LR * g / acc.sqrt()


def _rpc_process(rank, port, steps, results):
    import torch
    import torch.distributed.rpc as rpc
    from mlp import set_threads
    set_threads((1, 1))  # 4 processes on 2 cores: one torch and one OpenBLAS thread each
    options = rpc.TensorPipeRpcBackendOptions(init_method=f"tcp://127.0.0.1:{port}",
                                              rpc_timeout=600, num_worker_threads=4)
    per = ROWS // NUM_PS
    if rank < NUM_PS:
        global _shard
        _shard = _Shard(per, with_mlp=rank == 0)
        rpc.init_rpc(f"ps{rank}", rank=rank, world_size=NUM_PS + NUM_WORKERS,
                     rpc_backend_options=options)
        rpc.shutdown()
        return
    rpc.init_rpc(f"worker{rank}", rank=rank, world_size=NUM_PS + NUM_WORKERS,
                 rpc_backend_options=options)
    batches = planted_batches(1000 + rank)
    loss_fn = torch.nn.BCEWithLogitsLoss()

    def step(i):
        ids, dense, labels = batches[i % len(batches)]
        flat = ids.reshape(-1)
        shard_of = flat // per
        where = [torch.nonzero(shard_of == p).squeeze(1) for p in range(NUM_PS)]
        looked = [rpc.rpc_async(f"ps{p}", _lookup, args=(flat[where[p]] - p * per,))
                  for p in range(NUM_PS)]
        params = [p.requires_grad_() for p in rpc.rpc_sync("ps0", _get_mlp)]
        deep = torch.empty(len(flat), DIM)
        wide = torch.empty(len(flat), 1)
        for p, future in enumerate(looked):
            d, w = future.wait()
            deep[where[p]] = d
            wide[where[p]] = w
        deep.requires_grad_()
        wide.requires_grad_()
        x = torch.cat([deep.view(BATCH, FEATURES * DIM), dense], 1)
        logits = wide.view(BATCH, FEATURES).sum(1) + mlp_forward(params, x)
        loss = loss_fn(logits, labels)
        loss.backward()
        sent = [rpc.rpc_async(f"ps{p}", _apply_rows,
                              args=(flat[where[p]] - p * per, deep.grad[where[p]],
                                    wide.grad[where[p]])) for p in range(NUM_PS)]
        sent.append(rpc.rpc_async("ps0", _apply_mlp, args=([p.grad for p in params],)))
        for future in sent:
            future.wait()

    results.put(_examples_per_second(step, steps))
    rpc.shutdown()


def _replica():
    """The whole model as one module, for DDP (torch is imported in the worker process only)."""
    import torch

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            torch.manual_seed(1)
            self.deep = torch.nn.Embedding(ROWS, DIM, sparse=True)
            torch.nn.init.normal_(self.deep.weight, 0.0, 0.05)
            self.wide = torch.nn.Embedding(ROWS, 1, sparse=True)
            torch.nn.init.zeros_(self.wide.weight)
            self.mlp = torch.nn.ParameterList(
                [torch.nn.Parameter(p) for p in mlp_parameters()])

        def forward(self, ids, dense):
            x = torch.cat([self.deep(ids).view(-1, FEATURES * DIM), dense], 1)
            return self.wide(ids).view(-1, FEATURES).sum(1) + mlp_forward(list(self.mlp), x)
    return Model()


def _ddp_process(rank, port, steps, results):
    import torch
    import torch.distributed as dist
    from mlp import set_threads
    set_threads((1, 1))  # 2 processes on 2 cores: one torch and one OpenBLAS thread each
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=NUM_WORKERS)
    model = torch.nn.parallel.DistributedDataParallel(_replica())
    optimizer = torch.optim.Adagrad(model.parameters(), lr=LR, initial_accumulator_value=0.1)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    batches = planted_batches(1000 + rank)

    def step(i):
        ids, dense, labels = batches[i % len(batches)]
        optimizer.zero_grad(set_to_none=True)
        loss_fn(model(ids, dense), labels).backward()
        optimizer.step()

    results.put(_examples_per_second(step, steps))
    dist.destroy_process_group()


def torch_rate(target, processes, steps):
    from mlp import run_processes
    return run_processes(target.__name__, _Spawnable(target), processes, steps, None)


class _Spawnable:
    """A picklable run_processes target calling target(rank, port, steps, results)."""

    def __init__(self, target):
        self.target = target

    def __call__(self, rank, port, steps, config, results):
        self.target(rank, port, steps, results)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    troupe, extra = sys.argv[1], sys.argv[2:]
    option = lambda name, default: next(  # noqa: E731
        (a.split("=", 1)[1] for a in extra if a.startswith(f"--{name}=")), default)
    steps, reps = int(option("steps", 300)), int(option("reps", 3))
    systems = option("systems", "troupe,rpc,ddp").split(",")
    runs = {name: [] for name in systems}
    ps_memory = []
    for _ in range(reps):  # the systems alternate: the machine's speed drifts
        for name in systems:
            if name == "troupe":
                runs[name].append(troupe_rate(troupe, steps, ps_memory))
            elif name == "rpc":
                runs[name].append(torch_rate(_rpc_process, NUM_PS + NUM_WORKERS, steps))
            elif name == "ddp":
                runs[name].append(torch_rate(_ddp_process, NUM_WORKERS, steps))
            else:
                sys.exit(f"wide_deep_cluster.py: unknown system {name!r}")
    import torch
    described = {
        "troupe": "troupe main job (launch: 2 ps + 2 workers, TLS, default threads)",
        "rpc": f"PyTorch {torch.__version__} torch.distributed.rpc parameter servers (2 ps + 2 "
               "workers, processes, 1 thread each, no TLS)",
        "ddp": f"PyTorch {torch.__version__} DDP with sparse gradients (gloo, 2 workers, "
               "processes, 1 thread each, no TLS)"}
    for name in systems:
        print(json.dumps({"bench": "training", "case": CASE, "system": described[name],
                          "unit": "examples/s", "samples": runs[name]}), flush=True)
    if ps_memory:
        print(json.dumps({"bench": "memory", "case": CASE,
                          "system": "troupe ps task, peak resident memory (2 ps; tables and "
                                    "Adagrad slots: 68 MiB each)",
                          "unit": "MiB", "samples": ps_memory}), flush=True)


if __name__ == "__main__":
    main()
