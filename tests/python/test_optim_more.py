"""oar.optim's RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam and LBFGS: each option combination over 10
steps on every present device against NumPy implementations of PyTorch's formulas (float64), and against
PyTorch itself when it can be imported (identical initial values and gradients, state_dict key layout,
a PyTorch optimizer state loaded into oar and continued); argument validation and defaults; state_dict
round trips (also through oar.save / oar.load) that continue exactly like an uninterrupted run; a
TrainGraph step giving the eager parameters; LBFGS on the Rosenbrock function (converges; PyTorch's
trajectory, with and without the strong-Wolfe line search), on least squares on every device, and its
refusal to be traced."""
import math

import numpy as np
import pytest

import oar
from oar import nn, optim
from oar.optim import lr_scheduler

from torch_ref import import_torch

DEVICES = oar._C.info()["devices"]
RNG = np.random.default_rng(7)
SHAPE = (3, 4)
P0 = RNG.standard_normal(SHAPE)
GRADS = [RNG.standard_normal(SHAPE) for _ in range(10)]


@pytest.fixture(scope="module")
def torch():
    return import_torch()


def torch_major(torch):
    return int(torch.__version__.split(".")[0])


# ---------------------------------------------------------------- NumPy references
# Each takes the parameter, the gradient and a dict of its state, and returns the new parameter.

def _g(p, g, weight_decay=0.0, maximize=False):
    g = -g if maximize else g
    return g + weight_decay * p


def np_rmsprop(p, g, st, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0, centered=False,
               maximize=False):
    g = _g(p, g, weight_decay, maximize)
    st["v"] = v = alpha * st.get("v", 0.0) + (1 - alpha) * g * g
    if centered:
        st["m"] = m = alpha * st.get("m", 0.0) + (1 - alpha) * g
        avg = np.sqrt(v - m * m) + eps
    else:
        avg = np.sqrt(v) + eps
    if momentum > 0:
        st["b"] = b = momentum * st.get("b", 0.0) + g / avg
        return p - lr * b
    return p - lr * g / avg


def np_adagrad(p, g, st, lr=1e-2, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0, eps=1e-10,
               maximize=False):
    t = st["t"] = st.get("t", 0) + 1
    g = _g(p, g, weight_decay, maximize)
    st["s"] = s = st.get("s", np.full_like(p, initial_accumulator_value)) + g * g
    return p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s) + eps)


