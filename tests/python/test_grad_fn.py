"""tensor.grad_fn as PyTorch code uses it: PyTorch's node names (MulBackward0, AccumulateGrad, a custom
Function's MyFnBackward), next_functions walked down to the leaves' AccumulateGrad nodes with .variable,
identity and the tensor repr's grad_fn=<...>; against PyTorch 1.13 where it is installed."""
import numpy as np
import pytest

import oar
from torch_ref import import_torch


def _walk(fn):
    """The names of the graph below fn, depth first, as tutorials print it."""
    if fn is None:
        return ["None"]
    out = [fn.name()]
    for child, _ in fn.next_functions:
        out += _walk(child)
    return out


def test_names_next_functions_and_leaves():
    w = oar.ones(3, requires_grad=True)
    b = oar.zeros(3, requires_grad=True)
    x = oar.tensor([1.0, 2.0, 3.0])
    y = (w * x + b).sum()
    assert y.grad_fn.name() == "SumBackward0" and repr(y.grad_fn).startswith("<SumBackward0 object at 0x")
    (add, _), = y.grad_fn.next_functions
    assert add.name() == "AddBackward0"
    (mul, _), (acc_b, _) = add.next_functions
    assert mul.name() == "MulBackward0" and acc_b.name() == "torch::autograd::AccumulateGrad"  # PyTorch 1.13's
    assert repr(acc_b).startswith("<AccumulateGrad object at 0x")
    assert np.array_equal(acc_b.variable.numpy(force=True), [0, 0, 0]) and acc_b.variable.requires_grad
    (acc_w, _), (none, nr) = mul.next_functions
    assert acc_w.name().endswith("AccumulateGrad") and none is None and nr == 0  # x needs no gradient
    assert w.grad_fn is None and x.grad_fn is None
    assert y.grad_fn == y.grad_fn and hash(y.grad_fn) == hash(y.grad_fn) and y.grad_fn != add
    with pytest.raises(AttributeError):
        mul.variable
    assert repr(y).endswith("grad_fn=<SumBackward0>)")


def test_custom_function_and_snake_case_names():
    class Square(oar.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g

    x = oar.ones(2, 3, requires_grad=True)
    assert Square.apply(x).grad_fn.name() == "SquareBackward"
    assert oar.log_softmax(x, 1).grad_fn.name() == "LogSoftmaxBackward0"
    assert x.index_select(0, oar.tensor([1])).grad_fn.name() == "IndexSelectBackward0"


def test_names_and_graph_shape_match_pytorch():
    torch = import_torch()

    def build(lib):
        w = lib.ones(3, requires_grad=True)
        x = lib.tensor([1.0, 2.0, 3.0])
        h = lib.relu(w * x - 1.0)
        return (lib.exp(h) / 2).mean()

    assert _walk(build(oar).grad_fn) == _walk(build(torch).grad_fn)


def test_each_node_name_is_its_own_class_like_pytorch():
    torch = import_torch()
    names = []
    for lib in (oar, torch):
        w = lib.ones(3, requires_grad=True)
        y = (w * lib.tensor([1.0, 2.0, 3.0]) + 1).exp().sum()
        chain, fn = [], y.grad_fn
        while fn is not None:
            chain.append(type(fn).__name__)
            fn = fn.next_functions[0][0] if fn.next_functions else None
        names.append(chain)
    assert names[0] == names[1] == ["SumBackward0", "ExpBackward0", "AddBackward0", "MulBackward0", "AccumulateGrad"]
    x = oar.ones(2, requires_grad=True)
    assert type((x * 2).grad_fn) is type((x * 3).grad_fn) and isinstance((x * 2).grad_fn, oar._C.GradFn)


def _leaf_hook_calls(lib):
    """Which hooks run for a leaf under backward() and under autograd.grad()."""
    w = lib.tensor([1.0, 2.0], requires_grad=True)
    calls = []
    w.register_hook(lambda g: calls.append("tensor"))
    acc = (w * 3).grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: calls.append("node-pre"))
    acc.register_hook(lambda gi, go: calls.append("node-post"))
    (gw,) = lib.autograd.grad((w * 3).sum(), w)
    during_grad, calls[:] = list(calls), []
    (w * 3).sum().backward()
    return during_grad, list(calls), gw.tolist(), w.grad.tolist()


def test_accumulate_grad_node_hooks_run_only_when_it_accumulates():
    during_grad, during_backward, gw, acc = _leaf_hook_calls(oar)
    assert during_grad == ["tensor"]  # grad() captures; the AccumulateGrad node does not run
    assert during_backward == ["tensor", "node-pre", "node-post"]
    assert gw == [3.0, 3.0] and acc == [3.0, 3.0]
    # torch 1.13 runs the node hooks the same way (the leaf's tensor hook runs under grad() only from 2.0 on,
    # before the node's pre-hooks: oar follows 2.x there)
    torch = import_torch()
    t_grad, t_backward, t_gw, t_acc = _leaf_hook_calls(torch)
    node_only = lambda calls: [c for c in calls if c != "tensor"]  # noqa: E731
    assert node_only(t_grad) == node_only(during_grad) and node_only(t_backward) == node_only(during_backward)
    assert (t_gw, t_acc) == (gw, acc)


def _penalty_grads(lib, act):
    """A gradient penalty where the bias reaches the loss only through the activation's backward mask."""
    x = lib.tensor([[0.5, -1.0], [2.0, -0.25]], requires_grad=True)
    w = lib.tensor([[1.5, -0.5], [0.25, 2.0]], requires_grad=True)
    b = lib.tensor([0.1, -0.3], requires_grad=True)
    y = act(x @ w + b).sum()
    (gx,) = lib.autograd.grad(y, x, create_graph=True)
    (gx ** 2).sum().backward()
    return [None if t.grad is None else t.grad.tolist() for t in (x, w, b)]


@pytest.mark.parametrize("name", ["relu", "leaky_relu"])
def test_relu_double_backward_gives_zeros_not_none(name):
    ours = _penalty_grads(oar, getattr(oar.nn.functional, name))
    assert ours[2] == [0.0, 0.0]  # b only feeds the mask: zeros, so an optimizer still steps it
    torch = import_torch()
    theirs = _penalty_grads(torch, getattr(torch.nn.functional, name))
    for a, b in zip(ours, theirs):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-6)
