"""torch's out= keyword on oar's functions (oar/_out.py): the result written into out (resized when its shape
differs, with torch's warning for a non-empty out), out returned (a tuple of outs for functions returning
several tensors), torch's dtype rule (the result must be castable to out's dtype), out on another device and
autograd inputs refused; checked against PyTorch 1.13 (where installed) on every device, and on oar.compat."""
import os
import pickle
import sys
import textwrap
import warnings

import numpy as np
import pytest

import oar
from oar import _out
from torch_ref import from_torch

DEVICES = oar._C.info()["devices"]

# the same inputs for both frameworks, built from these lists
DATA = {
    "a": ([[0.5, -1.25, 2.0], [3.0, 0.0, -0.75]], "float32"),
    "b": ([[1.5, 0.25, -2.0], [-0.5, 4.0, 0.75]], "float32"),
    "v": ([0.25, 1.5, -2.0, 0.75], "float32"),
    "u": ([0.15, 0.35, 0.55, 0.85], "float32"),  # in (0, 1): every unary function is defined there
    "sq": ([[4.0, 1.0, 0.5], [1.0, 3.0, 0.25], [0.5, 0.25, 2.0]], "float32"),  # symmetric positive definite
    "i": ([[0, 2, 1], [1, 0, 2]], "int64"),
    "idx": ([2, 0], "int64"),
    "n": ([3, -7, 12, 5], "int64"),
    "mask": ([[True, False, True], [False, True, True]], "bool"),
    "mask2": ([[True, True, False], [False, True, False]], "bool"),
    "sorted": ([-1.0, 0.0, 0.5, 2.0], "float32"),
}


def inputs(mod, device=None):
    kw = {} if device is None else {"device": device}
    return {k: mod.tensor(v, dtype=getattr(mod, dt), **kw) for k, (v, dt) in DATA.items()}


def empties(mod, dtypes, device=None):
    kw = {} if device is None else {"device": device}
    if isinstance(dtypes, str):
        return mod.empty(0, dtype=getattr(mod, dtypes), **kw)
    return tuple(mod.empty(0, dtype=getattr(mod, d), **kw) for d in dtypes)


def dtype_name(t):
    return str(t.dtype).rpartition(".")[2]


