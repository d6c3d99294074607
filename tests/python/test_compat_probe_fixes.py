"""Small PyTorch-1.13 behaviours that ordinary training scripts show or rely on, found by running such scripts
under oar.compat: default_collate keeps strings as torch does (a tuple per field of tuple samples), and a
distribution's repr names its parameters' shapes as Sizes."""
import collections

import oar
import oar.distributions as D
from oar.utils.data import DataLoader, default_collate
from torch_ref import import_torch

Point = collections.namedtuple("Point", "name x")

# samples -> what torch 1.13's DataLoader(samples, batch_size=len(samples)) yields, strings and numbers only
SAMPLES = {
    "strings": ["a", "b", "c"],
    "tuples": [("a", 1), ("b", 2)],
    "lists": [["a", 1.5], ["b", 2.5]],
    "namedtuples": [Point("a", 1), Point("b", 2)],
    "dicts": [{"t": "a", "y": 1}, {"t": "b", "y": 2}],
    "bytes": [(b"x", 1), (b"y", 2)],
    "nested tuples": [(("a", "b"), 1), (("c", "d"), 2)],
}


def _plain(x):
    """A batch with its tensors as lists, its containers' types kept (what the comparison is about)."""
    if hasattr(x, "tolist") and not isinstance(x, (str, bytes)):
        return ("tensor", x.tolist())
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        items = [_plain(v) for v in x]
        return type(x).__name__, items
    return x


def test_default_collate_keeps_torchs_container_types():
    torch = import_torch()
    for name, samples in SAMPLES.items():
        ours = next(iter(DataLoader(samples, batch_size=len(samples))))
        theirs = next(iter(torch.utils.data.DataLoader(samples, batch_size=len(samples))))
        assert _plain(ours) == _plain(theirs), name
    labels, texts = default_collate([(0, "good film"), (1, "bad film")])
    assert texts == ("good film", "bad film") and labels.tolist() == [0, 1]


def test_distribution_repr_shows_sizes():
    torch = import_torch()
    pairs = [(D.Normal(oar.zeros(2), oar.ones(2)), torch.distributions.Normal(torch.zeros(2), torch.ones(2))),
             (D.MultivariateNormal(oar.zeros(2), oar.eye(2)),
              torch.distributions.MultivariateNormal(torch.zeros(2), torch.eye(2))),
             (D.Independent(D.Normal(oar.zeros(3, 2), oar.ones(3, 2)), 1),
              torch.distributions.Independent(torch.distributions.Normal(torch.zeros(3, 2), torch.ones(3, 2)), 1))]
    for ours, theirs in pairs:
        assert repr(ours).replace("oar.", "") == repr(theirs).replace("torch.", "")
    assert repr(D.Normal(0.0, 1.0)) == "Normal(loc: 0.0, scale: 1.0)"


def test_manual_seed_returns_the_default_generator():
    g = oar.manual_seed(3)  # torch.manual_seed returns torch.default_generator; scripts pass it as generator=
    assert g is oar.default_generator and oar.initial_seed() == 3
    first = oar.randn(4)
    assert oar.equal(oar.randn(4, generator=oar.manual_seed(3)), first)
    oar.manual_seed(-1)  # wraps modulo 2**64, as torch
    assert oar.initial_seed() == 2 ** 64 - 1


def test_cross_entropy_names_float_class_indices():
    # labels from a float NumPy array: torch says "expected scalar type Long but found Float" (a RuntimeError)
    import pytest
    F = oar.nn.functional
    with pytest.raises(RuntimeError, match="integer dtype .int64.*got oar.float32"):
        F.cross_entropy(oar.zeros(2, 3), oar.tensor([0.0, 1.0]))
    with pytest.raises(RuntimeError, match="integer dtype"):
        oar.nn.CrossEntropyLoss()(oar.zeros(4, 3, 5), oar.zeros(4, 5))
    with pytest.raises(RuntimeError, match="probability targets must have the input's shape"):
        F.cross_entropy(oar.zeros(2, 3), oar.zeros(1, 3))
    assert abs(F.cross_entropy(oar.zeros(2, 3), oar.full((2, 3), 1 / 3)).item() - 1.0986123) < 1e-5
    assert F.cross_entropy(oar.zeros(2, 3), oar.tensor([0.0, 1.0]).long()).item() > 0
