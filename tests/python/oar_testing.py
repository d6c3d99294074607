"""Small helpers the Python suites share: tensors from NumPy data (float64 by default) and back,
and a closeness check that takes either."""
import numpy as np

import oar


def T(a, dev="cpu:0", dtype=oar.float64, requires_grad=False):
    """A tensor on `dev` holding `a` (any NumPy-convertible data)."""
    return oar.tensor(np.asarray(a), dtype=dtype, device=dev, requires_grad=requires_grad)


def N(t):
    """A tensor's values as a NumPy array (a copy)."""
    return t.detach().cpu().numpy().copy()


def close(a, b, tol=1e-9):
    np.testing.assert_allclose(N(a) if isinstance(a, oar.Tensor) else a, b, rtol=tol, atol=tol)
