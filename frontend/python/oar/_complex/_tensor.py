"""ComplexTensor: a complex64 / complex128 tensor held as a pair of real oar tensors (real and imaginary part,
the same shape, dtype and device).

Every operation is written with real oar ops on the two parts, so it runs on every device and autograd
differentiates it unchanged; the gradient of a real loss L with respect to a complex tensor z is
`z.grad == dL/d(z.real) + 1j * dL/d(z.imag)`, PyTorch's convention. Tensor methods a complex tensor does not
have raise NotImplementedError naming the method and complex tensors.
"""
import builtins
import math
import numbers
import warnings

from .. import _C
from .._C import Tensor
from ._dtype import ComplexDType, complex64, complex128, default_complex, is_complex_dtype, result_real_dtype

_D = _C.dtype


class ComplexNotImplementedError(NotImplementedError, AttributeError):
    """An operation oar does not implement for complex tensors (a NotImplementedError; also an AttributeError
    for a Tensor method, so hasattr() and getattr(x, name, default) keep working)."""


def _unsupported(what):
    return ComplexNotImplementedError(
        f"{what} is not implemented for complex tensors in oar (complex64/complex128 are a frontend layer over "
        f"pairs of real tensors, docs/compat.md 'Complex tensors and torch.fft')")


def _is_number(x):
    return isinstance(x, numbers.Number) and not isinstance(x, Tensor)


def _parts(x, dtype, device):
    """(real, imag) of x as tensors of `dtype` (imag None for a real x); numbers stay numbers."""
    if isinstance(x, ComplexTensor):
        re, im = x.re, x.im
        if re.dtype != dtype:
            re, im = re.to(dtype), im.to(dtype)
        return re, im
    if isinstance(x, Tensor):
        return (x if x.dtype == dtype else x.to(dtype)), None
    if isinstance(x, numbers.Real):
        return float(x), None
    if isinstance(x, numbers.Complex):  # Python's complex, NumPy's complex64 / complex128 scalars
        x = complex(x)
        return x.real, (x.imag if x.imag != 0 else None)
    if hasattr(x, "dtype") and hasattr(x, "shape"):  # a NumPy array or scalar
        import numpy as np
        arr = np.asarray(x)
        if arr.ndim == 0:
            return _parts(arr.item(), dtype, device)
        from .._creation import tensor
        return _parts(as_complex_tensor(arr, device=device) if arr.dtype.kind == "c"
                      else tensor(arr, device=device), dtype, device)
    raise TypeError(f"unsupported operand type {type(x).__name__!r} for a complex tensor op")


def _device_of(*xs):
    for x in xs:
        if isinstance(x, (ComplexTensor, Tensor)) and x.ndim:
            return x.device
    for x in xs:
        if isinstance(x, (ComplexTensor, Tensor)):
            return x.device
    return None


