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
