"""oar.optim's fused updates (the sgd_step / adam_step ops) on every device: several parameter groups,
parameters of several shapes and dtypes, a parameter without a gradient on some steps (so step counts
differ inside one call), against NumPy implementations of PyTorch's rules; state updated in place
(the same tensor objects, one version bump per step); a non-contiguous parameter; the ops inside a
TrainGraph, with a scheduler changing the learning rate between graph runs."""
import numpy as np
import pytest

import oar
from oar import nn, optim

DEVICES = oar._C.info()["devices"]
SHAPES = [(3, 4), (5,), (), (2, 3, 2)]


def numpy_sgd(p, g, st, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
    g = -g if maximize else g
    g = g + weight_decay * p
    if momentum:
        buf = st.get("buf")
        st["buf"] = buf = g.copy() if buf is None else momentum * buf + (1 - dampening) * g
        g = g + momentum * buf if nesterov else buf
    return p - lr * g


def numpy_adam(p, g, st, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, amsgrad=False, maximize=False,
               decoupled=False):
    t = st["t"] = st.get("t", 0) + 1
    m, v, vmax = (st.get(k, np.zeros_like(p)) for k in ("m", "v", "vmax"))
    g = -g if maximize else g
    if decoupled:
        p = p * (1 - lr * weight_decay)
    else:
        g = g + weight_decay * p
    st["m"] = m = betas[0] * m + (1 - betas[0]) * g
    st["v"] = v = betas[1] * v + (1 - betas[1]) * g * g
    st["vmax"] = vmax = np.maximum(vmax, v)
    second = vmax if amsgrad else v
    return p - lr / (1 - betas[0] ** t) * m / (np.sqrt(second) / np.sqrt(1 - betas[1] ** t) + eps)


CASES = [
    (optim.SGD, numpy_sgd, dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    (optim.SGD, numpy_sgd, dict(lr=0.05, momentum=0.8, dampening=0.3, maximize=True)),
    (optim.SGD, numpy_sgd, dict(lr=0.2)),
    (optim.Adam, numpy_adam, dict(lr=0.01, betas=(0.8, 0.95), weight_decay=0.05, amsgrad=True)),
    (optim.Adam, numpy_adam, dict(lr=0.02, maximize=True)),
    (optim.AdamW, lambda *a, **k: numpy_adam(*a, decoupled=True, **k), dict(lr=0.01, weight_decay=0.1)),
]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(CASES)), ids=lambda i: f"{CASES[i][0].__name__}{i}")
def test_fused_update_matches_numpy(device, case):
    opt_cls, rule, kw = CASES[case]
    rng = np.random.default_rng(case)
    values = [rng.standard_normal(s) for s in SHAPES]
    dtypes = [oar.float32, oar.float64, oar.float32, oar.float64]  # two dtypes: two fused calls per group
    params = [nn.Parameter(oar.tensor(v, dtype=d, device=device)) for v, d in zip(values, dtypes)]
    # two groups, the second with its own learning rate
    groups = [{"params": params[:2]}, {"params": params[2:], "lr": kw["lr"] / 2}]
    opt = opt_cls(groups, **kw)
    want = [v.copy() for v in values]
    states = [{} for _ in values]
    for step in range(4):
        for k, p in enumerate(params):
            if k == 1 and step == 1:
                p.grad = None  # no gradient this step: its state does not advance
                continue
            g = rng.standard_normal(SHAPES[k])
            p.grad = oar.tensor(g, dtype=dtypes[k], device=device)
            lr = kw["lr"] if k < 2 else kw["lr"] / 2
            want[k] = rule(want[k], g, states[k], **dict(kw, lr=lr))
        opt.step()
    for k, p in enumerate(params):
        tol = 1e-5 if dtypes[k] == oar.float32 else 1e-11
        np.testing.assert_allclose(p.detach().cpu().numpy(), want[k], rtol=tol, atol=tol, err_msg=f"param {k}")
    if opt_cls is not optim.SGD:
        assert opt.state[params[1]]["step"] == 3 and opt.state[params[0]]["step"] == 4


@pytest.mark.parametrize("device", DEVICES)
def test_state_is_updated_in_place_with_one_version_bump(device):
    p = nn.Parameter(oar.ones(4, device=device))
    opt = optim.Adam([p], lr=0.1, amsgrad=True)
    p.grad = oar.ones(4, device=device)
    opt.step()
    state = dict(opt.state[p])
    versions = {k: v._version for k, v in state.items() if isinstance(v, oar.Tensor)}
    pv = p._version
    p.grad = oar.full((4,), 2.0, device=device)
    opt.step()
    for k, v in state.items():
        if isinstance(v, oar.Tensor):
            assert opt.state[p][k] is v, k  # the same tensor objects, written in place
            assert v._version == versions[k] + 1, k
    assert p._version == pv + 1


