"""A variational autoencoder on scikit-learn's 8x8 digits (binarised), written with torch.distributions.

An ordinary PyTorch program (oar runs it through `python -m oar.compat`): an MLP
encoder gives q(z|x) = Independent(Normal(mu, sigma), 1), an MLP decoder gives
p(x|z) = Independent(Bernoulli(logits), 1), the prior is Independent(Normal(0, 1), 1),
and the loss is the negative ELBO: -log p(x|z) + kl_divergence(q, prior), with z
drawn by reparameterisation. Adam, a DataLoader, a few epochs; --device picks the device.

To compare runs across frameworks, whose random streams differ, training draws
z = mean + stddev * eps with eps from NumPy (--noise numpy, the default: the same
"common random numbers" everywhere) and the weights start from a NumPy
RandomState; --noise framework uses q.rsample() as usual. The held-out estimate
at the end always uses q.rsample(): its value is random, but close across
frameworks.
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Bernoulli, Independent, Normal, kl_divergence
from torch.utils.data import DataLoader, TensorDataset


class VAE(nn.Module):
    def __init__(self, pixels=64, hidden=64, latent=4):
        super().__init__()
        self.latent = latent
        self.encoder = nn.Sequential(nn.Linear(pixels, hidden), nn.ReLU(), nn.Linear(hidden, 2 * latent))
        self.decoder = nn.Sequential(nn.Linear(latent, hidden), nn.ReLU(), nn.Linear(hidden, pixels))

    def posterior(self, x):
        mu, raw_scale = self.encoder(x).chunk(2, dim=-1)
        return Independent(Normal(mu, F.softplus(raw_scale) + 1e-4), 1)

    def prior(self):
        device = self.decoder[0].weight.device
        return Independent(Normal(torch.zeros(self.latent, device=device), torch.ones(self.latent, device=device)), 1)

    def likelihood(self, z):
        return Independent(Bernoulli(logits=self.decoder(z)), 1)


def negative_elbo(model, x, eps=None):
    """Per-sample -ELBO, its reconstruction and KL terms; z from q.rsample() unless eps is given."""
    q = model.posterior(x)
    z = q.rsample() if eps is None else q.mean + q.stddev * eps
    reconstruction = -model.likelihood(z).log_prob(x)
    kl = kl_divergence(q, model.prior())
    return reconstruction + kl, reconstruction, kl


def init_weights(model, seed):
    """Framework-neutral initial weights: uniform(+-1/sqrt(fan_in)) in parameter-name order."""
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            fan_in = p.shape[1] if p.dim() > 1 else p.shape[0]
            bound = 1.0 / np.sqrt(fan_in)
            p.copy_(torch.tensor(rng.uniform(-bound, bound, size=tuple(p.shape)), dtype=torch.float32))


def load_binary_digits(path):
    if path:
        images = np.load(path)["x"]
    else:
        from sklearn.datasets import load_digits
        images = load_digits().images / 16.0
    return torch.from_numpy((images.reshape(len(images), 64) > 0.5).astype(np.float32))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=None, help=".npz with x (N,1,8,8) in [0, 1]; default: sklearn")
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--noise", choices=["numpy", "framework"], default="numpy")
    parser.add_argument("--seed", type=int, default=0, help="NumPy seed of the training noise")
    parser.add_argument("--init-seed", type=int, default=1)
    parser.add_argument("--mc-samples", type=int, default=32)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    device = torch.device(args.device)

    x = load_binary_digits(args.data)
    n_train = len(x) * 4 // 5
    loader = DataLoader(TensorDataset(x[:n_train]), batch_size=args.batch_size)
    held_out = x[n_train:].to(device)

    model = VAE()
    init_weights(model, args.init_seed)
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    noise = np.random.RandomState(args.seed)

    for epoch in range(1, args.epochs + 1):
        total = rec_total = kl_total = 0.0
        for (xb,) in loader:
            xb, eps = xb.to(device), None
            if args.noise == "numpy":
                eps = torch.tensor(noise.standard_normal((len(xb), model.latent)), dtype=torch.float32, device=device)
            loss, rec, kl = (t.mean() for t in negative_elbo(model, xb, eps))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(xb)
            rec_total += rec.item() * len(xb)
            kl_total += kl.item() * len(xb)
        print(f"epoch {epoch} loss: {total / n_train:.8f} reconstruction {rec_total / n_train:.6f} "
              f"kl {kl_total / n_train:.6f}")

    with torch.no_grad():
        q = model.posterior(held_out)
        z = q.rsample((args.mc_samples,))  # [samples, batch, latent]
        assert tuple(z.shape) == (args.mc_samples, len(held_out), model.latent)
        # log p(x|z) + log p(z) - log q(z|x), averaged over the samples: an unbiased -ELBO estimate
        log_weights = model.likelihood(z).log_prob(held_out) + model.prior().log_prob(z) - q.log_prob(z)
        mc_estimate = -log_weights.mean().item()
        posterior_mean_loss = negative_elbo(model, held_out, torch.zeros(len(held_out), model.latent, device=device))[0]
    print(f"held-out negative ELBO at the posterior mean: {posterior_mean_loss.mean().item():.8f}")
    print(f"held-out negative ELBO, Monte Carlo with rsample: {mc_estimate:.4f}")
    print(f"parameters on: {next(model.parameters()).device}")


if __name__ == "__main__":
    main()
