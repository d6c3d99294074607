"""Whole models on the CPU, oar against PyTorch side by side in this process (issue 18, item 5).

Workloads (sizes of the issue; --quick shrinks every one of them for a smoke run):
  resnet18     CIFAR-style ResNet-18 (3x3 stem, no max pool), 3x32x32, 10 classes: training step at
               batch 32 (SGD, momentum 0.9) and inference at batch 1 and 32;
  resnet50     ResNet-50 (v1.5 bottlenecks, ImageNet stem), 3x224x224, 1000 classes: training step at
               batch 8 (SGD, momentum 0.9) and inference at batch 1;
  transformer  nn.TransformerEncoder, 6 layers, d_model 512, 8 heads, feed-forward 2048, dropout 0.1,
               batch_first, sequence 128, batch 16, mean-pooled into a Linear(512, 10) head: training
               step (Adam).

A training step is zero_grad, forward, cross-entropy, backward, optimizer step and loss.item();
inference is eval() under no_grad and ends by reading one output value. Each runs as
  oar eager    the model called from Python;
  oar static   oar.jit.TrainGraph over the training step, oar.jit.to_static on the model for inference;
  torch eager  the same model definition built against torch.nn (torch 1.x/2.x, whichever imports).
One model definition (build_resnet / build_transformer) is used with both oar.nn and torch.nn, and the
torch copy gets oar's initial weights, so the first-step losses are printed side by side as a sanity
check (the transformer's differ by its dropout masks). Rounds alternate between the three (the order
rotating each round) so all see the same machine load; figures are medians; ratios are
torch_time / oar_time (> 1: oar is faster). Both frameworks run on --threads OpenMP threads.

The first row times a plain f32 matmul on both sides: a calibration of the baseline. Debian's
python3-torch links the generic (netlib reference) BLAS, so its Linear layers are far slower than a
PyTorch wheel's; the header prints torch's BLAS_INFO and warns when it is generic.

Run: python bench/bench_models.py [--models resnet18,resnet50,transformer] [--threads N]
                                  [--rounds 10] [--warmup 3] [--infer-batches 1,32] [--quick]
"""
import argparse
import os
import statistics
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # NumPy's BLAS threads stay out of the timed cores
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import oar  # noqa: E402
from bench_adapter import cpu_model  # noqa: E402
from bench_rnn import import_torch  # noqa: E402

torch = None  # set in main() (bench_rnn.import_torch: this Python's torch, else Debian's)


# ---------------------------------------------------------------------------------------------
# Models, written once against a torch-like nn module (as bench_resnet_step.build).

