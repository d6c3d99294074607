"""oar.optim.Rprop, oar.optim.ASGD and oar.optim.swa_utils (AveragedModel, SWALR, update_bn), and the
Optimizer base as user code subclasses it (defaults, param_groups, state, add_param_group, step hooks,
pickling).

Rprop and ASGD: each option combination over 12 steps on every present device against plain-Python
loops of PyTorch's formulas (float64), and against PyTorch 1.13 when it can be imported (identical
initial values and gradients, state keys, PyTorch's state loaded into oar and continued); state_dict
round trips that continue like an uninterrupted run; param groups; a TrainGraph step equal to the eager
one. swa_utils against PyTorch with identical weights and data, and against closed forms."""
import copy
import math
import pickle
import re
import warnings

import numpy as np
import pytest

import oar
from oar import nn, optim
from oar.optim import lr_scheduler, swa_utils

from torch_ref import import_torch

DEVICES = oar._C.info()["devices"]
RNG = np.random.default_rng(11)
SHAPE = (3, 4)
P0 = RNG.standard_normal(SHAPE)
GRADS = [RNG.standard_normal(SHAPE) for _ in range(12)]
GRADS[3][0, 0] = 0.0  # a zero gradient: Rprop keeps that element's step size
GRADS[4][1, 2] = 0.0
GRADS[7] = GRADS[6].copy()  # every element agrees in sign with the previous step: all step sizes grow


@pytest.fixture(scope="module")
def torch():
    return import_torch()


# ---------------------------------------------------------------- plain-Python references (element by element)
def py_rprop(p0, grads, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False):
    etaminus, etaplus = etas
    smin, smax = step_sizes
    p = [float(v) for v in np.ravel(p0)]
    prev = [0.0] * len(p)
    step = [float(lr)] * len(p)
    for g in grads:
        for i, gi in enumerate(np.ravel(g).tolist()):
            gi = -gi if maximize else gi
            s = gi * prev[i]
            factor = etaplus if s > 0 else etaminus if s < 0 else 1.0
            step[i] = min(max(step[i] * factor, smin), smax)  # clamped at every step, as PyTorch does
            if s < 0:
                gi = 0.0
            sign = (gi > 0) - (gi < 0)
            p[i] -= sign * step[i]
            prev[i] = gi
    return np.array(p).reshape(np.shape(p0)), np.array(step).reshape(np.shape(p0))


def py_asgd(p0, grads, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0.0, maximize=False):
    p = [float(v) for v in np.ravel(p0)]
    ax = [0.0] * len(p)
    eta, mu = lr, 1.0
    for t, g in enumerate(grads, 1):
        for i, gi in enumerate(np.ravel(g).tolist()):
            gi = (-gi if maximize else gi) + weight_decay * p[i]
            p[i] = p[i] * (1 - lambd * eta) - eta * gi
            ax[i] = p[i] if mu == 1 else ax[i] + (p[i] - ax[i]) * mu
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)
    return np.array(p).reshape(np.shape(p0)), np.array(ax).reshape(np.shape(p0)), eta, mu


RPROP_CASES = [dict(), dict(lr=0.05), dict(lr=0.1, etas=(0.3, 1.5)), dict(lr=1.0, step_sizes=(0.01, 0.4)),
               dict(lr=0.02, step_sizes=(0.015, 1.0), maximize=True)]
ASGD_CASES = [dict(), dict(lr=0.05, t0=3), dict(lr=0.1, lambd=0.05, alpha=0.5, t0=5, weight_decay=0.1),
              dict(lr=0.03, t0=0, maximize=True)]


def oar_run(cls, kw, grads, device="cpu:0", p0=P0):
    p = nn.Parameter(oar.tensor(p0, dtype=oar.float64, device=device))
    opt = cls([p], **kw)
    for g in grads:
        p.grad = oar.tensor(g, dtype=oar.float64, device=device)
        opt.step()
    return p, opt


