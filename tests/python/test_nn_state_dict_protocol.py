"""Module state dicts in PyTorch's protocol, which HF's from_pretrained loader drives module by module:
state_dict()._metadata with each module's _version, _load_from_state_dict(state_dict, prefix, local_metadata,
strict, missing, unexpected, errors), the state-dict hooks (_register_state_dict_hook,
_register_load_state_dict_pre_hook, register_load_state_dict_post_hook), get/set_extra_state, BatchNorm
loading checkpoints without num_batches_tracked, and to_empty. Compared with PyTorch 1.13 where installed."""
from collections import OrderedDict

import numpy as np
import pytest

import oar
import oar.nn as nn
from torch_ref import from_torch, import_torch


def _model(ns):
    return ns.nn.Sequential(ns.nn.Linear(2, 3), ns.nn.BatchNorm1d(3), ns.nn.Sequential(ns.nn.Linear(3, 1)))


def hf_load(model, state_dict):
    """transformers' _load_state_dict_into_model: _load_from_state_dict on each module holding keys."""
    metadata = getattr(state_dict, "_metadata", None)
    state_dict = state_dict.copy()
    if metadata is not None:
        state_dict._metadata = metadata
    error_msgs = []

    def load(module, prefix=""):
        local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
        if any(k.startswith(prefix) for k in state_dict):
            module._load_from_state_dict(state_dict, prefix, local_metadata, True, [], [], error_msgs)
        for name, child in module._modules.items():
            if child is not None:
                load(child, prefix + name + ".")
    load(model)
    return error_msgs


def test_metadata_records_versions_like_torch():
    torch = import_torch()
    assert dict(_model(oar).state_dict()._metadata) == dict(_model(torch).state_dict()._metadata)


def test_hf_loader_copies_and_reports_like_load_state_dict():
    src, dst = _model(oar), _model(oar)
    assert hf_load(dst, src.state_dict()) == []
    for (k, a), b in zip(src.state_dict().items(), dst.state_dict().values()):
        np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=k)
    bad = OrderedDict(src.state_dict())
    bad["0.weight"] = oar.ones(4, 2)
    errors = hf_load(dst, bad)
    assert len(errors) == 1 and errors[0].startswith("size mismatch for 0.weight")


def test_missing_and_unexpected_keys_match_torch():
    torch = import_torch()
    results = []
    for ns in (oar, torch):
        m = _model(ns)
        sd = dict(m.state_dict())
        sd["2.extra.weight"] = ns.ones(1)
        sd["0.zzz"] = ns.ones(1)
        sd["foo"] = ns.ones(1)
        del sd["0.bias"]
        keys = m.load_state_dict(sd, strict=False)
        with pytest.raises(RuntimeError) as e:
            m.load_state_dict(sd)
        results.append((keys.missing_keys, keys.unexpected_keys, str(e.value).replace(". \n", ".\n").rstrip(". ")))
    assert results[0] == results[1]


def test_batchnorm_loads_checkpoints_without_num_batches_tracked():
    torch = import_torch()
    for ns in (oar, torch):
        m = _model(ns)
        sd = m.state_dict()
        plain = {k: v for k, v in sd.items() if "num_batches" not in k}  # no metadata: version unknown
        assert m.load_state_dict(plain).missing_keys == []
        assert int(m[1].num_batches_tracked) == 0
        del sd["1.num_batches_tracked"]  # version 2 in the metadata: really missing
        assert m.load_state_dict(sd, strict=False).missing_keys == ["1.num_batches_tracked"]


def test_state_dict_hooks():
    m = _model(oar)
    calls = []
    h1 = m._register_state_dict_hook(lambda mod, d, prefix, meta: calls.append(("save", prefix, meta)))
    h2 = m[0]._register_load_state_dict_pre_hook(lambda sd, prefix, *rest: calls.append(("pre", prefix)))
    h3 = m[1]._register_load_state_dict_pre_hook(
        lambda mod, sd, prefix, *rest: calls.append(("pre_module", type(mod).__name__, prefix)), with_module=True)

    def post(mod, keys):
        calls.append(("post", list(keys.missing_keys)))
        keys.missing_keys.clear()  # a post hook may forgive keys: strict loading then passes
    h4 = m.register_load_state_dict_post_hook(post)
    sd = m.state_dict()
    sd.pop("2.0.bias")
    assert repr(m.load_state_dict(sd)) == "<All keys matched successfully>"
    assert calls == [("save", "", {"version": 1}), ("pre", "0."), ("pre_module", "BatchNorm1d", "1."),
                     ("post", ["2.0.bias"])]
    for h in (h1, h2, h3, h4):
        h.remove()
    # a state-dict hook's return value replaces the dict; a pre-hook may rename keys before the load
    m._register_state_dict_hook(lambda mod, d, prefix, meta: OrderedDict((k.upper(), v) for k, v in d.items()))
    assert list(m.state_dict())[0] == "0.WEIGHT"
    fresh = _model(oar)
    fresh._register_load_state_dict_pre_hook(
        lambda sd, prefix, *rest: [sd.__setitem__(k.lower(), sd.pop(k)) for k in list(sd) if k.isupper()])
    assert repr(fresh.load_state_dict(m.state_dict())) == "<All keys matched successfully>"
    np.testing.assert_array_equal(fresh[0].weight.detach().numpy(), m[0].weight.detach().numpy())
    m2 = _model(oar)
    m2.register_load_state_dict_post_hook(lambda mod, keys: keys)
    with pytest.raises(RuntimeError, match="not expected to return new values"):
        m2.load_state_dict(_model(oar).state_dict())


class _WithExtra(nn.Linear):
    def get_extra_state(self):
        return {"step": 3}

    def set_extra_state(self, state):
        self.loaded = state


def test_extra_state():
    sd = _WithExtra(2, 2).state_dict()
    assert list(sd) == ["weight", "bias", "_extra_state"] and sd["_extra_state"] == {"step": 3}
    m = _WithExtra(2, 2)
    m.load_state_dict(sd)
    assert m.loaded == {"step": 3}
    assert nn.Linear(2, 2).load_state_dict(sd, strict=False).unexpected_keys == ["_extra_state"]
    del sd["_extra_state"]
    assert _WithExtra(2, 2).load_state_dict(sd, strict=False).missing_keys == ["_extra_state"]


def test_lazy_module_state_dict_keeps_uninitialized_parameters():
    lazy = nn.LazyLinear(3)
    assert isinstance(lazy.state_dict()["weight"], nn.parameter.UninitializedParameter)
    lazy.load_state_dict(nn.Linear(2, 3).state_dict())
    assert tuple(lazy.weight.shape) == (3, 2)


def test_to_empty_keeps_shapes_dtypes_and_parameters():
    m = nn.Linear(2, 3).double()
    w = m.weight
    m.to_empty(device="cpu")
    assert m.weight is w and tuple(w.shape) == (3, 2) and w.dtype == oar.float64 and w.requires_grad


def test_torch_checkpoint_metadata_loads():
    torch = import_torch()
    theirs = _model(torch).state_dict()
    ours = OrderedDict((k, from_torch(v)) for k, v in theirs.items())
    ours._metadata = theirs._metadata
    m = _model(oar)
    assert hf_load(m, ours) == [] and repr(m.load_state_dict(ours)) == "<All keys matched successfully>"
