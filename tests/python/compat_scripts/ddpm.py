"""A tiny DDPM (denoising diffusion) on synthetic 8x8 line images, written as small PyTorch diffusion
repositories do it.

An ordinary PyTorch program (oar runs it through `python -m oar.compat`): a UNet with GroupNorm, SiLU,
sinusoidal timestep embeddings (torch.exp(-log(10000) * arange / half)), residual blocks, a multi-head
self-attention block (einsum + softmax; `--sdpa` uses F.scaled_dot_product_attention where the framework
has it), a strided-conv downsample and F.interpolate(scale_factor=2, mode='nearest') upsample; linear and
cosine beta schedules (linspace, cumprod, F.pad), schedule values gathered by timestep, the noise-prediction
MSE, AdamW, clip_grad_norm_, an EMA copy (copy.deepcopy, requires_grad_(False), mul_/add_(alpha=) under
no_grad, checked against lerp_) and ancestral sampling with the EMA model.

Data, weights, timesteps and all noise come from NumPy, so the printed numbers depend only on the framework;
a last forward pass with torch.randint / randn_like checks shapes only. --device picks the device.
"""
import argparse
import copy
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def timestep_embedding(t, dim):
    half = dim // 2
    freqs = torch.exp(-math.log(10000) * torch.arange(half, dtype=torch.float32, device=t.device) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


class ResBlock(nn.Module):
    def __init__(self, cin, cout, tdim, groups=4):
        super().__init__()
        self.norm1 = nn.GroupNorm(groups, cin)
        self.conv1 = nn.Conv2d(cin, cout, 3, padding=1)
        self.temb = nn.Linear(tdim, cout)
        self.norm2 = nn.GroupNorm(groups, cout)
        self.dropout = nn.Dropout(0.0)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, temb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.temb(F.silu(temb))[:, :, None, None]
        h = self.conv2(self.dropout(F.silu(self.norm2(h))))
        return h + self.skip(x)


class AttnBlock(nn.Module):
    def __init__(self, c, heads=2, use_sdpa=True):
        super().__init__()
        self.norm = nn.GroupNorm(4, c)
        self.qkv = nn.Conv2d(c, 3 * c, 1)
        self.proj = nn.Conv2d(c, c, 1)
        self.heads = heads
        self.use_sdpa = use_sdpa

    def forward(self, x):
        b, c, h, w = x.shape
        qkv = self.qkv(self.norm(x)).reshape(b, 3, self.heads, c // self.heads, h * w)
        q, k, v = qkv.unbind(1)  # b, heads, d, hw
        if self.use_sdpa and hasattr(F, "scaled_dot_product_attention"):
            out = F.scaled_dot_product_attention(q.transpose(-1, -2), k.transpose(-1, -2), v.transpose(-1, -2))
            out = out.transpose(-1, -2)
        else:
            scale = (c // self.heads) ** -0.5
            attn = torch.einsum("bhdi,bhdj->bhij", q * scale, k).softmax(dim=-1)
            out = torch.einsum("bhij,bhdj->bhdi", attn, v)
        return x + self.proj(out.reshape(b, c, h, w))


class UNet(nn.Module):
    def __init__(self, ch=16, tdim=32, use_sdpa=False):
        super().__init__()
        self.tdim = tdim
        self.time_mlp = nn.Sequential(nn.Linear(tdim, tdim * 2), nn.SiLU(), nn.Linear(tdim * 2, tdim))
        self.inc = nn.Conv2d(1, ch, 3, padding=1)
        self.down1 = ResBlock(ch, ch, tdim)
        self.pool = nn.Conv2d(ch, ch, 3, stride=2, padding=1)
        self.down2 = ResBlock(ch, 2 * ch, tdim)
        self.mid = ResBlock(2 * ch, 2 * ch, tdim)
        self.attn = AttnBlock(2 * ch, use_sdpa=use_sdpa)
        self.up_conv = nn.Conv2d(2 * ch, ch, 3, padding=1)
        self.up1 = ResBlock(2 * ch, ch, tdim)
        self.out_norm = nn.GroupNorm(4, ch)
        self.outc = nn.Conv2d(ch, 1, 3, padding=1)

    def forward(self, x, t):
        temb = self.time_mlp(timestep_embedding(t, self.tdim))
        h1 = self.down1(self.inc(x), temb)
        h = self.down2(self.pool(h1), temb)
        h = self.attn(self.mid(h, temb))
        h = self.up_conv(F.interpolate(h, scale_factor=2, mode="nearest"))
        h = self.up1(torch.cat([h, h1], dim=1), temb)
        return self.outc(F.silu(self.out_norm(h)))


def linear_beta_schedule(T):
    return torch.linspace(1e-4, 0.02, T)


def cosine_beta_schedule(T, s=0.008):
    steps = T + 1
    x = torch.linspace(0, T, steps, dtype=torch.float64)
    alphas_cumprod = torch.cos(((x / T) + s) / (1 + s) * math.pi * 0.5) ** 2
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    return torch.clip(betas, 0.0001, 0.9999).float()


def extract(a, t, x_shape):
    b = t.shape[0]
    out = a.gather(-1, t)
    return out.reshape(b, *((1,) * (len(x_shape) - 1)))


def numpy_init(model, seed):
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() > 1:
                fan_in = p[0].numel()
                v = rng.uniform(-1, 1, size=tuple(p.shape)) / math.sqrt(fan_in)
            elif name.endswith("weight"):
                v = np.ones(tuple(p.shape))
            else:
                v = rng.uniform(-0.1, 0.1, size=tuple(p.shape))
            p.copy_(torch.from_numpy(v.astype(np.float32)))


def make_data(n, rng):
    yy, xx = np.mgrid[0:8, 0:8]
    imgs = np.empty((n, 1, 8, 8), np.float32)
    for i in range(n):
        if rng.rand() < 0.5:
            imgs[i, 0] = np.where(xx == rng.randint(1, 7), 1.0, -1.0)
        else:
            imgs[i, 0] = np.where(yy == rng.randint(1, 7), 1.0, -1.0)
    return torch.from_numpy(imgs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--T", type=int, default=30)
    parser.add_argument("--schedule", default="linear")
    parser.add_argument("--sdpa", action="store_true")
    args = parser.parse_args()
    device = torch.device(args.device)
    rng = np.random.RandomState(0)
    data = make_data(128, rng)

    betas = (cosine_beta_schedule if args.schedule == "cosine" else linear_beta_schedule)(args.T)
    lin = linear_beta_schedule(args.T)
    print(f"linear betas sum {lin.sum().item():.6f} cosine betas sum {cosine_beta_schedule(args.T).sum().item():.6f}")
    alphas = 1.0 - betas
    alphas_cumprod = torch.cumprod(alphas, dim=0)
    alphas_cumprod_prev = F.pad(alphas_cumprod[:-1], (1, 0), value=1.0)
    sqrt_ac = torch.sqrt(alphas_cumprod).to(device)
    sqrt_1mac = torch.sqrt(1.0 - alphas_cumprod).to(device)
    sqrt_recip_alphas = torch.sqrt(1.0 / alphas).to(device)
    posterior_variance = (betas * (1.0 - alphas_cumprod_prev) / (1.0 - alphas_cumprod)).to(device)
    betas_d = betas.to(device)

    model = UNet(use_sdpa=args.sdpa)
    numpy_init(model, 1)
    model.to(device)
    ema = copy.deepcopy(model)
    ema.requires_grad_(False)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)
    print(f"params {sum(p.numel() for p in model.parameters())}")

    noise_rng = np.random.RandomState(5)
    t0 = time.perf_counter()
    for step in range(args.steps):
        idx = noise_rng.randint(0, len(data), 16)
        x0 = data[torch.from_numpy(idx)].to(device)
        t = torch.from_numpy(noise_rng.randint(0, args.T, 16)).to(device)
        noise = torch.from_numpy(noise_rng.standard_normal(x0.shape).astype(np.float32)).to(device)
        xt = extract(sqrt_ac, t, x0.shape) * x0 + extract(sqrt_1mac, t, x0.shape) * noise
        pred = model(xt, t)
        loss = F.mse_loss(pred, noise)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        with torch.no_grad():
            for p_ema, p in zip(ema.parameters(), model.parameters()):
                p_ema.mul_(0.9).add_(p, alpha=1 - 0.9)
            for b_ema, b in zip(ema.buffers(), model.buffers()):
                b_ema.copy_(b)
        if step % 5 == 0 or step == args.steps - 1:
            print(f"step {step} loss: {loss.item():.6f} grad_norm {gn.item():.4f}")
    elapsed = time.perf_counter() - t0

    # lerp_ EMA variant equals mul_/add_
    ema2 = copy.deepcopy(ema)
    with torch.no_grad():
        for p2, p in zip(ema2.parameters(), model.parameters()):
            p2.lerp_(p, 0.1)
        for p1, p in zip(ema.parameters(), model.parameters()):
            p1.mul_(0.9).add_(p, alpha=0.1)
    diff = max((a - b).abs().max().item() for a, b in zip(ema.parameters(), ema2.parameters()))
    print(f"ema lerp vs mul/add max diff {diff:.2e}")

    # sampling with randint/randn from the framework: shapes only; with numpy noise: numbers
    ema.eval()
    s_rng = np.random.RandomState(7)
    with torch.no_grad():
        x = torch.from_numpy(s_rng.standard_normal((4, 1, 8, 8)).astype(np.float32)).to(device)
        for i in reversed(range(args.T)):
            t = torch.full((x.shape[0],), i, device=device, dtype=torch.long)
            eps = ema(x, t)
            coef = extract(betas_d, t, x.shape) / extract(sqrt_1mac, t, x.shape)
            mean = extract(sqrt_recip_alphas, t, x.shape) * (x - coef * eps)
            if i > 0:
                z = torch.from_numpy(s_rng.standard_normal(x.shape).astype(np.float32)).to(device)
                x = mean + torch.sqrt(extract(posterior_variance, t, x.shape)) * z
            else:
                x = mean
        raw = x
        x = x.clamp(-1, 1)
        tt = torch.randint(0, args.T, (4,), device=device)
        xr = torch.randn_like(x)
        _ = ema(xr, tt)
    print(f"sample mean loss: {raw.mean().item():.6f} sample std loss: {raw.std().item():.6f} "
          f"clamped fraction {(raw.abs() > 1).float().mean().item():.4f}")
    print(f"parameters on: {next(model.parameters()).device}")
    print(f"time per step {elapsed / args.steps * 1000:.2f} ms")


if __name__ == "__main__":
    main()