# name -> (call(mod, tensors, out) -> result, out dtype(s)); `mod` is oar or torch
CASES = {
    "add": (lambda m, t, out: m.add(t["a"], t["b"], alpha=2, out=out), "float32"),
    "add number": (lambda m, t, out: m.add(t["a"], 1, out=out), "float32"),
    "sub": (lambda m, t, out: m.sub(t["a"], t["b"], out=out), "float32"),
    "mul into float64": (lambda m, t, out: m.mul(t["a"], t["b"], out=out), "float64"),
    "div floor": (lambda m, t, out: m.div(t["a"], t["b"], rounding_mode="floor", out=out), "float32"),
    "true_divide ints": (lambda m, t, out: m.true_divide(t["n"], 2, out=out), "float32"),
    "int add into float": (lambda m, t, out: m.add(t["n"], t["n"], out=out), "float32"),
    "remainder": (lambda m, t, out: m.remainder(t["a"], 1.5, out=out), "float32"),
    "pow": (lambda m, t, out: m.pow(t["a"], 2, out=out), "float32"),
    "atan2": (lambda m, t, out: m.atan2(t["a"], t["b"], out=out), "float32"),
    "lerp": (lambda m, t, out: m.lerp(t["a"], t["b"], 0.25, out=out), "float32"),
    "maximum": (lambda m, t, out: m.maximum(t["a"], t["b"], out=out), "float32"),
    "copysign": (lambda m, t, out: m.copysign(t["a"], t["b"], out=out), "float32"),
    "log2": (lambda m, t, out: m.log2(t["u"], out=out), "float32"),
    "exp into float64": (lambda m, t, out: m.exp(t["a"], out=out), "float64"),
    "clamp": (lambda m, t, out: m.clamp(t["a"], -1, 1, out=out), "float32"),
    "clamp tensor bound": (lambda m, t, out: m.clamp(t["a"], min=t["b"], out=out), "float32"),
    "nan_to_num": (lambda m, t, out: m.nan_to_num(t["a"], out=out), "float32"),
    "cumsum": (lambda m, t, out: m.cumsum(t["a"], 1, out=out), "float32"),
    "cumsum ints into float": (lambda m, t, out: m.cumsum(t["n"], 0, out=out), "float32"),
    "cumprod": (lambda m, t, out: m.cumprod(t["a"], 0, out=out), "float32"),
    "sum dim": (lambda m, t, out: m.sum(t["a"], 1, out=out), "float32"),
    "sum keepdim into float64": (lambda m, t, out: m.sum(t["a"], 0, keepdim=True, out=out), "float64"),
    "mean": (lambda m, t, out: m.mean(t["a"], 0, out=out), "float32"),
    "prod": (lambda m, t, out: m.prod(t["a"], 1, out=out), "float32"),
    "amax": (lambda m, t, out: m.amax(t["a"], 1, out=out), "float32"),
    "std": (lambda m, t, out: m.std(t["a"], 1, out=out), "float32"),
    "logsumexp": (lambda m, t, out: m.logsumexp(t["a"], 1, out=out), "float32"),
    "softmax": (lambda m, t, out: m.softmax(t["a"], 1, out=out), "float32"),
    "matmul": (lambda m, t, out: m.matmul(t["a"], t["b"].T, out=out), "float32"),
    "mm": (lambda m, t, out: m.mm(t["sq"], t["sq"], out=out), "float32"),
    "matmul vectors": (lambda m, t, out: m.matmul(t["v"], t["v"], out=out), "float32"),
    "addmm": (lambda m, t, out: m.addmm(t["sq"], t["sq"], t["sq"], beta=0.5, out=out), "float32"),
    "outer": (lambda m, t, out: m.outer(t["v"], t["u"], out=out), "float32"),
    "cat": (lambda m, t, out: m.cat([t["a"], t["b"]], 1, out=out), "float32"),
    "stack": (lambda m, t, out: m.stack([t["a"], t["b"]], out=out), "float32"),
    "where": (lambda m, t, out: m.where(t["mask"], t["a"], t["b"], out=out), "float32"),
    "eq": (lambda m, t, out: m.eq(t["a"], t["b"], out=out), "bool"),
    "gt into float": (lambda m, t, out: m.gt(t["a"], 0, out=out), "float32"),
    "logical_and": (lambda m, t, out: m.logical_and(t["mask"], t["mask2"], out=out), "bool"),
    "bitwise_and": (lambda m, t, out: m.bitwise_and(t["n"], 6, out=out), "int64"),
    "gather": (lambda m, t, out: m.gather(t["a"], 1, t["i"], out=out), "float32"),
    "index_select": (lambda m, t, out: m.index_select(t["a"], 1, t["idx"], out=out), "float32"),
    "masked_select": (lambda m, t, out: m.masked_select(t["a"], t["mask"], out=out), "float32"),
    "nonzero": (lambda m, t, out: m.nonzero(t["mask"], out=out), "int64"),
    "searchsorted": (lambda m, t, out: m.searchsorted(t["sorted"], t["v"], out=out), "int64"),
    "tril": (lambda m, t, out: m.tril(t["sq"], out=out), "float32"),
    "diag": (lambda m, t, out: m.diag(t["v"], out=out), "float32"),
    "sort": (lambda m, t, out: m.sort(t["v"], descending=True, out=out), ("float32", "int64")),
    "topk": (lambda m, t, out: m.topk(t["a"], 2, dim=1, out=out), ("float32", "int64")),
    "max dim": (lambda m, t, out: m.max(t["a"], 1, out=out), ("float32", "int64")),
    "min dim keepdim": (lambda m, t, out: m.min(t["a"], dim=0, keepdim=True, out=out), ("float32", "int64")),
    "max elementwise": (lambda m, t, out: m.max(t["a"], t["b"], out=out), "float32"),
    "kthvalue": (lambda m, t, out: m.kthvalue(t["v"], 2, out=out), ("float32", "int64")),
    "cummax": (lambda m, t, out: m.cummax(t["v"], 0, out=out), ("float32", "int64")),
    "arange into float64": (lambda m, t, out: m.arange(5, out=out), "float64"),
    "arange step": (lambda m, t, out: m.arange(1, 2, 0.25, out=out), "float32"),
    "zeros into int64": (lambda m, t, out: m.zeros(2, 3, out=out), "int64"),
    "ones": (lambda m, t, out: m.ones((2, 2), out=out), "float32"),
    "full": (lambda m, t, out: m.full((2, 2), 3, out=out), "float64"),
    "linspace into float64": (lambda m, t, out: m.linspace(0, 1, 5, out=out), "float64"),
    "eye": (lambda m, t, out: m.eye(3, out=out), "float32"),
    "linalg.inv": (lambda m, t, out: m.linalg.inv(t["sq"], out=out), "float32"),
    "linalg.det": (lambda m, t, out: m.linalg.det(t["sq"], out=out), "float32"),
    "linalg.solve": (lambda m, t, out: m.linalg.solve(t["sq"], t["v"][:3], out=out), "float32"),
    "linalg.cholesky": (lambda m, t, out: m.linalg.cholesky(t["sq"], out=out), "float32"),
    "linalg.vector_norm": (lambda m, t, out: m.linalg.vector_norm(t["a"], dim=1, out=out), "float32"),
    "linalg.matrix_norm": (lambda m, t, out: m.linalg.matrix_norm(t["sq"], out=out), "float32"),
    "linalg.slogdet": (lambda m, t, out: m.linalg.slogdet(t["sq"], out=out), ("float32", "float32")),
    "linalg.eigvalsh": (lambda m, t, out: m.linalg.eigvalsh(t["sq"], out=out), "float32"),
    "linalg.matrix_power": (lambda m, t, out: m.linalg.matrix_power(t["sq"], 2, out=out), "float32"),
    "special.erf": (lambda m, t, out: m.special.erf(t["a"], out=out), "float32"),
    "special.expit": (lambda m, t, out: m.special.expit(t["a"], out=out), "float32"),
    "special.xlogy": (lambda m, t, out: m.special.xlogy(t["u"], t["u"], out=out), "float32"),
    "fft.rfftfreq": (lambda m, t, out: m.fft.rfftfreq(8, out=out), "float32"),
    "F.gelu": (lambda m, t, out: m.nn.functional.gelu(t["a"], out=out), "float32"),
    "F.normalize": (lambda m, t, out: m.nn.functional.normalize(t["a"], dim=1, out=out), "float32"),
}

