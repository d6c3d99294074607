"""Statistics and number functions with torch's signatures, written with oar ops (so they run on every
device and, where torch's have one, carry a gradient): quantile / nanquantile, cov, corrcoef, histogram,
isin, dist, renorm, logspace, logaddexp2, gcd / lcm, ldexp, angle, and Tensor.fill_diagonal_ and
Tensor.unfold (sliding windows; a copy, where torch returns a view).
"""
import math
import numbers

from . import _C
from ._C import Tensor
from ._creation import ones_like as _ones_like, zeros_like as _zeros_like
from ._functions import remainder as _remainder
from ._ops import ops
from ._shape_common import _wrap_dim

D = _C.dtype


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan, name):
    if not input.is_floating_point():
        raise _C.DTypeError(f"{name}() input tensor must be either float or double dtype, got {input.dtype}")
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"{name}() interpolation must be one of {', '.join(_INTERPOLATIONS)}. "
                         f"Got '{interpolation}'")
    scalar_q = not isinstance(q, Tensor) or q.ndim == 0
    qs = [float(q)] if scalar_q else [float(v) for v in q.reshape(-1).tolist()]
    if not scalar_q and q.ndim > 1:
        raise _C.ShapeError(f"{name}() q must be a scalar or 1D tensor, got {q.ndim}-D")
    if any(not 0 <= v <= 1 for v in qs):
        raise ValueError(f"{name}() q values must be in the range [0, 1]")
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else _wrap_dim(dim, max(x.ndim, 1))
    if x.ndim == 0:
        x = x.reshape(1)
    if x.shape[d] == 0:
        raise IndexError(f"{name}() input tensor cannot be empty")
    n = x.shape[d]
    ordered = ops.sort(x, dim=d)[0]  # NaN sorts last
    nan_mask = x != x
    valid = (~nan_mask).sum(dim=d, keepdim=True).to(D.float64) if ignore_nan else None
    qv = _C.tensor(qs, D.float64, x.device, False)
    shape = [1] * x.ndim
    shape[d] = len(qs)
    # positions along d per quantile (and per row when NaNs are skipped)
    last = (valid - 1).clamp(min=0) if ignore_nan else float(n - 1)
    pos = qv.reshape(shape) * last
    if interpolation == "lower":
        pos = pos.floor()
    elif interpolation == "higher":
        pos = pos.ceil()
    elif interpolation == "nearest":
        pos = pos.round()  # half to even, as torch
    lo, hi = pos.floor(), pos.ceil()
    gshape = list(x.shape)
    gshape[d] = len(qs)
    lo_v = ordered.gather(d, lo.to(D.int64).expand(*gshape))
    hi_v = ordered.gather(d, hi.to(D.int64).expand(*gshape))
    if interpolation == "midpoint":
        frac = ((hi - lo) * 0.5).to(x.dtype)
    else:
        frac = (pos - lo).to(x.dtype)
    out = lo_v + (hi_v - lo_v) * frac
    bad = (valid == 0) if ignore_nan else nan_mask.any(dim=d, keepdim=True)
    out = ops.where(bad, _C.tensor(math.nan, x.dtype, x.device, False), out)
    # torch's layout: the quantiles first, then the reduced input
    out = out.movedim(d, 0)
    if keepdim:
        if dim is None:
            out = out.reshape([len(qs)] + [1] * input.ndim)
        else:
            out = out.unsqueeze(d + 1)
    elif dim is None:
        out = out.reshape(len(qs))
    if input.ndim == 0:  # a 0-d input keeps no reduced dims
        out = out.reshape([len(qs)])
    if scalar_q:
        out = out.squeeze(0)
    return out


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile(input, q, dim, keepdim, interpolation, False, "quantile")


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    return _quantile(input, q, dim, keepdim, interpolation, True, "nanquantile")


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance of the variables in input's rows (observations in columns), as numpy.cov."""
    if input.ndim > 2:
        raise _C.ShapeError(f"cov(): expected input to have two or fewer dimensions but got {input.ndim}")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    if not x.is_floating_point():
        from ._creation import get_default_dtype
        x = x.to(get_default_dtype())
    n = x.shape[1]
    w = None
    for name, weights in (("fweights", fweights), ("aweights", aweights)):
        if weights is None:
            continue
        if weights.ndim > 1 or weights.numel() != n:
            raise _C.ShapeError(f"cov(): expected {name} to have one dimension with {n} elements, got "
                                f"{list(weights.shape)}")
        if name == "fweights" and (weights.is_floating_point() or weights.dtype == D.bool):
            raise _C.DTypeError(f"cov(): expected fweights to have integral dtype, got {weights.dtype}")
        if name == "aweights" and not weights.is_floating_point():
            raise _C.DTypeError(f"cov(): expected aweights to have floating point dtype, got {weights.dtype}")
        if (weights < 0).any().item():
            raise ValueError(f"cov(): {name} cannot be negative")
        weights = weights.to(x.dtype)
        w = weights if w is None else w * weights
    if w is None:
        w = _ones_like(x[0])
    w_sum = w.sum()
    avg = (x * w).sum(1, keepdim=True) / w_sum
    if correction == 0:
        norm = w_sum
    elif aweights is None:
        norm = w_sum - correction
    else:
        norm = w_sum - correction * (w * aweights.to(x.dtype)).sum() / w_sum
    if norm.item() <= 0:
        import warnings
        warnings.warn("cov(): degrees of freedom is <= 0", RuntimeWarning, stacklevel=2)
        norm = norm.clamp(min=0)
    xm = x - avg
    c = (xm * w) @ xm.transpose(0, 1).conj() / norm
    return c.squeeze() if input.ndim < 2 else c