def N(t):
    return t.detach().cpu().numpy()


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", RPROP_CASES, ids=[str(i) for i in range(len(RPROP_CASES))])
def test_rprop_matches_plain_python(kw, device):
    p, opt = oar_run(optim.Rprop, kw, GRADS, device)
    want_p, want_step = py_rprop(P0, GRADS, **kw)
    np.testing.assert_allclose(N(p), want_p, rtol=1e-12, atol=1e-12)
    state = opt.state[p]
    assert set(state) == {"step", "prev", "step_size"} and int(state["step"]) == len(GRADS)
    np.testing.assert_allclose(N(state["step_size"]), want_step, rtol=1e-12)
    assert state["step_size"].device == p.device and state["step_size"].dtype == oar.float64


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("kw", ASGD_CASES, ids=[str(i) for i in range(len(ASGD_CASES))])
def test_asgd_matches_plain_python(kw, device):
    p, opt = oar_run(optim.ASGD, kw, GRADS, device)
    want_p, want_ax, eta, mu = py_asgd(P0, GRADS, **kw)
    np.testing.assert_allclose(N(p), want_p, rtol=1e-12, atol=1e-13)
    state = opt.state[p]
    assert set(state) == {"step", "eta", "mu", "ax"} and int(state["step"]) == len(GRADS)
    np.testing.assert_allclose(N(state["ax"]), want_ax, rtol=1e-12, atol=1e-13)
    assert math.isclose(float(state["eta"]), eta, rel_tol=1e-14) and math.isclose(float(state["mu"]), mu)
    if kw.get("t0", 1e6) < len(GRADS) - 1:  # averaging started: ax differs from p
        assert not np.allclose(want_ax, want_p)


def test_asgd_eta_follows_the_groups_lr():
    """eta is recomputed from group["lr"] every step, so a scheduler reaches it (from the next step on)."""
    p, opt = oar_run(optim.ASGD, dict(lr=0.1, lambd=0.01), GRADS[:2])
    opt.param_groups[0]["lr"] = 0.02
    p.grad = oar.tensor(GRADS[2], dtype=oar.float64)
    opt.step()
    assert math.isclose(opt.state[p]["eta"], 0.02 / (1 + 0.01 * 0.02 * 3) ** 0.75)


def test_rprop_reads_lr_only_at_the_first_step():
    p, opt = oar_run(optim.Rprop, dict(lr=0.1), GRADS[:2])
    opt.param_groups[0]["lr"] = 5.0  # as in PyTorch: the per-element step sizes carry on
    p.grad = oar.tensor(GRADS[2], dtype=oar.float64)
    opt.step()
    np.testing.assert_allclose(N(p), py_rprop(P0, GRADS[:3], lr=0.1)[0], rtol=1e-12)


def torch_tensor(torch, a):
    return torch.tensor(np.asarray(a).tolist(), dtype=torch.float64)


@pytest.mark.parametrize("name, kw", [("Rprop", k) for k in RPROP_CASES] + [("ASGD", k) for k in ASGD_CASES])
def test_matches_pytorch_and_loads_its_state(torch, name, kw):
    tp = torch_tensor(torch, P0).requires_grad_()
    topt = getattr(torch.optim, name)([tp], **kw)
    for g in GRADS[:6]:
        tp.grad = torch_tensor(torch, g)
        topt.step()
    p, opt = oar_run(getattr(optim, name), kw, GRADS[:6])
    # PyTorch 1.13 keeps ASGD's eta and mu as float32 tensors: agreement to float32's precision there
    tol = 1e-12 if name == "Rprop" else 1e-6
    np.testing.assert_allclose(N(p), np.array(tp.detach().tolist()), rtol=tol, atol=tol)
    sd = topt.state_dict()
    assert set(opt.state_dict()["state"][0]) == set(sd["state"][0])
    assert set(opt.param_groups[0]) - {"params"} <= set(sd["param_groups"][0])
    for k, v in opt.param_groups[0].items():
        if k != "params":
            assert v == (tuple(sd["param_groups"][0][k]) if isinstance(v, tuple) else sd["param_groups"][0][k]), k

    # PyTorch's state (tensor steps, float32 eta/mu) loaded into a fresh oar optimizer continues like PyTorch
    state = {i: {k: (oar.tensor(v.tolist(), dtype=oar.float64 if v.dtype == torch.float64 else oar.float32)
                     if torch.is_tensor(v) else v) for k, v in s.items()} for i, s in sd["state"].items()}
    q = nn.Parameter(oar.tensor(tp.detach().tolist(), dtype=oar.float64))
    opt2 = getattr(optim, name)([q], **kw)
    opt2.load_state_dict({"state": state, "param_groups": [dict(g) for g in sd["param_groups"]]})
    for g in GRADS[6:]:
        tp.grad = torch_tensor(torch, g)
        topt.step()
        q.grad = oar.tensor(g, dtype=oar.float64)
        opt2.step()
    np.testing.assert_allclose(N(q), np.array(tp.detach().tolist()), rtol=tol, atol=tol)
    assert int(opt2.state[q]["step"]) == len(GRADS)
    if name == "ASGD":
        np.testing.assert_allclose(N(opt2.state[q]["ax"]), np.array(topt.state[tp]["ax"].tolist()), rtol=tol,
                                   atol=tol)


