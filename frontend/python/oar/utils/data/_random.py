"""Where oar.utils.data's random draws come from (shuffles, splits, weighted sampling, worker seeds).

A NumPy Generator seeded by oar's generator (so oar.manual_seed makes epochs reproducible), by an int
seed, by an oar.Generator's seed, or a NumPy Generator given as it is.
"""
import numbers

import numpy as np

from ... import _C


def _rng(generator=None):
    """A NumPy Generator from `generator` (int seed, NumPy Generator, oar.Generator, None: seeded from oar's
    generator)."""
    if isinstance(generator, np.random.Generator):
        return generator
    if isinstance(generator, numbers.Integral) and not isinstance(generator, bool):
        return np.random.default_rng(int(generator))
    if generator is None:
        u = _C.call("uniform", [], {"shape": [2], "low": 0.0, "high": float(2 ** 31), "dtype": _C.dtype.float64}, None)
        return np.random.default_rng([int(v) for v in u.tolist()])
    if hasattr(generator, "initial_seed"):
        return np.random.default_rng(int(generator.initial_seed()))
    raise TypeError(f"generator must be an int seed or a numpy.random.Generator, got {type(generator).__name__}")
