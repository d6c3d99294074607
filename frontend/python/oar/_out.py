"""torch's out= keyword on every public function PyTorch 1.13 gives it: oar.add(a, b, out=y),
oar.sort(t, out=(values, indices)), oar.linalg.inv(A, out=y), oar.special.erf(t, out=y), ...

One mechanism for all of them, applied where the functions are exported (install(), the last step of
`import oar`): each exported function is replaced by a copy that also takes `out=`. The result is computed
by the original function, then written into out (resized to the result's shape, as torch does, with torch's
warning when a non-empty out had another shape) and out is returned; for a function returning several
tensors out is a tuple of as many tensors, and the same kind of tuple comes back. As in torch:
- the result's dtype must be castable to out's (no float into an integer tensor, no number into bool):
  otherwise RuntimeError "result type Float can't be cast to the desired output type Long";
- out on another device than the result raises;
- under grad mode, no argument (nor out) may require grad: out= results have no autograd history;
- a factory (zeros, arange, rand, ...) makes its result in out's dtype and on out's device.

Each copy is a thin wrapper: a call without out= costs one more Python call (~80 ns on oar.add, whose
operator form `a + b` does not go through it); inspect.signature shows the added out=. A function implemented
in C++ (oar.nn.functional.linear = _C.linear, the hot path of nn.Linear) is left as it is, without out=.
"""
import functools
import inspect
import types
import warnings

from . import _C
from ._C import Tensor
from ._ops import ops

# The functions torch 1.13 accepts out= for (probed by calling each public function of torch, torch.linalg,
# torch.special, torch.fft and torch.nn.functional with out=; internal ops left out). A name oar lacks is
# skipped; a function oar gains later gets out= by being here.
_TORCH_OUT = {
    "": """
        abs absolute acos acosh add addbmm addcdiv addcmul addmm addmv addr all amax amin aminmax angle any arange
        arccos arccosh arcsin arcsinh arctan arctan2 arctanh argmax argmin asin asinh atan atan2 atanh baddbmm
        bernoulli bitwise_and bitwise_left_shift bitwise_not bitwise_or bitwise_right_shift bitwise_xor bmm bucketize
        cat ceil chain_matmul cholesky cholesky_inverse cholesky_solve clamp clamp_max clamp_min clip column_stack
        complex concat concatenate conj_physical copysign cos cosh cross cummax cummin cumprod cumsum deg2rad diag
        diff digamma div divide dot dstack empty eq erf erfc erfinv exp exp2 expm1 eye fix float_power floor
        floor_divide fmax fmin fmod frac frexp frobenius_norm full gather gcd ge geqrf ger greater greater_equal gt
        hardshrink heaviside histc histogram hspmm hstack hypot i0 igamma igammac index_add index_copy index_reduce
        index_select inner inverse isin isneginf isposinf kron kthvalue lcm ldexp le lerp less less_equal lgamma
        linspace log log10 log1p log2 log_softmax logaddexp logaddexp2 logcumsumexp logical_and logical_not
        logical_or logical_xor logit logspace logsumexp lstsq lt lu_solve lu_unpack masked_select matmul
        matrix_power matrix_rank max maximum mean median min minimum mm mode msort mul multinomial multiply mv
        mvlgamma nan_to_num nanmean nanmedian nanquantile nansum narrow_copy ne neg negative nextafter nonzero norm
        normal not_equal nuclear_norm ones orgqr ormqr outer polar polygamma pow prod qr quantile rad2deg rand
        randint randn randperm range reciprocal remainder renorm round row_stack rsqrt scatter scatter_add
        scatter_reduce searchsorted sgn sigmoid sign signbit sin sinc sinh slogdet softmax solve sort sqrt square
        sspaddmm stack std sub subtract sum svd symeig take take_along_dim tan tanh tensordot threshold topk
        triangular_solve tril triu true_divide trunc var vdot vstack where xlogy zeros""",
    "linalg": """
        cholesky cholesky_ex cond cross det eig eigh eigvals eigvalsh householder_product inv inv_ex ldl_factor
        ldl_factor_ex ldl_solve lstsq lu lu_factor lu_factor_ex lu_solve matmul matrix_norm matrix_power
        matrix_rank multi_dot norm pinv qr slogdet solve solve_ex solve_triangular svd svdvals tensorinv
        tensorsolve vecdot vector_norm""",
    "special": """
        airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 chebyshev_polynomial_t chebyshev_polynomial_u
        chebyshev_polynomial_v chebyshev_polynomial_w digamma entr erf erfc erfcx erfinv exp2 expit expm1 gammainc
        gammaincc gammaln hermite_polynomial_h hermite_polynomial_he i0 i0e i1 i1e laguerre_polynomial_l
        legendre_polynomial_p log1p log_ndtr logit logsumexp modified_bessel_i0 modified_bessel_i1
        modified_bessel_k0 modified_bessel_k1 multigammaln ndtr ndtri polygamma psi round scaled_modified_bessel_k0
        scaled_modified_bessel_k1 shifted_chebyshev_polynomial_t shifted_chebyshev_polynomial_u
        shifted_chebyshev_polynomial_v shifted_chebyshev_polynomial_w sinc spherical_bessel_j0 xlog1py xlogy zeta""",
    "fft": """
        fft fft2 fftfreq fftn hfft hfft2 hfftn ifft ifft2 ifftn ihfft ihfft2 ihfftn irfft irfft2 irfftn rfft rfft2
        rfftfreq rfftn""",
    "nn.functional": "avg_pool2d avg_pool3d gelu hardshrink linear normalize softplus softshrink",
}
OUT_FUNCTIONS = frozenset(f"{ns}.{n}" if ns else n for ns, names in _TORCH_OUT.items() for n in names.split())

