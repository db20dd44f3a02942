"""The PyTorch CUDA peer of troupe_gpu_bench (bench/gpu_bench.cpp): the same MLP (784-H-H-10,
ReLU, softmax cross entropy), batch, optimizer and steps on one GPU, each batch copied from
pinned host memory without blocking and the loss read back every step, as a training loop that
logs its loss does. PyTorch's best configuration for this: the model and optimizer state on the
GPU, pinned host batches, non-blocking copies, set_to_none gradients, the fused optimizer
kernels, full float32 products (TF32 off, as troupe's cuBLAS calls); with --compile, the forward
pass and loss also compiled by torch.compile with CUDA graphs (mode "reduce-overhead"; its
compilation falls in the warm-up steps). Prints one JSON line: the median examples/s of --runs
runs.
"""
import argparse
import json
import statistics
import time

import torch

PIXELS, CLASSES, WARMUP = 784, 10, 20


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--optimizer", choices=["sgd", "adam"], default="sgd")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    parser.add_argument("--profile", action="store_true",
                        help="after the runs, print where 20 steps' GPU time went (stderr)")
    args = parser.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False  # float32 convolutions, as troupe's
    device = torch.device("cuda:0")
    if args.model == "mlp":
        model = torch.nn.Sequential(
            torch.nn.Linear(PIXELS, args.hidden), torch.nn.ReLU(),
            torch.nn.Linear(args.hidden, args.hidden), torch.nn.ReLU(),
            torch.nn.Linear(args.hidden, CLASSES))
    else:  # TensorFlow's tutorial CNN, as troupe_gpu_bench --model=cnn (no dropout)
        model = torch.nn.Sequential(
            torch.nn.Unflatten(1, (1, 28, 28)),
            torch.nn.Conv2d(1, 32, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(32, 64, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Flatten(), torch.nn.Linear(7 * 7 * 64, 1024), torch.nn.ReLU(),
            torch.nn.Linear(1024, CLASSES))
    model = model.to(device)
    torch.backends.cudnn.benchmark = True  # PyTorch's fastest convolution algorithms
    if args.optimizer == "sgd":
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, fused=True)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=0.001, fused=True)
    loss_fn = torch.nn.CrossEntropyLoss()

    def forward_loss(images, labels):
        return loss_fn(model(images), labels)

    if args.compile:
        forward_loss = torch.compile(forward_loss, mode="reduce-overhead")
    generator = torch.Generator().manual_seed(7)
    batches = [(torch.rand(args.batch, PIXELS, generator=generator).pin_memory(),
                torch.randint(0, CLASSES, (args.batch,), generator=generator).pin_memory())
               for _ in range(4)]
    state = {"step": 0, "loss": 0.0}

    def step():
        images, labels = batches[state["step"] % len(batches)]
        state["step"] += 1
        images = images.to(device, non_blocking=True)
        labels = labels.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        loss = forward_loss(images, labels)
        loss.backward()
        optimizer.step()
        state["loss"] = loss.item()

    for _ in range(WARMUP * (3 if args.compile else 1)):
        step()
    rates = []
    for _ in range(args.runs):
        start = time.perf_counter()
        for _ in range(args.steps):
            step()
        rates.append(args.batch * args.steps / (time.perf_counter() - start))
    if args.profile:
        print_profile(step)
    print(json.dumps({
        "peer": "pytorch compiled" if args.compile else "pytorch", "device": "gpu",
        "model": args.model,
        "batch": args.batch, "hidden": args.hidden,
        "optimizer": args.optimizer, "examples_per_s": round(statistics.median(rates)),
        "min": round(min(rates)), "max": round(max(rates)), "last_loss": round(state["loss"], 4),
        "torch": torch.__version__, "gpu": torch.cuda.get_device_name(0)}))


def print_profile(step):
    """The kernels of 20 steps by GPU time, as torch.profiler sums them, on stderr."""
    import sys
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(20):
            step()
    averages = prof.key_averages()
    for key in ("self_device_time_total", "self_cuda_time_total"):
        try:
            print(averages.table(sort_by=key, row_limit=30), file=sys.stderr)
            return
        except (AttributeError, KeyError, ValueError):
            continue


if __name__ == "__main__":
    main()
