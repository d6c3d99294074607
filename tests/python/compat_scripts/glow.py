"""A tiny Glow normalizing flow on correlated two-channel 4x4 data.

An ordinary PyTorch program (oar runs it through `python -m oar.compat`): a space-to-depth squeeze
(view/permute), ActNorm with data-dependent initialisation (a uint8 `initialized` buffer and an
@torch.no_grad() method), invertible 1x1 convolutions from torch.linalg.qr, in the LU parametrisation
(torch.linalg.lu_factor, torch.lu_unpack, triu/tril masks, sign/log|s|) or with torch.slogdet, affine
couplings whose last conv starts at zero, a torch.distributions.Normal(0., 1.) prior (0-d CPU parameters
scoring tensors on the model's device, as PyTorch allows), Adam, and the exact inverse (torch.inverse).

Data, weights and minibatches come from NumPy, so the printed losses depend only on the framework.
--device picks the device.
"""
import argparse
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class ActNorm(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.loc = nn.Parameter(torch.zeros(1, c, 1, 1))
        self.logs = nn.Parameter(torch.zeros(1, c, 1, 1))
        self.register_buffer("initialized", torch.tensor(0, dtype=torch.uint8))

    @torch.no_grad()
    def initialize(self, x):
        flat = x.permute(1, 0, 2, 3).contiguous().view(x.shape[1], -1)
        mean, std = flat.mean(1), flat.std(1)
        self.loc.data.copy_(-mean.view_as(self.loc))
        self.logs.data.copy_(torch.log(1 / (std + 1e-6)).view_as(self.logs))
        self.initialized.fill_(1)

    def forward(self, x):
        if self.initialized.item() == 0:
            self.initialize(x)
        h, w = x.shape[2:]
        return torch.exp(self.logs) * (x + self.loc), h * w * torch.sum(self.logs)

    def reverse(self, y):
        return y * torch.exp(-self.logs) - self.loc


class InvConv(nn.Module):
    def __init__(self, c, lu, seed):
        super().__init__()
        rng = np.random.RandomState(seed)
        w = torch.from_numpy(rng.standard_normal((c, c)).astype(np.float32))
        q, _ = torch.linalg.qr(w)
        self.lu = lu
        if lu:
            P, L, U = torch.lu_unpack(*torch.linalg.lu_factor(q))
            s = torch.diag(U)
            self.register_buffer("P", P)
            self.register_buffer("sign_s", torch.sign(s))
            self.register_buffer("l_mask", torch.tril(torch.ones(c, c), -1))
            self.register_buffer("eye", torch.eye(c))
            self.L = nn.Parameter(L)
            self.log_s = nn.Parameter(torch.log(torch.abs(s)))
            self.U = nn.Parameter(torch.triu(U, 1))
        else:
            self.weight = nn.Parameter(q)

    def calc_weight(self):
        if self.lu:
            lower = self.L * self.l_mask + self.eye
            upper = self.U * self.l_mask.T + torch.diag(self.sign_s * torch.exp(self.log_s))
            return self.P @ lower @ upper
        return self.weight

    def logdet(self):
        if self.lu:
            return torch.sum(self.log_s)
        return torch.slogdet(self.weight)[1]

    def forward(self, x):
        w = self.calc_weight()
        h, wd = x.shape[2:]
        return F.conv2d(x, w.unsqueeze(2).unsqueeze(3)), h * wd * self.logdet()

    def reverse(self, y):
        return F.conv2d(y, torch.inverse(self.calc_weight()).unsqueeze(2).unsqueeze(3))


class ZeroConv(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=0)
        self.conv.weight.data.zero_()
        self.conv.bias.data.zero_()
        self.scale = nn.Parameter(torch.zeros(1, cout, 1, 1))

    def forward(self, x):
        return self.conv(F.pad(x, [1, 1, 1, 1], value=1)) * torch.exp(self.scale * 3)


class Coupling(nn.Module):
    def __init__(self, c, hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(c // 2, hidden, 3, padding=1), nn.ReLU(inplace=True),
                                 nn.Conv2d(hidden, hidden, 1), nn.ReLU(inplace=True), ZeroConv(hidden, c))

    def forward(self, x):
        a, b = x.chunk(2, 1)
        log_s, t = self.net(a).chunk(2, 1)
        s = torch.sigmoid(log_s + 2)
        out_b = (b + t) * s
        return torch.cat([a, out_b], 1), torch.sum(torch.log(s).view(x.shape[0], -1), 1)

    def reverse(self, y):
        a, out_b = y.chunk(2, 1)
        log_s, t = self.net(a).chunk(2, 1)
        s = torch.sigmoid(log_s + 2)
        return torch.cat([a, out_b / s - t], 1)


def squeeze2d(x):
    b, c, h, w = x.shape
    x = x.view(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4).contiguous()
    return x.view(b, c * 4, h // 2, w // 2)


def unsqueeze2d(x):
    b, c, h, w = x.shape
    x = x.view(b, c // 4, 2, 2, h, w).permute(0, 1, 4, 2, 5, 3).contiguous()
    return x.view(b, c // 4, h * 2, w * 2)


class Glow(nn.Module):
    def __init__(self, in_ch=2, steps=3, lu=True):
        super().__init__()
        c = in_ch * 4
        self.flows = nn.ModuleList()
        for i in range(steps):
            self.flows.append(nn.ModuleList([ActNorm(c), InvConv(c, lu=(lu and i % 2 == 0), seed=10 + i), Coupling(c)]))

    def forward(self, x):
        z = squeeze2d(x)
        logdet = torch.zeros(x.shape[0], device=x.device)
        for act, inv, cp in self.flows:
            z, ld = act(z); logdet = logdet + ld
            z, ld = inv(z); logdet = logdet + ld
            z, ld = cp(z); logdet = logdet + ld
        return z, logdet

    def reverse(self, z):
        for act, inv, cp in reversed(self.flows):
            z = act.reverse(inv.reverse(cp.reverse(z)))
        return unsqueeze2d(z)

    def initialize(self, x):
        with torch.no_grad():
            self(x)

    def nll(self, x):
        z, logdet = self(x)
        log_pz = torch.distributions.Normal(0.0, 1.0).log_prob(z).flatten(1).sum(1)
        n_pixel = x[0].numel()
        return (-(log_pz + logdet) / (math.log(2) * n_pixel)).mean()


def init_params(model, seed):
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("net.0.weight") or name.endswith("net.2.weight"):
                v = rng.uniform(-1, 1, tuple(p.shape)) / math.sqrt(p[0].numel())
                p.copy_(torch.from_numpy(v.astype(np.float32)))
            elif name.endswith("net.0.bias") or name.endswith("net.2.bias"):
                p.copy_(torch.from_numpy(rng.uniform(-0.1, 0.1, tuple(p.shape)).astype(np.float32)))


def make_data(n, rng):
    base = rng.standard_normal((n, 1, 4, 4)).astype(np.float32)
    x = np.concatenate([base, 0.5 * base + 0.3 * rng.standard_normal((n, 1, 4, 4)).astype(np.float32)], 1)
    x[:, :, 1:3, 1:3] += 1.5
    return torch.from_numpy(x.astype(np.float32))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=40)
    args = parser.parse_args()
    device = torch.device(args.device)
    rng = np.random.RandomState(0)
    data = make_data(512, rng)
    model = Glow()
    init_params(model, 1)
    model.to(device)
    model.initialize(data[:256].to(device))
    print(f"actnorm initialized {[int(f[0].initialized) for f in model.flows]}")
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    b_rng = np.random.RandomState(3)
    t0 = time.perf_counter()
    for step in range(args.steps):
        x = data[torch.from_numpy(b_rng.randint(0, len(data), 64))].to(device)
        loss = model.nll(x)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == args.steps - 1:
            print(f"step {step} loss: {loss.item():.6f}")
    elapsed = time.perf_counter() - t0
    model.eval()
    with torch.no_grad():
        x = data[:16].to(device)
        z, _ = model(x)
        back = model.reverse(z)
        print(f"round trip error: {(back - x).abs().max().item():.2e}")
        print(f"held-out loss: {model.nll(data[256:].to(device)).item():.6f}")
        zs = np.random.RandomState(4).standard_normal((4, 8, 2, 2)).astype(np.float32)
        zs = torch.from_numpy(zs).to(device) * 0.7
        samples = model.reverse(zs)
        print(f"sample mean loss: {samples.mean().item():.6f}")
        w = model.flows[0][1].calc_weight()
        print(f"lu logdet vs slogdet {model.flows[0][1].logdet().item():.6f} {torch.linalg.slogdet(w)[1].item():.6f}")
    print(f"parameters on: {next(model.parameters()).device}")
    print(f"time per step {elapsed / args.steps * 1000:.2f} ms")


if __name__ == "__main__":
    main()
