"""A sequence classifier: a 2-layer nn.TransformerEncoder over padded token sequences.

An ordinary PyTorch program (oar runs it through `python -m oar.compat`):
token + learned position embeddings, nn.TransformerEncoderLayer(batch_first=True)
stacked by nn.TransformerEncoder with a src_key_padding_mask, mean pooling over
the real tokens, a Linear head, AdamW with OneCycleLR stepped every batch (its
momentum cycling moves AdamW's beta1), and nn.utils.clip_grad_norm_; --device picks the device.

The task is synthetic: the label is the token group (1-9, 10-19, 20-29) that
occurs most often in the sequence. Data come from NumPy (--seed), weights from a
NumPy RandomState (--init-seed) and dropout is 0, so the printed losses depend on
nothing else and can be compared with another framework's.
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

PAD = 0


def make_data(n, max_len, seed):
    rng = np.random.RandomState(seed)
    tokens = np.full((n, max_len), PAD, dtype=np.int64)
    labels = np.empty(n, dtype=np.int64)
    for i in range(n):
        length = rng.randint(4, max_len + 1)
        group_weights = rng.dirichlet([1.0, 1.0, 1.0])
        groups = rng.choice(3, size=length, p=group_weights)
        tokens[i, :length] = np.where(groups == 0, rng.randint(1, 10, length), groups * 10 + rng.randint(0, 10, length))
        labels[i] = np.argmax(np.bincount(groups, minlength=3))
    return torch.from_numpy(tokens), torch.from_numpy(labels)


class Classifier(nn.Module):
    def __init__(self, vocab, classes, max_len, d_model=32, nhead=4, dim_feedforward=64, num_layers=2):
        super().__init__()
        self.tok = nn.Embedding(vocab, d_model, padding_idx=PAD)
        self.pos = nn.Embedding(max_len, d_model)
        layer = nn.TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=num_layers)
        self.head = nn.Linear(d_model, classes)

    def forward(self, tokens):
        padding = tokens == PAD  # True where there is no token: attention ignores those keys
        positions = torch.arange(tokens.shape[1], device=tokens.device).unsqueeze(0)
        h = self.encoder(self.tok(tokens) + self.pos(positions), src_key_padding_mask=padding)
        keep = (~padding).unsqueeze(-1).to(h.dtype)
        pooled = (h * keep).sum(dim=1) / keep.sum(dim=1)
        return self.head(pooled)


def init_weights(model, seed):
    """Framework-neutral initial weights in parameter-name order; LayerNorms keep their 1s and 0s."""
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if ".norm" in name:
                continue
            fan_in = p.shape[1] if p.dim() > 1 else p.shape[0]
            bound = 1.0 / np.sqrt(fan_in)
            p.copy_(torch.tensor(rng.uniform(-bound, bound, size=tuple(p.shape)), dtype=torch.float32))
        model.tok.weight[PAD].zero_()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--samples", type=int, default=160)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--max-lr", type=float, default=5e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--init-seed", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    device = torch.device(args.device)

    max_len, vocab, classes = 16, 30, 3
    tokens, labels = make_data(args.samples, max_len, args.seed)
    n_train = args.samples * 4 // 5
    train_loader = DataLoader(TensorDataset(tokens[:n_train], labels[:n_train]), batch_size=args.batch_size)
    test_tokens, test_labels = tokens[n_train:].to(device), labels[n_train:].to(device)

    model = Classifier(vocab, classes, max_len)
    init_weights(model, args.init_seed)
    model.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.max_lr, weight_decay=0.01)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=args.max_lr,
                                                    total_steps=args.epochs * len(train_loader))

    for epoch in range(1, args.epochs + 1):
        model.train()
        total, batches = 0.0, 0
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            grad_norm = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            scheduler.step()
            total += loss.item()
            batches += 1
        print(f"epoch {epoch} loss: {total / batches:.8f} grad norm {float(grad_norm):.6f} "
              f"lr {scheduler.get_last_lr()[0]:.8f} beta1 {optimizer.param_groups[0]['betas'][0]:.6f}")

    model.eval()
    with torch.no_grad():
        logits = model(test_tokens)
        test_loss = F.cross_entropy(logits, test_labels).item()
        accuracy = (logits.argmax(1) == test_labels).float().mean().item()
    print(f"test loss: {test_loss:.8f} accuracy: {accuracy:.4f}")
    print(f"parameters on: {next(model.parameters()).device}")


if __name__ == "__main__":
    main()
