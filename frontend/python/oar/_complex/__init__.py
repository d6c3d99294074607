"""Complex tensors (torch.complex64 / complex128) as a frontend layer: a ComplexTensor holds a real and an
imaginary oar tensor, and every complex operation is composed of real oar ops, so it runs on every device and
autograd works unchanged. oar's core and its C ABI have no complex dtype; this is the same kind of frontend
tensor as oar.sparse's COO tensors. torch.fft (oar.fft) computes on these.

See docs/compat.md, "Complex tensors and torch.fft", for what is there and its limits.
"""
from ._dtype import ComplexDType, complex64, complex128, cfloat, cdouble, complex_of, default_complex
from ._tensor import ComplexTensor, ComplexNotImplementedError, as_complex_tensor
from ._functions import complex, polar, view_as_real, view_as_complex


def _install(oar):
    """oar.complex64/complex128, torch.complex/polar/view_as_real/view_as_complex, complex operands for oar's
    functions, creation entry points and Tensor operators, and oar.fft with torch.stft/istft and the windows."""
    from ._functions import install
    install(oar)
    from .. import fft
    fft._install(oar)


__all__ = ["ComplexDType", "ComplexTensor", "ComplexNotImplementedError", "complex64", "complex128", "cfloat",
           "cdouble", "complex_of", "default_complex", "complex", "polar", "view_as_real", "view_as_complex",
           "as_complex_tensor"]
