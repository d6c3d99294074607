"""oar.optim against NumPy implementations of PyTorch's update rules (3 steps with fixed gradients),
param groups, state_dict, closures, error handling, the lr schedulers' sequences, and a PyTorch-style
training loop that must drive the loss down."""
import math

import numpy as np
import pytest

import oar
from oar import nn, optim
from oar.optim import lr_scheduler

RNG = np.random.default_rng(1)
P0 = RNG.standard_normal((3, 4))
GRADS = [RNG.standard_normal((3, 4)) for _ in range(3)]


def run(opt_cls, **kw):
    p = nn.Parameter(oar.tensor(P0, dtype=oar.float64))
    opt = opt_cls([p], **kw)
    for g in GRADS:
        p.grad = oar.tensor(g, dtype=oar.float64)
        opt.step()
    return p.detach().numpy(), opt


def ref_sgd(lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    p, buf = P0.copy(), None
    for g in GRADS:
        g = -g if maximize else g
        g = g + weight_decay * p
        if momentum:
            buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
            g = g + momentum * buf if nesterov else buf
        p = p - lr * g
    return p


def ref_adam(lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, decoupled=False):
    p, m, v, vmax = P0.copy(), np.zeros_like(P0), np.zeros_like(P0), np.zeros_like(P0)
    for t, g in enumerate(GRADS, 1):
        if decoupled:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = betas[0] * m + (1 - betas[0]) * g
        v = betas[1] * v + (1 - betas[1]) * g * g
        vmax = np.maximum(vmax, v)
        vh = (vmax if amsgrad else v) / (1 - betas[1] ** t)
        p = p - lr * (m / (1 - betas[0] ** t)) / (np.sqrt(vh) + eps)
    return p


@pytest.mark.parametrize("kw", [dict(lr=0.1), dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
                                dict(lr=0.05, momentum=0.8, dampening=0.3, weight_decay=0.1),
                                dict(lr=0.1, momentum=0.5, maximize=True)])
def test_sgd_matches_reference(kw):
    p, _ = run(optim.SGD, **kw)
    np.testing.assert_allclose(p, ref_sgd(**kw), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kw", [dict(lr=0.01), dict(lr=0.1, betas=(0.8, 0.9), eps=1e-6, weight_decay=0.05),
                                dict(lr=0.02, amsgrad=True, weight_decay=0.01)])
def test_adam_matches_reference(kw):
    p, opt = run(optim.Adam, **kw)
    np.testing.assert_allclose(p, ref_adam(**kw), rtol=1e-10, atol=1e-12)
    assert opt.state[opt.param_groups[0]["params"][0]]["step"] == 3


@pytest.mark.parametrize("kw", [dict(lr=0.01), dict(lr=0.05, weight_decay=0.1, amsgrad=True)])
def test_adamw_matches_reference(kw):
    p, _ = run(optim.AdamW, **kw)
    full = dict(weight_decay=1e-2)
    full.update(kw)
    np.testing.assert_allclose(p, ref_adam(decoupled=True, **full), rtol=1e-10, atol=1e-12)


def test_param_groups_zero_grad_and_skipped_params():
    a = nn.Parameter(oar.ones(2, dtype=oar.float64))
    b = nn.Parameter(oar.ones(2, dtype=oar.float64))
    c = nn.Parameter(oar.ones(2, dtype=oar.float64))
    opt = optim.SGD([{"params": [a]}, {"params": [b, c], "lr": 0.5}], lr=0.1)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 0.5
    assert opt.param_groups[1]["momentum"] == 0
    (a.sum() + b.sum() * 2).backward()
    opt.step()  # c has no grad: untouched
    np.testing.assert_allclose(a.detach().numpy(), [0.9, 0.9])
    np.testing.assert_allclose(b.detach().numpy(), [0.0, 0.0])
    np.testing.assert_allclose(c.detach().numpy(), [1.0, 1.0])
    opt.zero_grad(set_to_none=False)
    assert float(a.grad.abs().sum()) == 0
    opt.zero_grad()
    assert a.grad is None and b.grad is None


