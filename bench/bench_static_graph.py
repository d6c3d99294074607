"""Static graph vs eager: one training step (forward, loss, backward, Adam update) at batch 32
of the digits CNN and of an MLP, run eagerly and as an oar.jit.TrainGraph on the same device,
side by side in this process (alternating rounds, best of each).

Prints eager_time / graph_time per model (higher is better for the graph; target >= 1.25 on cpu).
Run: python bench/bench_static_graph.py [--device cpu] [--steps 50]
"""
import argparse
import os
import sys
import timeit

# NumPy/SciPy's OpenBLAS threads (scikit-learn loads two copies for the digits data) would
# spin on the same 2 cores as oar's kernels and blur both timings.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import oar  # noqa: E402
import oar.nn as nn  # noqa: E402
from train_digits import DigitsCNN  # noqa: E402


def mlp():
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))


def make_step(model_fn, device, x_shape, seed):
    oar.manual_seed(seed)
    model = model_fn().to(device)
    opt = oar.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()

    def step(x, y):
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    return step, model, opt


def paired_best(fn_a, fn_b, number, rounds=7):
    best_a = best_b = float("inf")
    for _ in range(rounds):
        best_a = min(best_a, timeit.timeit(fn_a, number=number) / number)
        best_b = min(best_b, timeit.timeit(fn_b, number=number) / number)
    return best_a, best_b


def bench(name, model_fn, x_shape, device, steps):
    rng = np.random.default_rng(0)
    x = oar.tensor(rng.random(x_shape, dtype=np.float32), device=device)
    y = oar.tensor(rng.integers(0, 10, x_shape[0]), device=device)
    eager, _, _ = make_step(model_fn, device, x_shape, 1)
    graph_fn, model, opt = make_step(model_fn, device, x_shape, 1)
    graph = oar.jit.TrainGraph(graph_fn, opt, model=model)
    for _ in range(5):  # warm-up: eager step, two traces, then graph runs; caches of both paths
        eager(x, y)
        graph(x, y)

    def run_eager():
        eager(x, y).item()  # .item(): wait for the device, as a training loop logging the loss does

    def run_graph():
        graph(x, y).item()

    t_eager, t_graph = paired_best(run_eager, run_graph, steps)
    print(f"{name:<28} eager {t_eager * 1e3:8.3f} ms   graph {t_graph * 1e3:8.3f} ms   "
          f"eager/graph {t_eager / t_graph:5.2f}x   ({len(graph.graph.ops())} nodes)")
    return t_eager / t_graph


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=30)
    args = parser.parse_args()
    print(f"training step at batch 32 on {args.device}, Adam; ratio = eager time / static graph time")
    bench("MLP 64-128-128-10", mlp, (32, 64), args.device, args.steps)
    bench("digits CNN (examples/)", DigitsCNN, (32, 1, 8, 8), args.device, args.steps)


if __name__ == "__main__":
    main()
