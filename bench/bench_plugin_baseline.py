"""This build's device plugins against another build of them, side by side.

Runs the same workloads twice from one script, each in a fresh process:
once with this build's plugins and once with the plugins of a baseline
directory (another checkout's build/lib/oar/plugins; a plugin of an older
ABI minor version loads in this core). Workloads are the ops of the
single-source families at real model sizes (ResNet-50 pooling, a BERT-base
embedding, layer norm and softmax, a 32k-class cross entropy, concat of
feature maps) and the digits CNN training step. Each line prints
baseline_time / this_time (1.0 = parity, higher = this build is faster).

Run (CPU device, after scripts/build.sh, with a baseline plugin build):
  python bench/bench_plugin_baseline.py --baseline ../old/build/lib/oar/plugins
"""
import argparse
import json
import os
import subprocess
import sys
import timeit


def workloads(oar, F):
    """name -> zero-argument callable, all on the default device."""
    oar.manual_seed(0)
    r = lambda *s: oar.randn(*s)  # noqa: E731
    x_pool = r(32, 64, 56, 56)
    g_pool = r(32, 64, 28, 28)
    x_pool_grad = r(32, 64, 56, 56).requires_grad_()
    emb_w = r(30522, 768).requires_grad_()
    tokens = oar.randint(0, 30522, (16, 128))
    ln_x = r(16, 128, 768).double()
    sm_x = r(16, 12, 128, 128).double()
    logits = r(256, 32000).requires_grad_()
    target = oar.randint(0, 32000, (256,))
    maps = [r(32, 64, 28, 28) for _ in range(4)]
    idx = oar.randint(0, 64, (32, 64, 28, 28))

    def pool_backward():
        y = F.max_pool2d(x_pool_grad, 2)
        y.backward(g_pool)
        x_pool_grad.grad = None

    def embedding_fwd_bwd():
        y = F.embedding(tokens, emb_w)
        y.sum().backward()
        emb_w.grad = None

    def cross_entropy_fwd_bwd():
        loss = F.cross_entropy(logits, target)
        loss.backward()
        logits.grad = None

    return {
        "max_pool2d 2x2 [32,64,56,56] f32": lambda: F.max_pool2d(x_pool, 2),
        "avg_pool2d 3x3 s1 p1 [32,64,56,56] f32": lambda: F.avg_pool2d(x_pool, 3, 1, 1),
        "max_pool2d forward+backward f32": pool_backward,
        "embedding 30522x768, 16x128 tokens, fwd+bwd": embedding_fwd_bwd,
        "cross_entropy [256, 32000] fwd+bwd": cross_entropy_fwd_bwd,
        "layer_norm [16,128,768] f64": lambda: F.layer_norm(ln_x, (768,)),
        "softmax [16,12,128,128] f64": lambda: F.softmax(sm_x, dim=-1),
        "concat 4 x [32,64,28,28] dim 1": lambda: oar.cat(maps, dim=1),
        "gather dim 1 [32,64,28,28]": lambda: oar.gather(maps[0], 1, idx),
        "pad reflect 2 [32,64,28,28]": lambda: F.pad(maps[0], (2, 2, 2, 2), mode="reflect"),
    }


def digits_step(oar):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    from train_digits import DigitsCNN

    model = DigitsCNN()
    opt = oar.optim.Adam(model.parameters(), lr=1e-3)
    x = oar.randn(64, 1, 8, 8)
    y = oar.randint(0, 10, (64,))

    def step():
        opt.zero_grad()
        loss = oar.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    return step


def child(number):
    import oar
    import oar.nn.functional as F

    work = workloads(oar, F)
    work["digits CNN training step, batch 64"] = digits_step(oar)
    times = {}
    for name, fn in work.items():
        fn()
        n = max(1, number if "digits" in name else number // 4)
        times[name] = min(timeit.repeat(fn, number=n, repeat=5)) / n
    print(json.dumps(times))


def run(env, number):
    out = subprocess.run([sys.executable, __file__, "--child", "--number", str(number)], env=env, check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--baseline", help="the baseline's plugin directory")
    ap.add_argument("--number", type=int, default=20)
    ap.add_argument("--child", action="store_true")
    args = ap.parse_args()
    if args.child:
        return child(args.number)
    if not args.baseline:
        ap.error("--baseline DIR is required")
    env = dict(os.environ)
    base_env = dict(env, OAR_PLUGIN_PATH=os.path.abspath(args.baseline), OAR_PLUGIN_DEFAULT_DIR="0")
    # Alternate the two builds so both see the same machine load.
    this, base = run(env, args.number), run(base_env, args.number)
    this2, base2 = run(env, args.number), run(base_env, args.number)
    print(f"{'workload':<48} {'this (ms)':>10} {'base (ms)':>10} {'base/this':>10}")
    for name in this:
        t, b = min(this[name], this2[name]), min(base[name], base2[name])
        print(f"{name:<48} {t * 1e3:10.3f} {b * 1e3:10.3f} {b / t:10.2f}")


if __name__ == "__main__":
    main()