def np_adadelta(p, g, st, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
    g = _g(p, g, weight_decay, maximize)
    st["v"] = v = rho * st.get("v", 0.0) + (1 - rho) * g * g
    delta = np.sqrt(st.get("u", 0.0) + eps) / np.sqrt(v + eps) * g
    st["u"] = rho * st.get("u", 0.0) + (1 - rho) * delta * delta
    return p - lr * delta


def np_adamax(p, g, st, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, maximize=False):
    t = st["t"] = st.get("t", 0) + 1
    g = _g(p, g, weight_decay, maximize)
    st["m"] = m = betas[0] * st.get("m", 0.0) + (1 - betas[0]) * g
    st["u"] = u = np.maximum(betas[1] * st.get("u", 0.0), np.abs(g) + eps)
    return p - lr / (1 - betas[0] ** t) * m / u


def np_nadam(p, g, st, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, momentum_decay=4e-3,
             decoupled_weight_decay=False, maximize=False):
    b1, b2 = betas
    t = st["t"] = st.get("t", 0) + 1
    if decoupled_weight_decay:
        g = _g(p, g, 0.0, maximize)
        p = p * (1 - lr * weight_decay)
    else:
        g = _g(p, g, weight_decay, maximize)
    mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
    mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
    st["prod"] = prod = st.get("prod", 1.0) * mu
    st["m"] = m = b1 * st.get("m", 0.0) + (1 - b1) * g
    st["v"] = v = b2 * st.get("v", 0.0) + (1 - b2) * g * g
    denom = np.sqrt(v / (1 - b2 ** t)) + eps
    return p - lr * (1 - mu) / (1 - prod) * g / denom - lr * mu_next / (1 - prod * mu_next) * m / denom


def np_radam(p, g, st, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, decoupled_weight_decay=False,
             maximize=False):
    b1, b2 = betas
    t = st["t"] = st.get("t", 0) + 1
    if decoupled_weight_decay:
        g = _g(p, g, 0.0, maximize)
        p = p * (1 - lr * weight_decay)
    else:
        g = _g(p, g, weight_decay, maximize)
    st["m"] = m = b1 * st.get("m", 0.0) + (1 - b1) * g
    st["v"] = v = b2 * st.get("v", 0.0) + (1 - b2) * g * g
    m_hat = m / (1 - b1 ** t)
    rho_inf = 2 / (1 - b2) - 1
    rho_t = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
    st.setdefault("rect", []).append(rho_t > 5)
    if rho_t > 5:
        r = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
        return p - lr * m_hat * r * math.sqrt(1 - b2 ** t) / (np.sqrt(v) + eps)
    return p - lr * m_hat


# (optimizer, reference, options, PyTorch's state keys)
CASES = [
    ("RMSprop", np_rmsprop, {}, {"step", "square_avg"}),
    ("RMSprop", np_rmsprop, dict(lr=0.03, alpha=0.9, eps=1e-4, weight_decay=0.1), {"step", "square_avg"}),
    ("RMSprop", np_rmsprop, dict(lr=0.01, momentum=0.9), {"step", "square_avg", "momentum_buffer"}),
    ("RMSprop", np_rmsprop, dict(lr=0.01, centered=True), {"step", "square_avg", "grad_avg"}),
    ("RMSprop", np_rmsprop, dict(lr=0.02, centered=True, momentum=0.5, weight_decay=0.05, maximize=True),
     {"step", "square_avg", "grad_avg", "momentum_buffer"}),
    ("Adagrad", np_adagrad, dict(lr=0.1), {"step", "sum"}),
    ("Adagrad", np_adagrad, dict(lr=0.1, lr_decay=0.05, weight_decay=0.1), {"step", "sum"}),
    ("Adagrad", np_adagrad, dict(lr=0.05, initial_accumulator_value=0.5, eps=1e-6, maximize=True), {"step", "sum"}),
    ("Adadelta", np_adadelta, {}, {"step", "square_avg", "acc_delta"}),
    ("Adadelta", np_adadelta, dict(lr=0.5, rho=0.8, weight_decay=0.1), {"step", "square_avg", "acc_delta"}),
    ("Adadelta", np_adadelta, dict(eps=1e-3, maximize=True), {"step", "square_avg", "acc_delta"}),
    ("Adamax", np_adamax, {}, {"step", "exp_avg", "exp_inf"}),
    ("Adamax", np_adamax, dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1), {"step", "exp_avg", "exp_inf"}),
    ("Adamax", np_adamax, dict(lr=0.02, eps=1e-3, maximize=True), {"step", "exp_avg", "exp_inf"}),
    ("NAdam", np_nadam, {}, {"step", "mu_product", "exp_avg", "exp_avg_sq"}),
    ("NAdam", np_nadam, dict(lr=0.01, weight_decay=0.1), {"step", "mu_product", "exp_avg", "exp_avg_sq"}),
    ("NAdam", np_nadam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
     {"step", "mu_product", "exp_avg", "exp_avg_sq"}),
    ("NAdam", np_nadam, dict(lr=0.02, betas=(0.8, 0.95), momentum_decay=0.01, maximize=True),
     {"step", "mu_product", "exp_avg", "exp_avg_sq"}),
    ("RAdam", np_radam, {}, {"step", "exp_avg", "exp_avg_sq"}),
    ("RAdam", np_radam, dict(lr=0.01, betas=(0.8, 0.99), weight_decay=0.1), {"step", "exp_avg", "exp_avg_sq"}),
    ("RAdam", np_radam, dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True),
     {"step", "exp_avg", "exp_avg_sq"}),
    ("RAdam", np_radam, dict(lr=0.01, maximize=True), {"step", "exp_avg", "exp_avg_sq"}),
]
IDS = [f"{name}-{i}" for i, (name, *_) in enumerate(CASES)]


