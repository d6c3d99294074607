"""A timm-style Vision Transformer trained a few steps on synthetic images (an ordinary PyTorch 1.13 program).

PatchEmbed is a Conv2d with stride = patch size followed by `flatten(2).transpose(1, 2)`; a cls token and a
position embedding (`nn.Parameter(torch.zeros(1, n, d))`, `nn.init.trunc_normal_(std=.02)`) are prepended and
added; blocks are pre-norm attention + MLP (F.gelu) with LayerScale (`x.mul_(gamma)`, in place) and DropPath
(`x.new_empty(shape).bernoulli_(keep).div_(keep)`), run through `torch.utils.checkpoint.checkpoint`. Training:
AdamW with decay / no-decay parameter groups from `named_parameters`, LambdaLR warmup + cosine, label-smoothing
CrossEntropyLoss alternating with mixup (soft targets, `flip(0)`), clip_grad_norm_. Then `model.eval()` +
`torch.inference_mode()` top-k accuracy (`topk`, `eq`, `expand_as`, `view_as`), a torch.save / torch.load round
trip of model, optimizer and the parsed args, and load_state_dict(strict=False)'s missing / unexpected keys.

To compare frameworks, the weights come from a NumPy RandomState, the mixup coefficients from NumPy, and the
training model has drop_path_rate=0 (timm then builds Identity); DropPath itself is checked on its own, by its
statistics. --device picks the device.
"""
import argparse
import math
import os
import tempfile
from functools import partial

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint


def drop_path(x, drop_prob: float = 0., training: bool = False, scale_by_keep: bool = True):
    if drop_prob == 0. or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    if keep_prob > 0.0 and scale_by_keep:
        random_tensor.div_(keep_prob)
    return x * random_tensor


class DropPath(nn.Module):
    def __init__(self, drop_prob: float = 0., scale_by_keep: bool = True):
        super().__init__()
        self.drop_prob = drop_prob
        self.scale_by_keep = scale_by_keep

    def forward(self, x):
        return drop_path(x, self.drop_prob, self.training, self.scale_by_keep)

    def extra_repr(self):
        return f'drop_prob={round(self.drop_prob, 3):0.3f}'


