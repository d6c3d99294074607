"""oar.nn.utils additions: stateless.functional_call (gradients reaching the tensors passed in, a MAML
inner step against PyTorch 1.13, buffers, tied weights, strict, restoring the module also on errors),
the deprecated clip_grad_norm, get_total_norm / clip_grads_with_norm_, skip_init, and the
convert_parameters / fusion / stateless module paths."""
import numpy as np
import pytest

import oar
from oar import nn
from oar.nn import utils as U
from oar.nn.utils.stateless import functional_call

from torch_ref import import_torch

DEVICES = oar._C.info()["devices"]
RNG = np.random.default_rng(3)
X = RNG.standard_normal((5, 3))
Y = RNG.standard_normal((5, 1))


@pytest.fixture(scope="module")
def torch():
    return import_torch()


def N(t):
    return t.detach().cpu().numpy()


def mlp(device="cpu:0"):
    oar.manual_seed(2)
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).to(device=device, dtype=oar.float64)


@pytest.mark.parametrize("device", DEVICES)
def test_functional_call_swaps_and_restores(device):
    m = mlp(device)
    x = oar.tensor(X, dtype=oar.float64, device=device)
    own = {n: p for n, p in m.named_parameters()}
    new = {n: (p.detach() * 2).requires_grad_() for n, p in own.items()}
    out = functional_call(m, new, (x,))
    with oar.no_grad():
        want = x @ (2 * own["0.weight"]).T + 2 * own["0.bias"]
        want = want.tanh() @ (2 * own["2.weight"]).T + 2 * own["2.bias"]
    np.testing.assert_allclose(N(out), N(want), rtol=1e-12)
    out.sum().backward()
    assert all(new[n].grad is not None for n in new) and all(p.grad is None for p in m.parameters())
    assert all(getattr(m[int(n[0])], n[2:]) is p for n, p in own.items())  # the module's own tensors are back
    assert [n for n, _ in m.named_parameters()] == list(own)
    # a partial dict replaces only those; args as a single value; kwargs
    part = functional_call(m, {"2.bias": oar.tensor([100.0], dtype=oar.float64, device=device)}, x)
    np.testing.assert_allclose(N(part), N(m(x)) - N(m[2].bias) + 100.0, rtol=1e-12)


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 2)
        self.register_buffer("scale", oar.tensor(3.0))

    def forward(self, x, *, shift=0.0, fail=False):
        if fail:
            raise ValueError("boom")
        return self.lin(x) * self.scale + shift


def test_functional_call_buffers_kwargs_errors_and_tuple_of_dicts():
    m = Scaled()
    x = oar.ones(1, 2)
    base = m(x)
    out = functional_call(m, ({"scale": oar.tensor(1.0)}, {"lin.bias": oar.zeros(2)}), (x,), {"shift": 1.0})
    np.testing.assert_allclose(N(out), N((base / 3.0 - m.lin.bias) + 1.0), rtol=1e-6)
    with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
        functional_call(m, ({"scale": oar.tensor(1.0)}, {"scale": oar.tensor(2.0)}), (x,))
    keep = m.scale
    with pytest.raises(ValueError, match="boom"):
        functional_call(m, {"scale": oar.tensor(5.0), "lin.weight": oar.zeros(2, 2)}, (x,), {"fail": True})
    assert m.scale is keep and m.lin.weight is dict(m.named_parameters())["lin.weight"]
    assert isinstance(m.lin.weight, nn.Parameter)
    with pytest.raises(RuntimeError, match=r"Error\(s\) in reparametrizing for Scaled:\n\tUnexpected key\(s\): "
                                           r"'nope'.\n\tMissing key\(s\): 'lin.bias', 'scale'."):
        functional_call(m, {"lin.weight": oar.zeros(2, 2), "nope": oar.zeros(1)}, (x,), strict=True)
    full = {"lin.weight": oar.zeros(2, 2), "lin.bias": oar.ones(2), "scale": oar.tensor(2.0)}
    assert N(functional_call(m, full, (x,), strict=True)).tolist() == [[2.0, 2.0]]


def test_functional_call_batch_norm_updates_the_given_buffers():
    bn = nn.BatchNorm1d(2)
    mean, var = oar.zeros(2), oar.ones(2)
    x = oar.tensor([[1.0, 2.0], [3.0, 6.0]])
    functional_call(bn, {"running_mean": mean, "running_var": var}, (x,))
    np.testing.assert_allclose(N(mean), [0.2, 0.4], rtol=1e-6)  # momentum 0.1 * batch mean, in the given tensor
    assert N(bn.running_mean).tolist() == [0.0, 0.0]


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2, bias=False)
        self.b = nn.Linear(2, 2, bias=False)
        self.b.weight = self.a.weight

    def forward(self, x):
        return self.b(self.a(x))