def test_state_dict_round_trip_continues_identically():
    def make():
        p = nn.Parameter(oar.tensor(P0, dtype=oar.float64))
        return p, optim.Adam([p], lr=0.05, amsgrad=True)
    p1, o1 = make()
    for g in GRADS[:2]:
        p1.grad = oar.tensor(g, dtype=oar.float64)
        o1.step()
    sd = o1.state_dict()
    assert sd["param_groups"][0]["params"] == [0] and set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq",
                                                                           "max_exp_avg_sq"}
    p2, o2 = make()
    with oar.no_grad():
        p2.copy_(p1)
    o2.load_state_dict(sd)
    for p, o in ((p1, o1), (p2, o2)):
        p.grad = oar.tensor(GRADS[2], dtype=oar.float64)
        o.step()
    assert np.array_equal(p1.detach().numpy(), p2.detach().numpy())
    np.testing.assert_allclose(p1.detach().numpy(), ref_adam(lr=0.05, amsgrad=True), rtol=1e-10)
    with pytest.raises(ValueError):
        optim.Adam([p2, nn.Parameter(oar.ones(1))]).load_state_dict(sd)


def test_closure_is_called_and_returned():
    w = nn.Parameter(oar.tensor([3.0], dtype=oar.float64))
    opt = optim.SGD([w], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss
    with oar.no_grad():  # step() must enable grad for the closure
        loss = opt.step(closure)
    assert float(loss) == 9.0
    np.testing.assert_allclose(w.detach().numpy(), [3.0 - 0.25 * 6])


def test_optimizer_errors():
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.Adam(nn.Sequential().parameters())
    p = nn.Parameter(oar.ones(2))
    with pytest.raises(ValueError):
        optim.SGD([p], lr=-1)
    with pytest.raises(ValueError):
        optim.SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ValueError):
        optim.Adam([p], betas=(1.0, 0.9))
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p * 2], lr=0.1)
    with pytest.raises(TypeError):
        optim.SGD([1.0], lr=0.1)
    with pytest.raises(TypeError):
        optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError):
        optim.SGD([p, p], lr=0.1)
    with pytest.raises(ValueError):
        optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)


# ---------------------------------------------------------------- schedulers
def lrs(sched, n):
    out = [sched.get_last_lr()[0]]
    for _ in range(n):
        sched.optimizer.step()
        sched.step()
        out.append(sched.get_last_lr()[0])
    return out


def make_opt(lr=1.0):
    return optim.SGD([nn.Parameter(oar.ones(1))], lr=lr)