def corrcoef(input):
    """Pearson correlation coefficients of input's rows, clipped to [-1, 1] as numpy.corrcoef."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    s = d.sqrt()
    return (c / s.unsqueeze(1) / s.unsqueeze(0)).clamp(-1, 1)


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """(hist, bin_edges): counts (or summed weights, or a density) of input in `bins` equal bins over
    range (default: input's min and max), or over the given bin edges (a 1-D increasing tensor)."""
    from ._creation import linspace
    if not input.is_floating_point():
        raise _C.DTypeError(f"histogram(): input must be floating point, got {input.dtype}")
    x = input.reshape(-1)
    if isinstance(bins, Tensor):
        edges = bins.to(x.dtype)
        if edges.ndim != 1 or edges.numel() < 2:
            raise _C.ShapeError("histogram(): bins must be a 1-D tensor with at least 2 edges")
    else:
        if not isinstance(bins, numbers.Integral) or bins <= 0:
            raise ValueError(f"histogram(): bins must be > 0, got {bins}")
        lo, hi = (float(range[0]), float(range[1])) if range is not None else (
            (float(x.min().item()), float(x.max().item())) if x.numel() else (0.0, 1.0))
        if lo > hi:
            raise ValueError(f"histogram(): max must be larger than min, got {lo} > {hi}")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5  # numpy's widening of an empty range
        edges = linspace(lo, hi, bins + 1, dtype=x.dtype, device=x.device)
    nb = edges.numel() - 1
    if isinstance(bins, Tensor):
        lo, hi = float(edges[0].item()), float(edges[-1].item())
    inside = (x >= lo) & (x <= hi)  # the range's own ends: a computed last edge may round below max
    idx = ops.searchsorted(edges.contiguous(), x.contiguous(), right=True) - 1
    idx = idx.clamp(0, nb - 1)  # the last edge closes the last bin
    w = _ones_like(x) if weight is None else weight.reshape(-1).to(x.dtype)
    from ._creation import zeros
    hist = zeros(nb, dtype=x.dtype, device=x.device).index_add(0, idx, ops.where(inside, w, w * 0))
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return hist, edges


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of `elements` occurs in `test_elements` (sort + binary search)."""
    device = (elements if isinstance(elements, Tensor) else test_elements).device
    a = elements if isinstance(elements, Tensor) else _C.tensor(elements, None, device, False)
    b = test_elements if isinstance(test_elements, Tensor) else _C.tensor(test_elements, None, device, False)
    if a.dtype != b.dtype:
        from ._functions import promote_types
        common = promote_types(a.dtype, b.dtype)
        a, b = a.to(common), b.to(common)
    flat = a.reshape(-1)
    if b.numel() == 0:
        found = _zeros_like(flat).to(D.bool)
    else:
        table = ops.sort(b.reshape(-1))[0].contiguous()
        at = ops.searchsorted(table, flat.contiguous()).clamp(max=table.numel() - 1)
        found = table.gather(0, at) == flat
    found = found.reshape(a.shape)
    return ~found if invert else found


def dist(input, other, p=2):
    """The p-norm of input - other (broadcast)."""
    from .linalg import vector_norm
    return vector_norm(input - other, float(p))


def renorm(input, p, dim, maxnorm):
    """Each slice along dim whose p-norm exceeds maxnorm scaled down to norm maxnorm."""
    if not input.is_floating_point():
        raise _C.DTypeError(f"renorm: expected a floating point tensor, got {input.dtype}")
    if input.ndim < 2:
        raise _C.ShapeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} dimensions")
    if float(maxnorm) < 0:
        raise ValueError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    d = _wrap_dim(dim, input.ndim)
    from .linalg import vector_norm
    others = [i for i in range(input.ndim) if i != d]
    norms = vector_norm(input, float(p), dim=others, keepdim=True) if others else input.abs()
    scale = ops.where(norms > maxnorm, float(maxnorm) / (norms + 1e-7), _ones_like(norms))
    return input * scale


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    from ._creation import get_default_dtype, linspace
    exps = linspace(start, end, steps, dtype=D.float64, device=device)
    t = (float(base) ** exps).to(dtype or get_default_dtype())
    return t.requires_grad_(True) if requires_grad else t


def logaddexp2(input, other):
    """log2(2^input + 2^other) without overflow."""
    import oar
    ln2 = math.log(2.0)
    return oar.logaddexp(input * ln2, other * ln2) / ln2


def _integers(a, b, name):
    import oar
    a = a if isinstance(a, Tensor) else oar.tensor(a)
    b = b if isinstance(b, Tensor) else oar.tensor(b, device=a.device)
    if a.is_floating_point() or b.is_floating_point() or a.dtype == D.bool or b.dtype == D.bool:
        raise _C.DTypeError(f"{name}: expected integer tensors, got {a.dtype} and {b.dtype}")
    return a, b


def gcd(input, other):
    """The greatest common divisor, elementwise (Euclid's algorithm, all elements at once); gcd(0, 0) = 0."""
    import oar
    a, b = _integers(input, other, "gcd")
    from ._shape_common import broadcast_shapes
    shape = broadcast_shapes(a.shape, b.shape)
    a, b = a.abs().expand(*shape).contiguous(), b.abs().expand(*shape).contiguous()
    while b.numel() and (b != 0).any().item():
        nonzero = b != 0
        safe = ops.where(nonzero, b, _ones_like(b))
        a, b = ops.where(nonzero, b, a), ops.where(nonzero, _remainder(a, safe), b)
    return a


def lcm(input, other):
    a, b = _integers(input, other, "lcm")
    g = gcd(a, b)
    safe = ops.where(g != 0, g, _ones_like(g))
    return ops.where(g != 0, (a // safe * b).abs(), g)


def ldexp(input, other):
    """input * 2**other."""
    from ._creation import get_default_dtype
    x = input if input.is_floating_point() else input.to(get_default_dtype())
    return x * ops.pow(_C.tensor(2.0, x.dtype, x.device, False), other.to(x.dtype))


def angle(input):
    """The argument of each element: pi for negative reals, 0 otherwise (NaN stays NaN)."""
    from ._creation import get_default_dtype
    x = input if input.is_floating_point() else input.to(get_default_dtype())
    zero = _zeros_like(x)
    return ops.where(x != x, x, ops.where(x < 0, zero + math.pi, zero))


def _fill_diagonal_(self, fill_value, wrap=False):
    """Fills the main diagonal in place (every dim of a >2-D tensor equal; a tall matrix restarts the
    diagonal every cols + 1 rows when wrap, as numpy.fill_diagonal)."""
    import oar
    if self.ndim < 2:
        raise _C.ShapeError("fill_diagonal_: dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise _C.ShapeError("fill_diagonal_: all dimensions of input must be of equal length")
    rows, cols = self.shape[0], self.shape[1]
    if self.ndim > 2:
        k = oar.arange(rows, device=self.device)
        self[(k,) * self.ndim] = fill_value
        return self
    steps = (rows * cols + cols) // (cols + 1) if wrap and rows > cols + 1 else min(rows, cols)
    flat = oar.arange(steps, device=self.device) * (cols + 1)
    flat = flat[flat < rows * cols] if wrap else flat
    self[(flat // cols, flat % cols)] = fill_value
    return self


def _unfold(self, dimension, size, step):
    """Every window of `size` along dimension, `step` apart, as a new last dim (a copy; torch's is a view)."""
    import oar
    d = _wrap_dim(dimension, max(self.ndim, 1))
    x = self.reshape(1) if self.ndim == 0 else self
    n = x.shape[d]
    if size < 0 or size > n:
        raise _C.ShapeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise ValueError(f"step is {step} but must be > 0")
    if self.ndim == 0:  # torch: a 0-d tensor unfolds to [size]
        return x[:size].clone()
    windows = (n - size) // step + 1
    idx = (oar.arange(windows, device=x.device).unsqueeze(1) * step + oar.arange(size, device=x.device)).reshape(-1)
    picked = x.index_select(d, idx)
    shape = list(x.shape)
    shape[d:d + 1] = [windows, size]
    return picked.reshape(shape).movedim(d + 1, -1)


for _name, _fn in {"quantile": quantile, "nanquantile": nanquantile, "cov": cov, "corrcoef": corrcoef,
                   "histogram": histogram, "isin": isin, "dist": dist, "renorm": renorm,
                   "logaddexp2": logaddexp2, "gcd": gcd, "lcm": lcm, "ldexp": ldexp, "angle": angle,
                   "fill_diagonal_": _fill_diagonal_, "unfold": _unfold}.items():
    setattr(Tensor, _name, _fn)
from ._functions import _inplace_method  # noqa: E402
for _name in ("renorm", "gcd", "lcm", "ldexp"):
    setattr(Tensor, _name + "_", _inplace_method(globals()[_name]))

__all__ = ["quantile", "nanquantile", "cov", "corrcoef", "histogram", "isin", "dist", "renorm", "logspace",
           "logaddexp2", "gcd", "lcm", "ldexp", "angle"]
