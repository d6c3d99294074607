"""An AG-news-style text classifier: nn.EmbeddingBag(mode='mean') over a flat token stream with offsets.

An ordinary PyTorch program (oar runs it through `python -m oar.compat`): a Dataset of (label, text)
pairs, a custom collate_fn that tokenizes, builds the flat token tensor from a list of NumPy arrays with
torch.tensor and the bag offsets with torch.cumsum, SGD with momentum and StepLR, clip_grad_norm_, and a
checkpoint dict {model, optimizer, scheduler, epoch} written with torch.save after epoch 2 and read back
with torch.load into fresh objects, whose resumed epochs must repeat the straight run exactly.

The data are synthetic (each class draws half its words from its own range); data, shuffling and initial
weights come from NumPy, so the printed losses depend on nothing but the framework.
"""
import argparse
import os
import tempfile

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

VOCAB, CLASSES = 200, 4


def make_rows(n, rng):
    rows = []
    for _ in range(n):
        label = int(rng.randint(CLASSES))
        length = rng.randint(5, 20)
        topical = rng.randint(label * 40 + 10, label * 40 + 50, length // 2)
        noise = rng.randint(1, VOCAB, length - length // 2)
        rows.append((label, " ".join(f"w{t}" for t in rng.permutation(np.concatenate([topical, noise])))))
    return rows


class News(Dataset):
    def __init__(self, rows):
        self.rows = rows

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        return self.rows[i]


VOCABULARY = {f"w{i}": i for i in range(VOCAB)}


def collate(batch):
    labels, texts = zip(*batch)
    ids = [np.array([VOCABULARY[w] for w in text.split()], dtype=np.int64) for text in texts]
    lengths = torch.tensor([0] + [len(i) for i in ids[:-1]])
    return torch.tensor(labels), torch.from_numpy(np.concatenate(ids)), torch.cumsum(lengths, dim=0)


class Model(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.emb = nn.EmbeddingBag(VOCAB, dim, mode="mean")
        self.fc = nn.Linear(dim, CLASSES)

    def forward(self, text, offsets):
        return self.fc(self.emb(text, offsets))


def build(seed, device):
    model = Model()
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for _, p in sorted(model.named_parameters()):
            p.copy_(torch.tensor(rng.uniform(-0.5, 0.5, size=tuple(p.shape)), dtype=torch.float32))
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=5.0, momentum=0.5)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.5)
    return model, optimizer, scheduler


def epoch_loader(rows, epoch, batch_size):
    order = np.random.RandomState(100 + epoch).permutation(len(rows))
    return DataLoader(News([rows[i] for i in order]), batch_size=batch_size, collate_fn=collate)


def train_epoch(model, optimizer, rows, epoch, batch_size, device):
    model.train()
    total, batches = 0.0, 0
    for labels, text, offsets in epoch_loader(rows, epoch, batch_size):
        labels, text, offsets = labels.to(device), text.to(device), offsets.to(device)
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(text, offsets), labels)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.1)
        optimizer.step()
        total += loss.item()
        batches += 1
    return total / batches


def accuracy(model, rows, device):
    model.eval()
    correct = 0
    with torch.no_grad():
        for labels, text, offsets in DataLoader(News(rows), batch_size=64, collate_fn=collate):
            pred = model(text.to(device), offsets.to(device)).argmax(1)
            correct += (pred == labels.to(device)).sum().item()
    return correct / len(rows)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    device = torch.device(args.device)
    rng = np.random.RandomState(args.seed)
    train_rows, test_rows = make_rows(800, rng), make_rows(200, rng)

    model, optimizer, scheduler = build(args.seed + 1, device)
    straight = []
    with tempfile.TemporaryDirectory() as tmp:
        checkpoint = os.path.join(tmp, "checkpoint.pt")
        for epoch in range(args.epochs):
            loss = train_epoch(model, optimizer, train_rows, epoch, args.batch_size, device)
            scheduler.step()
            straight.append(loss)
            print(f"epoch {epoch} loss: {loss:.8f} accuracy: {accuracy(model, test_rows, device):.4f} "
                  f"lr {scheduler.get_last_lr()[0]:.6f}")
            if epoch == 1:
                torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                            "scheduler": scheduler.state_dict(), "epoch": epoch}, checkpoint)

        resumed, optimizer2, scheduler2 = build(args.seed + 2, device)  # other weights: the checkpoint decides
        state = torch.load(checkpoint, map_location=device)
        resumed.load_state_dict(state["model"])
        optimizer2.load_state_dict(state["optimizer"])
        scheduler2.load_state_dict(state["scheduler"])
    for epoch in range(state["epoch"] + 1, args.epochs):
        loss = train_epoch(resumed, optimizer2, train_rows, epoch, args.batch_size, device)
        scheduler2.step()
        print(f"resumed epoch {epoch} loss: {loss:.8f} same as straight run: {loss == straight[epoch]}")
    same = all(torch.equal(a, b) for a, b in zip(model.parameters(), resumed.parameters()))
    print(f"resumed weights equal: {same}")
    print(f"parameters on: {next(model.parameters()).device}")


if __name__ == "__main__":
    main()
