"""oar.testing: assert_close (torch.testing.assert_close) and the deprecated assert_allclose.

Values are compared on the host (NumPy) after the attribute checks torch makes (shape, dtype, device),
with torch's default tolerances per dtype, and a failure is an AssertionError written the way torch's is:
how many elements mismatch, and the greatest absolute and relative differences with their indices.
Tensors, NumPy arrays, numbers, and sequences or mappings of them (compared pairwise) are accepted.
"""
import collections.abc
import math
import numbers

import numpy as np

from .. import _C
from .._C import Tensor

# (rtol, atol) per dtype when neither is given, as torch's
_DEFAULT_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
                       "float64": (1e-7, 1e-7)}


def _dtype_name(d):
    return str(d).split(".")[-1]


def _to_numpy(t):
    t = t.detach().cpu()
    if t.dtype == _C.dtype.bfloat16:
        t = t.to(_C.dtype.float32)
    return t.numpy()


def _fail(msg, default):
    raise AssertionError(default if msg is None else (msg(default) if callable(msg) else msg))


def _compare_values(actual, expected, rtol, atol, equal_nan, msg, what):
    a, e = np.asarray(actual), np.asarray(expected)
    if a.dtype == np.bool_ or e.dtype == np.bool_ or (a.dtype.kind in "iu" and e.dtype.kind in "iu"):
        bad = a != e
    else:
        a64, e64 = a.astype(np.float64), e.astype(np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            bad = ~np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=equal_nan)
        # equal infinities are close; isclose says so already, and NaN only with equal_nan
    if not bad.any():
        return
    total = bad.size
    count = int(bad.sum())
    if a.ndim == 0:
        default = (f"{what} are not close!\n\nExpected {e.item()} but got {a.item()}.\n"
                   f"Absolute difference: {abs(float(a) - float(e))} (up to {atol} allowed)\n"
                   f"Relative difference: {abs(float(a) - float(e)) / abs(float(e)) if float(e) else math.inf} "
                   f"(up to {rtol} allowed)")
        _fail(msg, default)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        diff = np.abs(a.astype(np.float64) - e.astype(np.float64))
        rel = diff / np.abs(e.astype(np.float64))
    diff_m = np.where(bad, np.nan_to_num(diff, nan=math.inf), -1)
    rel_m = np.where(bad, np.nan_to_num(rel, nan=math.inf), -1)
    ia = np.unravel_index(int(np.argmax(diff_m)), a.shape)
    ir = np.unravel_index(int(np.argmax(rel_m)), a.shape)
    default = (f"{what} are not close!\n\nMismatched elements: {count} / {total} ({100.0 * count / total:.1f}%)\n"
               f"Greatest absolute difference: {diff[ia]} at index {tuple(int(i) for i in ia)} (up to {atol} allowed)\n"
               f"Greatest relative difference: {rel[ir]} at index {tuple(int(i) for i in ir)} (up to {rtol} allowed)")
    _fail(msg, default)


