"""A character-level CNN + BiGRU tagger with a linear-chain CRF, decoded by Viterbi.

An ordinary PyTorch program (oar runs it through `python -m oar.compat`): nn.Embedding(padding_idx=0)
over characters, nn.Conv1d with a max over each word's real characters (masked_fill with -inf, then
torch.where to zero empty slots), pack_padded_sequence(enforce_sorted=False) into a 2-layer
bidirectional nn.GRU, pad_packed_sequence(total_length=), a CRF whose partition function is a
torch.logsumexp recursion and whose gold path score is gathered, masked steps kept with torch.where,
an auxiliary per-token cross entropy masked with masked_fill, Adam, and Viterbi decoding with
max over a dim and a back-pointer walk; --device picks the device.

Data are synthetic (a word's tag depends on its first character and on whether the previous tag is 3), drawn
from NumPy (--seed), and the weights from a NumPy RandomState (--init-seed), so the printed losses depend
on nothing else and can be compared with another framework's.
"""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

NCHAR, MAX_WORD, NTAG = 20, 6, 4


def make_data(n, seed):
    rng = np.random.RandomState(seed)
    lens = rng.randint(3, 11, size=n)
    chars = np.zeros((n, lens.max(), MAX_WORD), np.int64)
    tags = np.zeros((n, lens.max()), np.int64)
    for i, length in enumerate(lens):
        for j in range(length):
            word_len = rng.randint(1, MAX_WORD + 1)
            chars[i, j, :word_len] = rng.randint(1, NCHAR, size=word_len)
            prev = tags[i, j - 1] if j else 0
            tags[i, j] = (chars[i, j, 0] // 5 + (prev == 3)) % NTAG  # the CRF learns the transition part
    return torch.from_numpy(chars), torch.from_numpy(tags), torch.from_numpy(lens)


class CRF(nn.Module):
    def __init__(self, ntag):
        super().__init__()
        self.trans = nn.Parameter(torch.zeros(ntag, ntag))
        self.start = nn.Parameter(torch.zeros(ntag))
        self.end = nn.Parameter(torch.zeros(ntag))

    def nll(self, em, tags, mask):
        """Mean negative log-likelihood of the gold tags; em (B, T, K), mask (B, T) bool."""
        alpha = self.start + em[:, 0]
        for t in range(1, em.size(1)):
            nxt = torch.logsumexp(alpha.unsqueeze(2) + self.trans.unsqueeze(0) + em[:, t].unsqueeze(1), dim=1)
            alpha = torch.where(mask[:, t].unsqueeze(1), nxt, alpha)
        log_z = torch.logsumexp(alpha + self.end, dim=-1)
        score = self.start[tags[:, 0]] + em[:, 0].gather(1, tags[:, :1]).squeeze(1)
        for t in range(1, em.size(1)):
            step = self.trans[tags[:, t - 1], tags[:, t]] + em[:, t].gather(1, tags[:, t:t + 1]).squeeze(1)
            score = score + step.masked_fill(~mask[:, t], 0.0)
        last = tags.gather(1, (mask.sum(1) - 1).unsqueeze(1)).squeeze(1)
        return (log_z - score - self.end[last]).mean()

    def viterbi(self, em, mask):
        score, history = self.start + em[:, 0], []
        for t in range(1, em.size(1)):
            best, idx = (score.unsqueeze(2) + self.trans.unsqueeze(0)).max(dim=1)
            score = torch.where(mask[:, t].unsqueeze(1), best + em[:, t], score)
            history.append(idx)
        best_last = (score + self.end).argmax(dim=-1)
        paths = []
        for b, length in enumerate(mask.sum(1).tolist()):
            tag = int(best_last[b])
            path = [tag]
            for t in range(length - 2, -1, -1):
                tag = int(history[t][b, tag])
                path.append(tag)
            paths.append(path[::-1])
        return paths


class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.char_embed = nn.Embedding(NCHAR, 12, padding_idx=0)
        self.conv = nn.Conv1d(12, 16, kernel_size=3, padding=1)
        self.gru = nn.GRU(16, 20, num_layers=2, bidirectional=True, batch_first=True)
        self.proj = nn.Linear(40, NTAG)
        self.crf = CRF(NTAG)

    def forward(self, chars, lengths):
        B, T, W = chars.shape
        flat = chars.view(B * T, W)
        c = F.relu(self.conv(self.char_embed(flat).transpose(1, 2)))
        c = c.masked_fill((flat == 0).unsqueeze(1), float("-inf")).max(dim=2).values
        c = torch.where(torch.isinf(c), torch.zeros_like(c), c)  # padding words have no characters
        packed = pack_padded_sequence(c.view(B, T, -1), lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = self.gru(packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=T)
        return self.proj(out)


def init_weights(model, seed):
    """Framework-neutral initial weights: uniform(+-1/sqrt(fan_in)) in parameter-name order."""
    rng = np.random.RandomState(seed)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            fan_in = p.shape[1] if p.dim() > 1 else p.shape[0]
            bound = 1.0 / np.sqrt(fan_in)
            p.copy_(torch.tensor(rng.uniform(-bound, bound, size=tuple(p.shape)), dtype=torch.float32))
        model.char_embed.weight[0].zero_()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=6)
    parser.add_argument("--sentences", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--init-seed", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    device = torch.device(args.device)

    chars, tags, lengths = make_data(args.sentences, args.seed)
    model = Tagger()
    init_weights(model, args.init_seed)
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(1, args.epochs + 1):
        model.train()
        total, batches = 0.0, 0
        for i in range(0, args.sentences, args.batch_size):
            lens = lengths[i:i + args.batch_size]
            T = int(lens.max())
            ch, tg = chars[i:i + args.batch_size, :T].to(device), tags[i:i + args.batch_size, :T].to(device)
            mask = torch.arange(T, device=device).unsqueeze(0) < lens.to(device).unsqueeze(1)
            em = model(ch, lens)
            token_ce = F.cross_entropy(em.reshape(-1, NTAG), tg.reshape(-1), reduction="none").view_as(tg)
            loss = model.crf.nll(em, tg, mask) + 0.1 * token_ce.masked_fill(~mask, 0.0).sum() / mask.sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            batches += 1
        model.eval()
        with torch.no_grad():
            T = int(lengths.max())
            mask = torch.arange(T, device=device).unsqueeze(0) < lengths.to(device).unsqueeze(1)
            paths = model.crf.viterbi(model(chars.to(device), lengths), mask)
        correct = sum(int((torch.tensor(p) == tags[b, :len(p)]).sum()) for b, p in enumerate(paths))
        print(f"epoch {epoch} loss: {total / batches:.8f} viterbi accuracy: {correct / int(lengths.sum()):.4f}")
    print(f"parameters on: {next(model.parameters()).device}")


if __name__ == "__main__":
    main()
