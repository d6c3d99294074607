"""A tensor's repr / str (oar._tensor_str) against PyTorch 1.13's, character for character, and a few
expected strings that need no PyTorch. oar names dtypes `oar.float64` where PyTorch writes `torch.float64`,
so the comparisons print them with PyTorch's names; grad_fn names are checked here."""
import math

import numpy as np
import pytest

import oar
import torch_ref
from oar import _tensor_str
from torch_ref import import_torch

DEVICES = oar._C.info()["devices"]
RNG = np.random.default_rng(0)
NAN, INF = math.nan, math.inf


@pytest.fixture(autouse=True)
def default_print_options():
    """Every test starts, and leaves, with the default print options (PyTorch's too, when it was loaded)."""
    oar.set_printoptions(profile="default")
    yield
    oar.set_printoptions(profile="default")
    if torch_ref._torch is not None:
        torch_ref._torch.set_printoptions(profile="default")


@pytest.fixture(params=DEVICES)
def dev(request):
    return request.param


def both(data, dtype="float32", transform=None, requires_grad=False):
    """The same tensor in oar and in PyTorch (data crosses as a list)."""
    torch = import_torch()
    o = oar.tensor(data, dtype=getattr(oar, dtype))
    t = torch.tensor(data, dtype=getattr(torch, dtype))
    if transform is not None:
        o, t = transform(o), transform(t)
    if requires_grad:
        o.requires_grad_(True)
        t.requires_grad_(True)
    return o, t


def same_text(o, t):
    got = _with_torch_dtype_names(repr, o)
    assert got == repr(t), f"\noar:\n{got}\ntorch:\n{t!r}"
    assert str(o) == repr(o)


def _with_torch_dtype_names(f, *args):
    """f(*args) with dtypes named as PyTorch names them (a longer name can move a suffix to its own line)."""
    plain = _tensor_str.dtype_name
    _tensor_str.dtype_name = lambda dtype: repr(dtype).replace("oar.", "torch.")
    try:
        return f(*args)
    finally:
        _tensor_str.dtype_name = plain


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).tolist()


