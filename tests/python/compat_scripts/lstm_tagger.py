"""A part-of-speech-style tagger: a bidirectional LSTM over packed, variable-length sentences.

An ordinary PyTorch program (oar runs it through `python -m oar.compat`):
nn.Embedding(padding_idx=0), pad_sequence, pack_padded_sequence(enforce_sorted=False),
a 2-layer bidirectional nn.LSTM, pad_packed_sequence, a Linear tag head,
CrossEntropyLoss(ignore_index=...) over the padded tag positions, Adam and a
DataLoader with its own collate_fn; --device picks the device.

The data set is synthetic: a word's tag depends on the word and on its left
neighbour, so the tagger needs context. It is drawn from NumPy (--seed) and the
weights from a NumPy RandomState (--init-seed), so the printed losses depend on
nothing else and can be compared with another framework's.
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence, pad_sequence
from torch.utils.data import DataLoader

PAD_WORD = 0
PAD_TAG = -1


def make_sentences(n, vocab, tags, seed):
    """n sentences of 2..12 words (ids 1..vocab-1); tag = (word + left word's tag-group) mod tags."""
    rng = np.random.RandomState(seed)
    sentences = []
    for _ in range(n):
        words = rng.randint(1, vocab, size=rng.randint(2, 13))
        left = np.concatenate([[0], words[:-1]])
        sentences.append((words.astype(np.int64), ((words + left % 3) % tags).astype(np.int64)))
    return sentences


def collate(batch):
    words = [torch.from_numpy(w) for w, _ in batch]
    tags = [torch.from_numpy(t) for _, t in batch]
    lengths = torch.tensor([len(w) for w in words])
    return (pad_sequence(words, batch_first=True, padding_value=PAD_WORD),
            pad_sequence(tags, batch_first=True, padding_value=PAD_TAG), lengths)


class Tagger(nn.Module):
    def __init__(self, vocab, tags, embed_dim=16, hidden=24):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed_dim, padding_idx=PAD_WORD)
        self.lstm = nn.LSTM(embed_dim, hidden, num_layers=2, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, tags)

    def forward(self, words, lengths):
        packed = pack_padded_sequence(self.embed(words), lengths, batch_first=True, enforce_sorted=False)
        out, (h, c) = self.lstm(packed)
        out, out_lengths = pad_packed_sequence(out, batch_first=True)
        assert out_lengths.tolist() == lengths.tolist() and h.shape == c.shape == (4, len(lengths), h.shape[-1])
        return self.head(out)


def init_weights(model, seed):
    """Framework-neutral initial weights: uniform(+-1/sqrt(fan_in)) in parameter-name order."""
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            fan_in = p.shape[1] if p.dim() > 1 else p.shape[0]
            bound = 1.0 / np.sqrt(fan_in)
            p.copy_(torch.tensor(rng.uniform(-bound, bound, size=tuple(p.shape)), dtype=torch.float32))
        model.embed.weight[PAD_WORD].zero_()  # as nn.Embedding(padding_idx=0) starts


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--sentences", type=int, default=96)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=3e-2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--init-seed", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    device = torch.device(args.device)

    vocab, tags = 40, 5
    loader = DataLoader(make_sentences(args.sentences, vocab, tags, args.seed), batch_size=args.batch_size,
                        shuffle=False, collate_fn=collate)
    model = Tagger(vocab, tags)
    init_weights(model, args.init_seed)
    model.to(device)
    criterion = nn.CrossEntropyLoss(ignore_index=PAD_TAG)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(1, args.epochs + 1):
        model.train()
        total, batches = 0.0, 0
        for words, targets, lengths in loader:
            words, targets = words.to(device), targets.to(device)  # lengths stay on the CPU, as packing wants
            logits = model(words, lengths)
            loss = criterion(logits.reshape(-1, tags), targets.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        model.eval()
        correct = counted = 0
        with torch.no_grad():
            for words, targets, lengths in loader:
                words, targets = words.to(device), targets.to(device)
                pred = model(words, lengths).argmax(-1)
                real = targets != PAD_TAG
                correct += (pred[real] == targets[real]).sum().item()
                counted += real.sum().item()
        print(f"epoch {epoch} loss: {total / batches:.8f} accuracy: {correct / counted:.4f}")
    print(f"padding row still zero: {bool((model.embed.weight[PAD_WORD] == 0).all())}")
    print(f"parameters on: {next(model.parameters()).device}")


if __name__ == "__main__":
    main()