@pytest.mark.parametrize("device", DEVICES)
def test_non_contiguous_parameter(device):
    base = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    p = nn.Parameter(oar.tensor(base, device=device).t())  # a leaf with transposed strides
    assert not p.is_contiguous()
    opt = optim.SGD([p], lr=0.5, momentum=0.9)
    p.grad = oar.ones(4, 3, device=device)
    opt.step()
    opt.step()
    np.testing.assert_allclose(p.detach().cpu().numpy(), base.T - 0.5 * 1 - 0.5 * 1.9, rtol=1e-6)


def _train_side_by_side(setup, steps, shapes, device, seed, dtype=oar.float32, before_step=None):
    """Trains two copies from setup() -> (model, optimizer[, scheduler]) on the same random batches: one
    eagerly, one through a TrainGraph. Checks every step's loss; returns the models and the TrainGraph."""
    (m1, o1, *s1), (m2, o2, *s2) = setup(), setup()

    def step(x, y):
        loss = ((m2(x) - y) ** 2).mean()
        loss.backward()
        o2.step()
        o2.zero_grad()
        return loss

    graph_step = oar.jit.TrainGraph(step, o2, model=m2)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if before_step:
            before_step(o1)
        x, y = (oar.tensor(rng.standard_normal(s), dtype=dtype, device=device) for s in shapes)
        loss = ((m1(x) - y) ** 2).mean()
        loss.backward()
        o1.step()
        o1.zero_grad()
        for sched in s1:
            sched.step()
        got = graph_step(x, y)
        for sched in s2:
            sched.step()
        assert abs(got.item() - loss.item()) < 1e-5
    return m1, m2, graph_step


def _assert_same_parameters(m1, m2, rtol, atol):
    for a, b in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().cpu().numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("opt_name", ["SGD", "AdamW"])
def test_train_graph_runs_the_fused_op(device, opt_name):
    def setup():
        oar.manual_seed(3)
        model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)).to(device)
        kw = dict(lr=0.05, momentum=0.9) if opt_name == "SGD" else dict(lr=0.01, weight_decay=0.1, amsgrad=True)
        opt = getattr(optim, opt_name)(model.parameters(), **kw)
        return model, opt, optim.lr_scheduler.StepLR(opt, 1, 0.7)

    m1, m2, graph_step = _train_side_by_side(setup, 5, [(4, 6), (4, 3)], device, seed=0)
    _assert_same_parameters(m1, m2, rtol=1e-5, atol=1e-6)
    fused = "sgd_step" if opt_name == "SGD" else "adam_step"
    ops = graph_step.graph.ops()
    assert ops.count(fused) == 1, ops  # one call updates every parameter (one device, one dtype)
    for elementwise in ("sqrt", "maximum"):
        assert elementwise not in ops, f"the optimizer update was not fused: {elementwise} in the graph"


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("opt_name", ["SGD", "AdamW"])
def test_train_graph_follows_cycled_momentum(device, opt_name):
    """OneCycleLR with cycle_momentum changes SGD's momentum or Adam's beta1 on every step: the graph reads
    them from its hyperparameter tensor, so one graph serves every step and matches eager training."""
    def setup():
        oar.manual_seed(5)
        model = nn.Sequential(nn.Linear(5, 7), nn.Tanh(), nn.Linear(7, 2)).to(device)
        kw = dict(lr=0.05, momentum=0.9, nesterov=True) if opt_name == "SGD" else dict(lr=0.01, weight_decay=0.1)
        opt = getattr(optim, opt_name)(model.parameters(), **kw)
        return model, opt, optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=12)

    seen = set()

    def record(opt):
        group = opt.param_groups[0]
        seen.add(group["momentum"] if opt_name == "SGD" else group["betas"][0])

    m1, m2, graph_step = _train_side_by_side(setup, 10, [(4, 5), (4, 2)], device, seed=1, before_step=record)
    assert len(seen) == 10, seen  # the schedule really changed the momentum every step
    # The first key keeps the starting values exact; when the schedule first changes them the graph reads
    # them from the tensor, for good: one more key, and no more after it.
    assert len(graph_step._states) == 2 and graph_step.graph is not None
    assert graph_step.graph.ops().count("sgd_step" if opt_name == "SGD" else "adam_step") == 1
    # From the tensor the betas are f32: 1 - beta2**t magnifies the rounding of beta2 (to ~4e-5 at t = 1).
    _assert_same_parameters(m1, m2, rtol=1e-5 if opt_name == "SGD" else 1e-4, atol=1e-6)


