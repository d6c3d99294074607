"""A minimal GPT-2-style character model, written the way minGPT/nanoGPT write it for PyTorch 1.13.

An ordinary PyTorch program (oar runs it through `python -m oar.compat`): hand-written causal
self-attention (PyTorch 1.13 has no F.scaled_dot_product_attention) with a torch.tril buffer mask,
.view/.transpose/.contiguous head splitting, F.gelu(approximate='tanh'), weight tying
(lm_head.weight = wte.weight), model.apply(_init_weights) with nn.init.normal_/zeros_, AdamW with
parameter groups with and without weight decay, clip_grad_norm_, and generate() under @torch.no_grad
with torch.topk filtering and torch.multinomial(F.softmax(logits / temperature)); --device picks the device.

The weights are drawn again from a NumPy RandomState after _init_weights (same distributions), and the
batches from NumPy, so the printed losses depend on nothing else and can be compared with another
framework's. generate(top_k=1) is deterministic and printed as the greedy sample.
"""
import argparse
import math

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F

TEXT = "the quick brown fox jumps over the lazy dog. " * 40


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.n_head, self.n_embd = n_head, n_embd
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, vocab, block_size=32, n_layer=2, n_head=4, n_embd=48):
        super().__init__()
        self.block_size = block_size
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            h=nn.ModuleList([Block(n_embd, n_head, block_size) for _ in range(n_layer)]),
            ln_f=nn.LayerNorm(n_embd),
        ))
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith("c_proj.weight"):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device).unsqueeze(0)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas):
        decay, no_decay = set(), set()
        for mn, m in self.named_modules():
            for pn, p in m.named_parameters(recurse=False):
                fpn = f"{mn}.{pn}" if mn else pn
                if pn.endswith("bias") or isinstance(m, (nn.LayerNorm, nn.Embedding)):
                    no_decay.add(fpn)
                elif isinstance(m, nn.Linear):
                    decay.add(fpn)
        decay.remove("lm_head.weight")  # tied to wte, which is in no_decay (as minGPT)
        param_dict = dict(self.named_parameters())
        assert not decay & no_decay and not param_dict.keys() - (decay | no_decay)
        groups = [{"params": [param_dict[pn] for pn in sorted(decay)], "weight_decay": weight_decay},
                  {"params": [param_dict[pn] for pn in sorted(no_decay)], "weight_decay": 0.0}]
        return torch.optim.AdamW(groups, lr=learning_rate, betas=betas)

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.block_size else idx[:, -self.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :] / temperature
            if top_k is not None:
                v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                logits[logits < v[:, [-1]]] = -float("Inf")
            probs = F.softmax(logits, dim=-1)
            idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
        return idx


def numpy_init(model, seed):
    """_init_weights' distributions, drawn from NumPy in parameter-name order."""
    rng = np.random.RandomState(seed)
    n_layer = len(model.transformer.h)
    with torch.no_grad():
        for name, p in sorted(model.named_parameters()):
            if name.endswith("bias"):
                p.zero_()
            elif ".ln_" in name:
                p.fill_(1.0)
            else:
                std = 0.02 / math.sqrt(2 * n_layer) if name.endswith("c_proj.weight") else 0.02
                p.copy_(torch.tensor(rng.normal(0.0, std, size=tuple(p.shape)), dtype=torch.float32))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--init-seed", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    device = torch.device(args.device)

    chars = sorted(set(TEXT))
    stoi = {c: i for i, c in enumerate(chars)}
    data = np.array([stoi[c] for c in TEXT], np.int64)
    model = GPT(len(chars))
    numpy_init(model, args.init_seed)
    model.to(device)
    print(f"weights tied: {model.lm_head.weight is model.transformer.wte.weight}")
    optimizer = model.configure_optimizers(0.1, 3e-3, (0.9, 0.95))
    print("parameter groups:", [len(g["params"]) for g in optimizer.param_groups])

    rng = np.random.RandomState(args.seed)
    for step in range(args.steps):
        ix = rng.randint(0, len(data) - 33, size=16)
        x = torch.from_numpy(np.stack([data[i:i + 32] for i in ix])).to(device)
        y = torch.from_numpy(np.stack([data[i + 1:i + 33] for i in ix])).to(device)
        _, loss = model(x, y)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        if step % 5 == 0 or step == args.steps - 1:
            print(f"step {step} loss: {loss.item():.8f} grad norm {grad_norm.item():.6f}")
    model.eval()
    start = torch.tensor([[stoi["t"]]], dtype=torch.long, device=device)
    greedy = model.generate(start, 30, top_k=1)[0].tolist()
    print("greedy sample:", repr("".join(chars[i] for i in greedy)))
    sampled = model.generate(start, 30, temperature=0.8, top_k=5)
    print(f"sampled {sampled.shape[1]} characters, all in the vocabulary: {bool((sampled < len(chars)).all())}")
    print(f"parameters on: {next(model.parameters()).device}")


if __name__ == "__main__":
    main()