# Factories make their result in out's dtype and on out's device (torch.arange(3, out=double_t) is float64);
# normal is one when its mean and std are numbers.
_FACTORIES = frozenset("arange empty eye full linspace logspace normal ones rand randint randn randperm range zeros "
                       "fft.fftfreq fft.rfftfreq".split())

# torch's ScalarType names, which its out= messages use
_TORCH_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                "int8": "Char", "uint8": "Byte", "int16": "Short", "int32": "Int", "int64": "Long", "bool": "Bool",
                "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _torch_name(dtype):
    name = getattr(dtype, "name", str(dtype))
    return _TORCH_NAMES.get(name, name)


def can_cast(from_, to):
    """torch.can_cast: whether a value of dtype from_ may be written into a tensor of dtype `to` under torch's
    casting rules (the ones in-place ops and out= follow): no complex into a real dtype, no floating point into
    an integer one, nothing but bool into bool."""
    if getattr(from_, "is_complex", False) and not getattr(to, "is_complex", False):
        return False
    if from_.is_floating_point and not (to.is_floating_point or getattr(to, "is_complex", False)):
        return False
    return from_ == to or to != _C.dtype.bool


# ---- the slow path: a call with out= ----
def _tensor_like(x):
    return isinstance(x, Tensor) or (hasattr(x, "copy_") and hasattr(x, "dtype") and hasattr(x, "shape"))


def _requires_grad(values):
    for v in values:
        if isinstance(v, (list, tuple)):
            if _requires_grad(v):
                return True
        elif getattr(v, "requires_grad", False) is True and _tensor_like(v):
            return True
    return False


def _outs(name, out):
    """out as a tuple of tensors (a tuple of one for a plain tensor); TypeError for anything else."""
    if _tensor_like(out):
        return (out,)
    if isinstance(out, (tuple, list)) and out and all(_tensor_like(o) for o in out):
        return tuple(out)
    kind = "tuple of Tensors" if isinstance(out, (tuple, list)) else type(out).__name__
    raise TypeError(f"{name}(): argument 'out' must be Tensor or tuple of Tensors, not {kind}")


def _write(result, out):
    """result written into out (resized to result's shape when needed), as torch's out= kernels do."""
    if not _tensor_like(result):
        raise TypeError(f"out=: the function returned {type(result).__name__}, not a tensor")
    if out.device != result.device:
        raise _C.DeviceError(f"Expected out tensor to have device {result.device}, but got {out.device} instead")
    if not can_cast(result.dtype, out.dtype):
        raise _C.DTypeError(f"result type {_torch_name(result.dtype)} can't be cast to the desired output type "
                            f"{_torch_name(out.dtype)}")
    shape = tuple(result.shape)
    if tuple(out.shape) != shape:
        if out.numel():
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          f"which does not match the required output shape {list(shape)}. This behavior is "
                          "deprecated, and in a future PyTorch release outputs will not be resized unless they have "
                          "zero elements. You can explicitly reuse an out tensor t by resizing it, inplace, to zero "
                          "elements with t.resize_(0).", UserWarning, stacklevel=5)
        # fresh memory of the new shape (never the result's own, which may be an input or a view of one);
        # a complex out (oar.ComplexTensor) is resized part by part
        for part in (out.re, out.im) if not isinstance(out, Tensor) and hasattr(out, "re") else (out,):
            part.data = ops.fill(shape=list(shape), value=0.0, dtype=part.dtype, device=part.device)
    out.copy_(result)
    return out


