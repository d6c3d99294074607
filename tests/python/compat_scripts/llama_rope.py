"""LLaMA's attention with rotary position embeddings, written as Meta's llama/model.py writes it (complex
freqs_cis from torch.polar, torch.view_as_complex / view_as_real), on a tiny model with NumPy weights.

Prints, as JSON, the rotated queries, the attention output and the gradients of a loss with respect to the
input and the weights, so a run under `python -m oar.compat` can be compared with one under PyTorch.
"""
import argparse
import json
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn


def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)  # type: ignore
    freqs = torch.outer(t, freqs).float()  # type: ignore
    freqs_cis = torch.polar(torch.ones_like(freqs), freqs)  # complex64
    return freqs_cis


def reshape_for_broadcast(freqs_cis: torch.Tensor, x: torch.Tensor):
    ndim = x.ndim
    assert 0 <= 1 < ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class Attention(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = dim // n_heads
        self.wq = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wk = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(dim, n_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(n_heads * self.head_dim, dim, bias=False)

    def forward(self, x, start_pos, freqs_cis, mask):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq.view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_heads, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)
        self.rotated = xq
        xq, keys, values = xq.transpose(1, 2), xk.transpose(1, 2), xv.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask  # (bs, n_local_heads, seqlen, cache_len + seqlen)
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, values)  # (bs, n_local_heads, seqlen, head_dim)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.wo(output)


class Transformer(nn.Module):
    def __init__(self, dim, n_heads, max_seq_len):
        super().__init__()
        self.attention = Attention(dim, n_heads)
        self.freqs_cis = precompute_freqs_cis(dim // n_heads, max_seq_len * 2)

    def forward(self, h, start_pos):
        _bsz, seqlen, _ = h.shape
        self.freqs_cis = self.freqs_cis.to(h.device)
        freqs_cis = self.freqs_cis[start_pos: start_pos + seqlen]
        mask = torch.full((1, 1, seqlen, seqlen), float("-inf"), device=h.device)
        mask = torch.triu(mask, diagonal=start_pos + 1).type_as(h)
        return self.attention(h, start_pos, freqs_cis, mask)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    dim, n_heads, bsz, seqlen, start_pos = 32, 4, 2, 6, 3
    model = Transformer(dim, n_heads, max_seq_len=16).to(args.device)
    with torch.no_grad():
        for lin in (model.attention.wq, model.attention.wk, model.attention.wv, model.attention.wo):
            lin.weight.copy_(torch.tensor(rng.standard_normal(tuple(lin.weight.shape)).tolist()) / math.sqrt(dim))
    print("parameters on", next(model.parameters()).device)
    x = torch.tensor(rng.standard_normal((bsz, seqlen, dim)).tolist(), device=args.device, requires_grad=True)
    target = torch.tensor(rng.standard_normal((bsz, seqlen, dim)).tolist(), device=args.device)
    out = model(x, start_pos)
    loss = ((out - target) ** 2).mean()
    loss.backward()
    fc = model.freqs_cis[start_pos: start_pos + seqlen]
    result = {
        "freqs_cis": torch.view_as_real(fc).cpu().tolist(),
        "freqs_dtype": str(fc.dtype).replace("oar.", "torch."),
        "is_complex": bool(torch.is_complex(fc)),
        "rotated": model.attention.rotated.detach().cpu().tolist(),
        "out": out.detach().cpu().tolist(),
        "loss": loss.item(),
        "grad_x": x.grad.cpu().tolist(),
        "grad_wq": model.attention.wq.weight.grad.cpu().tolist(),
        "grad_wk": model.attention.wk.weight.grad.cpu().tolist(),
    }
    print("loss", f"{loss.item():.6f}")
    print("RESULT " + json.dumps(result))


if __name__ == "__main__":
    main()