# one-input functions: f(u, out=out), u in (0, 1)
UNARY = ("abs absolute acos arccos acosh asin arcsin asinh atan arctan atanh ceil cos cosh deg2rad digamma erf "
         "erfc erfinv exp exp2 expm1 fix floor frac i0 lgamma log log10 log1p log2 logit neg negative "
         "rad2deg reciprocal round rsqrt sgn sigmoid sign sin sinc sinh sqrt square tan tanh trunc").split()


def _assert_same(ours, theirs, label, atol=1e-5):
    assert tuple(ours.shape) == tuple(theirs.shape), (label, tuple(ours.shape), tuple(theirs.shape))
    assert dtype_name(ours) == dtype_name(theirs), (label, ours.dtype, theirs.dtype)
    np.testing.assert_allclose(ours.detach().cpu().numpy().astype(np.float64),
                               from_torch(theirs).astype(np.float64), rtol=1e-5, atol=atol, err_msg=label)


def _check_case(torch, device, label, call, dtypes):
    out, tout = empties(oar, dtypes, device), empties(torch, dtypes)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an empty out is resized silently, as torch does
        ours = call(oar, inputs(oar, device), out)
        theirs = call(torch, inputs(torch), tout)
    if isinstance(out, tuple):
        assert isinstance(ours, tuple) and len(ours) == len(out), label
        for k, (o, r, t) in enumerate(zip(out, ours, theirs)):
            assert r is o, f"{label}: result {k} is not out[{k}]"
            _assert_same(o, t, f"{label}[{k}]")
    else:
        assert ours is out, f"{label}: the result is not out"
        assert out.device == oar.device(device), label
        _assert_same(out, theirs, label)


