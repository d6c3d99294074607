"""A RealNVP-style normalizing flow on 2-D two-moons data, trained by maximum likelihood.

An ordinary PyTorch program (oar runs it through `python -m oar.compat`): affine coupling layers that
split with torch.chunk, tanh-bounded log-scales through a custom torch.autograd.Function (a straight-
through clamp using ctx.save_for_backward and ctx.needs_input_grad), log-determinants summed per layer,
a torch.distributions.MultivariateNormal base (checked against Independent(Normal)), Adam, and an exact
inverse that maps base samples back to data space.

Data, minibatches and initial weights come from NumPy, so the printed losses depend only on the framework.
"""
import argparse
import math

import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Independent, MultivariateNormal, Normal


def two_moons(n, rng):
    t = rng.uniform(0, math.pi, n)
    top = rng.rand(n) < 0.5
    x = np.where(top, np.cos(t), 1 - np.cos(t))
    y = np.where(top, np.sin(t), 0.5 - np.sin(t))
    return torch.from_numpy((np.stack([x, y], 1) + 0.05 * rng.randn(n, 2)).astype(np.float32))


class StraightThroughClamp(torch.autograd.Function):
    """clamp(x, lo, hi) forward; backward passes the gradient through, damped outside [lo, hi]."""

    @staticmethod
    def forward(ctx, x, lo, hi):
        ctx.save_for_backward(x)
        ctx.lo, ctx.hi = lo, hi
        return x.clamp(lo, hi)

    @staticmethod
    def backward(ctx, grad):
        x, = ctx.saved_tensors
        grad_x = None
        if ctx.needs_input_grad[0]:
            grad_x = torch.where((x < ctx.lo) | (x > ctx.hi), grad * 0.1, grad)
        return grad_x, None, None


class Coupling(nn.Module):
    def __init__(self, flip, hidden=32):
        super().__init__()
        self.flip = flip
        self.net = nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, 2))
        self.scale = nn.Parameter(torch.ones(1))

    def _split(self, x):
        a, b = torch.chunk(x, 2, dim=1)
        return (b, a) if self.flip else (a, b)

    def _join(self, a, b):
        return torch.cat([b, a] if self.flip else [a, b], dim=1)

    def forward(self, x):
        a, b = self._split(x)
        s, t = self.net(a).chunk(2, dim=-1)
        s = StraightThroughClamp.apply(self.scale * torch.tanh(s), -2.0, 2.0)
        return self._join(a, b * torch.exp(s) + t), s.sum(dim=1)

    def inverse(self, z):
        a, b = self._split(z)
        s, t = self.net(a).chunk(2, dim=-1)
        s = (self.scale * torch.tanh(s)).clamp(-2.0, 2.0)
        return self._join(a, (b - t) * torch.exp(-s))


class Flow(nn.Module):
    def __init__(self, layers=6):
        super().__init__()
        self.layers = nn.ModuleList([Coupling(i % 2 == 1) for i in range(layers)])
        self.register_buffer("loc", torch.zeros(2))
        self.register_buffer("cov", torch.eye(2))

    def base(self):
        return MultivariateNormal(self.loc, covariance_matrix=self.cov)

    def forward(self, x):
        logdet = torch.zeros(x.shape[0], device=x.device)
        for layer in self.layers:
            x, ld = layer(x)
            logdet = logdet + ld
        return x, logdet

    def log_prob(self, x):
        z, logdet = self(x)
        return self.base().log_prob(z) + logdet

    def inverse(self, z):
        for layer in reversed(self.layers):
            z = layer.inverse(z)
        return z


def init_weights(model, seed):
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if name.endswith("scale"):
                continue
            fan_in = p.shape[1] if p.dim() > 1 else p.shape[0]
            bound = 1.0 / np.sqrt(fan_in)
            p.copy_(torch.tensor(rng.uniform(-bound, bound, size=tuple(p.shape)), dtype=torch.float32))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    device = torch.device(args.device)
    rng = np.random.RandomState(args.seed)
    data = two_moons(1024, rng).to(device)

    flow = Flow()
    init_weights(flow, args.seed + 1)
    flow.to(device)
    optimizer = torch.optim.Adam(flow.parameters(), lr=args.lr)
    batches = np.random.RandomState(args.seed + 2)
    with torch.no_grad():
        print(f"initial nll loss: {-flow.log_prob(data).mean().item():.8f}")
    for step in range(1, args.steps + 1):
        idx = torch.from_numpy(batches.randint(0, len(data), 128)).to(device)
        loss = -flow.log_prob(data[idx]).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % 20 == 0:
            print(f"step {step} loss: {loss.item():.8f}")

    with torch.no_grad():
        print(f"final nll loss: {-flow.log_prob(data).mean().item():.8f}")
        z = torch.from_numpy(rng.randn(256, 2).astype(np.float32)).to(device)
        standard = Independent(Normal(torch.zeros(2, device=device), torch.ones(2, device=device)), 1)
        gap = (standard.log_prob(z) - flow.base().log_prob(z)).abs().max().item()
        print(f"Independent(Normal) vs MultivariateNormal log_prob gap: {gap:.3e}")
        samples = flow.inverse(z)
        back, _ = flow(samples)
        print(f"inverse round trip error: {(back - z).abs().max().item():.3e}")
        print(f"sample mean: {samples.mean(0)[0].item():.6f} {samples.mean(0)[1].item():.6f}")
    x = torch.tensor([-3.0, -1.0, 0.5, 2.5], requires_grad=True, device=device)
    StraightThroughClamp.apply(x, -2.0, 2.0).pow(2).sum().backward()
    print("straight-through gradient:", " ".join(f"{v:.4f}" for v in x.grad.tolist()))
    print(f"parameters on: {next(flow.parameters()).device}")


if __name__ == "__main__":
    main()