@pytest.mark.parametrize("name, kw", [("Rprop", dict(lr=0.05, etas=(0.4, 1.3))),
                                      ("ASGD", dict(lr=0.05, t0=2, weight_decay=0.01))])
def test_state_dict_round_trip_continues_identically(name, kw, tmp_path):
    cls = getattr(optim, name)
    p_full, _ = oar_run(cls, kw, GRADS)
    p1, o1 = oar_run(cls, kw, GRADS[:5])
    oar.save(o1.state_dict(), tmp_path / "opt.oar")
    sd = oar.load(tmp_path / "opt.oar")
    for g in GRADS[5:]:  # the original continues; the saved state must not follow it
        p1.grad = oar.tensor(g, dtype=oar.float64)
        o1.step()
    p2 = nn.Parameter(oar.tensor(N(oar_run(cls, kw, GRADS[:5])[0]), dtype=oar.float64))
    o2 = cls([p2], lr=123.0)  # the loaded param_groups bring the options back
    o2.load_state_dict(sd)
    assert o2.param_groups[0]["lr"] == kw["lr"]
    for g in GRADS[5:]:
        p2.grad = oar.tensor(g, dtype=oar.float64)
        o2.step()
    assert np.array_equal(N(p1), N(p_full)) and np.array_equal(N(p2), N(p_full))


def test_param_groups_missing_gradients_and_validation():
    a, b, c = (nn.Parameter(oar.tensor(P0, dtype=oar.float64)) for _ in range(3))
    opt = optim.Rprop([{"params": [a]}, {"params": [b, c], "lr": 0.1, "etas": (0.3, 1.5)}], lr=0.01)
    for g in GRADS[:4]:
        a.grad = oar.tensor(g, dtype=oar.float64)
        b.grad = oar.tensor(g, dtype=oar.float64)
        opt.step()  # c never has a gradient: no state, unchanged
    np.testing.assert_allclose(N(a), py_rprop(P0, GRADS[:4], lr=0.01)[0], rtol=1e-12)
    np.testing.assert_allclose(N(b), py_rprop(P0, GRADS[:4], lr=0.1, etas=(0.3, 1.5))[0], rtol=1e-12)
    assert np.array_equal(N(c), P0) and not opt.state.get(c)
    for cls, kw, msg in [(optim.Rprop, dict(lr=-1), "Invalid learning rate: -1"),
                         (optim.Rprop, dict(etas=(1.0, 1.2)), "Invalid eta values: 1.0, 1.2"),
                         (optim.Rprop, dict(etas=(0.5, 0.9)), "Invalid eta values: 0.5, 0.9"),
                         (optim.ASGD, dict(lr=-0.5), "Invalid learning rate: -0.5"),
                         (optim.ASGD, dict(weight_decay=-1), "Invalid weight_decay value: -1")]:
        with pytest.raises(ValueError, match=f"^{re.escape(msg)}$"):
            cls([nn.Parameter(oar.ones(2))], **kw)


def test_defaults_and_accepted_flags():
    p = nn.Parameter(oar.ones(2))
    g = {k: v for k, v in optim.Rprop([p]).param_groups[0].items() if k != "params"}
    assert g == dict(lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), maximize=False)
    g = {k: v for k, v in optim.ASGD([p]).param_groups[0].items() if k != "params"}
    assert g == dict(lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0, maximize=False)
    # PyTorch's implementation switches are accepted and change nothing
    optim.Rprop([p], foreach=True, capturable=False, differentiable=False, maximize=True)
    optim.ASGD([p], 0.1, 1e-4, 0.75, 1e6, 0, None, False, False, False)  # 2.x's positional order
    assert {"Rprop", "ASGD", "swa_utils"} <= set(optim.__all__)


