"""A small DCGAN on synthetic 16x16 'blob' images, written as the PyTorch DCGAN tutorial does it.

An ordinary PyTorch program (oar runs it through `python -m oar.compat`): a ConvTranspose2d generator with
BatchNorm2d / ReLU / Tanh, a Conv2d + LeakyReLU(inplace) discriminator, `weights_init` applied with
`model.apply` (nn.init.normal_ / constant_ by class name), BCEWithLogitsLoss against `torch.full` labels,
two Adam optimizers with betas=(0.5, 0.999), `.detach()` on the fake batch for the discriminator step, a
hand-made image grid (F.pad, view, permute, reshape) and `torch.randn(..., device=device)` sampling.

So that runs in different frameworks see the same numbers, the weights are then overwritten from a NumPy
RandomState (the weights_init result is only checked) and the data, minibatches and latent codes come from
NumPy. --device picks the device.
"""
import argparse
import time

import numpy as np
import torch
import torch.nn as nn


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


class Generator(nn.Module):
    def __init__(self, nz=16, ngf=8, nc=1):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False),  # 4x4
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),  # 8x8
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, nc, 4, 2, 1, bias=False),  # 16x16
            nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self, ndf=8, nc=1):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),  # 8x8
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),  # 4x4
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),  # 1x1
        )

    def forward(self, x):
        return self.main(x).view(-1)


def numpy_init(model, seed):
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in model.state_dict().items():
            if name.endswith("num_batches_tracked") or "running" in name:
                continue
            if p.dim() > 1:
                v = rng.normal(0.0, 0.02, size=tuple(p.shape))
            elif name.endswith("weight"):
                v = rng.normal(1.0, 0.02, size=tuple(p.shape))
            else:
                v = np.zeros(tuple(p.shape))
            p.copy_(torch.from_numpy(v.astype(np.float32)))


def make_data(n, rng):
    yy, xx = np.mgrid[0:16, 0:16]
    imgs = np.empty((n, 1, 16, 16), np.float32)
    for i in range(n):
        cx, cy = rng.uniform(4, 12, 2)
        r = rng.uniform(2, 4)
        imgs[i, 0] = np.where((xx - cx) ** 2 + (yy - cy) ** 2 < r * r, 1.0, -1.0)
    return torch.from_numpy(imgs)


def make_grid(images, nrow=4, padding=1, pad_value=-1.0):
    n, c, h, w = images.shape
    ncol = (n + nrow - 1) // nrow
    if n < nrow * ncol:
        images = torch.cat([images, images.new_full((nrow * ncol - n, c, h, w), pad_value)])
    images = nn.functional.pad(images, (padding, padding, padding, padding), value=pad_value)
    h, w = h + 2 * padding, w + 2 * padding
    grid = images.view(ncol, nrow, c, h, w).permute(2, 0, 3, 1, 4).reshape(c, ncol * h, nrow * w)
    return grid


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--nz", type=int, default=16)
    args = parser.parse_args()
    device = torch.device(args.device)
    rng = np.random.RandomState(0)
    data = make_data(256, rng)

    netG, netD = Generator(args.nz), Discriminator()
    netG.apply(weights_init)
    netD.apply(weights_init)
    conv_std = netG.main[0].weight.std().item()
    bn_mean = netG.main[1].weight.mean().item()
    print(f"weights_init conv std ~0.02 {abs(conv_std - 0.02) < 0.002} bn weight mean ~1 {abs(bn_mean - 1) < 0.02} "
          f"bn bias zero {bool((netG.main[1].bias == 0).all())}")
    numpy_init(netG, 1)
    numpy_init(netD, 2)
    netG.to(device)
    netD.to(device)

    criterion = nn.BCEWithLogitsLoss()
    optD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
    optG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
    fixed_noise = torch.from_numpy(rng.standard_normal((16, args.nz, 1, 1)).astype(np.float32)).to(device)
    real_label, fake_label = 1.0, 0.0
    z_rng = np.random.RandomState(3)

    t0 = time.perf_counter()
    for step in range(args.steps):
        idx = z_rng.randint(0, len(data), args.batch_size)
        real = data[torch.from_numpy(idx)].to(device)
        b = real.size(0)
        # (1) update D
        netD.zero_grad()
        label = torch.full((b,), real_label, dtype=torch.float, device=device)
        out = netD(real)
        errD_real = criterion(out, label)
        errD_real.backward()
        D_x = torch.sigmoid(out).mean().item()
        noise = torch.from_numpy(z_rng.standard_normal((b, args.nz, 1, 1)).astype(np.float32)).to(device)
        fake = netG(noise)
        label.fill_(fake_label)
        out = netD(fake.detach())
        errD_fake = criterion(out, label)
        errD_fake.backward()
        errD = errD_real + errD_fake
        optD.step()
        # (2) update G
        netG.zero_grad()
        label.fill_(real_label)
        out = netD(fake)
        errG = criterion(out, label)
        errG.backward()
        optG.step()
        if step < 8 or step % 4 == 3:
            print(f"step {step} loss_D loss: {errD.item():.6f} loss_G loss: {errG.item():.6f} D(x) {D_x:.4f}")
    elapsed = time.perf_counter() - t0

    netG.eval()
    with torch.no_grad():
        samples = netG(fixed_noise).cpu()
        grid = make_grid(samples, nrow=4)
        z = torch.randn(4, args.nz, 1, 1, device=device)
        extra = netG(z)
    print(f"grid shape {tuple(grid.shape)} range {grid.min().item():.3f} {grid.max().item():.3f}")
    print(f"sample abs mean loss: {samples.abs().mean().item():.8f}")
    print(f"random sample shape {tuple(extra.shape)} device {extra.device.type}")
    print(f"running_var loss: {netG.main[1].running_var.sum().item():.6f}")
    print(f"parameters on: {next(netG.parameters()).device}")
    print(f"time per step {elapsed / args.steps * 1000:.2f} ms")


if __name__ == "__main__":
    main()