class PatchEmbed(nn.Module):
    def __init__(self, img_size=16, patch_size=4, in_chans=3, embed_dim=32):
        super().__init__()
        self.img_size = (img_size, img_size)
        self.grid_size = (img_size // patch_size, img_size // patch_size)
        self.num_patches = self.grid_size[0] * self.grid_size[1]
        self.proj = nn.Conv2d(in_chans, embed_dim, kernel_size=patch_size, stride=patch_size)
        self.norm = nn.Identity()

    def forward(self, x):
        B, C, H, W = x.shape
        torch._assert(H == self.img_size[0], f"Input image height ({H}) doesn't match model ({self.img_size[0]}).")
        return self.norm(self.proj(x).flatten(2).transpose(1, 2))  # BCHW -> BNC


class Attention(nn.Module):
    def __init__(self, dim, num_heads=4, qkv_bias=True):
        super().__init__()
        self.num_heads = num_heads
        self.scale = (dim // num_heads) ** -0.5
        self.qkv = nn.Linear(dim, dim * 3, bias=qkv_bias)
        self.attn_drop = nn.Dropout(0.)
        self.proj = nn.Linear(dim, dim)
        self.proj_drop = nn.Dropout(0.)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.num_heads, C // self.num_heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv.unbind(0)
        attn = (q @ k.transpose(-2, -1)) * self.scale
        attn = self.attn_drop(attn.softmax(dim=-1))
        x = (attn @ v).transpose(1, 2).reshape(B, N, C)
        return self.proj_drop(self.proj(x))


class GELU(nn.Module):
    def forward(self, x):
        return F.gelu(x)


class Mlp(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.act = GELU()
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class LayerScale(nn.Module):
    def __init__(self, dim, init_values=1e-5, inplace=False):
        super().__init__()
        self.inplace = inplace
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    def forward(self, x):
        return x.mul_(self.gamma) if self.inplace else x * self.gamma


class Block(nn.Module):
    def __init__(self, dim, num_heads, mlp_ratio=2., init_values=0.1, drop_path=0., norm_layer=nn.LayerNorm):
        super().__init__()
        self.norm1 = norm_layer(dim)
        self.attn = Attention(dim, num_heads=num_heads)
        self.ls1 = LayerScale(dim, init_values=init_values, inplace=True)
        self.drop_path1 = DropPath(drop_path) if drop_path > 0. else nn.Identity()
        self.norm2 = norm_layer(dim)
        self.mlp = Mlp(dim, int(dim * mlp_ratio))
        self.ls2 = LayerScale(dim, init_values=init_values, inplace=True)
        self.drop_path2 = DropPath(drop_path) if drop_path > 0. else nn.Identity()

    def forward(self, x):
        x = x + self.drop_path1(self.ls1(self.attn(self.norm1(x))))
        x = x + self.drop_path2(self.ls2(self.mlp(self.norm2(x))))
        return x


class VisionTransformer(nn.Module):
    def __init__(self, num_classes=5, embed_dim=32, depth=2, num_heads=4, drop_path_rate=0.):
        super().__init__()
        norm_layer = partial(nn.LayerNorm, eps=1e-6)
        self.grad_checkpointing = True
        self.patch_embed = PatchEmbed(embed_dim=embed_dim)
        num_patches = self.patch_embed.num_patches
        self.cls_token = nn.Parameter(torch.zeros(1, 1, embed_dim))
        self.pos_embed = nn.Parameter(torch.zeros(1, num_patches + 1, embed_dim))
        dpr = [x.item() for x in torch.linspace(0, drop_path_rate, depth)]
        self.blocks = nn.Sequential(*[Block(embed_dim, num_heads, drop_path=dpr[i], norm_layer=norm_layer)
                                      for i in range(depth)])
        self.norm = norm_layer(embed_dim)
        self.head = nn.Linear(embed_dim, num_classes)
        self.register_buffer("token_ids", torch.arange(num_patches + 1), persistent=False)
        nn.init.trunc_normal_(self.pos_embed, std=.02)
        nn.init.normal_(self.cls_token, std=1e-6)
        self.apply(_init_weights)

    def no_weight_decay(self):
        return {'pos_embed', 'cls_token'}

    def forward(self, x):
        x = self.patch_embed(x)
        x = torch.cat((self.cls_token.expand(x.shape[0], -1, -1), x), dim=1)
        x = x + self.pos_embed[:, self.token_ids]
        if self.grad_checkpointing and torch.is_grad_enabled():
            for blk in self.blocks:
                x = torch.utils.checkpoint.checkpoint(blk, x, use_reentrant=False)
        else:
            x = self.blocks(x)
        return self.head(self.norm(x)[:, 0])


def _init_weights(m):
    if isinstance(m, nn.Linear):
        nn.init.trunc_normal_(m.weight, std=.02)
        nn.init.zeros_(m.bias)


def param_groups_weight_decay(model, weight_decay, no_weight_decay_list=()):
    decay, no_decay = [], []
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        if param.ndim <= 1 or name.endswith(".bias") or name in no_weight_decay_list:
            no_decay.append(param)
        else:
            decay.append(param)
    return [{'params': no_decay, 'weight_decay': 0.}, {'params': decay, 'weight_decay': weight_decay}]


def accuracy(output, target, topk=(1,)):
    maxk = min(max(topk), output.size()[1])
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.reshape(1, -1).expand_as(pred))
    return [correct[:min(k, maxk)].reshape(-1).float().sum(0) * 100. / target.size(0) for k in topk]


def mixup(x, y, lam, num_classes, smoothing=0.1):
    off = smoothing / num_classes
    y1 = torch.full((y.size(0), num_classes), off, device=y.device).scatter_(1, y.view(-1, 1), 1. - smoothing + off)
    return x.mul(lam).add_(x.flip(0).mul_(1. - lam)), y1 * lam + y1.flip(0) * (1. - lam)


def numpy_weights(model, seed):
    rs = np.random.RandomState(seed)
    sd = {}
    for k, v in model.state_dict().items():
        a = rs.standard_normal(tuple(v.shape)).astype(np.float32) * 0.1
        if k.endswith("norm1.weight") or k.endswith("norm2.weight") or k == "norm.weight":
            a += 1
        sd[k] = torch.from_numpy(a)
    return sd


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()
    device = torch.device(args.device)
    torch.manual_seed(0)
    nc = 5
    rs = np.random.RandomState(0)
    images = torch.from_numpy(rs.standard_normal((64, 3, 16, 16)).astype(np.float32))
    labels = torch.from_numpy(rs.randint(0, nc, size=64).astype(np.int64))
    images[labels == 0, 0] += 1.0  # something to learn
    images[labels == 1, 1] -= 1.0
    images, labels = images.to(device), labels.to(device)

    model = VisionTransformer(num_classes=nc)
    model.load_state_dict(numpy_weights(model, 1))
    model.to(device)
    print(model)
    print("buffer saved:", "token_ids" in model.state_dict())
    groups = param_groups_weight_decay(model, 0.05, model.no_weight_decay())
    print("parameter groups:", [len(g["params"]) for g in groups])
    opt = torch.optim.AdamW(groups, lr=2e-3)
    warm, total = 3, args.steps

    def lr_lambda(step):
        if step < warm:
            return float(step + 1) / warm
        return 0.5 * (1. + math.cos(math.pi * (step - warm) / max(1, total - warm)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
    criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
    beta = torch.distributions.Beta(torch.tensor([0.8]), torch.tensor([0.8]))
    s = beta.sample()
    print("beta sample in (0, 1):", bool((s > 0).all() and (s < 1).all()))
    lams = np.random.RandomState(5).beta(0.8, 0.8, size=total)
    model.train()
    for step in range(total):
        i = (step * 16) % 64
        x, y = images[i:i + 16], labels[i:i + 16]
        if step % 2 == 0:
            x, soft = mixup(x, y, float(lams[step]), nc)
            loss = torch.sum(-soft * F.log_softmax(model(x), dim=-1), dim=-1).mean()
        else:
            loss = criterion(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        print(f"step {step} loss {loss.item():.6f} grad norm {norm.item():.6f} lr {sched.get_last_lr()[0]:.6e}")

    model.eval()
    with torch.inference_mode():
        out = model(images)
        top1, top3 = accuracy(out, labels, topk=(1, 3))
        print(f"eval loss {F.cross_entropy(out, labels).item():.6f} top1 {top1.item():.4f} top3 {top3.item():.4f}")
        _, pred = out.topk(1, 1)
        print("correct:", pred.eq(labels.view_as(pred)).sum().item())

    dp = DropPath(0.5).train()
    z = dp(torch.ones(4000, 2, 3, device=device))
    kept = (z[:, 0, 0] > 0).float().mean().item()
    print(f"drop path keeps about half: {0.45 < kept < 0.55}, values {sorted(set(z.unique().tolist()))}")
    print(dp)

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "checkpoint.pth.tar")
        torch.save({"state_dict": model.state_dict(), "optimizer": opt.state_dict(), "epoch": 3, "args": args}, path)
        ck = torch.load(path, map_location="cpu")
        print("checkpoint args:", ck["args"].steps, ck["epoch"])
        fresh = VisionTransformer(num_classes=nc)
        sd = dict(ck["state_dict"])
        sd.pop("head.weight")
        sd["extra.thing"] = torch.zeros(1)
        result = fresh.load_state_dict(sd, strict=False)
        print("missing:", result.missing_keys, "unexpected:", result.unexpected_keys)
        fresh.head.weight.data.copy_(ck["state_dict"]["head.weight"])
        fresh.to(device).eval()
        with torch.no_grad():
            print("reloaded model equal:", torch.equal(fresh(images), model(images)))
        opt2 = torch.optim.AdamW(param_groups_weight_decay(fresh, 0.05, fresh.no_weight_decay()), lr=1e-3)
        opt2.load_state_dict(ck["optimizer"])
        print("optimizer lr restored:", opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"])
        try:
            fresh.load_state_dict(sd)
        except RuntimeError as e:
            print("strict load:", str(e).splitlines()[0])
    print(f"parameters on: {next(model.parameters()).device}")


if __name__ == "__main__":
    main()