@pytest.mark.parametrize("label", sorted(CASES))
def test_out_matches_torch(device, torch, label):
    call, dtypes = CASES[label]
    _check_case(torch, device, label, call, dtypes)


def test_unary_functions_take_out(device, torch):
    for name in UNARY:
        _check_case(torch, device, name, lambda m, t, out: getattr(m, name)(t["u"], out=out), "float32")


def test_named_results_keep_their_names(device):
    v = oar.tensor([3.0, 1.0, 2.0], device=device)
    values, indices = oar.empty(0, device=device), oar.empty(0, dtype=oar.int64, device=device)
    r = oar.sort(v, out=(values, indices))
    assert r.values is values and r.indices is indices and indices.tolist() == [1, 2, 0]
    sq = oar.tensor([[2.0, 1.0], [1.0, 3.0]], device=device)
    sign, logabsdet = oar.empty(0, device=device), oar.empty(0, device=device)
    r = oar.linalg.slogdet(sq, out=[sign, logabsdet])  # a list of outs works too
    assert r.sign is sign and r.logabsdet is logabsdet and abs(logabsdet.item() - np.log(5.0)) < 1e-6


def test_random_factories_make_out_dtype_on_outs_device(device):
    for call, dtype, shape in ((lambda out: oar.rand(2, 3, out=out), oar.float64, (2, 3)),
                               (lambda out: oar.randn(4, out=out), oar.float64, (4,)),
                               (lambda out: oar.normal(2.0, 0.5, (5,), out=out), oar.float64, (5,)),
                               (lambda out: oar.randint(3, 7, (6,), out=out), oar.float32, (6,)),
                               (lambda out: oar.randperm(5, out=out), oar.int32, (5,))):
        out = oar.empty(0, dtype=dtype, device=device)
        assert call(out) is out and out.dtype == dtype and out.device == oar.device(device)
        assert tuple(out.shape) == shape
    v = oar.randint(3, 7, (50,), out=oar.empty(0, dtype=oar.float32, device=device)).tolist()
    assert set(v) <= {3.0, 4.0, 5.0, 6.0}
    assert sorted(oar.randperm(5, out=oar.empty(0, dtype=oar.int32, device=device)).tolist()) == [0, 1, 2, 3, 4]


def test_complex_results_and_outs(device, torch):
    x, tx = oar.tensor([1.0, 2.0, 0.0, -1.0], device=device), torch.tensor([1.0, 2.0, 0.0, -1.0])
    for call in (lambda m, v, out: m.fft.fft(v, out=out),
                 lambda m, v, out: m.add(m.fft.rfft(v), 1, out=out),
                 lambda m, v, out: m.complex(v, v * 2, out=out)):
        for shape in (0, 3):  # resized from empty, and (with torch's warning) from another shape
            out, tout = oar.zeros(shape, dtype=oar.complex64, device=device), torch.zeros(shape, dtype=torch.complex64)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                assert call(oar, x, out) is out
                call(torch, tx, tout)
            assert str(out.dtype) == "oar.complex64" and tuple(out.shape) == tuple(tout.shape)
            np.testing.assert_allclose(out.re.cpu().numpy(), from_torch(tout.real), atol=1e-6)
            np.testing.assert_allclose(out.im.cpu().numpy(), from_torch(tout.imag), atol=1e-6)
    y = oar.zeros(4, dtype=oar.complex64, device=device)
    assert oar.add(x, x, out=y) is y and y.re.tolist() == [2.0, 4.0, 0.0, -2.0] and y.im.tolist() == [0.0] * 4
    with pytest.raises(RuntimeError):  # torch: "fft expects a complex output tensor, but got Float"
        torch.fft.fft(tx, out=torch.empty(4))
    with pytest.raises(RuntimeError, match="result type ComplexFloat can't be cast to the desired output type Float"):
        oar.fft.fft(x, out=oar.empty(4, device=device))