def call(fn, name, args, kwargs, out):
    """fn(*args, **kwargs) written into out (a tensor, or a tuple of tensors for a function returning several).
    out `...`: out is in kwargs (a function with **kwargs takes out= in them)."""
    if out is ... and "out" in kwargs:
        kwargs = dict(kwargs)
        out = kwargs.pop("out")
        if out is None:
            return fn(*args, **kwargs)
    outs = _outs(name, out)
    if _C.is_grad_enabled() and _requires_grad(outs):
        raise _autograd_refused(name)
    if name in _FACTORIES and not any(_tensor_like(v) for v in (*args, *kwargs.values())):
        first = outs[0]
        dtype = kwargs.get("dtype")
        if dtype is not None and dtype != first.dtype:
            raise RuntimeError(f"dtype {_torch_name(dtype)} does not match dtype of out parameter "
                               f"({_torch_name(first.dtype)})")
        kwargs = dict(kwargs, dtype=first.dtype)
        if kwargs.get("device") is None:
            kwargs["device"] = first.device
    result = fn(*args, **kwargs)
    # As torch: refused where the result would carry a gradient (argmax, eq, nonzero of inputs that require
    # grad write into out like any other call)
    if _C.is_grad_enabled() and _requires_grad(result if isinstance(result, (tuple, list)) else (result,)):
        raise _autograd_refused(name)
    return write(name, result, out)


def _autograd_refused(name):
    return RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                        "but one of the arguments requires grad.")


def write(name, result, out):
    """result (a tensor, or a tuple of them) written into out; returns out (or the result's kind of tuple of
    the outs)."""
    outs = _outs(name, out)
    if isinstance(result, (tuple, list)) and not _tensor_like(result):
        if not isinstance(out, (tuple, list)) or len(outs) != len(result):
            raise TypeError(f"{name}(): argument 'out' must be a tuple of {len(result)} Tensors, as {name} returns "
                            f"{len(result)} tensors")
        written = [_write(r, o) for r, o in zip(result, outs)]
        if hasattr(result, "_fields"):  # a namedtuple: values/indices, Q/R, ... by name as well
            return type(result)(*written)
        return type(result)(written) if type(result) not in (tuple, list) else tuple(written)
    if isinstance(out, (tuple, list)):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not tuple")
    return _write(result, out)


# ---- the exported copies ----
def _signature_with_out(fn):
    """fn's signature with a keyword-only out=None (before its **kwargs), or None where it has none."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if "out" in sig.parameters:
        return sig
    at = len(params) - (bool(params) and params[-1].kind is inspect.Parameter.VAR_KEYWORD)
    params.insert(at, inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    try:
        return sig.replace(parameters=params)
    except ValueError:
        return None


def with_out(fn, name, module_name):
    """fn also taking out= (see the module's doc); `name` (torch's, e.g. "linalg.inv") names it in errors."""
    def exported(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        return call(fn, name, args, kwargs, out)
    functools.update_wrapper(exported, fn)
    del exported.__wrapped__  # inspect.signature/help() show the signature below, with out=
    sig = _signature_with_out(fn)
    if sig is not None:
        exported.__signature__ = sig
    # pickled by reference as the exported name (oar.add), which is this very object
    exported.__module__, exported.__qualname__ = module_name, name.rpartition(".")[2]
    exported._oar_out_orig = fn
    return exported


def install():
    """Gives every exported function in OUT_FUNCTIONS out= (oar, oar.linalg, oar.special, oar.fft and
    oar.nn.functional)."""
    import importlib
    copies = {}
    for full in sorted(OUT_FUNCTIONS):
        prefix, _, name = full.rpartition(".")
        module = importlib.import_module("oar" + ("." + prefix if prefix else ""))
        fn = module.__dict__.get(name)
        if not isinstance(fn, types.FunctionType) or hasattr(fn, "_oar_out_orig"):
            continue  # absent, implemented in C++ (kept as fast as it is), or done
        key = module.__name__, fn
        if key not in copies:  # aliases (clip and clamp, special.psi and digamma) stay one function
            copies[key] = with_out(fn, full, module.__name__)
        setattr(module, name, copies[key])
