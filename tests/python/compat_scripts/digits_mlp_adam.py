"""A typical PyTorch script with its own Dataset class: an MLP on scikit-learn's 8x8 digits, trained with Adam.

An unchanged PyTorch program (oar runs it through `python -m oar.compat`):
a Dataset subclass defined here (so DataLoader workers started with spawn must
re-import this file, `import torch` included), worker_init_fn and
get_worker_info(), `from torch import nn, Tensor`, torch.backends flags,
LayerNorm / GELU, F.cross_entropy, gradient clipping and Adam.

Deterministic for a given --init-seed and data (NumPy-initialised weights,
no shuffling), so its printed losses can be compared with another framework's.
"""
import argparse

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.utils.data import DataLoader, Dataset

torch.backends.cudnn.benchmark = True
torch.backends.cudnn.deterministic = True


class DigitsDataset(Dataset):
    """Samples as (image, label, id of the worker process that loaded it, -1 in the main process)."""

    def __init__(self, x: np.ndarray, y: np.ndarray):
        self.x, self.y = x, y

    def __len__(self) -> int:
        return len(self.y)

    def __getitem__(self, i: int):
        info = torch.utils.data.get_worker_info()
        return torch.from_numpy(self.x[i]), int(self.y[i]), -1 if info is None else info.id


class MLP(nn.Module):
    def __init__(self, hidden: int = 48):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(64, hidden), nn.LayerNorm(hidden), nn.GELU(),
                                 nn.Linear(hidden, 10))

    def forward(self, x: Tensor) -> Tensor:
        return self.net(x)


def init_from_numpy(model: nn.Module, seed: int) -> None:
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() == 1 and name.endswith("weight"):  # LayerNorm scale keeps its 1s
                continue
            fan_in = p.shape[1] if p.dim() > 1 else p.shape[0]
            bound = 1.0 / np.sqrt(fan_in)
            p.copy_(torch.from_numpy(rng.uniform(-bound, bound, size=tuple(p.shape)).astype(np.float32)))


def seed_worker(worker_id):
    assert torch.utils.data.get_worker_info().id == worker_id


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default=None, help=".npz with x (N,1,8,8) and y (N); default: sklearn")
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--mp-context", default=None, choices=[None, "fork", "spawn", "forkserver"])
    parser.add_argument("--init-seed", type=int, default=0)
    args = parser.parse_args()

    if args.data:
        data = np.load(args.data)
        x, y = data["x"].astype(np.float32), data["y"].astype(np.int64)
    else:
        from sklearn.datasets import load_digits
        digits = load_digits()
        x, y = (digits.images[:, None] / 16.0).astype(np.float32), digits.target.astype(np.int64)

    loader = DataLoader(DigitsDataset(x, y), batch_size=args.batch_size, shuffle=False,
                        num_workers=args.workers, multiprocessing_context=args.mp_context,
                        worker_init_fn=seed_worker, persistent_workers=args.workers > 0)
    model = MLP()
    init_from_numpy(model, args.init_seed)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    workers_seen = set()
    for epoch in range(args.epochs):
        total, batches = 0.0, 0
        for xb, yb, wid in loader:
            workers_seen.update(wid.tolist())
            logits = model(xb)
            loss = F.cross_entropy(logits, yb)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
            optimizer.step()
            total += loss.item()
            batches += 1
            if batches % 7 == 1:
                print(f"epoch {epoch} batch {batches} loss {loss.item():.8f}")
        print(f"epoch {epoch} mean loss {total / batches:.8f}")
    print(f"workers used: {sorted(workers_seen)}")


if __name__ == "__main__":
    main()
