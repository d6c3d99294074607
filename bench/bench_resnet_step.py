"""A ResNet-18 style training step (batch 64, 3x112x112 input, SGD with
momentum) in oar and in PyTorch on the same GPU, side by side in one script.

Both frameworks build the same network (basic blocks, batch norm, strided
downsampling) and run forward, backward and the optimizer step; each step
ends in loss.item(), which waits for the GPU, so host and device time both
count. Prints the median step time of each and PyTorch_time / oar_time
(>= 1.0 means oar is at least as fast). Without a CUDA device, or without
PyTorch built with CUDA, it says so and exits 0.

Run: OAR_DEVICE=cuda python bench/bench_resnet_step.py [--batch 64] [--size 112]
"""
import argparse
import statistics
import sys
import time

import numpy as np

import oar

try:
    import torch
except ImportError:
    torch = None


def build(nn, num_classes=10):
    """ResNet-18 (ImageNet stem) written once against a torch-like nn module (bench_models.build_resnet)."""
    from bench_models import build_resnet  # here: bench_models imports bench_adapter, which imports this file
    return build_resnet(nn, (2, 2, 2, 2), bottleneck=False, num_classes=num_classes, cifar_stem=False)


def median_step(step, warmup=3, steps=10):
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def oar_step_fn(x_np, y_np):
    dev = "cuda"
    model = build(oar.nn).to(dev)
    opt = oar.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = oar.nn.CrossEntropyLoss()
    x = oar.tensor(x_np, device=dev)
    y = oar.tensor(y_np, device=dev)

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def torch_step_fn(x_np, y_np):
    model = build(torch.nn).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = torch.nn.CrossEntropyLoss()
    x = torch.tensor(x_np, device="cuda")
    y = torch.tensor(y_np, device="cuda")

    def step():
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--size", type=int, default=112)
    args = ap.parse_args()
    if not oar.cuda.is_available():
        print("bench_resnet_step: no CUDA device for oar (oar.info() says why); nothing to measure")
        return 0
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((args.batch, 3, args.size, args.size)).astype(np.float32)
    y_np = rng.integers(0, 10, size=args.batch).astype(np.int64)
    oar_s = median_step(oar_step_fn(x_np, y_np))
    print(f"ResNet-18 step, batch {args.batch}, 3x{args.size}x{args.size}, f32: oar {oar_s * 1e3:.2f} ms")
    if torch is None or not torch.cuda.is_available():
        print("PyTorch with CUDA is not installed here: no baseline")
        return 0
    torch.backends.cudnn.benchmark = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch_s = median_step(torch_step_fn(x_np, y_np))
    print(f"  PyTorch {torch.__version__} {torch_s * 1e3:.2f} ms on {torch.cuda.get_device_name(0)}")
    print(f"  PyTorch / oar = {torch_s / oar_s:.3f} (>= 1.0 means oar is as fast or faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
