"""oar.amp: loss scaling (GradScaler) and the autocast context, with torch.amp's API.

GradScaler is device-generic and real: it multiplies the loss by a scale, divides the gradients back
before the step, skips the step when a gradient is inf or NaN and adapts the scale (backoff on overflow,
growth after `growth_interval` clean steps), with its state in state_dict. It works for any optimizer and
device; with float32 gradients it changes nothing but the rounding of tiny gradients.

autocast runs the ops inside it in a lower precision where that is safe. oar does not have per-op
autocasting yet, so an enabled autocast is refused with a NotImplementedError naming it, except where
torch itself disables it: device_type='cuda' without a CUDA device warns and runs in float32, as torch
does. autocast(enabled=False) is the plain context it is in torch (scripts switch AMP with a flag).
"""
import functools
import math
import warnings

from .._C import Tensor
from ..autograd import no_grad

_FLOAT32_MAX = 3.4028234663852886e38


class autocast:
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None): a context manager and
    decorator."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = bool(enabled)
        if self._enabled and device_type == "cuda":
            from .. import cuda
            if not cuda.is_available():
                warnings.warn("User provided device_type of 'cuda', but CUDA is not available. Disabling",
                              UserWarning, stacklevel=2)
                self._enabled = False
        if self._enabled:
            raise NotImplementedError(
                f"oar.autocast(device_type={device_type!r}, enabled=True): automatic mixed precision is not "
                "implemented in oar yet; run in float32 (autocast(..., enabled=False)) or cast the model "
                "with .to(dtype)")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapped


def is_autocast_available(device_type):
    return False


class _OptimizerState:
    READY, UNSCALED, STEPPED = 0, 1, 2


class GradScaler:
    """torch.amp.GradScaler(device='cuda', init_scale=2**16, growth_factor=2.0, backoff_factor=0.5,
    growth_interval=2000, enabled=True)."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        if growth_factor <= 1.0:
            raise ValueError("The growth factor must be > 1.0.")
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError("The backoff factor must be < 1.0.")
        if int(growth_interval) <= 0:
            raise ValueError("growth_interval must be a positive integer")
        self._device = device
        self._enabled = bool(enabled)
        self._scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._growth_tracker = 0
        self._per_optimizer = {}  # id(optimizer) -> {"stage", "found_inf"}

    # ---- scaling ----
    def scale(self, outputs):
        """outputs (a tensor or nested lists/tuples of tensors) multiplied by the current scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise ValueError("outputs must be a Tensor or an iterable of Tensors")

    def _state(self, optimizer):
        return self._per_optimizer.setdefault(id(optimizer), {"stage": _OptimizerState.READY, "found_inf": False})

    def unscale_(self, optimizer):
        """Divides optimizer's gradients by the scale (once per step) and records whether any is inf/NaN."""
        if not self._enabled:
            return
        state = self._state(optimizer)
        if state["stage"] == _OptimizerState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["stage"] == _OptimizerState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv = 1.0 / self._scale
        found = False
        for group in optimizer.param_groups:
            for p in group["params"]:
                g = p.grad
                if g is None:
                    continue
                with no_grad():
                    g.mul_(inv)
                if not found and not bool(g.isfinite().all().item()):
                    found = True
        state["found_inf"] = found
        state["stage"] = _OptimizerState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """optimizer.step(*args, **kwargs) unless a gradient was inf/NaN (then the step is skipped)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is enabled.")
        state = self._state(optimizer)
        if state["stage"] == _OptimizerState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] == _OptimizerState.READY:
            self.unscale_(optimizer)
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = _OptimizerState.STEPPED
        return result

    def update(self, new_scale=None):
        """Backs the scale off after an overflow, grows it after growth_interval clean steps (or sets it)."""
        if not self._enabled:
            return
        if new_scale is not None:
            self._scale = float(new_scale.item() if isinstance(new_scale, Tensor) else new_scale)
        else:
            if not self._per_optimizer:
                raise AssertionError("No inf checks were recorded prior to update.")
            if any(s["found_inf"] for s in self._per_optimizer.values()):
                self._scale *= self._backoff_factor
                self._growth_tracker = 0
            else:
                self._growth_tracker += 1
                if self._growth_tracker == self._growth_interval:
                    self._scale *= self._growth_factor
                    self._growth_tracker = 0
            if math.isinf(self._scale):
                self._scale = _FLOAT32_MAX
        self._per_optimizer = {}

    # ---- queries and state ----
    def get_scale(self):
        return self._scale if self._enabled else 1.0

    def is_enabled(self):
        return self._enabled

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, value):
        self._growth_factor = float(value)

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, value):
        self._backoff_factor = float(value)

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, value):
        self._growth_interval = int(value)

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self._scale, "growth_factor": self._growth_factor, "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval, "_growth_tracker": self._growth_tracker}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved from a disabled "
                               "instance of GradScaler.")
        self._scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._growth_tracker = int(state_dict["_growth_tracker"])


__all__ = ["autocast", "GradScaler", "is_autocast_available"]
