"""Single CPU kernels at real sizes, oar against PyTorch side by side in this process: elementwise
math on 1M floats (libmvec vector math, if-converted ?: functors), broadcast operands (a Python
number, a [1, C, 1, 1] factor: the blocked strided path), reductions, batch norm (training mode,
forward and forward+backward) and max pooling at ResNet sizes, and the indexing family at a
graph-network size (index_select / index_add / scatter_add / gather of 42k rows of 32).

Each figure is the best of --rounds timed calls after a warm-up, on --threads threads for both
frameworks; ratios are torch_time / oar_time (> 1: oar is faster). Without PyTorch the oar times
are printed alone.

Run: python bench/bench_kernels.py [--threads 1] [--rounds 15]
"""
import argparse
import time

import numpy as np

import oar
from bench_rnn import import_torch  # noqa: E402 (bench/ is the script's directory)


def cases(lib):
    """(name, fn) pairs built with `lib` (oar or torch) over the same NumPy data."""
    rng = np.random.default_rng(0)
    t = lambda a: lib.tensor(a.tolist())  # through lists: Debian's torch may lack a NumPy bridge for this NumPy
    x, y = t(rng.standard_normal(1 << 20).astype(np.float32)), t(rng.standard_normal(1 << 20).astype(np.float32))
    act = t(rng.standard_normal((16, 64, 32, 32)).astype(np.float32))
    scale = t(rng.standard_normal((1, 64, 1, 1)).astype(np.float32))
    table = t(rng.standard_normal((2000, 32)).astype(np.float32))
    rows = t(rng.integers(0, 2000, 42000).astype(np.int64))
    src = t(rng.standard_normal((42000, 32)).astype(np.float32))
    rows2d = t(np.repeat(rng.integers(0, 2000, 42000)[:, None], 32, 1).astype(np.int64))
    stem = t(rng.standard_normal((1, 64, 112, 112)).astype(np.float32))  # ResNet-50's stem output, batch 1
    act_g, gy = t(rng.standard_normal((16, 64, 32, 32)).astype(np.float32)), t(np.ones((16, 64, 32, 32), np.float32))
    act_g.requires_grad_()
    F = lib.nn.functional
    return [
        ("abs", lambda: x.abs()), ("tanh", lambda: x.tanh()), ("exp", lambda: x.exp()),
        ("sigmoid", lambda: x.sigmoid()), ("gelu", lambda: lib.nn.functional.gelu(x)),
        ("log(|x|)", lambda: x.abs().log()), ("x + y", lambda: x + y), ("x * 2.0", lambda: x * 2.0),
        ("act * [1,C,1,1]", lambda: act * scale), ("x.sum()", lambda: x.sum()),
        ("act.mean((0,2,3))", lambda: act.mean((0, 2, 3))), ("act.sum(1)", lambda: act.sum(1)),
        ("batch_norm(act)", lambda: F.batch_norm(act, None, None, training=True)),
        ("batch_norm fwd+bwd", lambda: F.batch_norm(act_g, None, None, training=True).backward(gy)),
        ("max_pool2d 3x3/2 stem b1", lambda: F.max_pool2d(stem, 3, 2, 1)),
        ("index_select 42k x 32", lambda: table.index_select(0, rows)),
        ("index_add 42k x 32", lambda: lib.zeros(2000, 32).index_add_(0, rows, src)),
        ("scatter_add 42k x 32", lambda: lib.zeros(2000, 32).scatter_add_(0, rows2d, src)),
        ("gather 42k x 32", lambda: table.gather(0, rows2d)),
    ]


def best_ms(fn, rounds):
    fn()
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    oar.set_num_threads(args.threads)
    ours = [(name, best_ms(fn, args.rounds)) for name, fn in cases(oar)]
    torch = import_torch()  # after oar's timings: loading it changes the process's OpenMP threads
    theirs = {}
    if torch is not None:
        torch.set_num_threads(args.threads)
        theirs = {name: best_ms(fn, args.rounds) for name, fn in cases(torch)}
    print(f"{'kernel':24s} {'oar ms':>9s} {'torch ms':>9s} {'torch/oar':>9s}   ({args.threads} thread(s))")
    for name, ms in ours:
        if name in theirs:
            print(f"{name:24s} {ms:9.3f} {theirs[name]:9.3f} {theirs[name] / ms:9.2f}")
        else:
            print(f"{name:24s} {ms:9.3f}")


if __name__ == "__main__":
    main()