GRAPH_CASES = [("Rprop", dict(lr=0.01)), ("Rprop", dict(lr=0.05, etas=(0.3, 1.4), step_sizes=(1e-4, 0.08))),
               ("ASGD", dict(lr=0.05, t0=3, lambd=0.01, weight_decay=0.01))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, kw", GRAPH_CASES, ids=["Rprop", "Rprop-clamped", "ASGD"])
def test_train_graph_matches_eager(name, kw, device):
    def setup():
        oar.manual_seed(4)
        model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3)).to(device)
        opt = getattr(optim, name)(model.parameters(), **kw)
        return model, opt, lr_scheduler.StepLR(opt, 3, 0.5)  # ASGD's eta must follow the graph's lr

    (m1, o1, s1), (m2, o2, s2) = setup(), setup()

    def step(x, y):
        loss = ((m2(x) - y) ** 2).mean()
        loss.backward()
        o2.step()
        o2.zero_grad()
        return loss

    train_step = oar.jit.TrainGraph(step, o2, model=m2)
    rng = np.random.default_rng(5)
    n = 8  # ASGD starts averaging after step t0 = 3: inside the graph runs
    for i in range(n):
        x = oar.tensor(rng.standard_normal((16, 6)).astype(np.float32), device=device)
        y = oar.tensor(rng.standard_normal((16, 3)).astype(np.float32), device=device)
        want = ((m1(x) - y) ** 2).mean()
        want.backward()
        o1.step()
        o1.zero_grad()
        s1.step()
        got = train_step(x, y)
        s2.step()
        assert abs(got.item() - want.item()) < 1e-5 * max(1.0, abs(want.item())), (i, got.item(), want.item())
    for a, b in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(N(b), N(a), rtol=1e-4, atol=1e-5)
    p1, p2 = next(iter(m1.parameters())), next(iter(m2.parameters()))
    assert float(o2.state[p2]["step"]) == n
    for key in {"Rprop": ["step_size", "prev"], "ASGD": ["ax"]}[name]:
        np.testing.assert_allclose(N(o2.state[p2][key]), N(o1.state[p1][key]), rtol=1e-4, atol=1e-5)
    if name == "ASGD":
        assert math.isclose(float(o2.state[p2]["eta"]), o1.state[p1]["eta"], rel_tol=1e-5)
        assert math.isclose(float(o2.state[p2]["mu"]), o1.state[p1]["mu"], rel_tol=1e-6)


# ---------------------------------------------------------------- Optimizer subclassed as user code does it
class MySGD(optim.Optimizer):
    """Momentum SGD written the way PyTorch tutorials write optimizers."""

    def __init__(self, params, lr=0.1, momentum=0.0, weight_decay=0.0):
        if lr < 0:
            raise ValueError(f"Invalid learning rate: {lr}")
        defaults = dict(lr=lr, momentum=momentum, weight_decay=weight_decay)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("weight_decay", 0.0)

    @oar.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with oar.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                d_p = p.grad.data
                if group["weight_decay"] != 0:
                    d_p = d_p.add(p.data, alpha=group["weight_decay"])
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["momentum_buffer"] = d_p.clone()
                else:
                    state["momentum_buffer"].mul_(group["momentum"]).add_(d_p)
                state["step"] += 1
                p.add_(state["momentum_buffer"], alpha=-group["lr"])
        return loss


class MySGDTwice(MySGD):
    """A subclass whose step() calls super().step(): the step hooks still run once."""

    def step(self, closure=None):
        return super().step(closure)


def _model(seed=3):
    oar.manual_seed(seed)
    return nn.Sequential(nn.Linear(4, 5), nn.Tanh(), nn.Linear(5, 1))


def _train(model, opt, steps=5):
    rng = np.random.default_rng(0)
    for _ in range(steps):
        x = oar.tensor(rng.standard_normal((8, 4)).astype(np.float32))

        def closure():
            opt.zero_grad()
            loss = (model(x) ** 2).mean()
            loss.backward()
            return loss

        loss = opt.step(closure)
        assert isinstance(loss, oar.Tensor) and not loss.requires_grad or loss.grad_fn is not None
    return model