def _tolerances(rtol, atol, dtypes):
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got no {'rtol' if rtol is None else 'atol'}.")
    if rtol is not None:
        return float(rtol), float(atol)
    pairs = [_DEFAULT_TOLERANCES.get(d, (0.0, 0.0)) for d in dtypes]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _is_tensor_like(x):
    return isinstance(x, (Tensor, np.ndarray))


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Asserts actual and expected are close (torch.testing.assert_close's rules and defaults)."""
    if _is_tensor_like(actual) or _is_tensor_like(expected):
        if not (_is_tensor_like(actual) and _is_tensor_like(expected)):
            if isinstance(actual, Tensor) != isinstance(expected, Tensor) and not (
                    isinstance(actual, np.ndarray) or isinstance(expected, np.ndarray)):
                _fail(msg, f"Type mismatch: expected {type(expected).__name__} but got {type(actual).__name__}.")
        if isinstance(actual, Tensor) != isinstance(expected, Tensor):
            _fail(msg, f"Expected both inputs to be Tensors or both numpy arrays, got {type(actual).__name__} "
                       f"and {type(expected).__name__}.")
        if tuple(actual.shape) != tuple(expected.shape):
            _fail(msg, f"The values for attribute 'shape' do not match: {list(actual.shape)} != "
                       f"{list(expected.shape)}.")
        if isinstance(actual, Tensor):
            if check_device and actual.device != expected.device:
                _fail(msg, f"The values for attribute 'device' do not match: {actual.device} != {expected.device}.")
            if check_dtype and actual.dtype != expected.dtype:
                _fail(msg, f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}.")
            if check_stride and actual.stride() != expected.stride():
                _fail(msg, f"The values for attribute 'stride()' do not match: {actual.stride()} != "
                           f"{expected.stride()}.")
            dtypes = (_dtype_name(actual.dtype), _dtype_name(expected.dtype))
            a, e = _to_numpy(actual), _to_numpy(expected)
        else:
            if check_dtype and actual.dtype != expected.dtype:
                _fail(msg, f"The values for attribute 'dtype' do not match: {actual.dtype} != {expected.dtype}.")
            dtypes = (str(actual.dtype), str(expected.dtype))
            a, e = actual, expected
        r, t = _tolerances(rtol, atol, dtypes)
        _compare_values(a, e, r, t, equal_nan, msg, "Tensor-likes")
        return
    if isinstance(actual, numbers.Number) and isinstance(expected, numbers.Number):
        if check_dtype and type(actual) is not type(expected):
            _fail(msg, f"The (d)types do not match: {type(actual)} != {type(expected)}.")
        floating = isinstance(actual, float) or isinstance(expected, float)
        r, t = _tolerances(rtol, atol, ("float64",) if floating else ("int64",))
        _compare_values(np.asarray(actual), np.asarray(expected), r, t, equal_nan, msg, "Scalars")
        return
    if isinstance(actual, collections.abc.Mapping) and isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            _fail(msg, f"The keys of the mappings do not match: {sorted(map(str, actual))} != "
                       f"{sorted(map(str, expected))}")
        for k in expected:
            assert_close(actual[k], expected[k], allow_subclasses=allow_subclasses, rtol=rtol, atol=atol,
                         equal_nan=equal_nan, check_device=check_device, check_dtype=check_dtype,
                         check_layout=check_layout, check_stride=check_stride, msg=msg)
        return
    seq = (list, tuple)
    if isinstance(actual, seq) and isinstance(expected, seq):
        if len(actual) != len(expected):
            _fail(msg, f"The length of the sequences mismatch: {len(actual)} != {len(expected)}")
        for a, e in zip(actual, expected):
            assert_close(a, e, allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
                         check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
                         check_stride=check_stride, msg=msg)
        return
    if actual is None and expected is None:
        return
    if isinstance(actual, (Tensor, np.ndarray, numbers.Number, list, tuple, collections.abc.Mapping)) or \
            isinstance(expected, (Tensor, np.ndarray, numbers.Number, list, tuple, collections.abc.Mapping)):
        _fail(msg, f"Type mismatch: {type(actual).__name__} != {type(expected).__name__}")
    raise TypeError(f"No comparison pair was able to handle inputs of type {type(actual)} and {type(expected)}.")


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """The deprecated torch.testing.assert_allclose: assert_close without the dtype and device checks."""
    if not isinstance(actual, Tensor):
        actual = _C.tensor(actual, None, None, False)
    if not isinstance(expected, Tensor):
        expected = _C.tensor(expected, actual.dtype, actual.device, False)
    if rtol is None and atol is None:  # the deprecated function's own, looser defaults
        looser = {"float16": (1e-3, 1e-3), "bfloat16": (1.6e-2, 1e-5), "float32": (1e-4, 1e-5),
                  "float64": (1e-5, 1e-8)}
        pairs = [looser.get(_dtype_name(t.dtype), (0.0, 0.0)) for t in (actual, expected)]
        rtol, atol = max(p[0] for p in pairs), max(p[1] for p in pairs)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, msg=msg or None)


__all__ = ["assert_close", "assert_allclose"]
