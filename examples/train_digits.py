"""Train a small CNN on scikit-learn's digits (1,797 8x8 images) with oar.

The main job of the project. Runs on the default device; set OAR_DEVICE
(cpu, opencl, cuda:0, ...) to train elsewhere with no change to this file.
It prints a progress line per epoch (loss, accuracy, samples/s), the held-out
accuracy, saves a checkpoint, reloads it into a fresh model and checks that
the reloaded model predicts the same.

    python examples/train_digits.py [--epochs N] [--batch-size B] [--checkpoint PATH]
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np
from sklearn.datasets import load_digits

import oar
import oar.nn as nn
from oar.utils.data import DataLoader, TensorDataset


class DigitsCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),   # 8x8 -> 4x4
            nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),  # 4x4 -> 2x2
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(32 * 2 * 2, 64), nn.ReLU(), nn.Dropout(0.1),
                                        nn.Linear(64, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def load_data(device, seed=0):
    digits = load_digits()
    x = (digits.images.astype(np.float32) / 16.0)[:, None, :, :]  # N, 1, 8, 8
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = len(y) // 5
    test, train = order[:n_test], order[n_test:]
    to = lambda a: oar.tensor(a, device=device)
    return (to(x[train]), to(y[train])), (to(x[test]), to(y[test]))


def evaluate(model, x, y, batch_size=256):
    model.eval()
    correct = 0
    with oar.no_grad():
        for i in range(0, x.shape[0], batch_size):
            logits = model(x[i:i + batch_size])
            correct += int((logits.argmax(dim=1) == y[i:i + batch_size]).sum().item())
    return correct / x.shape[0]


def progress(epoch, epochs, step, steps, loss, acc, rate, width=24):
    if step != steps and not sys.stdout.isatty():
        return  # logs get one line per epoch
    filled = int(width * step / steps)
    bar = "#" * filled + "." * (width - filled)
    end = "\n" if step == steps else ""
    sys.stdout.write(f"\repoch {epoch:2d}/{epochs} [{bar}] loss {loss:.4f} acc {100 * acc:5.1f}% "
                     f"{rate:7.0f} samples/s{end}")
    sys.stdout.flush()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--checkpoint", default=os.path.join(tempfile.gettempdir(), "oar_digits.oar"))
    args = parser.parse_args(argv)

    device = oar.get_default_device()
    oar.manual_seed(args.seed)
    (x_train, y_train), (x_test, y_test) = load_data(device, args.seed)
    print(f"digits: {x_train.shape[0]} train / {x_test.shape[0]} test images on {device}")

    model = DigitsCNN().to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = oar.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = oar.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    loader = DataLoader(TensorDataset(x_train, y_train), batch_size=args.batch_size, shuffle=True)

    start = time.perf_counter()
    first_epoch_loss = None
    for epoch in range(1, args.epochs + 1):
        model.train()
        seen, correct, loss_sum, t0 = 0, 0, 0.0, time.perf_counter()
        for step, (xb, yb) in enumerate(loader, 1):
            optimizer.zero_grad()
            logits = model(xb)
            loss = criterion(logits, yb)
            loss.backward()
            optimizer.step()
            n = xb.shape[0]
            seen += n
            loss_sum += loss.item() * n
            correct += int((logits.argmax(dim=1) == yb).sum().item())
            progress(epoch, args.epochs, step, len(loader), loss_sum / seen, correct / seen,
                     seen / (time.perf_counter() - t0))
        scheduler.step()
        if first_epoch_loss is None:
            first_epoch_loss = loss_sum / seen
    elapsed = time.perf_counter() - start
    test_acc = evaluate(model, x_test, y_test)
    print(f"first-epoch loss {first_epoch_loss:.6f}")
    print(f"test accuracy {100 * test_acc:.2f}% after {args.epochs} epochs in {elapsed:.1f} s")

    oar.save(model.state_dict(), args.checkpoint)
    reloaded = DigitsCNN().to(device)
    reloaded.load_state_dict(oar.load(args.checkpoint))
    model.eval()
    reloaded.eval()
    with oar.no_grad():
        same = int((model(x_test).argmax(dim=1) != reloaded(x_test).argmax(dim=1)).sum().item()) == 0
    print(f"checkpoint {args.checkpoint}: reloaded model predicts the same: {same}")
    return test_acc, same


if __name__ == "__main__":
    acc, same = main()
    sys.exit(0 if acc >= 0.97 and same else 1)
