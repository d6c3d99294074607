"""A tiny PixelCNN on binary 8x8 square images.

An ordinary PyTorch program (oar runs it through `python -m oar.compat`): masked convolutions of types A and
B (a Conv2d subclass whose mask is a registered buffer, applied with `self.weight.data *= self.mask` before
each forward), BatchNorm2d, a 4-D F.cross_entropy over per-pixel logits, Adam with StepLR, a DataLoader, a
receptive-field check through the input's gradient, and pixel-by-pixel sampling with torch.multinomial.

Data and weights come from NumPy, so the printed losses depend only on the framework (sampling uses the
framework's generator; only its shape and values' range are printed). --device picks the device.
"""
import argparse
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class MaskedConv2d(nn.Conv2d):
    def __init__(self, mask_type, *args, **kwargs):
        super().__init__(*args, **kwargs)
        assert mask_type in ("A", "B")
        self.register_buffer("mask", self.weight.data.clone())
        _, _, kH, kW = self.weight.size()
        self.mask.fill_(1)
        self.mask[:, :, kH // 2, kW // 2 + (mask_type == "B"):] = 0
        self.mask[:, :, kH // 2 + 1:] = 0

    def forward(self, x):
        self.weight.data *= self.mask
        return super().forward(x)


class PixelCNN(nn.Module):
    def __init__(self, ch=16, layers=4, levels=2):
        super().__init__()
        mods = [MaskedConv2d("A", 1, ch, 5, 1, 2, bias=False), nn.BatchNorm2d(ch), nn.ReLU(True)]
        for _ in range(layers):
            mods += [MaskedConv2d("B", ch, ch, 3, 1, 1, bias=False), nn.BatchNorm2d(ch), nn.ReLU(True)]
        mods += [nn.Conv2d(ch, levels, 1)]
        self.net = nn.Sequential(*mods)

    def forward(self, x):
        return self.net(x)


def numpy_init(model, seed):
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() > 1:
                v = rng.uniform(-1, 1, size=tuple(p.shape)) / math.sqrt(p[0].numel())
            elif name.endswith("weight"):
                v = np.ones(tuple(p.shape))
            else:
                v = np.zeros(tuple(p.shape))
            p.copy_(torch.from_numpy(v.astype(np.float32)))


def make_data(n, rng):
    imgs = np.zeros((n, 1, 8, 8), np.float32)
    for i in range(n):
        r0, c0 = rng.randint(0, 5, 2)
        imgs[i, 0, r0:r0 + 3, c0:c0 + 3] = 1.0
    return torch.from_numpy(imgs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--epochs", type=int, default=2)
    args = parser.parse_args()
    device = torch.device(args.device)
    rng = np.random.RandomState(0)
    data = make_data(256, rng)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(data), batch_size=32, shuffle=False)
    model = PixelCNN()
    numpy_init(model, 1)
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    t0 = time.perf_counter()
    steps = 0
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        for (x,) in loader:
            x = x.to(device)
            target = x[:, 0].long()
            logits = model(x)
            loss = F.cross_entropy(logits, target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * x.size(0)
            steps += 1
        sched.step()
        bits = total / len(data) / math.log(2)
        print(f"epoch {epoch} loss: {total / len(data):.6f} bits/pixel {bits:.4f} lr {sched.get_last_lr()[0]:.5f}")
    elapsed = time.perf_counter() - t0

    # the mask holds: output at a pixel ignores that pixel and later ones
    model.eval()
    x = data[:1].to(device).clone().requires_grad_(True)
    model(x)[0, :, 4, 4].sum().backward()
    g = x.grad[0, 0].abs()
    print(f"receptive field ok {bool(g[4, 4:].sum() == 0 and g[5:].sum() == 0 and g[:4].sum() > 0)}")

    with torch.no_grad():
        held = data[:64].to(device)
        nll = F.cross_entropy(model(held), held[:, 0].long(), reduction="none").sum(dim=(1, 2)).mean()
        print(f"eval nll loss: {nll.item():.6f}")
        sample = torch.zeros(4, 1, 8, 8, device=device)
        for i in range(8):
            for j in range(8):
                probs = F.softmax(model(sample)[:, :, i, j], dim=-1)
                sample[:, 0, i, j] = torch.multinomial(probs, 1).squeeze(-1).float()
    print(f"sample shape {tuple(sample.shape)} values {sorted(set(sample.unique().tolist()))}")
    print(f"parameters on: {next(model.parameters()).device}")
    print(f"time per step {elapsed / steps * 1000:.2f} ms")


if __name__ == "__main__":
    main()