def _plus(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _minus(a, b):
    if b is None:
        return a
    if a is None:
        return -b
    return a - b


def _times(a, b):
    if a is None or b is None:
        return None
    return a * b


def _make(re, im):
    """A ComplexTensor from parts that may be numbers or None, broadcast to one shape."""
    if im is None:
        im = re * 0.0 if isinstance(re, Tensor) else 0.0
    if not isinstance(re, Tensor):
        re = im * 0.0 + re
    if not isinstance(im, Tensor):
        im = re * 0.0 + im
    return ComplexTensor(re, im)


def _binary(name, a, b):
    dtype = result_real_dtype(a, b)
    device = _device_of(a, b)
    ar, ai = _parts(a, dtype, device)
    br, bi = _parts(b, dtype, device)
    if isinstance(ar, Tensor) and isinstance(br, Tensor) and ar.device != br.device:
        if ar.ndim == 0 and ar.device.type == "cpu":
            ar, ai = ar.to(br.device), (ai.to(br.device) if isinstance(ai, Tensor) else ai)
        elif br.ndim == 0 and br.device.type == "cpu":
            br, bi = br.to(ar.device), (bi.to(ar.device) if isinstance(bi, Tensor) else bi)
    if name == "add":
        return _make(ar + br, _plus(ai, bi))
    if name == "sub":
        return _make(ar - br, _minus(ai, bi))
    if name == "mul":
        return _make(_minus(ar * br, _times(ai, bi)), _plus(_times(ar, bi), _times(ai, br)))
    if name == "div":
        if bi is None:
            return _make(ar / br, None if ai is None else ai / br)
        den = br * br + bi * bi
        re = _plus(ar * br, _times(ai, bi))
        im = _minus(_times(ai, br), ar * bi)
        return _make(re / den, im / den)
    raise AssertionError(name)


def _matmul(a, b, fn="matmul"):
    dtype = result_real_dtype(a, b)
    ar, ai = _parts(a, dtype, None)
    br, bi = _parts(b, dtype, None)
    if not isinstance(ar, Tensor) or not isinstance(br, Tensor):
        raise TypeError(f"{fn}: both operands must be tensors")

    def mm(x, y):
        return getattr(x, fn)(y)
    re = mm(ar, br)
    if ai is not None and bi is not None:
        re = re - mm(ai, bi)
    im = _plus(None if bi is None else mm(ar, bi), None if ai is None else mm(ai, br))
    return _make(re, im)


def _nonzero(t):
    """A 0/1 mask keeping a gradient of 0 where t == 0 for functions singular there (abs, angle)."""
    return t != 0


class ComplexTensor:
    """A complex tensor (dtype torch.complex64 or torch.complex128): real part `re` and imaginary part `im`."""

    __slots__ = ("re", "im", "__weakref__")
    is_sparse = False
    is_sparse_csr = False
    is_quantized = False
    is_meta = False
    is_nested = False
    __array_ufunc__ = None  # NumPy arrays and scalars on the left of an operator defer to ours
    _oar_complex = True  # oar.Tensor's operators return NotImplemented for us, so ours (reflected) run

    def __init__(self, re, im):
        if not isinstance(re, Tensor) or not isinstance(im, Tensor):
            raise TypeError("ComplexTensor(re, im) takes two real oar tensors")
        if re.dtype != im.dtype:
            d = _D.float64 if _D.float64 in (re.dtype, im.dtype) else _D.float32
            re, im = re.to(d), im.to(d)
        if re.dtype not in (_D.float32, _D.float64):
            if re.dtype in (_D.float16, _D.bfloat16):
                raise _unsupported(f"a complex tensor of {re.dtype} parts (torch.complex32)")
            re, im = re.to(_D.float32), im.to(_D.float32)
        if re.device != im.device:
            raise _C.DeviceError(f"complex tensor: real part on {re.device}, imaginary part on {im.device}")
        if tuple(re.shape) != tuple(im.shape):
            import oar
            re, im = oar.broadcast_tensors(re, im)
            re, im = re.contiguous(), im.contiguous()
        self.re = re
        self.im = im

    # ---- what it is ----
    @property
    def dtype(self):
        return complex128 if self.re.dtype == _D.float64 else complex64

    @property
    def shape(self):
        return self.re.shape

    @property
    def device(self):
        return self.re.device

    @property
    def ndim(self):
        return self.re.ndim

    @property
    def layout(self):
        return self.re.layout

    @property
    def is_cuda(self):
        return self.re.device.type == "cuda"

    @property
    def is_cpu(self):
        return self.re.device.type == "cpu"

    @property
    def itemsize(self):
        return self.dtype.itemsize

    @property
    def nbytes(self):
        return self.numel() * self.dtype.itemsize

    def element_size(self):
        return self.dtype.itemsize

    def dim(self):
        return self.re.ndim

    ndimension = dim

    def size(self, dim=None):
        return self.re.shape if dim is None else self.re.shape[dim]

    def numel(self):
        return self.re.numel()

    nelement = numel

    def stride(self, dim=None):
        return self.re.stride() if dim is None else self.re.stride(dim)

    def __len__(self):
        if not self.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self):
        if not self.ndim:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def is_complex(self):
        return True

    def is_floating_point(self):
        return False

    def is_signed(self):
        return True

    def is_conj(self):
        return False

    def is_neg(self):
        return False

    def is_contiguous(self, memory_format=None):
        return self.re.is_contiguous() and self.im.is_contiguous()

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            kind = "ComplexDoubleTensor" if self.re.dtype == _D.float64 else "ComplexFloatTensor"
            return f"torch.{kind}" if self.device.type == "cpu" else f"torch.{self.device.type}.{kind}"
        return self.to(dtype)

    def get_device(self):
        return self.re.get_device()

    # ---- parts ----
    @property
    def real(self):
        return self.re

    @real.setter
    def real(self, value):
        self.re.copy_(value if isinstance(value, Tensor) else self.re * 0 + value)

    @property
    def imag(self):
        return self.im

    @imag.setter
    def imag(self, value):
        self.im.copy_(value if isinstance(value, Tensor) else self.im * 0 + value)

    # ---- autograd ----
    @property
    def requires_grad(self):
        return self.re.requires_grad or self.im.requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def requires_grad_(self, flag=True):
        self.re.requires_grad_(flag)
        self.im.requires_grad_(flag)
        return self

    @property
    def is_leaf(self):
        return self.re.is_leaf and self.im.is_leaf

    @property
    def grad_fn(self):
        return self.re.grad_fn if self.re.grad_fn is not None else self.im.grad_fn

    @property
    def grad(self):
        """dL/d(real) + 1j * dL/d(imag), PyTorch's convention for the gradient of a real loss."""
        gr, gi = self.re.grad, self.im.grad
        if gr is None and gi is None:
            return None
        return ComplexTensor(gr if gr is not None else gi * 0, gi if gi is not None else gr * 0)

    @grad.setter
    def grad(self, value):
        if value is None:
            self.re.grad = None
            self.im.grad = None
        else:
            self.re.grad, self.im.grad = _parts(value, self.re.dtype, self.device)

    def retain_grad(self):
        self.re.retain_grad()
        self.im.retain_grad()

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Backpropagates `gradient` (complex, PyTorch's convention): the gradient of the real loss
        sum(gradient.real * self.real + gradient.imag * self.imag). A complex output needs one, as in torch."""
        if gradient is None:
            raise RuntimeError("grad can be implicitly created only for real scalar outputs (this tensor is "
                               f"{self.dtype}); call .real/.abs() first or pass a gradient")
        from .. import autograd
        gr, gi = _parts(gradient, self.re.dtype, self.device)
        gi = gr * 0 if gi is None else gi
        autograd.backward([self.re, self.im], [gr, gi], retain_graph=retain_graph, create_graph=create_graph,
                          inputs=inputs)

    def register_hook(self, hook):
        raise _unsupported("Tensor.register_hook")

    def detach(self):
        return ComplexTensor(self.re.detach(), self.im.detach())

    def detach_(self):
        self.re.detach_()
        self.im.detach_()
        return self

    @property
    def data(self):
        return self.detach()

    # ---- conversions ----
    def to(self, *args, **kwargs):
        """to(device), to(dtype), to(device, dtype), to(other): a complex dtype casts both parts; a real dtype keeps
        the real part and warns that the imaginary part is discarded, as torch does."""
        device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
        rest = {k: v for k, v in kwargs.items() if k in ("non_blocking", "copy", "memory_format")}
        for a in args:
            if isinstance(a, (ComplexDType, _D)):
                dtype = a
            elif isinstance(a, ComplexTensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, bool):
                continue
            elif a is not None:
                device = a
        if dtype is not None and not is_complex_dtype(dtype):
            _warn_discard(3)
            return self.re.to(device=device, dtype=dtype, **rest)
        rd = None if dtype is None else dtype.real_dtype
        return ComplexTensor(self.re.to(device=device, dtype=rd, **rest), self.im.to(device=device, dtype=rd, **rest))

    def type_as(self, other):
        return self.to(other.dtype)

    def cpu(self):
        return ComplexTensor(self.re.cpu(), self.im.cpu())

    def cuda(self, device=None, non_blocking=False):
        return ComplexTensor(self.re.cuda(device), self.im.cuda(device))

    def cfloat(self):
        return self.to(complex64)

    def cdouble(self):
        return self.to(complex128)

    def _real_cast(self, dtype):
        _warn_discard(4)
        return self.re.to(dtype)

    def float(self):
        return self._real_cast(_D.float32)

    def double(self):
        return self._real_cast(_D.float64)

    def half(self):
        return self._real_cast(_D.float16)

    def bfloat16(self):
        return self._real_cast(_D.bfloat16)

    def long(self):
        return self._real_cast(_D.int64)

    def int(self):
        return self._real_cast(_D.int32)

    def bool(self):
        return (self.re != 0) | (self.im != 0)

    def numpy(self, force=False):
        import numpy as np
        re = self.re.detach().cpu().numpy() if force else self.re.numpy()
        im = self.im.detach().cpu().numpy() if force else self.im.numpy()
        out = np.empty(re.shape, dtype=np.complex128 if re.dtype == np.float64 else np.complex64)
        out.real = re
        out.imag = im
        return out

    def __array__(self, dtype=None, copy=None):
        arr = self.detach().cpu().numpy()
        return arr if dtype is None else arr.astype(dtype)

    def tolist(self):
        import numpy as np
        return self.detach().cpu().numpy().astype(np.complex128).tolist()

    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to Scalar")
        return complex(self.re.item(), self.im.item())

    def __complex__(self):
        return self.item()

    def __float__(self):
        raise TypeError("can't convert complex to float")

    def __int__(self):
        raise TypeError("can't convert complex to int")

    def __index__(self):
        raise TypeError("a complex tensor cannot be used as an index")

    def __bool__(self):
        if self.numel() != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return self.item() != 0

    def __repr__(self):
        from ._str import complex_str
        return complex_str(self)

    __str__ = __repr__

    def __format__(self, spec):
        if self.ndim == 0 and spec:
            return format(self.item(), spec)
        return repr(self)

    __hash__ = object.__hash__

    def __reduce_ex__(self, protocol):
        return (_rebuild, (self.re, self.im))

    def __deepcopy__(self, memo):
        import copy
        out = ComplexTensor(copy.deepcopy(self.re, memo), copy.deepcopy(self.im, memo))
        memo[id(self)] = out
        return out

    # ---- arithmetic ----
    def __add__(self, other):
        return _binary("add", self, other)

    def __radd__(self, other):
        return _binary("add", other, self)

    def add(self, other, *, alpha=1):
        return _binary("add", self, other if alpha == 1 else other * alpha)

    def __sub__(self, other):
        return _binary("sub", self, other)

    def __rsub__(self, other):
        return _binary("sub", other, self)

    def sub(self, other, *, alpha=1):
        return _binary("sub", self, other if alpha == 1 else other * alpha)

    subtract = sub

    def __mul__(self, other):
        return _binary("mul", self, other)

    def __rmul__(self, other):
        return _binary("mul", other, self)

    mul = multiply = __mul__

    def __truediv__(self, other):
        return _binary("div", self, other)

    def __rtruediv__(self, other):
        return _binary("div", other, self)

    def div(self, other, *, rounding_mode=None):
        if rounding_mode is not None:
            raise _unsupported(f"div(rounding_mode={rounding_mode!r})")
        return _binary("div", self, other)

    divide = true_divide = div

    def __floordiv__(self, other):
        raise _unsupported("floor division (//)")

    __rfloordiv__ = __mod__ = __rmod__ = __floordiv__

    def __neg__(self):
        # x * -1, not -x: oar's neg gives +0.0 for 0.0 where torch (and IEEE) give -0.0, which prints as "-0."
        return ComplexTensor(self.re * -1.0, self.im * -1.0)

    neg = negative = __neg__

    def __pos__(self):
        return self

    def __matmul__(self, other):
        return _matmul(self, other)

    def __rmatmul__(self, other):
        return _matmul(other, self)

    def matmul(self, other):
        return _matmul(self, other)

    def mm(self, other):
        return _matmul(self, other, "mm")

    def bmm(self, other):
        return _matmul(self, other, "bmm")

    def mv(self, vec):
        return _matmul(self, vec)

    def dot(self, other):
        if self.ndim != 1:
            raise RuntimeError("1D tensors expected, but got %dD and %dD tensors" % (self.ndim, other.ndim))
        return (self * other).sum()

    def vdot(self, other):
        return (self.conj() * other).sum()

    def outer(self, other):
        return self.reshape(-1, 1) * (other.reshape(1, -1))

    ger = outer

    def __pow__(self, exponent):
        if isinstance(exponent, numbers.Integral) and not isinstance(exponent, bool) and 0 <= exponent <= 4:
            out = None
            for _ in range(exponent):
                out = self if out is None else out * self
            return out if out is not None else _make(self.re * 0 + 1, None)
        if isinstance(exponent, numbers.Real) and not isinstance(exponent, Tensor):
            r = self.abs()
            theta = self.angle()
            mag = r ** exponent
            return ComplexTensor(mag * (theta * exponent).cos(), mag * (theta * exponent).sin())
        return (self.log() * exponent).exp()

    pow = __pow__

    def __rpow__(self, base):
        if _is_number(base):
            return (self * _log_number(base)).exp()
        return (_log(base) * self).exp()

    def __eq__(self, other):
        if not isinstance(other, (ComplexTensor, Tensor, numbers.Number)):
            return NotImplemented
        dtype = result_real_dtype(self, other)
        br, bi = _parts(other, dtype, self.device)
        re, im = _parts(self, dtype, self.device)
        return (re == br) & (im == (0.0 if bi is None else bi))

    def __ne__(self, other):
        out = self.__eq__(other)
        return out if out is NotImplemented else out.logical_not()

    eq = __eq__
    ne = __ne__

    def equal(self, other):
        return tuple(self.shape) == tuple(other.shape) and bool(self.__eq__(other).all())

    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        diff = (self - other).abs()
        return diff <= atol + rtol * _abs_any(other)

    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return bool(self.isclose(other, rtol, atol, equal_nan).all())

    def __lt__(self, other):
        raise _unsupported("ordering comparison (<, >, <=, >=; complex numbers have no order)")

    __le__ = __gt__ = __ge__ = __lt__

    # in place: the parts are written in place (a `.real` taken before sees the change)
    def _assign(self, value):
        re, im = _parts(value, self.re.dtype, self.device)
        self.re.copy_(re if isinstance(re, Tensor) else self.re * 0 + re)
        self.im.copy_(im if isinstance(im, Tensor) else self.im * 0 + (0.0 if im is None else im))
        return self

    def copy_(self, src, non_blocking=False):
        if isinstance(src, Tensor):
            return self._assign(src.to(self.re.dtype))
        return self._assign(src)

    def add_(self, other, *, alpha=1):
        return self._assign(self.add(other, alpha=alpha))

    def sub_(self, other, *, alpha=1):
        return self._assign(self.sub(other, alpha=alpha))

    def mul_(self, other):
        return self._assign(self * other)

    def div_(self, other):
        return self._assign(self / other)

    def neg_(self):
        return self._assign(-self)

    def conj_(self):
        return self._assign(self.conj())

    def zero_(self):
        self.re.zero_()
        self.im.zero_()
        return self

    def fill_(self, value):
        value = complex(value)
        self.re.fill_(value.real)
        self.im.fill_(value.imag)
        return self

    def normal_(self, mean=0.0, std=1.0, *, generator=None):
        self.re.normal_(0.0, std / math.sqrt(2.0))
        self.im.normal_(0.0, std / math.sqrt(2.0))
        if mean != 0:
            self.add_(mean)
        return self

    __iadd__ = add_
    __isub__ = sub_
    __imul__ = mul_
    __itruediv__ = div_

    # ---- elementwise functions ----
    def conj(self):
        return ComplexTensor(self.re, self.im * -1.0)

    conj_physical = conj

    def resolve_conj(self):
        return self

    resolve_neg = resolve_conj

    def abs(self):
        """|z|, with torch's gradient 0 at z == 0 (sqrt alone would give NaN there)."""
        import oar
        sq = self.re * self.re + self.im * self.im
        nz = _nonzero(sq)
        return oar.where(nz, oar.where(nz, sq, sq * 0 + 1).sqrt(), sq * 0)

    absolute = abs

    def __abs__(self):
        return self.abs()

    def angle(self):
        """atan2(imag, real), with torch's gradient 0 at z == 0."""
        import oar
        nz = _nonzero(self.re * self.re + self.im * self.im)
        one = self.re * 0 + 1
        return oar.where(nz, oar.atan2(self.im, oar.where(nz, self.re, one)), self.re * 0)

    def sgn(self):
        import oar
        a = self.abs()
        nz = a != 0
        safe = oar.where(nz, a, a * 0 + 1)
        return ComplexTensor(oar.where(nz, self.re / safe, a * 0), oar.where(nz, self.im / safe, a * 0))

    def exp(self):
        m = self.re.exp()
        return ComplexTensor(m * self.im.cos(), m * self.im.sin())

    def log(self):
        return ComplexTensor(self.abs().log(), self.angle())

    def sqrt(self):
        return self ** 0.5

    def rsqrt(self):
        return 1 / self.sqrt()

    def square(self):
        return self * self

    def reciprocal(self):
        return 1 / self

    def sin(self):
        return ComplexTensor(self.re.sin() * self.im.cosh(), self.re.cos() * self.im.sinh())

    def cos(self):
        return ComplexTensor(self.re.cos() * self.im.cosh(), -(self.re.sin() * self.im.sinh()))

    def isnan(self):
        return self.re.isnan() | self.im.isnan()

    def isinf(self):
        return self.re.isinf() | self.im.isinf()

    def isfinite(self):
        return self.re.isfinite() & self.im.isfinite()

    def isreal(self):
        return self.im == 0

    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        return ComplexTensor(self.re.nan_to_num(nan, posinf, neginf), self.im.nan_to_num(nan, posinf, neginf))

    # ---- reductions ----
    def sum(self, dim=None, keepdim=False, dtype=None):
        out = self if dtype is None else self.to(dtype)
        if dim is None and not keepdim:
            return ComplexTensor(out.re.sum(), out.im.sum())
        return ComplexTensor(out.re.sum(dim, keepdim), out.im.sum(dim, keepdim))

    def mean(self, dim=None, keepdim=False, dtype=None):
        out = self if dtype is None else self.to(dtype)
        if dim is None and not keepdim:
            return ComplexTensor(out.re.mean(), out.im.mean())
        return ComplexTensor(out.re.mean(dim, keepdim), out.im.mean(dim, keepdim))

    def nansum(self, dim=None, keepdim=False, dtype=None):
        return self.nan_to_num(0.0, float("inf"), float("-inf")).sum(dim, keepdim, dtype)

    def cumsum(self, dim, dtype=None):
        out = self if dtype is None else self.to(dtype)
        return ComplexTensor(out.re.cumsum(dim), out.im.cumsum(dim))

    def prod(self, dim=None, keepdim=False, dtype=None):
        out = self if dtype is None else self.to(dtype)
        if dim is None:
            out, dim = out.reshape(-1), 0
        parts = out.unbind(dim)
        acc = parts[0]
        for p in parts[1:]:
            acc = acc * p
        return acc.unsqueeze(dim) if keepdim else acc

    def norm(self, p="fro", dim=None, keepdim=False, dtype=None):
        a = self.abs()
        if p in ("fro", 2, 2.0, None):
            sq = a * a
            s = sq.sum() if dim is None else sq.sum(dim, keepdim)
            return s.sqrt()
        return a.norm(p, dim, keepdim) if dim is not None else a.norm(p)

    def var(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        if correction is None:
            correction = 1 if unbiased else 0
        d = self - (self.mean() if dim is None else self.mean(dim, True))
        a2 = d.re * d.re + d.im * d.im
        n = self.numel() if dim is None else _count(self.shape, dim)
        s = a2.sum() if dim is None else a2.sum(dim, keepdim)
        return s / builtins.max(n - correction, 0)

    def std(self, dim=None, unbiased=True, keepdim=False, *, correction=None):
        return self.var(dim, unbiased, keepdim, correction=correction).sqrt()

    # ---- shape and indexing: the same op on both parts ----
    def __getitem__(self, key):
        return ComplexTensor(self.re[key], self.im[key])

    def __setitem__(self, key, value):
        re, im = _parts(value, self.re.dtype, self.device)
        self.re[key] = re
        self.im[key] = 0.0 if im is None else im

    def expand_as(self, other):
        return self.expand(*other.shape)

    def view_as(self, other):
        return self.view(*other.shape)

    def reshape_as(self, other):
        return self.reshape(*other.shape)

    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (ComplexDType, _D)):
            raise _unsupported("view(dtype)")
        return ComplexTensor(self.re.view(*shape), self.im.view(*shape))

    @property
    def T(self):
        return ComplexTensor(self.re.T, self.im.T)

    @property
    def mT(self):
        return ComplexTensor(self.re.mT, self.im.mT)

    @property
    def H(self):
        return self.T.conj()

    @property
    def mH(self):
        return self.mT.conj()

    adjoint = lambda self: self.mH  # noqa: E731

    def masked_fill(self, mask, value):
        re, im = _parts(value, self.re.dtype, self.device)
        return ComplexTensor(self.re.masked_fill(mask, re), self.im.masked_fill(mask, 0.0 if im is None else im))

    def where(self, condition, other):
        return where(condition, self, other)

    def clone(self, *, memory_format=None):
        return ComplexTensor(self.re.clone(), self.im.clone())

    def new_zeros(self, *size, dtype=None, device=None, requires_grad=False):
        from ._creation import zeros
        return zeros(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_ones(self, *size, dtype=None, device=None, requires_grad=False):
        from ._creation import ones
        return ones(*size, dtype=dtype or self.dtype, device=device or self.device, requires_grad=requires_grad)

    def new_tensor(self, data, dtype=None, device=None, requires_grad=False):
        from ._creation import as_complex_tensor
        return as_complex_tensor(data, dtype=dtype or self.dtype, device=device or self.device,
                                 requires_grad=requires_grad)

    # ---- fft ----
    def stft(self, *args, **kwargs):
        from ..fft import stft
        return stft(self, *args, **kwargs)

    def istft(self, *args, **kwargs):
        from ..fft import istft
        return istft(self, *args, **kwargs)

    def __getattr__(self, name):
        if name.startswith("__") or not hasattr(Tensor, name):
            raise AttributeError(f"'ComplexTensor' object has no attribute '{name}'")
        raise _unsupported(f"torch.Tensor.{name}")


# same op on both parts, returning a complex tensor
def _both(name):
    def method(self, *args, **kwargs):
        return ComplexTensor(getattr(self.re, name)(*args, **kwargs), getattr(self.im, name)(*args, **kwargs))
    method.__name__ = name
    return method


# same op on both parts, returning a sequence of complex tensors
def _both_seq(name):
    def method(self, *args, **kwargs):
        re = getattr(self.re, name)(*args, **kwargs)
        im = getattr(self.im, name)(*args, **kwargs)
        return tuple(ComplexTensor(r, i) for r, i in zip(re, im))
    method.__name__ = name
    return method


_SHAPE_METHODS = ("reshape", "permute", "transpose", "t", "unsqueeze", "squeeze", "flatten", "unflatten", "expand",
                  "repeat", "contiguous", "flip", "fliplr", "flipud", "roll", "narrow", "select", "movedim",
                  "moveaxis", "swapaxes", "swapdims", "index_select", "tile", "diagonal", "diag", "diag_embed",
                  "tril", "triu", "take_along_dim", "gather", "broadcast_to", "repeat_interleave", "rot90",
                  "pin_memory", "share_memory_", "as_strided", "trace", "unfold", "take")
_SEQ_METHODS = ("chunk", "split", "unbind", "tensor_split", "hsplit", "vsplit")
for _name in _SHAPE_METHODS:
    setattr(ComplexTensor, _name, _both(_name))
for _name in _SEQ_METHODS:
    setattr(ComplexTensor, _name, _both_seq(_name))
del _name


ComplexTensor.__module__ = "oar"  # errors of real-only ops name it `oar.ComplexTensor` (oar sets that name)


def _rebuild(re, im):
    return ComplexTensor(re, im)


def _count(shape, dim):
    dims = [dim] if isinstance(dim, numbers.Integral) else list(dim)
    n = 1
    for d in dims:
        n *= shape[d]
    return n


def _warn_discard(stacklevel):
    warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=stacklevel)


def _log_number(x):
    import cmath
    return cmath.log(x)


def _log(x):
    if isinstance(x, ComplexTensor):
        return x.log()
    return ComplexTensor(x, x * 0).log()


def _abs_any(x):
    if isinstance(x, ComplexTensor):
        return x.abs()
    if isinstance(x, Tensor):
        return x.abs()
    return builtins.abs(x)


def as_complex_tensor(data, dtype=None, device=None, requires_grad=False):
    """A complex tensor from data that holds complex numbers: nested lists, NumPy arrays, Python numbers."""
    import numpy as np
    from .._creation import tensor
    if isinstance(data, ComplexTensor):
        out = data.detach().to(device=device, dtype=dtype or data.dtype).clone()
        return out.requires_grad_(True) if requires_grad else out
    arr = np.asarray(data)
    if dtype is None:
        dtype = complex128 if (isinstance(data, np.ndarray) and arr.dtype == np.complex128) else default_complex()
    if not is_complex_dtype(dtype):
        raise TypeError(f"can't convert complex data to {dtype}")
    rd = dtype.real_dtype
    np_real = np.float64 if rd == _D.float64 else np.float32
    re = tensor(np.array(arr.real, dtype=np_real), dtype=rd, device=device)
    im = tensor(np.array(arr.imag, dtype=np_real), dtype=rd, device=device)
    out = ComplexTensor(re, im)
    return out.requires_grad_(True) if requires_grad else out


def where(condition, input, other):
    import oar
    dtype = result_real_dtype(input, other)
    device = _device_of(input, other)
    ar, ai = _parts(input, dtype, device)
    br, bi = _parts(other, dtype, device)
    return ComplexTensor(oar.where(condition, ar, br), oar.where(condition, 0.0 if ai is None else ai,
                                                                 0.0 if bi is None else bi))


__all__ = ["ComplexTensor", "ComplexNotImplementedError", "as_complex_tensor", "where"]
