"""A tiny VQ-VAE on synthetic 8x8 Gaussian-blob images.

An ordinary PyTorch program (oar runs it through `python -m oar.compat`): a conv encoder, a ConvTranspose2d
decoder, a codebook nn.Embedding initialised from encoder outputs (index_select), nearest codes by
torch.cdist (or the expanded |a|^2 - 2ab + |b|^2 with --no-cdist) and argmin, F.one_hot, the codebook and
commitment losses, the straight-through estimator z + (zq - z).detach(), perplexity exp(-sum p log p),
torch.unique, bincount and histc on the codes, and decoding from indices.

Data, weights and minibatches come from NumPy, so the printed numbers depend only on the framework.
--device picks the device.
"""
import argparse
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class VectorQuantizer(nn.Module):
    def __init__(self, num_codes, dim, beta=0.25, use_cdist=True):
        super().__init__()
        self.codebook = nn.Embedding(num_codes, dim)
        self.codebook.weight.data.uniform_(-1.0 / num_codes, 1.0 / num_codes)
        self.beta = beta
        self.num_codes = num_codes
        self.use_cdist = use_cdist

    def forward(self, z):
        # z: B, C, H, W -> B*H*W, C
        z = z.permute(0, 2, 3, 1).contiguous()
        flat = z.view(-1, z.shape[-1])
        if self.use_cdist:
            d = torch.cdist(flat, self.codebook.weight) ** 2
        else:
            d = (flat.pow(2).sum(1, keepdim=True) - 2 * flat @ self.codebook.weight.t()
                 + self.codebook.weight.pow(2).sum(1))
        idx = torch.argmin(d, dim=1)
        onehot = F.one_hot(idx, self.num_codes).type(flat.dtype)
        zq = (onehot @ self.codebook.weight).view(z.shape)
        zq_emb = self.codebook(idx).view(z.shape)
        assert torch.allclose(zq, zq_emb)
        codebook_loss = F.mse_loss(zq, z.detach())
        commitment = F.mse_loss(z, zq.detach())
        loss = codebook_loss + self.beta * commitment
        zq = z + (zq - z).detach()
        probs = onehot.mean(dim=0)
        perplexity = torch.exp(-torch.sum(probs * torch.log(probs + 1e-10)))
        return zq.permute(0, 3, 1, 2).contiguous(), loss, perplexity, idx.view(z.shape[:-1])


class VQVAE(nn.Module):
    def __init__(self, ch=16, dim=8, codes=32, use_cdist=True):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(1, ch, 4, 2, 1), nn.ReLU(), nn.Conv2d(ch, ch, 3, 1, 1), nn.ReLU(),
                                 nn.Conv2d(ch, dim, 1))
        self.vq = VectorQuantizer(codes, dim, use_cdist=use_cdist)
        self.dec = nn.Sequential(nn.Conv2d(dim, ch, 3, 1, 1), nn.ReLU(), nn.ConvTranspose2d(ch, ch, 4, 2, 1),
                                 nn.ReLU(), nn.Conv2d(ch, 1, 3, 1, 1))

    def forward(self, x):
        z = self.enc(x)
        zq, vq_loss, ppl, idx = self.vq(z)
        return self.dec(zq), vq_loss, ppl, idx


def numpy_init(model, seed):
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "codebook" in name:
                v = rng.uniform(-1, 1, size=tuple(p.shape))
            elif p.dim() > 1:
                v = rng.uniform(-1, 1, size=tuple(p.shape)) / math.sqrt(p[0].numel())
            else:
                v = rng.uniform(-0.1, 0.1, size=tuple(p.shape))
            p.copy_(torch.from_numpy(v.astype(np.float32)))


def make_data(n, rng):
    yy, xx = np.mgrid[0:8, 0:8]
    imgs = np.empty((n, 1, 8, 8), np.float32)
    for i in range(n):
        cx, cy = rng.uniform(2, 6, 2)
        imgs[i, 0] = np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / rng.uniform(1, 4))
    return torch.from_numpy(imgs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--no-cdist", action="store_true")
    args = parser.parse_args()
    device = torch.device(args.device)
    rng = np.random.RandomState(0)
    data = make_data(256, rng)
    model = VQVAE(use_cdist=not args.no_cdist)
    numpy_init(model, 1)
    model.to(device)
    b_rng = np.random.RandomState(2)
    with torch.no_grad():  # data-dependent codebook init from encoder outputs
        z = model.enc(data[:64].to(device)).permute(0, 2, 3, 1).reshape(-1, model.vq.codebook.embedding_dim)
        pick = torch.from_numpy(b_rng.permutation(z.shape[0])[:model.vq.num_codes]).to(device)
        model.vq.codebook.weight.data.copy_(z.index_select(0, pick))
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    t0 = time.perf_counter()
    for step in range(args.steps):
        x = data[torch.from_numpy(b_rng.randint(0, len(data), 32))].to(device)
        recon, vq_loss, ppl, idx = model(x)
        rec_loss = F.mse_loss(recon, x)
        loss = rec_loss + vq_loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == args.steps - 1:
            used = torch.unique(idx).numel()
            print(f"step {step} loss: {loss.item():.8f} recon loss: {rec_loss.item():.8f} "
                  f"perplexity {ppl.item():.4f} codes used {used}")
    elapsed = time.perf_counter() - t0
    # decoding from indices, code usage histogram
    model.eval()
    with torch.no_grad():
        x = data[:8].to(device)
        _, _, _, idx = model(x)
        zq = model.vq.codebook(idx).permute(0, 3, 1, 2)
        out = model.dec(zq)
        counts = torch.bincount(idx.flatten(), minlength=32)
        hist = torch.histc(idx.float(), bins=4, min=0, max=31)
    print(f"decoded loss: {F.mse_loss(out, x).item():.8f} counts sum {counts.sum().item()} hist {hist.tolist()}")
    print(f"parameters on: {next(model.parameters()).device}")
    print(f"time per step {elapsed / args.steps * 1000:.2f} ms")


if __name__ == "__main__":
    main()