def oar_run(name, kw, grads, device="cpu:0", p0=P0):
    p = nn.Parameter(oar.tensor(p0, dtype=oar.float64, device=device))
    opt = getattr(optim, name)([p], **kw)
    for g in grads:
        p.grad = oar.tensor(g, dtype=oar.float64, device=device)
        opt.step()
    return p, opt


def np_run(rule, kw, grads, p=P0, st=None):
    st = {} if st is None else st
    for g in grads:
        p = rule(p, g, st, **kw)
    return p, st


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("case", range(len(CASES)), ids=IDS)
def test_matches_numpy_reference(case, device):
    name, rule, kw, keys = CASES[case]
    p, opt = oar_run(name, kw, GRADS, device)
    want, st = np_run(rule, kw, GRADS)
    np.testing.assert_allclose(p.detach().cpu().numpy(), want, rtol=1e-9, atol=1e-12)
    state = opt.state[p]
    assert set(state) == keys and int(state["step"]) == len(GRADS)
    for k, v in state.items():
        if isinstance(v, oar.Tensor) and k != "step":
            assert v.device == p.device and v.dtype == p.dtype and tuple(v.shape) == SHAPE, k
    if name == "RAdam":
        assert st["rect"][0] is False and st["rect"][-1] is True  # both branches were exercised


def torch_tensor(torch, a):
    return torch.tensor(np.asarray(a).tolist(), dtype=torch.float64)


def make_torch_opt(torch, name, kw, p):
    try:
        return getattr(torch.optim, name)([p], **kw)
    except TypeError as e:  # an option this PyTorch version doesn't have
        pytest.skip(f"torch {torch.__version__} {name}: {e}")


@pytest.mark.parametrize("case", range(len(CASES)), ids=IDS)
def test_matches_pytorch(torch, case):
    name, _, kw, keys = CASES[case]
    if name == "NAdam" and torch_major(torch) < 2:
        pytest.skip("PyTorch < 2.0's NAdam multiplies mu_t into mu_product * mu_next twice (fixed in 2.0)")
    tp = torch_tensor(torch, P0).requires_grad_()
    topt = make_torch_opt(torch, name, kw, tp)
    for g in GRADS[:5]:
        tp.grad = torch_tensor(torch, g)
        topt.step()
    sd = topt.state_dict()
    assert set(sd["state"][0]) == keys
    p, opt = oar_run(name, kw, GRADS[:5])
    np.testing.assert_allclose(p.detach().numpy(), np.array(tp.detach().tolist()), rtol=1e-6, atol=1e-9)
    assert set(opt.state_dict()["state"][0]) == keys
    extra = set(opt.param_groups[0]) - {"params"} - set(sd["param_groups"][0])
    assert not extra or torch_major(torch) < 2 and extra <= {"maximize", "decoupled_weight_decay"}

    # PyTorch's state (0-d tensor or int steps) loaded into a fresh oar optimizer continues identically
    state = {i: {k: (oar.tensor(v.tolist(), dtype=oar.float64 if v.dtype == torch.float64 else oar.float32)
                     if torch.is_tensor(v) else v) for k, v in s.items()} for i, s in sd["state"].items()}
    groups = [dict(g) for g in sd["param_groups"]]
    q = nn.Parameter(oar.tensor(tp.detach().tolist(), dtype=oar.float64))
    opt2 = getattr(optim, name)([q], **kw)
    opt2.load_state_dict({"state": state, "param_groups": groups})
    for g in GRADS[5:]:
        tp.grad = torch_tensor(torch, g)
        topt.step()
        q.grad = oar.tensor(g, dtype=oar.float64)
        opt2.step()
    np.testing.assert_allclose(q.detach().numpy(), np.array(tp.detach().tolist()), rtol=1e-6, atol=1e-9)
    assert int(opt2.state[q]["step"]) == len(GRADS)