@pytest.mark.parametrize("device", DEVICES)
def test_train_graph_keeps_constant_betas_exact(device):
    """Betas no schedule touches stay float64 attributes of the graph: a float64 model's graph steps match
    eager ones to ~1e-9 (the f32 learning rate), where f32 betas would be off by ~2e-7."""
    def setup():
        oar.manual_seed(3)
        model = nn.Linear(6, 3).double().to(device)
        return model, optim.AdamW(model.parameters(), lr=0.01, betas=(0.9, 0.999), weight_decay=0.1)

    m1, m2, graph_step = _train_side_by_side(setup, 6, [(5, 6), (5, 3)], device, seed=4, dtype=oar.float64)
    assert len(graph_step._states) == 1 and graph_step.graph is not None
    _assert_same_parameters(m1, m2, rtol=0, atol=1e-8)


def test_train_graph_with_a_hyperparameter_changing_every_step_stays_bounded():
    """RMSprop's momentum is frozen into its graph: cycling it makes every step's key new. The steps then
    run eagerly (still correct), TrainGraph keeps at most _MAX_KEYS of them and warns once, naming it."""
    def setup():
        oar.manual_seed(2)
        model = nn.Linear(3, 2)
        opt = optim.RMSprop(model.parameters(), lr=0.01, momentum=0.9)
        return model, opt, optim.lr_scheduler.CyclicLR(opt, 0.001, 0.01, step_size_up=40)

    (m1, o1, s1), (m2, o2, s2) = setup(), setup()

    def step(x, y):
        loss = ((m2(x) - y) ** 2).mean()
        loss.backward()
        o2.step()
        o2.zero_grad()
        return loss

    graph_step = oar.jit.TrainGraph(step, o2, model=m2)
    rng = np.random.default_rng(4)
    with pytest.warns(RuntimeWarning, match=r"'momentum'") as record:
        for _ in range(30):
            x, y = oar.tensor(rng.standard_normal((4, 3)), dtype=oar.float32), oar.zeros(4, 2)
            loss = ((m1(x) - y) ** 2).mean()
            loss.backward()
            o1.step()
            o1.zero_grad()
            s1.step()
            assert abs(graph_step(x, y).item() - loss.item()) < 1e-6
            s2.step()
            assert len(graph_step._states) <= oar.jit.TrainGraph._MAX_KEYS
    assert len([w for w in record if issubclass(w.category, RuntimeWarning)]) == 1
    for a, b in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=1e-6)


def test_hyperparameter_tensor_is_checked():
    p, g = oar.zeros(3), oar.ones(3)
    with pytest.raises(oar.DTypeError, match="1 to 2 elements"):
        oar._C.sgd_update([p], [g], [oar.zeros(3)], [False], 0.1, 0.9, 0.0, 0.0, False, False, [oar.zeros(3)])
    with pytest.raises(oar.DTypeError, match="float32"):
        oar._C.sgd_update([p], [g], [], [], 0.1, 0.0, 0.0, 0.0, False, False, [oar.zeros(1, dtype=oar.float64)])
    with pytest.raises(ValueError, match="step counts as tensors"):
        oar._C.adam_update([p], [g], [oar.zeros(3)], [oar.zeros(3)], [], [1.0], [], 0.1, 0.9, 0.999, 1e-8, 0.0,
                           False, False, False, [oar.tensor([0.1, 0.9])])
    # [lr, momentum] overrides the attributes: one SGD step with a fresh buffer and then one more
    buf = oar.zeros(3)
    oar._C.sgd_update([p], [g], [buf], [True], 9.0, 0.1, 0.0, 0.0, False, False, [oar.tensor([0.5, 0.9])])
    np.testing.assert_allclose(p.numpy(), -0.5 * np.ones(3))
    oar._C.sgd_update([p], [g], [buf], [False], 9.0, 0.1, 0.0, 0.0, False, False, [oar.tensor([0.5, 0.9])])
    np.testing.assert_allclose(buf.numpy(), 1.9 * np.ones(3), rtol=1e-6)
    np.testing.assert_allclose(p.numpy(), (-0.5 - 0.5 * 1.9) * np.ones(3), rtol=1e-6)


def test_bad_lists_are_typed_errors():
    p = oar.zeros(3)
    with pytest.raises(oar.ShapeError, match=r"grads\[0\]"):
        oar._C.sgd_update([p], [oar.zeros(4)], [], [], 0.1, 0.0, 0.0, 0.0, False, False, [])
    with pytest.raises(ValueError, match="grads"):
        oar._C.sgd_update([p], [], [], [], 0.1, 0.0, 0.0, 0.0, False, False, [])
    with pytest.raises(oar.DTypeError):
        oar._C.adam_update([p], [oar.zeros(3, dtype=oar.float64)], [oar.zeros(3)], [oar.zeros(3)], [], [1.0], [],
                           0.1, 0.9, 0.999, 1e-8, 0.0, False, False, False, [])