CASES = {
    # integers and booleans
    "int_1d": ([1, 2, 3], "int64"),
    "int_widths": ([-5, 100, 7, 12345], "int64"),
    "int32": ([1, -2, 3], "int32"),
    "int8_2d": ([[1, -2], [3, 4]], "int8"),
    "uint8": ([0, 200, 255], "uint8"),
    "bool": ([True, False, True], "bool"),
    "bool_2d": ([[True], [False]], "bool"),
    # floating values that are all whole numbers
    "whole": ([0.0, 1.0, 2.0], "float32"),
    "whole_negative": ([-3.0, 1000.0, 2.0], "float32"),
    "whole_sci_spread": ([1.0, 100000.0], "float32"),
    "whole_sci_large": ([2.0e9, 3.0e9], "float64"),
    "whole_1000": ([1.0, 1000.0], "float32"),
    # fixed and scientific notation
    "fixed": ([1.0, 2.5], "float32"),
    "fixed_mixed": ([1.5, -2.25, 3.125, 100.0], "float32"),
    "fixed_small": ([0.001, 1.5], "float32"),
    "sci_tiny": ([1.0e-5, 1.0], "float32"),
    "sci_spread": ([123456.7, 1.5], "float64"),
    "sci_huge": ([1.0e9 + 0.5, 2.5], "float64"),
    "sci_negative": ([-1.0e-6, 2.0e-6, 3.5], "float32"),
    # nan, inf, negative zero
    "nan_whole": ([NAN, 1.0], "float32"),
    "inf_fixed": ([INF, -INF, 1.5], "float32"),
    "nan_inf_only": ([NAN, INF, -INF], "float32"),
    "zeros": ([0.0, 0.0, 0.0], "float32"),
    "zero_nan_fixed": ([0.0, NAN, 2.5], "float64"),
    "neg_zero_fixed": ([-0.0, 1.5], "float32"),
    "neg_zero_whole": ([-0.0, 1.0], "float32"),
    "nan_sci": ([NAN, 1.0e-7, 1.0], "float32"),
    # 0-d
    "scalar_whole": (3.0, "float32"),
    "scalar_fixed": (3.5, "float32"),
    "scalar_int": (7, "int64"),
    "scalar_int32": (-7, "int32"),
    "scalar_bool": (True, "bool"),
    "scalar_nan": (NAN, "float32"),
    "scalar_neg_zero": (-0.0, "float32"),
    "scalar_tiny": (1.0e-7, "float32"),
    "scalar_f64": (2.25, "float64"),
    # empty
    "empty": ([], "float32"),
    "empty_int64": ([], "int64"),
    "empty_f64": ([], "float64"),
    # half precision (printed from float32 values)
    "float16": ([1.0, 2.5, -3.0], "float16"),
    "bfloat16": ([1.0, 2.5, 1000.0], "bfloat16"),
    "bfloat16_whole": ([[1.0, 2.0], [3.0, 4.0]], "bfloat16"),
    # rows that wrap, 2-d, 3-d, 4-d
    "wrap_f32": (rand(50, scale=100.0), "float32"),
    "wrap_int": (list(range(-20, 40)), "int64"),
    "wrap_f64": (rand(30, scale=1000.0), "float64"),
    "wrap_sci": (rand(25, scale=1.0e-5), "float32"),
    "wrap_bool": ([bool(v > 0) for v in rand(40)], "bool"),
    "2d": ([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], "float32"),
    "2d_fixed": (rand(4, 5), "float32"),
    "2d_wrap": (rand(3, 20), "float32"),
    "3d": ((np.arange(60.0).reshape(3, 4, 5) * 1.5).tolist(), "float32"),
    "3d_int": (np.arange(24).reshape(2, 3, 4).tolist(), "int64"),
    "4d": (rand(2, 2, 2, 3), "float64"),
    "2d_one_col": ([[1.5], [2.0]], "float32"),
    # summarised (more than 1000 elements)
    "sum_2000": ([float(v) for v in range(2000)], "float32"),
    "sum_2000_rand": (rand(2000), "float32"),
    "sum_int_100x100": (np.arange(10000).reshape(100, 100).tolist(), "int64"),
    "sum_f_100x100": (rand(100, 100), "float32"),
    "sum_20x60": (rand(20, 60), "float64"),
    "sum_3x400": (rand(3, 400), "float32"),
    "sum_3d": (rand(10, 10, 20), "float32"),
    "sum_bool": ([bool(v > 0) for v in rand(1500)], "bool"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    data, dtype = CASES[name]
    same_text(*both(data, dtype))


TRANSFORMS = {
    "transpose": ((np.arange(12.0).reshape(3, 4) / 4).tolist(), lambda x: x.t()),
    "step": (np.arange(24).reshape(4, 6).tolist(), lambda x: x[:, ::2]),
    "row_slice": (rand(5, 4), lambda x: x[1:3]),
    "empty_2d": (np.zeros((2, 3)).tolist(), lambda x: x[:, :0]),
    "empty_3d": (np.zeros((2, 3, 4)).tolist(), lambda x: x[:0]),
    "sum_transpose": (rand(40, 50), lambda x: x.t()),
    "reshape_empty_int": ([], lambda x: x.long().reshape(0, 3)),
    "int32_empty_3d": (np.zeros((2, 3, 4)).tolist(), lambda x: x.int()[:, :0]),
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_views_match_torch(name):
    data, transform = TRANSFORMS[name]
    same_text(*both(data, "float32", transform))


OPTIONS = {
    "precision_2": dict(precision=2),
    "precision_0": dict(precision=0),
    "precision_8": dict(precision=8),
    "sci_true": dict(sci_mode=True),
    "sci_false": dict(sci_mode=False),
    "short": dict(profile="short"),
    "full": dict(profile="full"),
    "linewidth_40": dict(linewidth=40),
    "threshold_5": dict(threshold=5, edgeitems=1),
    "edgeitems_2": dict(edgeitems=2),
}
OPTION_CASES = ["fixed_mixed", "whole_negative", "sci_tiny", "sci_spread", "nan_whole", "zeros", "inf_fixed",
                "scalar_fixed", "wrap_f32", "wrap_int", "2d_fixed", "3d", "sum_2000", "sum_f_100x100", "sum_20x60",
                "sum_int_100x100", "bool", "neg_zero_fixed", "sci_negative"]


@pytest.mark.parametrize("case", OPTION_CASES)
@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_print_options_match_torch(option, case):
    torch = import_torch()
    data, dtype = CASES[case]
    o, t = both(data, dtype)
    oar.set_printoptions(**OPTIONS[option])
    torch.set_printoptions(**OPTIONS[option])
    same_text(o, t)


def test_print_options_in_sequence_match_torch():
    """Options stay until changed, a profile resets the four numbers, and sci_mode is set by every call."""
    torch = import_torch()
    o, t = both(rand(30, scale=1.0e-3))
    for options in (dict(precision=2), dict(sci_mode=False), dict(linewidth=50), dict(profile="short"),
                    dict(sci_mode=True, precision=3), dict(edgeitems=1), dict(threshold=10),
                    dict(profile="default")):
        oar.set_printoptions(**options)
        torch.set_printoptions(**options)
        same_text(o, t)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("size", [1, 3, 12, 50, 2000])
def test_requires_grad_matches_torch(dtype, size):
    """A leaf that requires grad, including the suffixes a long last line pushes onto a line of their own."""
    same_text(*both(rand(size), dtype, requires_grad=True))


@pytest.mark.parametrize("width", range(5, 16))
def test_suffix_wrapping_matches_torch(width):
    """Where the suffix leaves the last line: each row length around the linewidth's edge."""
    torch = import_torch()
    o, t = both([1.5] * width, "float32", requires_grad=True)
    same_text(o, t)
    o, t = both([[1.5] * width] * 2, "float32", requires_grad=True)
    same_text(o, t)
    for linewidth in (60, 75, 90):
        oar.set_printoptions(linewidth=linewidth)
        torch.set_printoptions(linewidth=linewidth)
        same_text(o, t)


def test_parameter_matches_torch():
    torch = import_torch()
    data = [[1.0, 2.0], [3.0, 4.5]]
    got = repr(oar.nn.Parameter(oar.tensor(data)))
    assert got == repr(torch.nn.Parameter(torch.tensor(data)))
    assert str(oar.nn.Parameter(oar.tensor(data))) == got


def test_expected_strings():
    T = oar.tensor
    assert repr(T([1.0, 2.5])) == "tensor([1.0000, 2.5000])"
    assert str(T([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])) == "tensor([[0., 1., 2.],\n        [3., 4., 5.]])"
    assert repr(T(3.0)) == "tensor(3.)" and repr(T(3.5)) == "tensor(3.5000)"
    assert repr(T([1.0, 1.0e5, 0.5])) == "tensor([1.0000e+00, 1.0000e+05, 5.0000e-01])"
    assert repr(T([NAN, INF, -INF])) == "tensor([nan, inf, -inf])"
    assert repr(T([INF, 1.5])) == "tensor([   inf, 1.5000])"
    assert repr(T([True, False])) == "tensor([ True, False])"
    assert repr(T([1, 100], dtype=oar.int32)) == "tensor([  1, 100], dtype=oar.int32)"
    assert repr(T([1.0, 2.0], dtype=oar.float16)) == f"tensor([1., 2.], dtype={oar.float16!r})"
    assert repr(T([1.0, 2.0], dtype=oar.bfloat16)) == f"tensor([1., 2.], dtype={oar.bfloat16!r})"
    assert repr(T([])) == "tensor([])" and repr(oar.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(oar.zeros(0, dtype=oar.int64)) == "tensor([], dtype=oar.int64)"
    assert repr(oar.arange(2000)) == "tensor([   0,    1,    2,  ..., 1997, 1998, 1999])"
    assert repr(oar.arange(6.0).reshape(2, 3, 1)) == ("tensor([[[0.],\n         [1.],\n         [2.]],\n\n"
                                                       "        [[3.],\n         [4.],\n         [5.]]])")
    x = T([1.0, 2.5], requires_grad=True)
    assert repr(x) == "tensor([1.0000, 2.5000], requires_grad=True)"
    y = x * 2
    assert repr(y) == "tensor([2., 5.], grad_fn=<MulBackward0>)"  # PyTorch's name for the node
    assert repr(T([1.0, 2.0], dtype=oar.float64, requires_grad=True)) == \
        "tensor([1., 2.], dtype=oar.float64, requires_grad=True)"


def test_expected_strings_with_options():
    t = oar.tensor([1.123456789, 2.0])
    oar.set_printoptions(precision=2)
    assert repr(t) == "tensor([1.12, 2.00])"
    assert oar.get_printoptions() == dict(precision=2, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None)
    oar.set_printoptions(sci_mode=True)
    assert repr(t) == "tensor([1.12e+00, 2.00e+00])"
    oar.set_printoptions(precision=3)  # sci_mode=None again, as in PyTorch
    assert repr(t) == "tensor([1.123, 2.000])" and oar.get_printoptions()["sci_mode"] is None
    oar.set_printoptions(sci_mode=False)
    assert repr(oar.tensor([1.0e-5, 1.5])) == "tensor([    0.000,     1.500])"
    oar.set_printoptions(profile="full")
    assert "..." not in repr(oar.arange(2000)) and oar.get_printoptions()["threshold"] == math.inf
    oar.set_printoptions(profile="short")
    assert repr(oar.arange(2000)) == "tensor([   0,    1,  ..., 1998, 1999])"
    assert repr(oar.tensor([0.5, 1.0e-6])) == "tensor([5.00e-01, 1.00e-06])"
    oar.set_printoptions(profile="default", threshold=5, edgeitems=1)
    assert repr(oar.arange(100)) == "tensor([ 0,  ..., 99])"
    assert repr(oar.arange(12).reshape(3, 4)) == "tensor([[ 0,  ...,  3],\n        ...,\n        [ 8,  ..., 11]])"
    with pytest.raises(ValueError):
        oar.set_printoptions(profile="long")


def test_numpy_printing_untouched():
    before = np.get_printoptions()
    oar.set_printoptions(precision=1, sci_mode=True, linewidth=20)
    repr(oar.tensor([1.5, 2.5]))
    assert np.get_printoptions() == before


def test_devices(dev):
    """Off the CPU, a device suffix (before the dtype, as PyTorch puts it); the values read the same."""
    suffix = "" if dev.startswith("cpu") else f", device='{dev}'"
    assert repr(oar.tensor([1, 2], dtype=oar.int32, device=dev)) == f"tensor([1, 2]{suffix}, dtype=oar.int32)"
    assert repr(oar.tensor([1.0, 2.5], device=dev)) == f"tensor([1.0000, 2.5000]{suffix})"
    assert repr(oar.zeros(0, 3, device=dev)) == f"tensor([]{suffix}, size=(0, 3))"
    x = oar.arange(10000.0, device=dev).reshape(100, 100)
    cpu = repr(x.cpu())
    assert repr(x) == cpu[:-1] + suffix + ")"
    assert repr(x.t()) == repr(x.t().cpu())[:-1] + suffix + ")"
    assert repr(oar.tensor(2.5, device=dev)) == f"tensor(2.5000{suffix})"


def test_huge_tensor_prints_fast():
    import time
    x = oar.zeros(10 ** 8)
    start = time.perf_counter()
    assert repr(x) == "tensor([0., 0., 0.,  ..., 0., 0., 0.])"
    assert repr(x.reshape(10000, 10000)[::2, 1:]).count("\n") == 6
    assert time.perf_counter() - start < 2.0