# ---------------------------------------------------------------- construction
@pytest.mark.parametrize("name, kw, message", [
    ("RMSprop", dict(lr=-1), "Invalid learning rate: -1"),
    ("RMSprop", dict(eps=-1e-3), "Invalid epsilon value: -0.001"),
    ("RMSprop", dict(momentum=-0.5), "Invalid momentum value: -0.5"),
    ("RMSprop", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
    ("RMSprop", dict(alpha=-0.1), "Invalid alpha value: -0.1"),
    ("Adagrad", dict(lr_decay=-1), "Invalid lr_decay value: -1"),
    ("Adagrad", dict(initial_accumulator_value=-1), "Invalid initial_accumulator_value value: -1"),
    ("Adagrad", dict(eps=-1), "Invalid epsilon value: -1"),
    ("Adadelta", dict(rho=1.5), "Invalid rho value: 1.5"),
    ("Adadelta", dict(lr=-0.1), "Invalid learning rate: -0.1"),
    ("Adamax", dict(betas=(1.0, 0.9)), "Invalid beta parameter at index 0: 1.0"),
    ("Adamax", dict(betas=(0.9, -0.1)), "Invalid beta parameter at index 1: -0.1"),
    ("NAdam", dict(momentum_decay=-1), "Invalid momentum_decay value: -1"),
    ("NAdam", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
    ("RAdam", dict(eps=-1), "Invalid epsilon value: -1"),
    ("LBFGS", dict(lr=-1), "Invalid learning rate: -1"),
])
def test_argument_validation(name, kw, message):
    with pytest.raises(ValueError, match=f"^{message}$"):
        getattr(optim, name)([nn.Parameter(oar.ones(2))], **kw)


DEFAULTS = {
    "RMSprop": dict(lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0, centered=False, maximize=False),
    "Adagrad": dict(lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0, eps=1e-10, maximize=False),
    "Adadelta": dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, maximize=False),
    "Adamax": dict(lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, maximize=False),
    "NAdam": dict(lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, momentum_decay=4e-3,
                  decoupled_weight_decay=False, maximize=False),
    "RAdam": dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, decoupled_weight_decay=False,
                  maximize=False),
    "LBFGS": dict(lr=1, max_iter=20, max_eval=25, tolerance_grad=1e-7, tolerance_change=1e-9, history_size=100,
                  line_search_fn=None),
}
IGNORED = {"RMSprop": ["foreach", "capturable", "differentiable"], "Adagrad": ["foreach", "differentiable", "fused"],
           "Adadelta": ["foreach", "capturable", "differentiable"],
           "Adamax": ["foreach", "differentiable", "capturable"],
           "NAdam": ["foreach", "capturable", "differentiable"], "RAdam": ["foreach", "capturable", "differentiable"]}


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_defaults_and_ignored_keywords(name):
    opt = getattr(optim, name)([nn.Parameter(oar.ones(2))])
    group = {k: v for k, v in opt.param_groups[0].items() if k != "params"}
    assert group == DEFAULTS[name]
    if name in IGNORED:  # PyTorch's implementation switches: accepted, with no effect here
        getattr(optim, name)([nn.Parameter(oar.ones(2))], **{k: False for k in IGNORED[name]})
    assert name in optim.__all__


