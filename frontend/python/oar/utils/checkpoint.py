"""torch.utils.checkpoint: checkpoint(function, *args) and checkpoint_sequential(functions, segments, input).

PyTorch's checkpointing saves memory by recomputing a segment's forward pass during backward; the values
and gradients are those of running the segment once. oar runs the segment once and keeps its
activations (gradients identical, no memory saved), so scripts that checkpoint train unchanged.
"""
import warnings


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs), with gradients to every input and parameter it uses."""
    if use_reentrant is None:
        warnings.warn("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly "
                      "(PyTorch 2.x warns the same); oar computes the same gradients either way", UserWarning,
                      stacklevel=2)
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Runs the modules of `functions` (a Sequential or a list) in order on input, in `segments` parts."""
    if isinstance(functions, (list, tuple)):
        modules = list(functions)
    else:
        modules = list(functions.children())
    if segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be >= 1, got {segments}")
    for module in modules:
        input = module(input)
    return input


__all__ = ["checkpoint", "checkpoint_sequential"]
