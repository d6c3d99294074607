"""Recurrent layers at real model sizes: oar's fused rnn_layer (oneDNN's RNN primitives for f32 on
the CPU, the rnn kernel family elsewhere and for packed batches) against baselines run side by
side in this script:

  composed  the same layers as oar ops step by step (oar.nn.rnn.fused_kernels = False: one
            input-projection matmul per layer, then h @ W_hh^T and the gate arithmetic per step);
  torch     torch.nn.LSTM / GRU, when PyTorch is installed (its CPU kernels).

Models: a 2-layer LSTM language model core (input 256, hidden 512, 64 steps, batch 32: the
medium word-level PTB size), a 2-layer bidirectional GRU encoder (input 128, hidden 256, 100
steps, batch 16), and the LSTM again on a packed batch of lengths spread over 16..64 (the rnn
family's lengths path). A step is forward + backward of sum(output); each figure is the median
of several steps; ratios are baseline_time / fused_time (> 1: fused is faster).

Run: python bench/bench_rnn.py [--device cpu] [--steps 5]
"""
import argparse
import os
import sys

import oar
import oar.nn as nn
import oar.nn.rnn as rnn_mod
import oar.nn.utils.rnn as rnn_utils
from bench_resnet_step import median_step  # noqa: E402 (bench/ is the script's directory)



def import_torch():
    """torch from this Python, else Debian's python3-torch (built for the system Python), else None."""
    try:
        import torch
        return torch
    except ImportError:
        pass
    debian = "/usr/lib/python3/dist-packages"
    if not os.path.isdir(os.path.join(debian, "torch")):
        return None
    sys.path.append(debian)
    try:
        import torch
        return torch
    except Exception:  # built for another Python or NumPy ABI
        return None
    finally:
        sys.path.remove(debian)


torch = None  # imported after oar's timings: loading it changes the process's OpenMP threads

MODELS = [  # name, kind, input, hidden, layers, bidirectional, steps, batch, packed
    ("LSTM 2x512 (PTB medium)", "LSTM", 256, 512, 2, False, 64, 32, False),
    ("GRU 2x256 bidirectional", "GRU", 128, 256, 2, True, 100, 16, False),
    ("LSTM 2x512, packed batch", "LSTM", 256, 512, 2, False, 64, 32, True),
]


def lengths_for(T, N):
    return [T - (T - T // 4) * b // max(N - 1, 1) for b in range(N)]  # T down to T/4, decreasing


def oar_step(kind, I, H, L, bi, T, N, packed, device, fused):
    oar.manual_seed(0)
    m = getattr(nn, kind)(I, H, num_layers=L, bidirectional=bi).to(device)
    x = oar.randn(T, N, I, device=device)
    lens = lengths_for(T, N)

    def step():
        old = rnn_mod.fused_kernels
        rnn_mod.fused_kernels = fused
        try:
            inp = rnn_utils.pack_padded_sequence(x, lens) if packed else x
            out, _ = m(inp)
            loss = (out.data if packed else out).sum()
            loss.backward()
            m.weight_hh_l0.grad.sum().item()  # waits for the device's queue
        finally:
            rnn_mod.fused_kernels = old
    return step


def torch_step(kind, I, H, L, bi, T, N, packed):
    torch.manual_seed(0)
    m = getattr(torch.nn, kind)(I, H, num_layers=L, bidirectional=bi)
    x = torch.randn(T, N, I)
    lens = lengths_for(T, N)

    def step():
        inp = torch.nn.utils.rnn.pack_padded_sequence(x, lens) if packed else x
        out, _ = m(inp)
        (out.data if packed else out).sum().backward()
    return step


def main():
    global torch
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--steps", type=int, default=5)
    args = ap.parse_args()
    print(f"device {args.device}; step = forward + backward; median of {args.steps}")
    rows = []
    for name, kind, I, H, L, bi, T, N, packed in MODELS:
        fused = median_step(oar_step(kind, I, H, L, bi, T, N, packed, args.device, True), 1, args.steps)
        composed = median_step(oar_step(kind, I, H, L, bi, T, N, packed, args.device, False), 1, args.steps)
        rows.append((name, fused, composed))
    if args.device == "cpu":
        torch = import_torch()
    if torch is not None:  # Debian's build starts with one thread
        torch.set_num_threads(os.cpu_count() or 1)
    for (name, fused, composed), (_, kind, I, H, L, bi, T, N, packed) in zip(rows, MODELS):
        line = f"{name:28s} fused {fused * 1e3:8.1f} ms | composed/fused {composed / fused:5.2f}x"
        if torch is not None:
            t = median_step(torch_step(kind, I, H, L, bi, T, N, packed), 1, args.steps)
            line += f" | torch {torch.__version__}/fused {t / fused:5.2f}x"
        print(line)


if __name__ == "__main__":
    main()