def build_resnet(nn, layers, bottleneck, num_classes, cifar_stem):
    """ResNet with basic blocks (18/34) or v1.5 bottlenecks (50/101: stride on the 3x3 conv)."""

    class Basic(nn.Module):
        expansion = 1

        def __init__(self, cin, width, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, width, 3, stride=stride, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.conv2 = nn.Conv2d(width, width, 3, stride=1, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.relu = nn.ReLU()
            self.down = downsample(cin, width, stride)

        def forward(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.bn2(self.conv2(y))
            return self.relu(y + (x if self.down is None else self.down(x)))

    class Bottleneck(nn.Module):
        expansion = 4

        def __init__(self, cin, width, stride):
            super().__init__()
            cout = width * 4
            self.conv1 = nn.Conv2d(cin, width, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(width)
            self.conv2 = nn.Conv2d(width, width, 3, stride=stride, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(width)
            self.conv3 = nn.Conv2d(width, cout, 1, bias=False)
            self.bn3 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU()
            self.down = downsample(cin, cout, stride)

        def forward(self, x):
            y = self.relu(self.bn1(self.conv1(x)))
            y = self.relu(self.bn2(self.conv2(y)))
            y = self.bn3(self.conv3(y))
            return self.relu(y + (x if self.down is None else self.down(x)))

    def downsample(cin, cout, stride):
        if stride == 1 and cin == cout:
            return None
        return nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False), nn.BatchNorm2d(cout))

    block = Bottleneck if bottleneck else Basic
    if cifar_stem:
        stem = [nn.Conv2d(3, 64, 3, stride=1, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU()]
    else:
        stem = [nn.Conv2d(3, 64, 7, stride=2, padding=3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                nn.MaxPool2d(3, stride=2, padding=1)]
    body, cin = [], 64
    for i, (width, n) in enumerate(zip((64, 128, 256, 512), layers)):
        for j in range(n):
            body.append(block(cin, width, 2 if (i > 0 and j == 0) else 1))
            cin = width * block.expansion
    return nn.Sequential(*stem, *body, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, num_classes))


def build_transformer(nn, d_model, nhead, layers, ffn, num_classes, dropout):
    """A TransformerEncoder (batch_first) mean-pooled over the sequence into a linear classifier."""

    class EncoderClassifier(nn.Module):
        def __init__(self):
            super().__init__()
            layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward=ffn, dropout=dropout,
                                               batch_first=True)
            self.encoder = nn.TransformerEncoder(layer, layers)
            self.head = nn.Linear(d_model, num_classes)

        def forward(self, x):
            return self.head(self.encoder(x).mean(1))

    return EncoderClassifier()


# name -> builder(nn, quick), input shape per sample, classes, training batch, inference batches, optimizer
def _spec(quick):
    if quick:
        return {
            "resnet18": (lambda nn: build_resnet(nn, (1, 1, 1, 1), False, 10, True), (3, 16, 16), 10, 4, (1, 4),
                         "sgd"),
            "resnet50": (lambda nn: build_resnet(nn, (1, 1, 1, 1), True, 100, False), (3, 64, 64), 100, 2, (1,),
                         "sgd"),
            "transformer": (lambda nn: build_transformer(nn, 64, 4, 2, 128, 10, 0.1), (16, 64), 10, 4, (), "adam"),
        }
    return {
        "resnet18": (lambda nn: build_resnet(nn, (2, 2, 2, 2), False, 10, True), (3, 32, 32), 10, 32, (1, 32), "sgd"),
        "resnet50": (lambda nn: build_resnet(nn, (3, 4, 6, 3), True, 1000, False), (3, 224, 224), 1000, 8, (1,),
                     "sgd"),
        "transformer": (lambda nn: build_transformer(nn, 512, 8, 6, 2048, 10, 0.1), (128, 512), 10, 16, (), "adam"),
    }


# ---------------------------------------------------------------------------------------------
# Data and weights: NumPy arrays made once, handed to torch as bytes (Debian's torch may have no
# NumPy bridge for this NumPy).

def to_torch(a):
    a = np.ascontiguousarray(a)
    dtype = {np.dtype(np.float32): torch.float32, np.dtype(np.int64): torch.int64}[a.dtype]
    if a.size == 0:
        return torch.zeros(a.shape, dtype=dtype)
    return torch.frombuffer(bytearray(a.tobytes()), dtype=dtype).reshape(a.shape)


def reference_weights(build):
    oar.manual_seed(0)
    return {k: v.numpy().copy() for k, v in build(oar.nn).state_dict().items()}


def oar_model(build, weights):
    m = build(oar.nn)
    m.load_state_dict({k: oar.tensor(v) for k, v in weights.items()})
    return m


def torch_model(build, weights):
    m = build(torch.nn)
    sd = m.state_dict()
    missing = [k for k in sd if k not in weights]
    if missing:
        raise RuntimeError(f"torch model has state oar's lacks: {missing[:5]}")
    m.load_state_dict({k: to_torch(weights[k].astype(np.int64) if sd[k].dtype == torch.int64 else weights[k])
                       for k in sd})
    return m


def make_optimizer(lib, params, kind):
    if kind == "sgd":
        return lib.optim.SGD(params, lr=0.01, momentum=0.9)
    return lib.optim.Adam(params, lr=1e-4)


# ---------------------------------------------------------------------------------------------
# The three ways to run a workload; each returns fn() -> a Python float (the loss, or one output value).

def train_eager(lib, model, xt, yt, opt_kind):
    """One training step of `model` in `lib` (oar or torch) on the batch (xt, yt)."""
    model.train()
    opt = make_optimizer(lib, model.parameters(), opt_kind)
    loss_fn = lib.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = loss_fn(model(xt), yt)
        loss.backward()
        opt.step()
        return loss.item()
    return step


def oar_train_eager(build, weights, x, y, opt_kind):
    return train_eager(oar, oar_model(build, weights), oar.tensor(x), oar.tensor(y), opt_kind)


def oar_train_static(build, weights, x, y, opt_kind):
    model = oar_model(build, weights)
    model.train()
    opt = make_optimizer(oar, model.parameters(), opt_kind)
    loss_fn = oar.nn.CrossEntropyLoss()
    xt, yt = oar.tensor(x), oar.tensor(y)

    def body(xb, yb):
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    graph = oar.jit.TrainGraph(body, opt, model=model)
    return lambda: graph(xt, yt).item()


def torch_train_eager(build, weights, x, y, opt_kind):
    return train_eager(torch, torch_model(build, weights), to_torch(x), to_torch(y), opt_kind)


def _first(out):
    return out.reshape(-1)[0].item()


def oar_infer(build, weights, x, static):
    model = oar_model(build, weights)
    model.eval()
    if static:
        model = oar.jit.to_static(model)
    xt = oar.tensor(x)

    def run():
        with oar.no_grad():
            return _first(model(xt))
    return run


def torch_infer(build, weights, x):
    model = torch_model(build, weights)
    model.eval()
    xt = to_torch(x)

    def run():
        with torch.no_grad():
            return _first(model(xt))
    return run


# ---------------------------------------------------------------------------------------------
# Timing

def paired_medians(fns, rounds, warmup):
    """fns: {name: (fn, warmup_calls)}. Warm-up calls, then `rounds` rounds in which each fn runs once
    (the order rotating per round); returns {name: median seconds}."""
    names = list(fns)
    for name in names:
        fn, n = fns[name]
        for _ in range(max(warmup, n)):
            fn()
    times = {name: [] for name in names}
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            t0 = time.perf_counter()
            fns[name][0]()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(ts) for name, ts in times.items()}


def guarded(label, fn, errors):
    """(True, fn()) or, when oar (or torch) raises, (False, None) with the failure recorded and printed:
    a benchmark reports what fails and goes on."""
    try:
        return True, fn()
    except Exception as e:  # noqa: BLE001
        errors.append((label, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"))
        print(f"  !! {label}: {errors[-1][1]}", flush=True)
        return False, None


def start_all(label, makers, errors):
    """makers: [(key, make, warmup_calls)]; builds each runner and makes its first call.
    Returns ({key: (fn, warmup_calls_left)}, {key: first result})."""
    fns, first = {}, {}
    for key, make, calls in makers:
        ok, fn = guarded(f"{label} {key} (build)", make, errors)
        if ok:
            ok, value = guarded(f"{label} {key}", fn, errors)
        if ok:
            fns[key], first[key] = (fn, max(0, calls - 1)), value
    return fns, first


HEADER = (f"{'workload':38s} {'oar eager':>10s} {'oar static':>10s} {'torch':>10s}   "
          f"{'torch/eager':>11s} {'torch/static':>12s} {'eager/static':>12s}")


def print_row(label, t):
    def ms(k):
        return f"{t[k] * 1e3:8.2f}ms" if k in t else f"{'-':>10s}"

    def ratio(a, b):
        return f"{t[a] / t[b]:.3f}" if a in t and b in t else "-"
    print(f"{label:38s} {ms('oar eager'):>10s} {ms('oar static'):>10s} {ms('torch'):>10s}   "
          f"{ratio('torch', 'oar eager'):>11s} {ratio('torch', 'oar static'):>12s} "
          f"{ratio('oar eager', 'oar static'):>12s}", flush=True)


def bench_training(name, build, weights, shape, classes, batch, opt_kind, args, errors):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((batch, *shape)).astype(np.float32)
    y = rng.integers(0, classes, batch).astype(np.int64)
    label = f"{name} train b{batch}"
    makers = [("oar eager", lambda: oar_train_eager(build, weights, x, y, opt_kind), 0),
              ("oar static", lambda: oar_train_static(build, weights, x, y, opt_kind), 4)]  # eager, 2 traces, run
    if torch is not None:
        makers.append(("torch", lambda: torch_train_eager(build, weights, x, y, opt_kind), 0))
    fns, losses = start_all(label, makers, errors)
    print(f"  {label}: first-step loss " + ", ".join(f"{k} {v:.6f}" for k, v in losses.items()), flush=True)
    t = paired_medians(fns, args.rounds, args.warmup) if fns else {}
    print_row(label, t)


def bench_inference(name, build, weights, shape, batch, args, errors):
    x = np.random.default_rng(2).standard_normal((batch, *shape)).astype(np.float32)
    label = f"{name} infer b{batch}"
    makers = [("oar eager", lambda: oar_infer(build, weights, x, False), 0),
              ("oar static", lambda: oar_infer(build, weights, x, True), 0)]
    if torch is not None:
        makers.append(("torch", lambda: torch_infer(build, weights, x), 0))
    fns, outs = start_all(label, makers, errors)
    print(f"  {label}: out[0] " + ", ".join(f"{k} {v:.6f}" for k, v in outs.items()), flush=True)
    t = paired_medians(fns, args.rounds, args.warmup) if fns else {}
    print_row(label, t)


def bench_matmul(n, args):
    """Calibration: one f32 [n, n] @ [n, n] on both sides."""
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    oa, ob = oar.tensor(a), oar.tensor(b)
    fns = {"oar eager": (lambda: _first(oa @ ob), 0)}
    if torch is not None:
        ta, tb = to_torch(a), to_torch(b)
        fns["torch"] = (lambda: _first(ta @ tb), 0)
    print_row(f"calibration: matmul {n}^3", paired_medians(fns, max(args.rounds, 10), args.warmup))  # cheap


def cpu_isa():
    """The vector ISA extensions that matter for the kernels (machines here differ: AVX2 only, or AVX-512/AMX)."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        return "?"
    keep = [f for f in ("avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile",
                        "amx_bf16") if f in flags]
    return " ".join(keep) or "no AVX2"


def main():
    global torch
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="resnet18,resnet50,transformer")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)) or 1,
                    help="both frameworks (default: all cores this process may use)")
    ap.add_argument("--rounds", type=int, default=None, help="timed rounds, median reported (default 10; quick 3)")
    ap.add_argument("--warmup", type=int, default=None,
                    help="untimed calls of each first (default 3; quick 2; static training: at least 3)")
    ap.add_argument("--infer-batches", default=None,
                    help="comma-separated inference batch sizes for every model (default: per model)")
    ap.add_argument("--no-train", action="store_true", help="inference rows only")
    ap.add_argument("--no-torch", action="store_true", help="oar only")
    ap.add_argument("--quick", action="store_true", help="small sizes, 3 rounds: a smoke run")
    args = ap.parse_args()
    if args.rounds is None:
        args.rounds = 3 if args.quick else 10
    if args.warmup is None:
        args.warmup = 2 if args.quick else 3
    spec = _spec(args.quick)
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = [m for m in models if m not in spec]
    if unknown:
        ap.error(f"unknown models {unknown}; choose from {list(spec)}")

    torch = None if args.no_torch else import_torch()
    oar.set_num_threads(args.threads)  # after torch's import, which may reset OpenMP's thread count
    if torch is not None:
        torch.set_num_threads(args.threads)
        torch.manual_seed(0)
    print(f"CPU: {cpu_model()} ({cpu_isa()}); {os.cpu_count()} logical CPUs; threads: oar {oar.get_num_threads()}"
          + (f", torch {torch.get_num_threads()}" if torch is not None else ""))
    if torch is None:
        print(f"PyTorch: {'not used (--no-torch)' if args.no_torch else 'not importable here'} -- oar times only")
    else:
        cfg = torch.__config__.show()
        blas = next((p.split("=", 1)[1] for p in cfg.replace(",", " ").split() if p.startswith("BLAS_INFO=")), "?")
        print(f"PyTorch {torch.__version__} from {os.path.dirname(torch.__file__)}; BLAS_INFO={blas}")
        if blas == "generic":
            print("  warning: this torch calls the generic (reference) BLAS for matmul/Linear: a weak baseline "
                  "for Linear-heavy models; see the calibration row")
    print(f"{'quick (smoke) sizes; ' if args.quick else ''}median of {args.rounds} paired rounds after "
          f"{args.warmup} warm-up calls; ratios torch_time / oar_time (> 1: oar faster), eager/static = "
          "oar eager time / oar static time")
    print(HEADER)
    bench_matmul(256 if args.quick else 1024, args)
    errors = []
    for name in models:
        build, shape, classes, train_batch, infer_batches, opt_kind = spec[name]
        if args.infer_batches is not None:
            infer_batches = tuple(int(b) for b in args.infer_batches.split(",") if b.strip())
        weights = reference_weights(build)
        if not args.no_train:
            bench_training(name, build, weights, shape, classes, train_batch, opt_kind, args, errors)
        for batch in infer_batches:
            bench_inference(name, build, weights, shape, batch, args, errors)
    if errors:
        print("\nfailures:")
        for label, msg in errors:
            print(f"  {label}: {msg}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
