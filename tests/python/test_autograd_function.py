"""oar.autograd.Function (custom forward/backward with ctx), gradcheck/gradgradcheck and
oar.autograd.functional, on every device, against analytic derivatives and PyTorch."""
import numpy as np
import pytest

import oar
from torch_ref import import_torch, to_torch, from_torch

DEVICES = oar._C.info()["devices"]


class Exp(oar.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y


class ScaledMul(oar.autograd.Function):
    """Two tensors and a Python number in; two outputs, one non-differentiable."""

    @staticmethod
    def forward(ctx, a, b, k):
        ctx.save_for_backward(a, b)
        ctx.k = k
        out = a * b * k
        mask = out > 0
        ctx.mark_non_differentiable(mask)
        return out, mask

    @staticmethod
    def backward(ctx, g, g_mask):
        a, b = ctx.saved_tensors
        assert g_mask is None or not bool(g_mask.any())
        return g * b * ctx.k, g * a * ctx.k, None


class Cube(oar.autograd.Function):
    """setup_context style (PyTorch 2.x), with a differentiable backward."""

    @staticmethod
    def forward(x):
        return x * x * x

    @staticmethod
    def setup_context(ctx, inputs, output):
        (x,) = inputs
        ctx.save_for_backward(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 3 * g * x * x


@pytest.mark.parametrize("device", DEVICES)
def test_custom_function_gradients(device):
    x = oar.tensor([0.5, -1.0, 2.0], dtype=oar.float64, device=device, requires_grad=True)
    y = Exp.apply(x)
    assert y.requires_grad
    y.sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), np.exp([0.5, -1.0, 2.0]))
    a = oar.tensor([1.0, -2.0], dtype=oar.float64, device=device, requires_grad=True)
    b = oar.tensor([3.0, 4.0], dtype=oar.float64, device=device, requires_grad=True)
    out, mask = ScaledMul.apply(a, b, 2.0)
    assert not mask.requires_grad
    np.testing.assert_array_equal(mask.cpu().numpy(), [True, False])
    (out * out).sum().backward()
    # d/da sum((2ab)^2) = 8 a b^2
    np.testing.assert_allclose(a.grad.cpu().numpy(), [8 * 1 * 9, 8 * -2 * 16])
    np.testing.assert_allclose(b.grad.cpu().numpy(), [8 * 1 * 3, 8 * 4 * 4])


@pytest.mark.parametrize("device", DEVICES)
def test_gradcheck_and_double_backward(device):
    x = oar.tensor([0.3, -0.7, 1.1], dtype=oar.float64, device=device, requires_grad=True)
    assert oar.autograd.gradcheck(Cube.apply, (x,))
    assert oar.autograd.gradgradcheck(Cube.apply, (x,))
    assert oar.autograd.gradcheck(Exp.apply, (x,))
    (g,) = oar.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    (gg,) = oar.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(gg.cpu().numpy(), 6 * np.array([0.3, -0.7, 1.1]))


class WrongGrad(oar.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 3  # wrong on purpose


def test_gradcheck_reports_a_wrong_backward():
    x = oar.tensor([1.0, 2.0], dtype=oar.float64, requires_grad=True)
    with pytest.raises(oar.autograd.GradcheckError, match="Jacobian mismatch for output 0 with respect to input 0"):
        oar.autograd.gradcheck(WrongGrad.apply, (x,))
    assert oar.autograd.gradcheck(WrongGrad.apply, (x,), raise_exception=False) is False
    with pytest.raises(ValueError, match="requires_grad"):
        oar.autograd.gradcheck(lambda t: t * 2, (oar.ones(2, dtype=oar.float64),))


class TooMany(oar.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x + 1

    @staticmethod
    def backward(ctx, g):
        return g, g


class BadShape(oar.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x + 1

    @staticmethod
    def backward(ctx, g):
        return oar.ones(5, dtype=g.dtype)


class Modifies(oar.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * 1

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * x


def test_custom_function_errors():
    x = oar.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        TooMany.apply(x).sum().backward()
    with pytest.raises(RuntimeError, match="invalid gradient at index 0"):
        BadShape.apply(x).sum().backward()
    with pytest.raises(RuntimeError, match="instantiated"):
        Exp()
    y = x.detach().clone().requires_grad_()
    z = y * 1
    out = Modifies.apply(z)
    z.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()
    # no input requires grad: forward only, nothing recorded
    plain = Exp.apply(oar.ones(2))
    assert not plain.requires_grad
    with oar.no_grad():
        assert not Exp.apply(x).requires_grad


def test_once_differentiable_and_materialize():
    class Sq(oar.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            ctx.set_materialize_grads(False)
            return x * x, x + 1

        @staticmethod
        @oar.autograd.once_differentiable
        def backward(ctx, g1, g2):
            (x,) = ctx.saved_tensors
            assert g2 is None  # only the first output was used
            assert not oar.is_grad_enabled()
            return 2 * g1 * x

    x = oar.tensor([3.0], requires_grad=True)
    a, _ = Sq.apply(x)
    a.sum().backward()
    assert float(x.grad) == 6.0


def test_functional_jacobian_hessian_vjp_jvp():
    def f(x):
        return x ** 3 + x.sin()

    x = oar.tensor([0.2, -0.4, 1.5], dtype=oar.float64)
    xn = x.numpy()
    J = oar.autograd.functional.jacobian(f, x)
    np.testing.assert_allclose(J.numpy(), np.diag(3 * xn ** 2 + np.cos(xn)), atol=1e-12)
    H = oar.autograd.functional.hessian(lambda t: (t ** 3).sum(), x)
    np.testing.assert_allclose(H.numpy(), np.diag(6 * xn), atol=1e-12)
    v = oar.tensor([1.0, 2.0, 3.0], dtype=oar.float64)
    _, vjp = oar.autograd.functional.vjp(f, x, v)
    np.testing.assert_allclose(vjp.numpy(), v.numpy() * (3 * xn ** 2 + np.cos(xn)), atol=1e-12)
    _, jvp = oar.autograd.functional.jvp(f, x, v)
    np.testing.assert_allclose(jvp.numpy(), v.numpy() * (3 * xn ** 2 + np.cos(xn)), atol=1e-12)
    _, hvp = oar.autograd.functional.hvp(lambda t: (t ** 3).sum(), x, v)
    np.testing.assert_allclose(hvp.numpy(), 6 * xn * v.numpy(), atol=1e-12)


def test_matches_pytorch_custom_function():
    torch = import_torch()

    class TExp(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    data = np.array([[0.1, -0.3], [0.7, 1.2]])
    xo = oar.tensor(data, dtype=oar.float64, requires_grad=True)
    xt = to_torch(data).requires_grad_()
    (Exp.apply(xo) * xo).sum().backward()
    (TExp.apply(xt) * xt).sum().backward()
    np.testing.assert_allclose(xo.grad.numpy(), from_torch(xt.grad), rtol=1e-12)