def test_a_nonempty_out_is_resized_with_torchs_warning(device, torch):
    a = oar.tensor([1.0, 2.0, 3.0], device=device)
    y = oar.zeros(2, device=device)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized") as ours:
        assert oar.add(a, a, out=y) is y
    assert y.tolist() == [2.0, 4.0, 6.0]
    ta, ty = torch.tensor([1.0, 2.0, 3.0]), torch.zeros(2)
    with pytest.warns(UserWarning) as theirs:
        torch.add(ta, ta, out=ty)
    assert str(ours[0].message).split(" (Triggered")[0] == str(theirs[0].message).split(" (Triggered")[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        z = oar.full((3,), 7.0, device=device)
        assert oar.mul(a, 2, out=z) is z and z.tolist() == [2.0, 4.0, 6.0]  # same shape: written, no warning


def test_out_can_be_a_view_or_an_input(device, torch):
    base = oar.zeros(2, 3, device=device)
    a = oar.tensor([1.0, 2.0, 3.0], device=device)
    oar.add(a, 10, out=base[1])  # writes through the view, as torch
    tbase = torch.zeros(2, 3)
    torch.add(torch.tensor([1.0, 2.0, 3.0]), 10, out=tbase[1])
    assert base.tolist() == tbase.tolist()
    assert oar.mul(a, a, out=a) is a and a.tolist() == [1.0, 4.0, 9.0]


def test_dtype_rule_is_torchs(device, torch):
    a = oar.tensor([1.5, 2.5], device=device)
    for out_dtype, torch_dtype in ((oar.int64, torch.int64), (oar.bool, torch.bool), (oar.int32, torch.int32)):
        with pytest.raises(RuntimeError) as theirs:
            torch.add(torch.tensor([1.5, 2.5]), 1, out=torch.empty(2, dtype=torch_dtype))
        with pytest.raises(RuntimeError) as ours:
            oar.add(a, 1, out=oar.empty(2, dtype=out_dtype, device=device))
        assert str(ours.value) == str(theirs.value)  # "result type Float can't be cast to ... Long"
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        oar.log2(a, out=oar.empty(2, dtype=oar.int64, device=device))
    with pytest.raises(RuntimeError, match="dtype Float does not match dtype of out parameter \\(Double\\)"):
        oar.arange(3, dtype=oar.float32, out=oar.empty(0, dtype=oar.float64, device=device))
    # the other way is a cast: ints into a float out, bool into an int out
    y = oar.empty(2, dtype=oar.int64, device=device)
    assert oar.gt(a, 2, out=y).tolist() == [0, 1]


def test_autograd_arguments_are_refused(device, torch):
    a = oar.tensor([1.0, 2.0], device=device, requires_grad=True)
    b = oar.tensor([3.0, 4.0], device=device)
    with pytest.raises(RuntimeError) as theirs:
        torch.add(torch.tensor([1.0, 2.0], requires_grad=True), torch.tensor([3.0, 4.0]), out=torch.empty(2))
    for call in (lambda: oar.add(a, b, out=oar.empty(2, device=device)),
                 lambda: oar.cat([b, a], out=oar.empty(4, device=device)),
                 lambda: oar.add(b, b, out=oar.zeros(2, device=device, requires_grad=True))):
        with pytest.raises(RuntimeError) as ours:
            call()
        assert str(ours.value).split("(): ", 1)[1] == str(theirs.value).split("(): ", 1)[1]
    with pytest.raises(RuntimeError, match=r"^add\(\): functions with out=\.\.\. arguments don't support"):
        oar.add(a, b, out=oar.empty(2, device=device))
    with pytest.raises(RuntimeError, match=r"^sort\(\): functions with out="):
        oar.sort(a, out=(oar.empty(2, device=device), oar.empty(2, dtype=oar.int64, device=device)))
    with oar.no_grad():  # without grad mode it is a plain write, as in torch
        y = oar.empty(2, device=device)
        assert oar.add(a, b, out=y) is y and y.tolist() == [4.0, 6.0] and not y.requires_grad


@pytest.mark.parametrize("pair", [(d, e) for d in DEVICES for e in DEVICES if d != e] or [None])
def test_out_on_another_device_raises(pair):
    if pair is None:
        pytest.skip(f"one device here ({DEVICES}): no other device to put out on")
    device, other = pair
    a = oar.tensor([1.0, 2.0], device=device)
    with pytest.raises(RuntimeError, match="Expected out tensor to have device"):
        oar.add(a, a, out=oar.empty(2, device=other))
    with pytest.raises(RuntimeError, match="Expected out tensor to have device"):
        oar.zeros(2, device=device, out=oar.empty(2, device=other))


def test_bad_out_arguments_raise_type_errors(device):
    a = oar.tensor([1.0, 2.0], device=device)
    with pytest.raises(TypeError, match="argument 'out' must be"):
        oar.add(a, a, out=[1, 2])
    with pytest.raises(TypeError, match="argument 'out' must be Tensor, not tuple"):
        oar.add(a, a, out=(oar.empty(2, device=device),))
    with pytest.raises(TypeError, match="argument 'out' must be a tuple of 2 Tensors"):
        oar.sort(a, out=oar.empty(2, device=device))
    # out=None is no out; Tensor methods take no out=, as torch's
    assert oar.add(a, a, out=None).tolist() == [2.0, 4.0]
    with pytest.raises(TypeError):
        a.add(a, out=oar.empty(2, device=device))


def test_every_torch_out_function_takes_out_and_shows_it():
    """Each of torch's out= functions oar has takes out= (only C++ functions, nn.functional.linear, are left as
    they are), and its signature says so; the copies pickle as the exported name."""
    import importlib
    import inspect
    checked, missing, unsigned = 0, [], []
    for full in sorted(_out.OUT_FUNCTIONS):
        prefix, _, name = full.rpartition(".")
        fn = getattr(importlib.import_module("oar" + ("." + prefix if prefix else "")), name, None)
        if fn is None or not hasattr(fn, "__code__"):
            continue
        checked += 1
        if not hasattr(fn, "_oar_out_orig"):
            missing.append(full)
        elif "out" not in inspect.signature(fn).parameters:
            unsigned.append(full)
    assert checked > 300 and not missing and not unsigned, (checked, missing, unsigned)
    assert pickle.loads(pickle.dumps(oar.add)) is oar.add
    assert pickle.loads(pickle.dumps(oar.linalg.inv)) is oar.linalg.inv


def test_out_refuses_autograd_only_where_the_result_carries_a_gradient(device):
    x = oar.tensor([1.0, 3.0, 2.0], device=device, requires_grad=True)
    idx = oar.empty((), dtype=oar.int64, device=device)
    assert oar.argmax(x, out=idx) is idx and idx.item() == 1  # torch accepts: no gradient flows there
    eq = oar.empty(3, dtype=oar.bool, device=device)
    assert oar.eq(x, 3.0, out=eq).tolist() == [False, True, False]
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        oar.exp(x, out=oar.empty(3, device=device))
    with oar.no_grad():
        assert oar.exp(x, out=oar.empty(3, device=device)).requires_grad is False


def test_can_cast_matches_torch(torch):
    names = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool"]
    for f in names:
        for t in names:
            assert oar.can_cast(getattr(oar, f), getattr(oar, t)) == torch.can_cast(getattr(torch, f),
                                                                                     getattr(torch, t)), (f, t)


def test_compat_torch_add_with_out(tmp_path):
    script = tmp_path / "add_out.py"
    script.write_text(textwrap.dedent("""
        import torch
        a = torch.tensor([1.0, 2.5])
        b = torch.empty(2)
        r = torch.add(a, 1, out=b)
        print("same", r is b, b.tolist())
        c = torch.empty(0, dtype=torch.float64)
        torch.cumsum(a, 0, out=c)
        print("cumsum", c.tolist(), c.dtype == torch.float64)
        v, i = torch.empty(0), torch.empty(0, dtype=torch.long)
        print("sort", torch.sort(a, descending=True, out=(v, i)).indices.tolist())
    """))
    env = dict(os.environ)
    oar_path = os.path.dirname(os.path.dirname(os.path.abspath(oar.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([oar_path] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    import subprocess
    result = subprocess.run([sys.executable, "-m", "oar.compat", str(script)], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "same True [2.0, 3.5]", result.stdout
    assert lines[1] == "cumsum [1.0, 3.5] True", result.stdout
    assert lines[2] == "sort [1, 0]", result.stdout
