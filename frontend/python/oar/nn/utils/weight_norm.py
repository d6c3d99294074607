"""nn.utils.weight_norm / remove_weight_norm: the older, hook-based weight normalization (PyTorch's API).

weight_norm(module, "weight") replaces the parameter `weight` by `weight_g` (its norm over every dim but
dim) and `weight_v` (its direction); a forward pre-hook recomputes module.weight = g * v / ||v|| before
each call. nn.utils.parametrizations.weight_norm is the newer form.
"""
import warnings

from ...autograd import no_grad
from ..parameter import Parameter
from .parametrizations import _norm_except_dim, _weight_norm

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


class WeightNorm:
    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        with no_grad():
            g = _norm_except_dim(weight.detach(), fn.dim)
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(g.detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def _drop_pre_hook(module, key):
    del module._forward_pre_hooks[key]
    for d in ("_forward_pre_hooks_with_kwargs", "_any_hooks"):
        getattr(module, d, {}).pop(key, None)


def weight_norm(module, name="weight", dim=0):
    """Splits module.<name> into magnitude <name>_g and direction <name>_v (dim=None: one magnitude for the
    whole tensor), recombined before every forward."""
    warnings.warn("nn.utils.weight_norm is deprecated in favor of nn.utils.parametrizations.weight_norm.",
                  FutureWarning, stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undoes weight_norm: <name> becomes a parameter again, holding the current normalized weight."""
    for k, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            _drop_pre_hook(module, k)
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
