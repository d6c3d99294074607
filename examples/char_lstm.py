"""A character-level LSTM language model, trained on the GNU GPL v3 text that ships with the system.

The text (/usr/share/common-licenses/GPL-3, about 35 KB) is read as bytes;
its distinct bytes are the vocabulary. The last 10% is held out. Each step
trains on a batch of random windows of --seq-len characters predicting the
next character; each epoch prints the training loss and the held-out loss in
nats and bits per character, and the end prints text sampled from the model.
--static runs each training step (forward, loss, backward, Adam update) as
one graph through oar.jit.TrainGraph. The device comes from --device, or
OAR_DEVICE (cpu, opencl, ...).

    python examples/char_lstm.py [--epochs 3] [--steps 100] [--static] [--device opencl]

gpt.py reuses this file's data, progress bar and command line.
"""
import argparse
import math
import os
import sys
import time
from dataclasses import dataclass, field

import numpy as np

import oar
import oar.nn as nn
import oar.nn.functional as F

DEFAULT_TEXT = "/usr/share/common-licenses/GPL-3"


# ---- data ----
class CharText:
    """A text file as byte ids: vocabulary, train / held-out split, random training windows."""

    def __init__(self, path=DEFAULT_TEXT, val_fraction=0.1):
        with open(path, "rb") as f:
            data = np.frombuffer(f.read(), dtype=np.uint8)
        self.vocab = sorted(set(data.tolist()))  # the byte values that occur
        lookup = np.zeros(256, dtype=np.int64)
        lookup[self.vocab] = np.arange(len(self.vocab))
        ids = lookup[data]
        n_val = max(int(len(ids) * val_fraction), 2)
        self.train_ids, self.val_ids = ids[:-n_val], ids[-n_val:]

    @property
    def vocab_size(self):
        return len(self.vocab)

    def encode(self, text):
        index = {b: i for i, b in enumerate(self.vocab)}
        return [index[b] for b in text.encode("utf-8") if b in index]

    def decode(self, ids):
        return bytes(self.vocab[i] for i in ids).decode("utf-8", errors="replace")

    def random_batch(self, rng, batch_size, seq_len):
        """(inputs, targets) int64 [batch_size, seq_len]: windows at random offsets, targets shifted by one."""
        starts = rng.integers(0, len(self.train_ids) - seq_len - 1, size=batch_size)
        windows = self.train_ids[starts[:, None] + np.arange(seq_len + 1)]
        return windows[:, :-1], windows[:, 1:]

    def val_batches(self, batch_size, seq_len):
        """The held-out text cut into consecutive windows, batch_size at a time (the same every call)."""
        n = (len(self.val_ids) - 1) // seq_len
        x = self.val_ids[:n * seq_len].reshape(n, seq_len)
        y = self.val_ids[1:n * seq_len + 1].reshape(n, seq_len)
        for i in range(0, n, batch_size):
            yield x[i:i + batch_size], y[i:i + batch_size]


# ---- command line, progress ----
def base_parser(description, **defaults):
    """The options both text examples share; `defaults` overrides the sizes per model."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--device", default=os.environ.get("OAR_DEVICE", "cpu"),
                   help="cpu, opencl, ... (default: $OAR_DEVICE or cpu)")
    p.add_argument("--epochs", type=int, default=defaults.get("epochs", 3))
    p.add_argument("--steps", type=int, default=defaults.get("steps", 100), help="training steps per epoch")
    p.add_argument("--batch-size", type=int, default=defaults.get("batch_size", 32))
    p.add_argument("--seq-len", type=int, default=defaults.get("seq_len", 32))
    p.add_argument("--lr", type=float, default=defaults.get("lr", 3e-3))
    p.add_argument("--dropout", type=float, default=defaults.get("dropout", 0.0))
    p.add_argument("--static", action="store_true", help="run each training step as one graph (oar.jit.TrainGraph)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sample-len", type=int, default=200, help="characters to sample after training (0: none)")
    p.add_argument("--prompt", default="The GNU General Public License")
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--text", default=DEFAULT_TEXT, help="the training text (read as bytes)")
    p.add_argument("--quiet", action="store_true", help="no progress bar and no per-epoch lines")
    return p


def progress(epoch, epochs, step, steps, loss, rate, width=24):
    """One progress bar line on stderr, redrawn in place on a terminal (else written once, when complete)."""
    stream = sys.stderr
    if step != steps and not stream.isatty():
        return
    filled = int(width * step / steps)
    bar = "#" * filled + "." * (width - filled)
    stream.write(f"\repoch {epoch}/{epochs} [{bar}] {step}/{steps} loss {loss:.4f} "
                 f"({loss / math.log(2):.3f} bpc) {rate:6.1f} steps/s" + ("\n" if step == steps else ""))
    stream.flush()


@dataclass
class TrainResult:
    """What train() returns: per-epoch mean training loss and held-out loss (nats per character)."""
    train_losses: list = field(default_factory=list)
    val_losses: list = field(default_factory=list)
    sample: str = ""
    seconds: float = 0.0

    @property
    def loss(self):
        """The final held-out loss (nats per character)."""
        return self.val_losses[-1]

    @property
    def bpc(self):
        """The final held-out loss in bits per character."""
        return self.loss / math.log(2)


def gumbel_argmax(logits, temperature):
    """A sample from softmax(logits / temperature) (a 1-D tensor), drawn on the logits' device."""
    u = oar.rand(*logits.shape, device=logits.device)
    return int((logits / temperature - oar.log(-oar.log(u))).argmax().item())


