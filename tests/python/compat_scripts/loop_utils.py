"""Training-loop utilities in an ordinary PyTorch 1.13 program: hooks, a gradient penalty, gradient clipping and
accumulation, torch.utils.data, early stopping and learning-rate plateaus, reproducibility and printing.

- Forward pre-hooks, forward hooks (one replacing the output) and full backward hooks collect activations and
  gradients; handles remove them.
- A WGAN-GP critic step: `torch.autograd.grad(create_graph=True, only_inputs=True)` at interpolates, the
  penalty ((|grad|_2 - 1)^2) backpropagated with the critic loss, `clip_grad_value_`, `parameters_to_vector` /
  `vector_to_parameters`, and `backward(inputs=...)` for a partial update.
- torch.utils.data: a Dataset returning dicts, `random_split` with a Generator, Subset, ConcatDataset,
  WeightedRandomSampler, a collate_fn returning dicts, `DataLoader(num_workers=2, persistent_workers=True,
  pin_memory=False, drop_last=True, prefetch_factor=2)` for two epochs.
- A classifier (Linear-BatchNorm1d-ReLU-Linear) trained with gradient accumulation (`loss / accum`,
  `zero_grad(set_to_none=True)`), SGD with Nesterov momentum, clip_grad_norm_, ReduceLROnPlateau and early
  stopping that keeps `copy.deepcopy(model.state_dict())`.
- `torch.manual_seed` / `torch.Generator().manual_seed` / get_rng_state reproducibility, `torch.set_printoptions`,
  and printing modules.

Weights come from a NumPy RandomState and the train / validation split used for the compared losses from NumPy
(random_split's own draw is framework-specific). --device picks the device.
"""
import argparse
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import ConcatDataset, DataLoader, Dataset, Subset, WeightedRandomSampler, random_split


class DictDataset(Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"x": self.x[i], "y": self.y[i], "idx": i}


def collate(batch):
    return {"x": torch.stack([b["x"] for b in batch]), "y": torch.tensor([b["y"] for b in batch]),
            "idx": [b["idx"] for b in batch]}


class Critic(nn.Module):
    def __init__(self, d=8, h=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, h), nn.Tanh(), nn.Linear(h, h), nn.Softplus(), nn.Linear(h, 1))

    def forward(self, x):
        return self.net(x)


class Classifier(nn.Module):
    def __init__(self, d=8, h=32, c=3):
        super().__init__()
        self.fc1 = nn.Linear(d, h)
        self.bn = nn.BatchNorm1d(h)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(h, c)
        self.temperature = nn.ParameterList([nn.Parameter(torch.ones(1))])

    def forward(self, x):
        return self.fc2(self.act(self.bn(self.fc1(x)))) / self.temperature[0]


def numpy_weights(model, seed):
    rs = np.random.RandomState(seed)
    state = {}
    for k, v in model.state_dict().items():
        if v.dtype == torch.float32 and "running_var" not in k and "temperature" not in k:
            state[k] = torch.from_numpy((rs.standard_normal(tuple(v.shape)) * 0.3).astype(np.float32))
        else:
            state[k] = v.clone()
    model.load_state_dict(state)


