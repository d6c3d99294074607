"""Optimizer steps at real model sizes: oar's fused multi-tensor updates (sgd_step / adam_step, the
optimizer kernel family) against two baselines run side by side in this script:

  composed  the same rule written as separate elementwise oar ops per parameter, as oar.optim did
            before the fused ops (about ten ops and temporaries per parameter for Adam);
  torch     torch.optim with foreach=False and foreach=True, when PyTorch is installed (CPU only).

Parameter lists: ResNet-18 (62 tensors, 11.7 M values) and a 4-layer transformer encoder (d=768,
ffn 3072: 50 tensors, 28.4 M values), f32. Each figure is the median of several steps; ratios
are baseline_time / fused_time (> 1: the fused update is faster). The bandwidth line relates
the bytes an update must move (Adam: read p, g, m, v, write p, m, v) to a NumPy copy's
bandwidth on this machine, as a roofline for the memory-bound update.

Run: python bench/bench_optimizer.py [--device cpu] [--steps 5]
"""
import argparse
import math
import statistics
import time

import numpy as np

import oar

try:
    import torch
except ImportError:
    torch = None


def resnet18_shapes():
    shapes = [(64, 3, 7, 7), (64,), (64,)]
    cin = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        for block in range(2):
            c = cin if block == 0 else cout
            shapes += [(cout, c, 3, 3), (cout,), (cout,), (cout, cout, 3, 3), (cout,), (cout,)]
            if block == 0 and (stride != 1 or c != cout):
                shapes += [(cout, c, 1, 1), (cout,), (cout,)]
        cin = cout
    return shapes + [(1000, 512), (1000,)]


def transformer_shapes(layers=4, d=768, ffn=3072):
    shapes = []
    for _ in range(layers):
        shapes += [(3 * d, d), (3 * d,), (d, d), (d,), (d,), (d,), (ffn, d), (ffn,), (d, ffn), (d,), (d,), (d,)]
    return shapes + [(d,), (d,)]


def composed_adam(params, grads, states, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, wd=0.01):
    """AdamW as separate elementwise ops per parameter: the pre-fusion oar.optim code."""
    with oar.no_grad():
        for p, g, st in zip(params, grads, states):
            st["step"] += 1
            t = st["step"]
            p.copy_(p * (1 - lr * wd))
            m, v = st["exp_avg"], st["exp_avg_sq"]
            m.copy_(m * b1 + g * (1 - b1))
            v.copy_(v * b2 + g * g * (1 - b2))
            denom = oar.sqrt(v) / math.sqrt(1 - b2 ** t) + eps
            p.copy_(p - m / denom * (lr / (1 - b1 ** t)))


def composed_sgd(params, grads, states, lr=0.01, momentum=0.9):
    with oar.no_grad():
        for p, g, st in zip(params, grads, states):
            buf = st["momentum_buffer"]
            buf.copy_(buf * momentum + g)
            p.copy_(p - buf * lr)


def median_time(fn, steps, last=None):
    """Median wall time of fn(); reading one value of `last` (written last) waits for queued device work."""
    def run():
        fn()
        if last is not None:
            last.reshape(-1)[:1].cpu()
    run()  # warm-up: kernels compiled, state created
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def copy_bandwidth(nbytes):
    a = np.ones(nbytes // 4, dtype=np.float32)
    b = np.empty_like(a)
    np.copyto(b, a)
    t = min(_timed(lambda: np.copyto(b, a)) for _ in range(5))
    return 2 * nbytes / t  # read + write


def _timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def bench(name, shapes, device, steps):
    rng = np.random.default_rng(0)
    numel = sum(math.prod(s) for s in shapes)
    results = {}
    for opt_name in ("AdamW", "SGD"):
        def make():
            ps = [oar.nn.Parameter(oar.tensor(rng.standard_normal(s).astype(np.float32) * 0.02, device=device))
                  for s in shapes]
            for p in ps:
                p.grad = oar.tensor(rng.standard_normal(p.shape).astype(np.float32) * 1e-3, device=device)
            return ps
        fused_params = make()
        if opt_name == "AdamW":
            opt = oar.optim.AdamW(fused_params, lr=1e-3, weight_decay=0.01)
        else:
            opt = oar.optim.SGD(fused_params, lr=0.01, momentum=0.9)
        fused = median_time(opt.step, steps, fused_params[-1])

        base_params = make()
        grads = [p.grad for p in base_params]
        if opt_name == "AdamW":
            states = [{"step": 0, "exp_avg": oar.zeros_like(p), "exp_avg_sq": oar.zeros_like(p)} for p in base_params]
            composed = median_time(lambda: composed_adam(base_params, grads, states), steps, base_params[-1])
            moved = numel * 4 * 7  # read p, g, m, v; write p, m, v
        else:
            states = [{"momentum_buffer": oar.zeros_like(p)} for p in base_params]
            composed = median_time(lambda: composed_sgd(base_params, grads, states), steps, base_params[-1])
            moved = numel * 4 * 5  # read p, g, buf; write p, buf
        line = (f"{name:12s} {opt_name:5s} {device:9s} fused {fused * 1e3:8.2f} ms   composed {composed * 1e3:8.2f} ms"
                f"   composed/fused {composed / fused:5.2f}x   fused at {moved / fused / 1e9:5.1f} GB/s")
        if torch is not None and device.startswith("cpu"):
            for foreach in (False, True):
                tp = [torch.nn.Parameter(torch.randn(s) * 0.02) for s in shapes]
                for p in tp:
                    p.grad = torch.randn(p.shape) * 1e-3
                topt = (torch.optim.AdamW(tp, lr=1e-3, weight_decay=0.01, foreach=foreach) if opt_name == "AdamW"
                        else torch.optim.SGD(tp, lr=0.01, momentum=0.9, foreach=foreach))
                t = median_time(topt.step, steps)
                line += f"   torch{'(foreach)' if foreach else ''}/fused {t / fused:5.2f}x"
        print(line, flush=True)
        results[opt_name] = (fused, composed, moved)
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default=None, help="default: every device oar has")
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args()
    devices = [args.device] if args.device else oar._C.info()["devices"]
    bw = copy_bandwidth(256 << 20)
    print(f"NumPy copy bandwidth (read + write) on this machine: {bw / 1e9:.1f} GB/s")
    print(f"PyTorch: {torch.__version__ if torch is not None else 'not installed (torch columns omitted)'}")
    for device in devices:
        for name, shapes in (("resnet18", resnet18_shapes()), ("transformer4", transformer_shapes())):
            res = bench(name, shapes, device, args.steps)
            if device.startswith("cpu"):
                fused, _, moved = res["AdamW"]
                print(f"{'':12s} AdamW fused update at {moved / fused / bw:.2f} of the copy bandwidth")


if __name__ == "__main__":
    main()