def test_user_optimizer_subclass_matches_sgd_and_round_trips():
    m1, m2 = _model(), _model()
    _train(m1, MySGD(m1.parameters(), lr=0.05, momentum=0.9, weight_decay=0.01))
    _train(m2, optim.SGD(m2.parameters(), lr=0.05, momentum=0.9, weight_decay=0.01))
    for a, b in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(N(a), N(b), rtol=1e-5, atol=1e-6)

    m = _model()
    opt = MySGD(m.parameters(), lr=0.05, momentum=0.9)
    _train(m, opt, 2)
    sd = opt.state_dict()
    assert sd["param_groups"][0]["lr"] == 0.05 and sd["state"][0]["step"] == 2
    m_copy = copy.deepcopy(m)
    opt_copy = MySGD(m_copy.parameters(), lr=1.0)
    opt_copy.load_state_dict(sd)
    _train(m, opt, 3)
    _train(m_copy, opt_copy, 3)
    for a, b in zip(m.parameters(), m_copy.parameters()):
        assert np.array_equal(N(a), N(b))

    # pickling (and deepcopy) keeps the state attached to the unpickled parameters
    params, opt2 = pickle.loads(pickle.dumps((list(m.parameters()), opt)))
    assert opt2.state[params[0]]["step"] == 5 and opt2.param_groups[0]["params"][0] is params[0]
    assert opt2.param_groups[0]["weight_decay"] == 0.0  # the subclass's __setstate__ ran
    dc = copy.deepcopy(opt)
    assert dc.state[dc.param_groups[0]["params"][1]]["step"] == 5


def test_add_param_group_fills_defaults_and_checks():
    a, b = nn.Parameter(oar.ones(2)), nn.Parameter(oar.ones(3))
    opt = MySGD([a], lr=0.5, momentum=0.3)
    opt.add_param_group({"params": b, "lr": 0.1})
    assert opt.param_groups[1]["lr"] == 0.1 and opt.param_groups[1]["momentum"] == 0.3
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    opt2 = optim.Rprop([a])
    opt2.add_param_group({"params": [b], "etas": (0.2, 2.0)})
    b.grad = oar.ones(3)
    opt2.step()
    assert opt2.param_groups[1]["step_sizes"] == (1e-6, 50) and set(opt2.state[b]) == {"step", "prev", "step_size"}


@pytest.mark.parametrize("cls", [MySGD, MySGDTwice, optim.Rprop, optim.SGD])
def test_step_hooks(cls):
    p = nn.Parameter(oar.ones(2))
    opt = cls([p], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, args, kwargs: calls.append(("pre", o is opt, args, kwargs)))
    h2 = opt.register_step_post_hook(lambda o, args, kwargs: calls.append(("post", o is opt)))
    hg = optim.optimizer.register_optimizer_step_pre_hook(lambda o, a, k: calls.append(("global-pre",)))
    hgp = optim.optimizer.register_optimizer_step_post_hook(lambda o, a, k: calls.append(("global-post",)))
    p.grad = oar.ones(2)
    try:
        opt.step()
    finally:
        hg.remove()
        hgp.remove()
    assert calls == [("global-pre",), ("pre", True, (), {}), ("post", True), ("global-post",)]

    def replace_closure(o, args, kwargs):  # a pre-hook may swap step's arguments
        return (), {"closure": lambda: oar.tensor(7.0)}

    h3 = opt.register_step_pre_hook(replace_closure)
    assert float(opt.step()) == 7.0
    h1.remove()
    h2.remove()
    h3.remove()
    calls.clear()
    assert opt.step() is None and calls == []
    opt.register_step_pre_hook(lambda o, a, k: 5)
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()


# ---------------------------------------------------------------- swa_utils
def _bn_model(dtype=oar.float64):
    oar.manual_seed(1)
    return nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU(), nn.Linear(6, 2)).to(dtype=dtype)


def _torch_copy(torch, model, torch_model):
    torch_model.load_state_dict({k: torch.tensor(v.tolist(), dtype={oar.float64: torch.float64, oar.float32:
                                                                      torch.float32}.get(v.dtype, torch.int64))
                                 for k, v in model.state_dict().items()})
    return torch_model


