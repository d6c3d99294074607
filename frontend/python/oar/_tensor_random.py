"""Random fills and sampling with torch's signatures.

Tensor.uniform_(from, to), normal_(mean, std), bernoulli_(p), exponential_(lambd), geometric_(p),
log_normal_(mean, std), cauchy_(median, sigma), random_(from, to) write fresh draws into the tensor;
oar.multinomial / Tensor.multinomial draw category indices. Every draw comes from the catalog's counter-based
uniform and normal ops (so a generator or oar.manual_seed makes it repeatable on every device) and is
transformed with ordinary ops on the tensor's device. Bad parameters are typed errors, as torch's checks.
"""
import math
import numbers

from . import _C
from ._C import Tensor
from ._creation import _random
from ._ops import ops


def _uniform_like(t, generator, dtype=None):
    """Uniform [0, 1) draws of t's shape on t's device (float64 for integer targets: exact thresholds)."""
    dtype = dtype or (t.dtype if t.is_floating_point() else _C.dtype.float64)
    return _random("uniform", list(t.shape), {"dtype": dtype}, generator, t.device)


def _require_floating(t, name):
    if not t.is_floating_point():
        raise _C.DTypeError(f"{name} is only defined for floating-point tensors, got {t.dtype}")


def _fill(t, values):
    """Writes draws into t (a leaf that requires grad refuses under grad mode, as in torch)."""
    return t.copy_(values if values.dtype == t.dtype else values.to(t.dtype))


def uniform_(self, from_=0.0, to=1.0, *, generator=None, **kw):
    """Uniform draws in [from, to) (torch spells the first argument `from`, which Python can only pass by
    keyword through **{'from': ...})."""
    from_, to = kw.pop("from", kw.pop("low", from_)), kw.pop("high", to)
    _no_more(kw, "uniform_")
    _require_floating(self, "uniform_")
    if not float(from_) <= float(to):
        raise ValueError(f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}")
    draws = _random("uniform", list(self.shape), {"low": float(from_), "high": float(to), "dtype": self.dtype},
                    generator, self.device)
    return _fill(self, draws)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    _require_floating(self, "normal_")
    if not float(std) >= 0:
        raise ValueError(f"normal_ expects std >= 0.0, but found std {std}")
    draws = _random("normal", list(self.shape), {"mean": float(mean), "std": float(std), "dtype": self.dtype},
                    generator, self.device)
    return _fill(self, draws)


def bernoulli_(self, p=0.5, *, generator=None):
    """1 with probability p (a number or a tensor broadcast to self), else 0, in self's dtype."""
    if isinstance(p, Tensor):
        bad = ((p < 0) | (p > 1)).any().item() if p.numel() else False
        if bad:
            raise ValueError("bernoulli_: all probabilities must be in [0, 1]")
    elif not 0 <= float(p) <= 1:
        raise ValueError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    u = _uniform_like(self, generator, _C.dtype.float64)
    threshold = p.to(device=self.device, dtype=_C.dtype.float64) if isinstance(p, Tensor) else float(p)
    return _fill(self, u < threshold)


def exponential_(self, lambd=1.0, *, generator=None):
    """Exponential draws with rate lambd: -log(1 - u) / lambd (1 - u is in (0, 1], so the log is finite)."""
    _require_floating(self, "exponential_")
    if not float(lambd) > 0:
        raise ValueError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    u = _uniform_like(self, generator)
    return _fill(self, -ops.log1p(-u) / float(lambd))