def test_step_lr():
    seq = lrs(lr_scheduler.StepLR(make_opt(), step_size=3, gamma=0.5), 8)
    np.testing.assert_allclose(seq, [0.5 ** (e // 3) for e in range(9)])


def test_cosine_annealing_lr():
    sched = lr_scheduler.CosineAnnealingLR(make_opt(0.1), T_max=5, eta_min=0.01)
    seq = lrs(sched, 5)
    np.testing.assert_allclose(seq, [0.01 + 0.09 * (1 + math.cos(math.pi * e / 5)) / 2 for e in range(6)], atol=1e-12)
    assert sched.optimizer.param_groups[0]["lr"] == seq[-1]


def test_lambda_multistep_exponential_linear():
    seq = lrs(lr_scheduler.LambdaLR(make_opt(2.0), lambda e: 1 / (e + 1)), 4)
    np.testing.assert_allclose(seq, [2.0 / (e + 1) for e in range(5)])
    seq = lrs(lr_scheduler.MultiStepLR(make_opt(), milestones=[2, 4], gamma=0.1), 5)
    np.testing.assert_allclose(seq, [1, 1, 0.1, 0.1, 0.01, 0.01])
    seq = lrs(lr_scheduler.ExponentialLR(make_opt(), gamma=0.9), 3)
    np.testing.assert_allclose(seq, [0.9 ** e for e in range(4)])
    seq = lrs(lr_scheduler.LinearLR(make_opt(), start_factor=0.25, total_iters=3), 5)
    np.testing.assert_allclose(seq, [0.25, 0.5, 0.75, 1.0, 1.0, 1.0])


def test_reduce_lr_on_plateau():
    opt = make_opt()
    sched = lr_scheduler.ReduceLROnPlateau(opt, patience=1, factor=0.5)
    for metric in [1.0, 0.9, 0.9, 0.9, 0.9, 0.9]:
        sched.step(metric)
    assert sched.get_last_lr() == [0.25]


def test_scheduler_per_group_and_state_dict():
    opt = optim.SGD([{"params": [nn.Parameter(oar.ones(1))]}, {"params": [nn.Parameter(oar.ones(1))], "lr": 0.5}],
                    lr=1.0)
    sched = lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    sched.step()
    assert sched.get_last_lr() == [0.5, 0.25]
    sd = sched.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 1


# ---------------------------------------------------------------- end to end
def test_training_loop_drives_loss_down():
    oar.manual_seed(0)
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(-1.5, 0.7, (64, 2)), rng.normal(1.5, 0.7, (64, 2))]).astype(np.float32)
    y = np.array([0] * 64 + [1] * 64)
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    scheduler = lr_scheduler.StepLR(optimizer, step_size=20, gamma=0.5)
    loader = oar.utils.data.DataLoader(oar.utils.data.TensorDataset(oar.tensor(x), oar.tensor(y)), batch_size=32,
                                       shuffle=True)
    losses = []
    for epoch in range(30):
        total = 0.0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item()
        scheduler.step()
        losses.append(total / len(loader))
    assert losses[-1] < 0.25 * losses[0]
    with oar.no_grad():
        acc = (model(oar.tensor(x)).argmax(1).numpy() == y).mean()
    assert acc > 0.9


def test_adam_regression_converges():
    oar.manual_seed(2)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((128, 3)).astype(np.float32)
    w_true = np.array([[1.5], [-2.0], [0.5]], dtype=np.float32)
    y = x @ w_true + 0.3
    model = nn.Linear(3, 1)
    opt = optim.AdamW(model.parameters(), lr=0.1, weight_decay=0.0)
    xt, yt = oar.tensor(x), oar.tensor(y)
    for _ in range(150):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(xt), yt)
        loss.backward()
        opt.step()
    assert loss.item() < 1e-3
    np.testing.assert_allclose(model.weight.detach().numpy().ravel(), w_true.ravel(), atol=0.05)


def test_cnn_training_loop_with_scheduler():
    oar.manual_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(0, 1, (128, 1, 8, 8)).astype(np.float32)
    y = rng.integers(0, 2, 128)
    x[y == 0, :, :4] += 1.0  # class 0: bright top half, class 1: bright bottom half
    x[y == 1, :, 4:] += 1.0
    model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(8, 16, 3, padding=1), nn.GELU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Dropout(0.1), nn.Linear(16, 2))
    opt = optim.Adam(model.parameters(), lr=1e-2)
    sched = lr_scheduler.CosineAnnealingLR(opt, T_max=6)
    loader = oar.utils.data.DataLoader(oar.utils.data.TensorDataset(oar.tensor(x), oar.tensor(y)), batch_size=32,
                                       shuffle=True)
    crit = nn.CrossEntropyLoss()
    first = None
    for _ in range(6):
        model.train()
        for xb, yb in loader:
            opt.zero_grad()
            loss = crit(model(xb), yb)
            loss.backward()
            opt.step()
            first = loss.item() if first is None else first
        sched.step()
    model.eval()
    with oar.no_grad():
        out = model(oar.tensor(x))
    assert crit(out, oar.tensor(y)).item() < 0.5 * first
    assert (out.argmax(1).numpy() == y).mean() > 0.95