def _torch_bn_model(torch):
    tnn = torch.nn
    return tnn.Sequential(tnn.Linear(4, 6), tnn.BatchNorm1d(6), tnn.ReLU(), tnn.Linear(6, 2)).double()


def _sgd_steps(model, opt, data, loss_fn):
    for x in data:
        opt.zero_grad()
        loss_fn(model(x)).backward()
        opt.step()


DATA = [RNG.standard_normal((8, 4)) for _ in range(6)]


@pytest.mark.parametrize("use_buffers", [False, True])
def test_averaged_model_matches_pytorch(torch, use_buffers):
    model = _bn_model()
    tmodel = _torch_copy(torch, model, _torch_bn_model(torch))
    swa = swa_utils.AveragedModel(model, use_buffers=use_buffers)
    tswa = torch.optim.swa_utils.AveragedModel(tmodel, use_buffers=use_buffers)
    opt = optim.SGD(model.parameters(), lr=0.1)
    topt = torch.optim.SGD(tmodel.parameters(), lr=0.1)
    for i, x in enumerate(DATA):
        _sgd_steps(model, opt, [oar.tensor(x, dtype=oar.float64)], lambda y: (y ** 2).mean())
        _sgd_steps(tmodel, topt, [torch_tensor(torch, x)], lambda y: (y ** 2).mean())
        swa.update_parameters(model)
        tswa.update_parameters(tmodel)
    assert int(swa.n_averaged) == int(tswa.n_averaged) == len(DATA)
    want = tswa.state_dict()
    got = swa.state_dict()
    assert set(got) == set(want)
    for k, v in want.items():
        if not use_buffers and ("running" in k or "num_batches" in k):
            continue  # PyTorch 1.13 leaves the copy's buffers as first copied; 2.x (and oar) follow the model
        np.testing.assert_allclose(got[k].numpy(), np.array(v.tolist()), rtol=1e-10, atol=1e-12, err_msg=k)
    if not use_buffers:
        for k in ("running_mean", "running_var", "num_batches_tracked"):
            np.testing.assert_array_equal(got["module.1." + k].numpy(), model.state_dict()["1." + k].numpy())
    x = oar.tensor(DATA[0], dtype=oar.float64)
    swa.train(not use_buffers)  # in eval mode the running statistics count: equal only when both averaged them
    tswa.train(not use_buffers)
    np.testing.assert_allclose(N(swa(x)), np.array(tswa(torch_tensor(torch, DATA[0])).tolist()), rtol=1e-9)


