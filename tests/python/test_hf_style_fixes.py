"""torch APIs that HuggingFace-style modeling and Trainer code calls, found by running such code under
oar.compat: use_deterministic_algorithms and its queries, the torch.random module (rng state saved in
checkpoints, fork_rng), dtype.is_signed / is_complex, Tensor.tile with separate ints, and
torch.distributed.is_available() (False: oar has no process groups yet). Compared with PyTorch 1.13 where
it is installed."""
import numpy as np
import pytest

import oar
from torch_ref import import_torch


@pytest.fixture
def restore_determinism():
    yield
    oar.use_deterministic_algorithms(False)


def test_deterministic_algorithms_settings(restore_determinism):
    assert oar.are_deterministic_algorithms_enabled() is False and oar.get_deterministic_debug_mode() == 0
    oar.use_deterministic_algorithms(True)
    assert oar.are_deterministic_algorithms_enabled() is True
    assert oar.is_deterministic_algorithms_warn_only_enabled() is False and oar.get_deterministic_debug_mode() == 2
    oar.use_deterministic_algorithms(True, warn_only=True)
    assert oar.is_deterministic_algorithms_warn_only_enabled() and oar.get_deterministic_debug_mode() == 1
    for mode, want in (("default", 0), ("warn", 1), ("error", 2), (0, 0), (2, 2), (True, 1)):
        oar.set_deterministic_debug_mode(mode)
        assert oar.get_deterministic_debug_mode() == want, mode
    oar.set_deterministic_debug_mode("default")
    assert not oar.are_deterministic_algorithms_enabled()


def test_deterministic_algorithms_errors_match_torch(restore_determinism):
    torch = import_torch()
    for call in (lambda t: t.use_deterministic_algorithms(1), lambda t: t.set_deterministic_debug_mode("x"),
                 lambda t: t.set_deterministic_debug_mode(5), lambda t: t.set_deterministic_debug_mode(1.0)):
        with pytest.raises(Exception) as theirs:
            call(torch)
        with pytest.raises(type(theirs.value)):
            call(oar)
    torch.use_deterministic_algorithms(False)


def test_torch_random_module_saves_and_restores_the_stream():
    import oar.random
    assert oar.random.get_rng_state is oar.get_rng_state and oar.random.manual_seed is oar.manual_seed
    oar.random.manual_seed(3)
    assert oar.random.initial_seed() == 3
    state = oar.random.get_rng_state()
    a = oar.rand(5)
    oar.random.set_rng_state(state)
    assert oar.equal(oar.rand(5), a)
    assert isinstance(oar.random.seed(), int)


def test_fork_rng_leaves_the_stream_as_it_was():
    oar.manual_seed(7)
    expected = oar.randn(4)
    oar.manual_seed(7)
    with oar.random.fork_rng(devices=[]):
        inside = oar.randn(4)
        oar.randn(10)
    assert oar.equal(inside, expected)
    assert oar.equal(oar.randn(4), expected)  # the block's draws did not advance the stream
    oar.manual_seed(7)
    with oar.random.fork_rng(enabled=False):
        oar.randn(4)
    assert not oar.equal(oar.randn(4), expected)


def test_dtype_is_signed_and_is_complex_match_torch():
    torch = import_torch()
    for name in ("float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool"):
        ours, theirs = getattr(oar, name), getattr(torch, name)
        assert (ours.is_signed, ours.is_complex, ours.is_floating_point) == \
               (theirs.is_signed, theirs.is_complex, theirs.is_floating_point), name


def test_tile_takes_separate_ints():
    x = oar.arange(6).reshape(2, 3)
    want = np.tile(x.numpy(), (2, 1, 2))
    for got in (x.tile(2, 1, 2), x.tile((2, 1, 2)), oar.tile(x, (2, 1, 2)), oar.tile(x, dims=[2, 1, 2])):
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(oar.arange(3).tile(2).numpy(), np.tile(np.arange(3), 2))
    # HF's multi-EOS stopping check
    done = oar.tensor([2, 5, 1]).tile(2, 1).ne(oar.tensor([2, 1]).unsqueeze(1)).prod(dim=0)
    assert done.tolist() == [0, 1, 0]


def test_distributed_is_not_available():
    import oar.distributed as dist
    assert dist.is_available() is False and dist.is_initialized() is False
    with pytest.raises(RuntimeError, match="process group"):  # DistributedSampler still asks for num_replicas
        oar.utils.data.DistributedSampler(range(4))
