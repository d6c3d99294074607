"""copy.deepcopy of models after backward(): every parameter gets a copy of its own gradient (a
`.grad` read makes a fresh Python object each time, so copies must not be memoized by its id),
values are equal but memory is distinct, shared parameters stay shared, and the copy trains alone."""
import copy

import numpy as np
import pytest

import oar
from oar import nn

DEVICES = oar._C.info()["devices"]


def N(t):
    return t.detach().cpu().numpy()


def _ptr(t):
    return t.cpu().data_ptr() if t.device.type == "cpu" else None


def _trained_model(device):
    oar.manual_seed(3)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2)).to(device)
    model[2].weight = model[2].weight  # keep the plain layout; tied weights are tested below
    x = oar.randn(5, 4).to(device)
    model(x).sum().backward()
    return model, x


@pytest.mark.parametrize("device", DEVICES)
def test_deepcopy_after_backward_copies_each_grad_to_its_parameter(device):
    model, _ = _trained_model(device)
    for _ in range(3):  # id reuse depends on allocation order; repeat to make it likely if broken
        twin = copy.deepcopy(model)
        for (name, p), (tname, tp) in zip(model.named_parameters(), twin.named_parameters()):
            assert name == tname
            assert tp is not p and tp.grad is not None
            assert tuple(tp.grad.shape) == tuple(p.shape), name
            np.testing.assert_array_equal(N(tp), N(p))
            np.testing.assert_array_equal(N(tp.grad), N(p.grad))
            assert tp.requires_grad and tp.is_leaf
            if device.startswith("cpu"):
                assert tp.data_ptr() != p.data_ptr() and tp.grad.data_ptr() != p.grad.data_ptr()


@pytest.mark.parametrize("device", DEVICES)
def test_deepcopy_keeps_shared_parameters_shared(device):
    enc, dec = nn.Linear(3, 3).to(device), nn.Linear(3, 3).to(device)
    dec.weight = enc.weight  # tied weights
    model = nn.Sequential(enc, nn.Tanh(), dec)
    model(oar.randn(2, 3).to(device)).sum().backward()
    twin = copy.deepcopy(model)
    assert twin[2].weight is twin[0].weight and twin[0].weight is not enc.weight
    assert len(list(twin.parameters())) == len(list(model.parameters())) == 3
    np.testing.assert_array_equal(N(twin[0].weight.grad), N(enc.weight.grad))


@pytest.mark.parametrize("device", DEVICES)
def test_deepcopy_trains_independently(device):
    model, x = _trained_model(device)
    before = {n: N(p) for n, p in model.named_parameters()}
    grads = {n: N(p.grad) for n, p in model.named_parameters()}
    twin = copy.deepcopy(model)
    opt = oar.optim.SGD(twin.parameters(), lr=0.5)
    opt.zero_grad()
    twin(x).pow(2).sum().backward()
    opt.step()
    for n, p in model.named_parameters():  # the original's values and grads are untouched
        np.testing.assert_array_equal(N(p), before[n])
        np.testing.assert_array_equal(N(p.grad), grads[n])
    moved = [not np.array_equal(N(p), before[n]) for n, p in twin.named_parameters()]
    assert all(moved)
    # and the original still trains on its own graph, its grads accumulating as before
    model(x).sum().backward()
    for n, p in model.named_parameters():
        np.testing.assert_allclose(N(p.grad), 2 * grads[n], rtol=1e-5, atol=1e-6)