def fit(model, text, args, forward_loss, log=print):
    """The training loop both examples share: Adam on random windows, per-epoch training and held-out loss.

    forward_loss(model, x, y) -> mean cross-entropy of the next-character predictions."""
    device = args.device
    optimizer = oar.optim.Adam(model.parameters(), lr=args.lr)

    def step(x, y):
        loss = forward_loss(model, x, y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss

    train_step = oar.jit.TrainGraph(step, optimizer, model=model) if args.static else step
    rng = np.random.default_rng(args.seed)
    result = TrainResult()
    start = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        total, t0 = 0.0, time.perf_counter()
        for s in range(1, args.steps + 1):
            xb, yb = text.random_batch(rng, args.batch_size, args.seq_len)
            loss = train_step(oar.tensor(xb, device=device), oar.tensor(yb, device=device))
            total += loss.item()
            if not args.quiet:
                progress(epoch, args.epochs, s, args.steps, total / s, s / (time.perf_counter() - t0))
        result.train_losses.append(total / args.steps)
        result.val_losses.append(evaluate(model, text, args, forward_loss))
        if not args.quiet:
            log(f"epoch {epoch}: train loss {result.train_losses[-1]:.4f} "
                f"({result.train_losses[-1] / math.log(2):.3f} bpc), held-out loss {result.val_losses[-1]:.4f} "
                f"({result.val_losses[-1] / math.log(2):.3f} bpc)")
    result.seconds = time.perf_counter() - start
    return result


def evaluate(model, text, args, forward_loss):
    """Mean cross-entropy (nats per character) over the held-out text, in eval mode."""
    model.eval()
    total, count = 0.0, 0
    with oar.no_grad():
        for xb, yb in text.val_batches(args.batch_size, args.seq_len):
            loss = forward_loss(model, oar.tensor(xb, device=args.device), oar.tensor(yb, device=args.device))
            total += loss.item() * xb.size
            count += xb.size
    return total / count


# ---- the model ----
class CharLSTM(nn.Module):
    """Embedding -> LSTM -> Linear over the vocabulary."""

    def __init__(self, vocab_size, embed=32, hidden=128, layers=1, dropout=0.0):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed)
        self.lstm = nn.LSTM(embed, hidden, num_layers=layers, dropout=dropout if layers > 1 else 0.0,
                            batch_first=True)
        self.head = nn.Linear(hidden, vocab_size)

    def forward(self, x, state=None):
        """x [B, T] ids -> (logits [B, T, V], (h, c))."""
        out, state = self.lstm(self.embed(x), state)
        return self.head(out), state


def lstm_loss(model, x, y):
    logits, _ = model(x)
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def sample(model, text, args):
    """args.sample_len characters after args.prompt, one at a time, carrying the LSTM state."""
    model.eval()
    ids = text.encode(args.prompt) or [0]
    out = []
    with oar.no_grad():
        logits, state = model(oar.tensor([ids], device=args.device))
        for _ in range(args.sample_len):
            nxt = gumbel_argmax(logits[0, -1], args.temperature)
            out.append(nxt)
            logits, state = model(oar.tensor([[nxt]], device=args.device), state)
    return text.decode(ids + out)


def parse_args(argv=None):
    p = base_parser(__doc__.splitlines()[0])
    p.add_argument("--embed", type=int, default=32)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--layers", type=int, default=1)
    return p.parse_args(argv)


def run(args, make_model, loss_fn, sample_fn=None):
    """Seeds, loads the text, builds `make_model(vocab_size)` on args.device, trains it with `loss_fn`
    and samples (`sample_fn`, this file's by default): the shared body of both examples. Returns a
    TrainResult (final loss: .loss, .bpc)."""
    oar.manual_seed(args.seed)
    text = CharText(args.text)
    model = make_model(text.vocab_size).to(args.device)
    if not args.quiet:
        n_params = sum(p.numel() for p in model.parameters())
        print(f"{args.text}: {len(text.train_ids)} training / {len(text.val_ids)} held-out characters, "
              f"vocabulary {text.vocab_size} (uniform: {math.log2(text.vocab_size):.2f} bpc); "
              f"{n_params} parameters on {args.device}{' (static)' if args.static else ''}")
    result = fit(model, text, args, loss_fn)
    if args.sample_len > 0:
        result.sample = (sample_fn or sample)(model, text, args)
    return result


def report(result):
    print(f"final held-out loss {result.loss:.4f} ({result.bpc:.3f} bits per character) in {result.seconds:.1f} s")
    if result.sample:
        print("sample:\n" + result.sample)
    return result


def train(args):
    """Trains a CharLSTM as `args` say (see parse_args); returns a TrainResult (final loss: .loss, .bpc)."""
    return run(args, lambda vocab: CharLSTM(vocab, args.embed, args.hidden, args.layers, args.dropout), lstm_loss)


def main(argv=None):
    return report(train(parse_args(argv)))


if __name__ == "__main__":
    main()
