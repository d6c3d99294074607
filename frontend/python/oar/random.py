"""torch.random: the global random state as a module (Trainer checkpoints save torch.random.get_rng_state()).

oar has one counter-based generator that every device draws from, so fork_rng saves and restores that
one state whatever `devices` names.
"""
import contextlib

from ._C import initial_seed  # noqa: F401
from ._creation import default_generator, get_rng_state, manual_seed, set_rng_state  # noqa: F401

__all__ = ["set_rng_state", "get_rng_state", "manual_seed", "seed", "initial_seed", "fork_rng"]


def seed():
    """Seeds the global stream from a non-deterministic source and returns that seed, as torch.seed."""
    from . import seed as global_seed  # oar.seed is installed after this module is imported
    return global_seed()


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True):
    """Runs the block on a fork of the random state: what it draws does not change the draws after it."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