def test_averaged_model_avg_fns_and_devices():
    for device in DEVICES:
        model = _model()
        ema = swa_utils.AveragedModel(model, device=device, avg_fn=swa_utils.get_ema_avg_fn(0.9))
        ema_multi = swa_utils.AveragedModel(model, device=device, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.9))
        swa_multi = swa_utils.AveragedModel(model, device=device, multi_avg_fn=swa_utils.get_swa_multi_avg_fn())
        seen = []
        custom = swa_utils.AveragedModel(model, avg_fn=lambda avg, cur, n: seen.append(int(n)) or avg + cur)
        assert next(iter(ema.parameters())).device == oar.device(device) and ema.n_averaged.device == oar.device(device)
        history = []
        for step in range(4):
            with oar.no_grad():
                for p in model.parameters():
                    p.add_(0.1 * (step + 1))
            history.append([N(p).copy() for p in model.parameters()])
            for avg in (ema, ema_multi, swa_multi, custom):
                avg.update_parameters(model)
        assert seen == [1] * 4 + [2] * 4 + [3] * 4  # per tensor (4 tensors), with the count before this update
        for i in range(4):
            want_ema = history[0][i]
            for h in history[1:]:
                want_ema = 0.9 * want_ema + 0.1 * h[i]
            want_mean = np.mean([h[i] for h in history], axis=0)
            np.testing.assert_allclose(N(list(ema.module.parameters())[i]), want_ema, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(N(list(ema_multi.module.parameters())[i]), want_ema, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(N(list(swa_multi.module.parameters())[i]), want_mean, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(N(list(custom.module.parameters())[i]), np.sum([h[i] for h in history], 0),
                                       rtol=1e-5, atol=1e-6)
    with pytest.raises(AssertionError):
        swa_utils.AveragedModel(model, avg_fn=lambda *a: a[0], multi_avg_fn=lambda *a: None)


def test_averaged_model_gradients_do_not_reach_the_model():
    model = _model()
    swa = swa_utils.AveragedModel(model)
    swa.update_parameters(model)
    assert all(p is not q for p, q in zip(swa.module.parameters(), model.parameters()))
    (swa(oar.ones(2, 4)) ** 2).sum().backward()
    assert all(p.grad is None for p in model.parameters())
    assert "n_averaged" in dict(swa.named_buffers())


@pytest.mark.parametrize("strategy", ["cos", "linear"])
@pytest.mark.parametrize("anneal_epochs", [0, 1, 3])
def test_swalr_matches_pytorch(torch, strategy, anneal_epochs):
    def run(lib, opt_mod, sched_mod, swa_mod, mk):
        a, b = mk(), mk()
        opt = opt_mod.SGD([{"params": [a]}, {"params": [b], "lr": 0.2}], lr=0.1)
        sched = sched_mod.CosineAnnealingLR(opt, T_max=10)
        swa = swa_mod.SWALR(opt, swa_lr=[0.05, 0.01], anneal_epochs=anneal_epochs, anneal_strategy=strategy)
        lrs = []
        for epoch in range(12):
            opt.step()
            if epoch < 5:
                sched.step()
            else:
                swa.step()
            lrs.append([g["lr"] for g in opt.param_groups])
        return lrs, swa.get_last_lr()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = run(torch, torch.optim, torch.optim.lr_scheduler, torch.optim.swa_utils,
                   lambda: torch.zeros(2, requires_grad=True))
    got = run(oar, optim, lr_scheduler, swa_utils, lambda: nn.Parameter(oar.zeros(2)))
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def test_swalr_closed_form_and_validation():
    opt = optim.SGD([nn.Parameter(oar.zeros(1))], lr=1.0)
    s = swa_utils.SWALR(opt, swa_lr=0.1, anneal_epochs=4, anneal_strategy="linear")
    lrs = []
    for _ in range(6):
        s.step()
        lrs.append(opt.param_groups[0]["lr"])
    np.testing.assert_allclose(lrs, [1 - 0.9 * t / 4 for t in (1, 2, 3, 4)] + [0.1, 0.1], rtol=1e-12)
    assert opt.param_groups[0]["swa_lr"] == 0.1
    with pytest.raises(ValueError, match="anneal_strategy"):
        swa_utils.SWALR(opt, 0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs"):
        swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)
    with pytest.raises(ValueError, match="swa_lr"):
        swa_utils.SWALR(opt, [0.1, 0.2])


def test_update_bn_matches_pytorch(torch):
    model = _bn_model()
    tmodel = _torch_copy(torch, model, _torch_bn_model(torch))
    with oar.no_grad():  # stale statistics the pass must replace
        model[1].running_mean.fill_(5.0)
    model[1].momentum = 0.3
    tmodel[1].momentum = 0.3
    model.eval()
    tmodel.eval()
    xs = np.concatenate(DATA)
    ys = np.arange(len(xs))
    loader = oar.utils.data.DataLoader(oar.utils.data.TensorDataset(oar.tensor(xs, dtype=oar.float64),
                                                                    oar.tensor(ys)), batch_size=10)
    tloader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch_tensor(torch, xs),
                                                                         torch.tensor(ys.tolist())), batch_size=10)
    swa_utils.update_bn(loader, model)
    torch.optim.swa_utils.update_bn(tloader, tmodel)
    assert not model.training and model[1].momentum == 0.3
    for k in ("running_mean", "running_var", "num_batches_tracked"):
        np.testing.assert_allclose(getattr(model[1], k).numpy(), np.array(getattr(tmodel[1], k).tolist()),
                                   rtol=1e-10, err_msg=k)
    # a loader of bare tensors, and the statistics are the average over batches (momentum None)
    swa_utils.update_bn([oar.tensor(x, dtype=oar.float64) for x in DATA[:2]], model)
    with oar.no_grad():
        h = [N(model[0](oar.tensor(x, dtype=oar.float64))) for x in DATA[:2]]
    np.testing.assert_allclose(N(model[1].running_mean), np.mean([a.mean(0) for a in h], 0), rtol=1e-10)
    swa_utils.update_bn([oar.ones(2, 4)], _model())  # no batch norm: nothing to do