def gradient_penalty(critic, real, fake):
    alpha = torch.from_numpy(np.random.RandomState(11).rand(real.size(0), 1).astype(np.float32)).to(real.device)
    interp = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
    out = critic(interp)
    grads = torch.autograd.grad(outputs=out, inputs=interp, grad_outputs=torch.ones_like(out),
                                create_graph=True, retain_graph=True, only_inputs=True)[0]
    return ((grads.view(grads.size(0), -1).norm(2, dim=1) - 1) ** 2).mean()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.manual_seed(0)
    torch.set_printoptions(precision=3, sci_mode=False)
    print(torch.tensor([1e-5, 123.456789, 1e6]))
    torch.set_printoptions(profile="default")
    print(torch.tensor([1e-5, 123.456789, 1e6]))
    rs = np.random.RandomState(0)
    n, d = 240, 8
    X = torch.from_numpy(rs.standard_normal((n, d)).astype(np.float32))
    Y = torch.from_numpy((X.numpy() @ rs.standard_normal((d, 3))).argmax(1).astype(np.int64))

    # ---- hooks ----
    model = Classifier()
    numpy_weights(model, 1)
    model.to(device)
    print(model)
    acts, grads, shapes = {}, {}, []
    handles = [
        model.fc1.register_forward_hook(lambda m, i, o: acts.__setitem__("fc1", o.detach().clone())),
        model.fc2.register_full_backward_hook(lambda m, gi, go: grads.__setitem__("fc2", (gi[0].detach().clone(),
                                                                                           go[0].detach().clone()))),
        model.register_forward_pre_hook(lambda m, inp: shapes.append(tuple(inp[0].shape))),
        model.act.register_forward_hook(lambda m, i, o: o * 2),
    ]
    xb, yb = X[:16].to(device), Y[:16].to(device)
    loss = F.cross_entropy(model(xb), yb)
    loss.backward()
    print(f"hooked loss {loss.item():.6f}")
    grad_in, grad_out = grads["fc2"]
    print(f"activation sum {acts['fc1'].abs().sum().item():.4f} grad_input sum {grad_in.abs().sum().item():.6f} "
          f"grad_output sum {grad_out.abs().sum().item():.6f} pre-hook saw {shapes}")
    for h in handles:
        h.remove()
    model.zero_grad(set_to_none=True)
    print("gradient after zero_grad(set_to_none=True):", model.fc1.weight.grad)

    # ---- WGAN-GP critic ----
    critic = Critic()
    numpy_weights(critic, 2)
    critic.to(device)
    opt_c = torch.optim.Adam(critic.parameters(), lr=1e-3, betas=(0.5, 0.9))
    real = X[:32].to(device)
    fake = torch.from_numpy(np.random.RandomState(3).standard_normal((32, d)).astype(np.float32)).to(device)
    for it in range(4):
        opt_c.zero_grad()
        gp = gradient_penalty(critic, real, fake)
        loss = critic(fake).mean() - critic(real).mean() + 10 * gp
        loss.backward()
        torch.nn.utils.clip_grad_value_(critic.parameters(), clip_value=0.5)
        opt_c.step()
        vec = torch.nn.utils.parameters_to_vector(critic.parameters())
        print(f"critic step {it} loss {loss.item():.6f} penalty {gp.item():.6f} weight norm {vec.norm().item():.6f}")
    print("gradients clipped:", max(p.grad.abs().max().item() for p in critic.parameters()) <= 0.5)
    torch.nn.utils.vector_to_parameters(vec * 0.5, critic.parameters())
    print(f"halved weights: {critic.net[0].weight.abs().sum().item():.6f}")
    last = critic.net[-1]
    critic.zero_grad(set_to_none=True)
    critic(real).mean().backward(inputs=[last.weight])
    print("backward(inputs=) reached only the chosen weight:", last.weight.grad is not None,
          critic.net[0].weight.grad is None)

    # ---- data utilities ----
    ds = DictDataset(X, Y.tolist())
    train_ds, val_ds = random_split(ds, [200, 40], generator=torch.Generator().manual_seed(42))
    again, _ = random_split(ds, [200, 40], generator=torch.Generator().manual_seed(42))
    print("split:", len(train_ds), len(val_ds), "reproducible:", train_ds.indices == again.indices)
    cat = ConcatDataset([Subset(ds, list(range(10))), Subset(ds, [20, 21])])
    print("concat:", len(cat), cat[11]["idx"], cat.cumulative_sizes)
    counts = np.bincount([ds[i]["y"] for i in train_ds.indices], minlength=3)
    weights = [1.0 / counts[ds[i]["y"]] for i in train_ds.indices]
    sampler = WeightedRandomSampler(weights, num_samples=len(weights), replacement=True,
                                    generator=torch.Generator().manual_seed(1))
    loader = DataLoader(train_ds, batch_size=16, sampler=sampler, collate_fn=collate, num_workers=2,
                        persistent_workers=True, pin_memory=False, drop_last=True, prefetch_factor=2)
    seen = []
    for epoch in range(2):
        for batch in loader:
            seen.append(batch["y"])
    ys = torch.cat(seen)
    balance = torch.bincount(ys, minlength=3).float() / len(ys)
    print("batches:", len(loader), "balanced classes:", bool((balance - 1 / 3).abs().max() < 0.15),
          "batch keys:", sorted(batch.keys()), tuple(batch["x"].shape), type(batch["idx"]).__name__)

    # ---- accumulation, plateau, early stopping ----
    model = Classifier()
    numpy_weights(model, 4)
    model.to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-4)
    plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=0, threshold=0.05)
    perm = np.random.RandomState(9).permutation(n)
    Xd, Yd = X.to(device), Y.to(device)
    tr, va = torch.from_numpy(perm[:200]).to(device), torch.from_numpy(perm[200:]).to(device)
    accum, best, best_state, bad = 2, float("inf"), None, 0
    for epoch in range(16):
        model.train()
        opt.zero_grad(set_to_none=True)
        for k, s in enumerate(range(0, 200, 20)):
            bi = tr[s:s + 20]
            loss = F.cross_entropy(model(Xd[bi]), Yd[bi]) / accum
            loss.backward()
            if (k + 1) % accum == 0:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=5.0)
                opt.step()
                opt.zero_grad(set_to_none=True)
        model.eval()
        with torch.no_grad():
            logits = model(Xd[va])
            val_loss = F.cross_entropy(logits, Yd[va]).item()
            val_acc = (logits.argmax(1) == Yd[va]).float().mean().item()
        plateau.step(val_loss)
        print(f"epoch {epoch} validation loss {val_loss:.6f} accuracy {val_acc:.4f} lr {opt.param_groups[0]['lr']:.5f}")
        if val_loss < best - 5e-3:  # early stopping with a min_delta
            best, bad = val_loss, 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            bad += 1
            if bad >= 2:
                print("early stop at epoch", epoch)
                break
    model.load_state_dict(best_state)
    with torch.no_grad():
        print(f"restored best: validation loss {F.cross_entropy(model(Xd[va]), Yd[va]).item():.6f} best {best:.6f}")
    with torch.no_grad():
        model.fc1.weight.add_(1.0)
    print("kept state is a copy:", not torch.equal(best_state["fc1.weight"], model.fc1.weight),
          "batches tracked:", int(best_state["bn.num_batches_tracked"]))

    # ---- reproducibility ----
    torch.manual_seed(123)
    a = torch.randn(3)
    torch.manual_seed(123)
    same_seed = torch.equal(a, torch.randn(3))
    g = torch.Generator().manual_seed(7)
    c = torch.rand(3, generator=g)
    g.manual_seed(7)
    same_generator = torch.equal(c, torch.rand(3, generator=g))
    state = torch.get_rng_state()
    e = torch.rand(2)
    torch.set_rng_state(state)
    print("reproducible:", same_seed, same_generator, torch.equal(e, torch.rand(2)), g.initial_seed())
    print(nn.ModuleDict({"a": nn.Linear(1, 1), "b": nn.ModuleList([nn.ReLU(), nn.Sequential()])}))
    print(nn.Parameter(torch.tensor([1.5, 2.0])))
    print(f"parameters on: {next(model.parameters()).device}")


if __name__ == "__main__":
    main()
