"""Python-side benchmarks of oar, each against a baseline in the same process.

- per-op overhead: a 1-element add (baseline: PyTorch when importable, and NumPy);
- a Linear(64, 64) forward on a batch of 1;
- one training step of the digits CNN at batch 64 (forward, backward, Adam step).

Ratios are baseline_time / oar_time (1.0 = parity, higher is better for oar).
Run: python bench/bench_python.py  (after scripts/build.sh)
"""
import os
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import oar  # noqa: E402

try:
    import torch
except ImportError:
    torch = None


def best_time(fn, number, repeat=5):
    fn()  # warm-up (primitive caches, allocator)
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number


def paired_best(fn_a, fn_b, number, rounds=9):
    """Best time of each, measured in alternating rounds so both see the same machine load."""
    fn_a(), fn_b()
    best_a = best_b = float("inf")
    for _ in range(rounds):
        best_a = min(best_a, timeit.timeit(fn_a, number=number) / number)
        best_b = min(best_b, timeit.timeit(fn_b, number=number) / number)
    return best_a, best_b


def report(label, oar_s, base_s, base_name):
    if base_s is None:
        print(f"{label:<44} oar {oar_s * 1e6:10.2f} us   ({base_name}: not installed)")
    else:
        print(f"{label:<44} oar {oar_s * 1e6:10.2f} us   {base_name} {base_s * 1e6:10.2f} us   "
              f"ratio {base_s / oar_s:6.3f}")


def main():
    print(f"oar on {oar.get_default_device()}; PyTorch {'%s' % torch.__version__ if torch else 'not installed'}")
    a, b = oar.ones(1), oar.ones(1)
    t_oar = best_time(lambda: a + b, 20000)
    na, nb = np.ones(1, np.float32), np.ones(1, np.float32)
    report("1-element add (per-op overhead)", t_oar, best_time(lambda: na + nb, 20000), "numpy")
    if torch is not None:
        ta, tb = torch.ones(1), torch.ones(1)
        t_oar, t_torch = paired_best(lambda: a + b, lambda: ta + tb, 10000)
        report("1-element add (per-op overhead)", t_oar, t_torch, "torch")

    lin = oar.nn.Linear(64, 64)
    x = oar.randn(1, 64)
    with oar.no_grad():
        if torch is not None:
            tlin, tx = torch.nn.Linear(64, 64), torch.randn(1, 64)
            with torch.no_grad():
                t_lin, t_tlin = paired_best(lambda: lin(x), lambda: tlin(tx), 2000)
            report("Linear(64, 64) forward, batch 1", t_lin, t_tlin, "torch")
        else:
            report("Linear(64, 64) forward, batch 1", best_time(lambda: lin(x), 2000), None, "torch")

    from train_digits import DigitsCNN
    model = DigitsCNN()
    opt = oar.optim.Adam(model.parameters(), lr=1e-3)
    crit = oar.nn.CrossEntropyLoss()
    xb, yb = oar.randn(64, 1, 8, 8), oar.randint(0, 10, (64,))

    def step():
        opt.zero_grad()
        loss = crit(model(xb), yb)
        loss.backward()
        opt.step()

    base = None
    if torch is not None:
        tm = torch.nn.Sequential(
            torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Flatten(), torch.nn.Linear(128, 64), torch.nn.ReLU(), torch.nn.Dropout(0.1),
            torch.nn.Linear(64, 10))
        topt = torch.optim.Adam(tm.parameters(), lr=1e-3)
        tcrit = torch.nn.CrossEntropyLoss()
        txb, tyb = torch.randn(64, 1, 8, 8), torch.randint(0, 10, (64,))

        def tstep():
            topt.zero_grad()
            tcrit(tm(txb), tyb).backward()
            topt.step()

        t_step, base = paired_best(step, tstep, 10)
    else:
        t_step = best_time(step, 10, repeat=9)
    report("digits CNN training step, batch 64", t_step, base, "torch")
    print(f"{'digits CNN training throughput':<44} oar {64 / t_step:10.0f} samples/s")


if __name__ == "__main__":
    main()