def geometric_(self, p, *, generator=None):
    """The number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    if not 0 < float(p) < 1:
        raise ValueError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    u = _uniform_like(self, generator, _C.dtype.float64)
    trials = ops.ceil(ops.log1p(-u) / math.log1p(-float(p)))
    return _fill(self, ops.clamp(trials, min=1.0))


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    _require_floating(self, "log_normal_")
    if not float(std) > 0:
        raise ValueError(f"log_normal_ expects std > 0.0, but found std={std}")
    z = _random("normal", list(self.shape), {"mean": float(mean), "std": float(std), "dtype": self.dtype},
                generator, self.device)
    return _fill(self, ops.exp(z))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    _require_floating(self, "cauchy_")
    if not float(sigma) > 0:
        raise ValueError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    u = _uniform_like(self, generator)
    return _fill(self, ops.tan((u - 0.5) * math.pi) * float(sigma) + float(median))


def _top_of(dtype):
    """random_()'s default upper bound: every integer the dtype holds exactly (torch's rule)."""
    if dtype == _C.dtype.bool:
        return 2
    if dtype == _C.dtype.uint8:
        return 256
    if dtype.is_floating_point:
        bits = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}[str(dtype).split(".")[-1]]
        return 2 ** bits + 1
    return iinfo(dtype).max + 1 if dtype != _C.dtype.int64 else 2 ** 63


def random_(self, *args, generator=None, **kw):
    """Integers uniform in [from, to - 1]: random_(from, to), random_(to) for [0, to), random_() for every
    value the dtype holds exactly from 0."""
    if len(args) > 2:
        raise TypeError(f"random_() takes at most 2 positional arguments ({len(args)} given)")
    if len(args) == 1 and "from" not in kw and "to" not in kw:
        low, high = 0, int(args[0])  # random_(to)
    else:
        low = int(args[0]) if args else int(kw.pop("from", 0))
        high = int(args[1]) if len(args) > 1 else kw.pop("to", None)
        high = _top_of(self.dtype) if high is None else int(high)
    kw.pop("from", None)
    kw.pop("to", None)
    _no_more(kw, "random_")
    if not low < high:
        raise ValueError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    from ._creation import _random_integers
    return _fill(self, _random_integers(low, high, list(self.shape), generator, self.device))


def _no_more(kw, name):
    if kw:
        raise TypeError(f"{name}() got an unexpected keyword argument '{next(iter(kw))}'")


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices drawn from the categories weighted by each row of input (1-D or 2-D, non-negative, finite,
    some weight positive): with replacement by inverting the running sum of the weights, without by an
    exponential race (the smallest -log(u) / w are the draws, in order)."""
    if input.ndim not in (1, 2):
        raise _C.ShapeError(f"multinomial: prob_dist must be 1 or 2 dim, got {input.ndim}")
    if not input.is_floating_point():
        raise _C.DTypeError(f"multinomial only supports floating-point dtypes for input, got {input.dtype}")
    if not isinstance(num_samples, numbers.Integral) or num_samples <= 0:
        raise ValueError(f"multinomial: cannot sample n_sample <= 0 samples, got {num_samples}")
    rows = input.reshape(1, -1) if input.ndim == 1 else input
    n = rows.shape[1]
    if n == 0:
        raise ValueError("multinomial: the input has no categories")
    w = rows.detach().to(_C.dtype.float64)
    if not w.isfinite().all().item() or (w < 0).any().item():
        raise ValueError("multinomial: probability tensor contains either inf, nan or element < 0")
    if (w.sum(1) <= 0).any().item():
        raise ValueError("multinomial: invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement:
        if num_samples > n:
            raise ValueError(f"multinomial: cannot sample {num_samples} > {n} samples without replacement")
        if ((w > 0).sum(1) < num_samples).any().item():
            raise ValueError("multinomial: invalid multinomial distribution (with replacement=False, not enough "
                             "non-negative category to sample)")
        u = _random("uniform", [rows.shape[0], n], {"dtype": _C.dtype.float64}, generator, input.device)
        keys = -ops.log1p(-u) / w  # weight 0: an infinite key, never among the first
        out = ops.topk(keys, num_samples, dim=1, largest=False)[1]
    else:
        cdf = ops.cumsum(w, dim=1)
        u = _random("uniform", [rows.shape[0], num_samples], {"dtype": _C.dtype.float64}, generator, input.device)
        # the first category whose running sum passes u * total; a zero weight never passes first
        out = ops.searchsorted(cdf.contiguous(), (u * cdf[:, -1:]).contiguous(), right=True)
        out = ops.clamp(out, max=n - 1)
    return out.reshape(num_samples) if input.ndim == 1 else out


class finfo:
    """torch.finfo(dtype): the limits of a floating dtype (bits, eps, max, min, tiny, resolution)."""
    _TABLE = {  # bits, eps, max, tiny (smallest normal), decimal digits
        "float16": (16, 2.0 ** -10, 65504.0, 2.0 ** -14, 3),
        "bfloat16": (16, 2.0 ** -7, 3.3895313892515355e38, 2.0 ** -126, 2),
        "float32": (32, 2.0 ** -23, 3.4028234663852886e38, 2.0 ** -126, 6),
        "float64": (64, 2.0 ** -52, 1.7976931348623157e308, 2.0 ** -1022, 15),
    }

    def __init__(self, type=None):
        from ._creation import get_default_dtype
        dtype = get_default_dtype() if type is None else type
        name = str(dtype).split(".")[-1]
        if name not in self._TABLE:
            raise TypeError(f"finfo: {dtype} is not a floating point dtype (use iinfo for integers)")
        self.dtype = name
        self.bits, self.eps, self.max, self.tiny, digits = self._TABLE[name]
        self.min = -self.max
        self.smallest_normal = self.tiny
        self.resolution = 10.0 ** -digits

    def __repr__(self):
        return (f"finfo(resolution={self.resolution}, min={self.min:.6e}, max={self.max:.6e}, eps={self.eps:.6e}, "
                f"smallest_normal={self.tiny:.6e}, tiny={self.tiny:.6e}, dtype={self.dtype})")


class iinfo:
    """torch.iinfo(dtype): the limits of an integer dtype (bits, min, max)."""
    _TABLE = {"uint8": (8, 0, 255), "int8": (8, -128, 127), "int16": (16, -32768, 32767),
              "int32": (32, -2 ** 31, 2 ** 31 - 1), "int64": (64, -2 ** 63, 2 ** 63 - 1)}

    def __init__(self, type):
        name = str(type).split(".")[-1]
        if name not in self._TABLE:
            raise TypeError(f"iinfo: {type} is not an integer dtype (use finfo for floating point)")
        self.dtype = name
        self.bits, self.min, self.max = self._TABLE[name]

    def __repr__(self):
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


_METHODS = {"uniform_": uniform_, "normal_": normal_, "bernoulli_": bernoulli_, "exponential_": exponential_,
            "geometric_": geometric_, "log_normal_": log_normal_, "cauchy_": cauchy_, "random_": random_,
            "multinomial": multinomial}
for _name, _fn in _METHODS.items():
    setattr(Tensor, _name, _fn)

__all__ = ["multinomial", "finfo", "iinfo"]
