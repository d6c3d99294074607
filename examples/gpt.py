"""A small decoder-only transformer (GPT) character model, trained on the GNU GPL v3 text that ships with the system.

Token and position embeddings, then pre-norm blocks of causal multi-head
self-attention (oar.nn.MultiheadAttention) and a GELU feed-forward layer, a
final LayerNorm and a linear head over the byte vocabulary. Data, training
loop and command line are char_lstm.py's: random windows of --seq-len
characters from /usr/share/common-licenses/GPL-3, held-out loss per epoch in
bits per character, a sample at the end; --static trains through
oar.jit.TrainGraph; the device comes from --device or OAR_DEVICE.

    python examples/gpt.py [--epochs 3] [--steps 100] [--static] [--device opencl]
"""
import os
import sys

import oar
import oar.nn as nn
import oar.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from char_lstm import base_parser, gumbel_argmax, report, run  # noqa: E402


class Block(nn.Module):
    """x + attn(ln1(x)) then x + mlp(ln2(x)), attention restricted to earlier positions."""

    def __init__(self, d_model, heads, dropout):
        super().__init__()
        self.ln1 = nn.LayerNorm(d_model)
        self.attn = nn.MultiheadAttention(d_model, heads, dropout=dropout, batch_first=True)
        self.ln2 = nn.LayerNorm(d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model),
                                 nn.Dropout(dropout))

    def forward(self, x, causal_mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=causal_mask, is_causal=True, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size=32, d_model=64, heads=4, layers=2, dropout=0.0):
        super().__init__()
        self.block_size = block_size
        self.tok = nn.Embedding(vocab_size, d_model)
        self.pos = nn.Embedding(block_size, d_model)
        self.drop = nn.Dropout(dropout)
        self.blocks = nn.ModuleList([Block(d_model, heads, dropout) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size)
        # -inf above the diagonal: position i sees positions 0..i (not saved with the weights)
        self.register_buffer("causal_mask", nn.Transformer.generate_square_subsequent_mask(block_size),
                             persistent=False)
        for emb in (self.tok, self.pos):
            nn.init.normal_(emb.weight, std=0.02)

    def forward(self, x):
        """x [B, T] ids (T <= block_size) -> logits [B, T, V]."""
        T = x.shape[1]
        if T > self.block_size:
            raise ValueError(f"GPT: sequence length {T} exceeds the block size {self.block_size}")
        positions = oar.arange(T, device=x.device)
        h = self.drop(self.tok(x) + self.pos(positions))
        mask = self.causal_mask[:T, :T]
        for block in self.blocks:
            h = block(h, mask)
        return self.head(self.ln_f(h))


def gpt_loss(model, x, y):
    logits = model(x)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def sample(model, text, args):
    """args.sample_len characters after args.prompt, each from the last block_size characters."""
    model.eval()
    ids = text.encode(args.prompt) or [0]
    with oar.no_grad():
        for _ in range(args.sample_len):
            context = ids[-model.block_size:]
            logits = model(oar.tensor([context], device=args.device))
            ids.append(gumbel_argmax(logits[0, -1], args.temperature))
    return text.decode(ids)


def parse_args(argv=None):
    p = base_parser(__doc__.splitlines()[0], lr=3e-3, dropout=0.0)
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=2)
    return p.parse_args(argv)


def train(args):
    """Trains a GPT as `args` say (see parse_args); returns char_lstm.TrainResult (final loss: .loss, .bpc)."""
    return run(args, lambda vocab: GPT(vocab, args.seq_len, args.d_model, args.heads, args.layers, args.dropout),
               gpt_loss, sample)


def main(argv=None):
    return report(train(parse_args(argv)))


if __name__ == "__main__":
    main()