def test_param_groups_and_missing_gradients():
    a, b, c = (nn.Parameter(oar.tensor(P0, dtype=oar.float64)) for _ in range(3))
    opt = optim.RMSprop([{"params": [a]}, {"params": [b, c], "lr": 0.05, "centered": True}], lr=0.01)
    for g in GRADS[:3]:
        a.grad = oar.tensor(g, dtype=oar.float64)
        b.grad = oar.tensor(g, dtype=oar.float64)
        opt.step()  # c never has a gradient: no state, unchanged
    np.testing.assert_allclose(a.detach().numpy(), np_run(np_rmsprop, dict(lr=0.01), GRADS[:3])[0], rtol=1e-10)
    np.testing.assert_allclose(b.detach().numpy(), np_run(np_rmsprop, dict(lr=0.05, centered=True), GRADS[:3])[0],
                               rtol=1e-10)
    assert np.array_equal(c.detach().numpy(), P0) and not opt.state.get(c)


def test_adagrad_state_exists_before_the_first_step():
    p = nn.Parameter(oar.zeros(2, 2))
    opt = optim.Adagrad([p], initial_accumulator_value=0.25)
    sd = opt.state_dict()
    assert set(sd["state"][0]) == {"step", "sum"} and sd["state"][0]["step"] == 0
    np.testing.assert_array_equal(sd["state"][0]["sum"].numpy(), np.full((2, 2), 0.25, np.float32))
    extra = nn.Parameter(oar.ones(3))
    opt.add_param_group({"params": [extra]})  # a later group gets its state at its first step
    extra.grad = oar.ones(3)
    opt.step()
    assert opt.state[extra]["step"] == 1


# ---------------------------------------------------------------- state_dict round trips
ROUND_TRIP = [("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.01)),
              ("Adagrad", dict(lr=0.1, lr_decay=0.01)), ("Adadelta", dict(rho=0.8)),
              ("Adamax", dict(lr=0.01)), ("NAdam", dict(lr=0.01, decoupled_weight_decay=True, weight_decay=0.1)),
              ("RAdam", dict(lr=0.01))]


@pytest.mark.parametrize("name, kw", ROUND_TRIP, ids=[n for n, _ in ROUND_TRIP])
def test_state_dict_round_trip_continues_identically(name, kw, tmp_path):
    grads = GRADS[:8]
    p_full, _ = oar_run(name, kw, grads)

    p1, o1 = oar_run(name, kw, grads[:4])
    path = tmp_path / "opt.oar"
    oar.save(o1.state_dict(), path)
    sd = oar.load(path)
    for g in grads[4:]:  # the original continues; its saved state must not be affected
        p1.grad = oar.tensor(g, dtype=oar.float64)
        o1.step()

    p2 = nn.Parameter(oar.tensor(P0, dtype=oar.float64))
    o2 = getattr(optim, name)([p2], lr=123.0)  # the loaded param_groups bring back the options
    o2.load_state_dict(sd)
    assert o2.param_groups[0]["lr"] == kw.get("lr", DEFAULTS[name]["lr"])
    p2_start, _ = oar_run(name, kw, grads[:4])
    with oar.no_grad():
        p2.copy_(p2_start)
    for g in grads[4:]:
        p2.grad = oar.tensor(g, dtype=oar.float64)
        o2.step()
    assert np.array_equal(p1.detach().numpy(), p_full.detach().numpy())
    assert np.array_equal(p2.detach().numpy(), p_full.detach().numpy())
    assert int(o2.state[p2]["step"]) == 8


# ---------------------------------------------------------------- training graphs
GRAPH_CASES = [("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.01)),
               ("Adagrad", dict(lr=0.05, lr_decay=0.01, weight_decay=0.01)), ("Adadelta", dict(lr=1.0)),
               ("Adamax", dict(lr=0.01, weight_decay=0.01)), ("NAdam", dict(lr=0.01)),
               ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True))]


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name, kw", GRAPH_CASES, ids=[n for n, _ in GRAPH_CASES])
def test_train_graph_matches_eager(name, kw, device):
    def setup():
        oar.manual_seed(4)
        model = nn.Sequential(nn.Linear(6, 16), nn.Tanh(), nn.Linear(16, 3)).to(device)
        opt = getattr(optim, name)(model.parameters(), **kw)
        return model, opt, lr_scheduler.StepLR(opt, 3, 0.5)  # the graph must follow lr changes

    (m1, o1, s1), (m2, o2, s2) = setup(), setup()

    def step(x, y):
        loss = ((m2(x) - y) ** 2).mean()
        loss.backward()
        o2.step()
        o2.zero_grad()
        return loss

    train_step = oar.jit.TrainGraph(step, o2, model=m2)
    rng = np.random.default_rng(5)
    n = 9  # RAdam's rectification starts at step 7: inside the graph runs
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
        np.testing.assert_allclose(b.detach().cpu().numpy(), a.detach().cpu().numpy(), rtol=1e-4, atol=1e-5)
    p = next(iter(m2.parameters()))
    assert float(o2.state[p]["step"]) == n and int(o1.state[next(iter(m1.parameters()))]["step"]) == n
    assert train_step.graph.update_count > len(list(m2.parameters()))  # parameters and optimizer state


