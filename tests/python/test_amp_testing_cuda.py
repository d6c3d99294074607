"""oar.amp.GradScaler (loss scaling, skipped steps on overflow, backoff and growth, state_dict),
autocast's enabled=False / no-CUDA behaviour, oar.cuda's controls without a CUDA device, and
oar.testing.assert_close (torch's defaults and failure messages), on every device."""
import math
import warnings

import numpy as np
import pytest

import oar
from oar.testing import assert_allclose, assert_close


def _model(device):
    m = oar.nn.Linear(3, 1).to(device)
    with oar.no_grad():
        m.weight.copy_(oar.tensor([[1.0, -2.0, 0.5]], device=device))
        m.bias.fill_(0.25)
    return m


def test_scaler_scales_unscales_and_steps_like_plain_sgd(device):
    x = oar.tensor([[1.0, 2.0, 3.0]], device=device)
    plain, scaled = _model(device), _model(device)
    opt_p = oar.optim.SGD(plain.parameters(), lr=0.1)
    opt_s = oar.optim.SGD(scaled.parameters(), lr=0.1)
    scaler = oar.amp.GradScaler(device, init_scale=1024.0, growth_interval=2)
    for _ in range(3):
        opt_p.zero_grad()
        (plain(x) ** 2).sum().backward()
        opt_p.step()
        opt_s.zero_grad()
        loss = (scaled(x) ** 2).sum()
        big = scaler.scale(loss)
        np.testing.assert_allclose(big.item(), loss.item() * scaler.get_scale(), rtol=1e-6)
        big.backward()
        scaler.unscale_(opt_s)  # the gradients are the true ones now (clipping would happen here)
        np.testing.assert_allclose(scaled.weight.grad.cpu().numpy(), plain.weight.grad.cpu().numpy(), rtol=1e-5)
        scaler.step(opt_s)
        scaler.update()
    np.testing.assert_allclose(scaled.weight.detach().cpu().numpy(), plain.weight.detach().cpu().numpy(), rtol=1e-5)
    assert scaler.get_scale() == 2048.0  # grown once after 2 clean steps, the third pending


def test_overflow_skips_the_step_and_backs_off(device):
    m = _model(device)
    opt = oar.optim.SGD(m.parameters(), lr=0.1)
    scaler = oar.amp.GradScaler(device, init_scale=2.0 ** 16, backoff_factor=0.25)
    before = m.weight.detach().cpu().numpy().copy()
    opt.zero_grad()
    loss = m(oar.tensor([[1.0, float("inf"), 0.0]], device=device)).sum()
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    assert np.array_equal(m.weight.detach().cpu().numpy(), before)  # skipped
    assert scaler.get_scale() == 2.0 ** 14
    state = scaler.state_dict()
    assert state == {"scale": 2.0 ** 14, "growth_factor": 2.0, "backoff_factor": 0.25, "growth_interval": 2000,
                     "_growth_tracker": 0}
    other = oar.amp.GradScaler(device)
    other.load_state_dict(state)
    assert other.get_scale() == 2.0 ** 14 and other.get_backoff_factor() == 0.25
    with pytest.raises(RuntimeError):
        scaler.unscale_(opt)
        scaler.unscale_(opt)


def test_scaler_arguments_and_disabled_forms():
    with pytest.raises(ValueError):
        oar.amp.GradScaler(growth_factor=0.5)
    with pytest.raises(ValueError):
        oar.amp.GradScaler(backoff_factor=1.5)
    off = oar.amp.GradScaler(enabled=False)
    loss = oar.tensor(3.0)
    assert off.scale(loss) is loss and off.get_scale() == 1.0 and off.state_dict() == {}
    if not oar.cuda.is_available():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            cuda_scaler = oar.cuda.amp.GradScaler()
        assert not cuda_scaler.is_enabled() and any("CUDA is not available" in str(w.message) for w in caught)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with oar.cuda.amp.autocast():
                pass
        assert any("CUDA is not available" in str(w.message) for w in caught)


def test_autocast_forms():
    with oar.autocast("cpu", enabled=False):
        y = oar.ones(2) * 2
    assert y.dtype == oar.float32

    @oar.autocast("cpu", enabled=False)
    def f(t):
        return t + 1
    assert f(oar.ones(1)).item() == 2
    with pytest.raises(NotImplementedError, match="autocast"):
        oar.autocast("cpu", dtype=oar.bfloat16)
    with pytest.raises(ValueError):
        oar.autocast(0)


@pytest.mark.skipif(oar.cuda.is_available(), reason="checks the behaviour without a CUDA device")
def test_cuda_controls_without_cuda():
    oar.manual_seed(3)
    a = oar.rand(3)
    oar.manual_seed(3)
    oar.cuda.manual_seed_all(99)  # no CUDA: torch's is a no-op too, the CPU stream is untouched
    oar.cuda.synchronize()
    oar.cuda.empty_cache()
    assert np.array_equal(oar.rand(3).numpy(), a.numpy())
    assert oar.cuda.device_count() == 0 and not oar.cuda.is_bf16_supported()
    with pytest.raises(oar.DeviceError, match="no CUDA device"):
        oar.cuda.current_device()
    with pytest.raises(oar.DeviceError, match="no CUDA device"):
        oar.ones(2).cuda()


def test_assert_close(device):
    a = oar.tensor([1.0, 2.0, 3.0], device=device)
    assert_close(a, a + 1e-6)
    assert_close({"x": [a, 1.0]}, {"x": [a.clone(), 1.0]})
    with pytest.raises(AssertionError, match=r"Mismatched elements: 1 / 3 \(33.3%\)"):
        assert_close(a, oar.tensor([1.0, 2.1, 3.0], device=device))
    with pytest.raises(AssertionError, match="Greatest absolute difference: 0.0999"):
        assert_close(a, oar.tensor([1.0, 2.1, 3.0], device=device))
    with pytest.raises(AssertionError, match="'dtype' do not match"):
        assert_close(a, a.to(oar.float64))
    assert_close(a, a.to(oar.float64), check_dtype=False)
    with pytest.raises(AssertionError, match="'shape' do not match"):
        assert_close(a, a[:2])
    with pytest.raises(AssertionError):
        assert_close(oar.tensor([math.nan], device=device), oar.tensor([math.nan], device=device))
    assert_close(oar.tensor([math.nan], device=device), oar.tensor([math.nan], device=device), equal_nan=True)
    assert_close(a, a * 1.01, rtol=0.02, atol=0.0)
    with pytest.raises(ValueError, match="rtol"):
        assert_close(a, a, rtol=0.1)
    with pytest.raises(AssertionError, match="custom"):
        assert_close(a, a + 1, msg="custom")
    assert_close(oar.tensor([1, 2], device=device), oar.tensor([1, 2], device=device))
    with pytest.raises(AssertionError):
        assert_close(oar.tensor([1, 2], device=device), oar.tensor([1, 3], device=device))
    assert_close(1.0, 1.0 + 1e-9)
    with pytest.raises(AssertionError, match="Scalars are not close"):
        assert_close(1.0, 1.1)
    assert_allclose(a, [1.0, 2.0, 3.0])
    half = oar.tensor([1.0, 2.0], dtype=oar.float16, device=device)
    assert_close(half, half + 1e-3)  # float16's own tolerance