def test_functional_call_tied_weights():
    m = Tied()
    x = oar.ones(1, 2)
    w = oar.eye(2) * 2
    assert N(functional_call(m, {"a.weight": w}, (x,))).tolist() == [[4.0, 4.0]]  # both names replaced
    untied = functional_call(m, {"a.weight": w}, (x,), tie_weights=False)
    np.testing.assert_allclose(N(untied), N(m.a(x * 2)), rtol=1e-6)
    with pytest.raises(ValueError, match="which are tied"):
        functional_call(m, {"a.weight": w, "b.weight": w * 3}, (x,))
    assert m.a.weight is m.b.weight


def test_maml_inner_step_matches_pytorch(torch):
    """One inner SGD step through functional_call, then the outer loss's gradient (second order)."""
    m = mlp()
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1)).double()
    tm.load_state_dict({k: torch.tensor(v.tolist(), dtype=torch.float64) for k, v in m.state_dict().items()})
    from torch.nn.utils.stateless import functional_call as t_call

    def run(lib, model, call, x, y):
        params = dict(model.named_parameters())
        inner = ((call(model, params, (x,)) - y) ** 2).mean()
        grads = lib.autograd.grad(inner, list(params.values()), create_graph=True)
        fast = {n: p - 0.3 * g for (n, p), g in zip(params.items(), grads)}
        outer = ((call(model, fast, (x * 0.5,)) - y) ** 2).mean()
        outer.backward()
        return outer.item(), [p.grad for p in model.parameters()]

    lo, go = run(oar, m, functional_call, oar.tensor(X, dtype=oar.float64), oar.tensor(Y, dtype=oar.float64))
    lt, gt = run(torch, tm, t_call, torch.tensor(X.tolist(), dtype=torch.float64),
                 torch.tensor(Y.tolist(), dtype=torch.float64))
    assert abs(lo - lt) < 1e-12
    for a, b in zip(go, gt):
        np.testing.assert_allclose(N(a), np.array(b.tolist()), rtol=1e-10, atol=1e-12)


def test_clip_grad_norm_deprecated_alias_and_split_api():
    def with_grads():
        ps = [nn.Parameter(oar.zeros(3)), nn.Parameter(oar.zeros(2, 2))]
        ps[0].grad = oar.tensor([3.0, 0.0, 4.0])
        ps[1].grad = oar.tensor([[0.0, 12.0], [0.0, 0.0]])
        return ps

    a, b, c = with_grads(), with_grads(), with_grads()
    with pytest.warns(FutureWarning, match="clip_grad_norm_"):
        na = U.clip_grad_norm(a, 6.5)
    nb = U.clip_grad_norm_(b, 6.5)
    total = U.get_total_norm([p.grad for p in c])
    U.clip_grads_with_norm_(c, 6.5, total)
    assert abs(na.item() - 13.0) < 1e-5 and abs(nb.item() - 13.0) < 1e-5 and abs(total.item() - 13.0) < 1e-5
    for x, y, z in zip(a, b, c):
        np.testing.assert_allclose(N(x.grad), N(y.grad), rtol=1e-7)
        np.testing.assert_allclose(N(z.grad), N(y.grad), rtol=1e-7)
    np.testing.assert_allclose(N(a[0].grad), [1.5, 0.0, 2.0], rtol=1e-5)
    assert U.get_total_norm([oar.tensor([-2.0, 1.0])], norm_type="inf").item() == 2.0
    assert U.get_total_norm([]).item() == 0.0


def test_skip_init_and_module_paths():
    lin = U.skip_init(nn.Linear, 3, 4, bias=False)
    assert tuple(lin.weight.shape) == (4, 3) and lin.bias is None and lin.weight.device == oar.device("cpu")
    with pytest.raises(RuntimeError, match="Expected a Module"):
        U.skip_init(int)

    class NoDevice(nn.Module):
        def __init__(self, n):
            super().__init__()

    with pytest.raises(RuntimeError, match="Module must support a 'device' arg"):
        U.skip_init(NoDevice, 2)
    from oar.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
    from oar.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval  # noqa: F401
    from oar.nn.utils import stateless, clip_grad  # noqa: F401
    assert parameters_to_vector is U.parameters_to_vector and clip_grad.parameters_to_vector is parameters_to_vector
    m = mlp()
    v = parameters_to_vector(m.parameters())
    assert tuple(v.shape) == (3 * 4 + 4 + 4 + 1,)
    vector_to_parameters(v * 0 + 1, m.parameters())
    assert all(np.all(N(p) == 1) for p in m.parameters())
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        vector_to_parameters([1.0], m.parameters())
    if len(DEVICES) > 1:
        mixed = [nn.Parameter(oar.ones(2, device=DEVICES[0])), nn.Parameter(oar.ones(2, device=DEVICES[1]))]
        with pytest.raises(TypeError, match="different devices"):
            parameters_to_vector(mixed)