# ---------------------------------------------------------------- LBFGS
def rosenbrock_oar(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


def rosenbrock_grad(x):
    return np.array([-2 * (1 - x[0]) - 400 * x[0] * (x[1] - x[0] ** 2), 200 * (x[1] - x[0] ** 2)])


X0 = [-1.5, 2.0]


def lbfgs_oar(steps, device="cpu:0", **kw):
    x = nn.Parameter(oar.tensor(X0, dtype=oar.float64, device=device))
    opt = optim.LBFGS([x], **kw)
    losses = []

    def closure():
        opt.zero_grad()
        loss = rosenbrock_oar(x)
        loss.backward()
        return loss
    path = []
    for _ in range(steps):
        losses.append(float(opt.step(closure)))
        path.append(x.detach().cpu().numpy().copy())
    return np.array(path), losses, opt


@pytest.mark.parametrize("device", DEVICES)
def test_lbfgs_strong_wolfe_minimises_rosenbrock(device):
    # the default tolerance_change (1e-9, absolute) stops once the loss is that small: ask for more
    path, losses, opt = lbfgs_oar(5, device, lr=1, max_iter=20, history_size=10, line_search_fn="strong_wolfe",
                                  tolerance_grad=1e-12, tolerance_change=1e-15)
    x = path[-1]
    np.testing.assert_allclose(x, [1.0, 1.0], atol=1e-7)
    assert np.abs(rosenbrock_grad(x)).max() < 1e-5  # stationary, checked in NumPy
    assert all(a >= b for a, b in zip(losses, losses[1:]))
    assert losses[0] == pytest.approx(2.5 ** 2 + 100 * (2.0 - 2.25) ** 2)
    state = opt.state[opt.param_groups[0]["params"][0]]
    assert {"func_evals", "n_iter", "d", "t", "old_dirs", "old_stps", "ro", "H_diag", "prev_flat_grad",
            "prev_loss", "al"} <= set(state)
    assert len(state["old_dirs"]) <= 10 and state["func_evals"] > state["n_iter"]


@pytest.mark.parametrize("kw", [dict(lr=1, max_iter=20, history_size=10, line_search_fn="strong_wolfe"),
                                dict(lr=0.1, max_iter=15, history_size=5),  # 4 steps: see below
                                dict(lr=1, max_iter=4, max_eval=6, history_size=3, line_search_fn="strong_wolfe")],
                         ids=["strong_wolfe", "fixed_step", "short"])
def test_lbfgs_follows_pytorch_trajectory(torch, kw):
    # Rounding differences (1e-14 after a step: dot products summed in another order) grow ~100x per
    # step of fixed-step L-BFGS on this valley, so that one is compared over 4 steps
    steps = 6 if kw.get("line_search_fn") else 4
    path, losses, _ = lbfgs_oar(steps, **kw)
    x = torch.tensor(X0, dtype=torch.float64, requires_grad=True)
    topt = torch.optim.LBFGS([x], **kw)

    def closure():
        topt.zero_grad()
        loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
        loss.backward()
        return loss
    for i in range(steps):
        assert float(topt.step(closure)) == pytest.approx(losses[i], rel=1e-6, abs=1e-12)
        np.testing.assert_allclose(path[i], x.detach().tolist(), rtol=1e-6, atol=1e-9, err_msg=f"step {i}")
    tstate = topt.state[x]
    assert tstate["func_evals"] > 0  # same bookkeeping keys as PyTorch
    assert set(tstate) == set(lbfgs_oar(1, **kw)[2].state_dict()["state"][0])


@pytest.mark.parametrize("device", DEVICES)
def test_lbfgs_least_squares_several_parameters(device):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((20, 3))
    y = a @ np.array([1.0, -2.0, 0.5]) + 0.25 + 0.01 * rng.standard_normal(20)
    w = nn.Parameter(oar.zeros(3, dtype=oar.float64, device=device))
    b = nn.Parameter(oar.zeros(1, dtype=oar.float64, device=device))
    unused = nn.Parameter(oar.ones(2, dtype=oar.float64, device=device))  # never gets a gradient
    opt = optim.LBFGS([w, b, unused], line_search_fn="strong_wolfe", tolerance_change=1e-15)
    at, yt = oar.tensor(a, device=device), oar.tensor(y, device=device)

    def closure():
        opt.zero_grad()
        loss = (((at @ w.reshape(3, 1)).reshape(20) + b - yt) ** 2).mean()
        loss.backward()
        return loss
    for _ in range(3):
        opt.step(closure)
    want = np.linalg.lstsq(np.hstack([a, np.ones((20, 1))]), y, rcond=None)[0]
    np.testing.assert_allclose(np.concatenate([w.detach().cpu().numpy(), b.detach().cpu().numpy()]), want,
                               atol=1e-6)
    np.testing.assert_array_equal(unused.detach().cpu().numpy(), [1.0, 1.0])


def test_lbfgs_state_dict_round_trip(tmp_path):
    kw = dict(lr=1, max_iter=5, history_size=4, line_search_fn="strong_wolfe")
    full_path, _, _ = lbfgs_oar(4, **kw)
    _, _, opt = lbfgs_oar(2, **kw)
    oar.save(opt.state_dict(), tmp_path / "lbfgs.oar")
    x = nn.Parameter(oar.tensor(full_path[1], dtype=oar.float64))
    opt2 = optim.LBFGS([x], **kw)
    opt2.load_state_dict(oar.load(tmp_path / "lbfgs.oar"))

    def closure():
        opt2.zero_grad()
        loss = rosenbrock_oar(x)
        loss.backward()
        return loss
    for i in (2, 3):
        opt2.step(closure)
        np.testing.assert_allclose(x.detach().numpy(), full_path[i], rtol=1e-12, atol=1e-14)


def test_lbfgs_is_eager_only_and_needs_a_closure():
    x = nn.Parameter(oar.tensor(X0))
    opt = optim.LBFGS([x], max_iter=2)

    def closure():
        opt.zero_grad()
        loss = rosenbrock_oar(x)
        loss.backward()
        return loss

    def step():
        return opt.step(closure)
    train_step = oar.jit.TrainGraph(step, opt)
    train_step()  # the first call runs eagerly
    with pytest.raises(RuntimeError, match="LBFGS can't be traced"):
        train_step()
    with pytest.raises(TypeError):
        opt.step()
    with pytest.raises(ValueError, match="parameter groups"):
        optim.LBFGS([{"params": [x]}, {"params": [nn.Parameter(oar.ones(1))], "lr": 0.1}])
