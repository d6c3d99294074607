"""A typical PyTorch training script: a small CNN on scikit-learn's 8x8 digits, trained with SGD.

An unchanged PyTorch program (oar runs it through `python -m oar.compat`):
nn.Sequential of Conv2d / BatchNorm2d / ReLU / MaxPool2d / Linear,
CrossEntropyLoss, SGD with momentum and weight decay, StepLR, a DataLoader
with worker processes, evaluation under torch.no_grad(), and a checkpoint
(model and optimizer state) saved, reloaded and checked.

Deterministic for a given --init-seed and data: weights come from a NumPy
RandomState and batches are not shuffled, so its printed losses can be
compared with another framework's.
"""
import argparse
import os
import sys
import tempfile

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def build_model():
    return nn.Sequential(
        nn.Conv2d(1, 8, kernel_size=3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.MaxPool2d(2),                      # 8x8 -> 4x4
        nn.Conv2d(8, 16, kernel_size=3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),                      # 4x4 -> 2x2
        nn.Flatten(),
        nn.Linear(16 * 2 * 2, 32),
        nn.ReLU(),
        nn.Linear(32, 10),
    )


def init_from_numpy(model, seed):
    """Uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)) weights and biases from a NumPy generator."""
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for name, param in model.named_parameters():
            if "weight" in name and param.dim() == 1:  # BatchNorm scale
                param.fill_(1.0)
                continue
            fan_in = param[0].numel() if param.dim() > 1 else param.numel()
            bound = 1.0 / np.sqrt(fan_in)
            values = rng.uniform(-bound, bound, size=tuple(param.shape)).astype(np.float32)
            param.copy_(torch.from_numpy(values))


def load_data(path):
    if path:
        data = np.load(path)
        x, y = data["x"], data["y"]
    else:
        from sklearn.datasets import load_digits
        digits = load_digits()
        x, y = digits.images[:, None, :, :] / 16.0, digits.target
    return torch.from_numpy(x.astype(np.float32)), torch.from_numpy(y.astype(np.int64))


def evaluate(model, loader, criterion, device):
    model.eval()
    total_loss, correct, seen = 0.0, 0, 0
    with torch.no_grad():
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            logits = model(xb)
            total_loss += criterion(logits, yb).item() * xb.size(0)
            correct += (logits.argmax(1) == yb).sum().item()
            seen += xb.size(0)
    return total_loss / seen, correct / seen


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--momentum", type=float, default=0.9)
    parser.add_argument("--weight-decay", type=float, default=1e-4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--init-seed", type=int, default=0)
    parser.add_argument("--data", default=None, help=".npz with x (N,1,8,8) and y (N); default: sklearn")
    parser.add_argument("--checkpoint", default=os.path.join(tempfile.gettempdir(), "digits_cnn_sgd.pt"))
    args = parser.parse_args(argv)

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    x, y = load_data(args.data)
    n_train = len(y) * 4 // 5
    train_loader = DataLoader(TensorDataset(x[:n_train], y[:n_train]), batch_size=args.batch_size,
                              shuffle=False, num_workers=args.workers)
    test_loader = DataLoader(TensorDataset(x[n_train:], y[n_train:]), batch_size=256)

    model = build_model()
    init_from_numpy(model, args.init_seed)
    model = model.to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.momentum,
                                weight_decay=args.weight_decay)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)

    for epoch in range(1, args.epochs + 1):
        model.train()
        running = 0.0
        for step, (xb, yb) in enumerate(train_loader):
            xb, yb = xb.to(device), yb.to(device)
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            running += loss.item()
            if step % 9 == 0:
                print(f"epoch {epoch} step {step} loss {loss.item():.8f}")
        scheduler.step()
        test_loss, test_acc = evaluate(model, test_loader, criterion, device)
        print(f"epoch {epoch} mean train loss {running / len(train_loader):.8f} "
              f"test loss {test_loss:.8f} test acc {test_acc:.4f} lr {scheduler.get_last_lr()[0]:.6f}")

    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": args.epochs},
               args.checkpoint)
    checkpoint = torch.load(args.checkpoint, map_location=device)
    reloaded = build_model().to(device)
    reloaded.load_state_dict(checkpoint["model"])
    reloaded.eval()
    model.eval()
    with torch.no_grad():
        probe = x[n_train:n_train + 16].to(device)
        same = torch.allclose(model(probe), reloaded(probe), rtol=0.0, atol=0.0)
    optimizer2 = torch.optim.SGD(reloaded.parameters(), lr=args.lr, momentum=args.momentum)
    optimizer2.load_state_dict(checkpoint["optimizer"])
    print(f"checkpoint epoch {checkpoint['epoch']} reloaded model identical: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
