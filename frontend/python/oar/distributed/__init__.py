"""torch.distributed as PyTorch has it when built without distributed support: is_available() is False.

The device ABI has collectives (docs/abi.md), but oar's Python frontend has no process groups on top of
them yet, so scripts take their single-process path: HF's Trainer and accelerate check
`torch.distributed.is_available()` (and then `is_initialized()`) before any other call. Other
torch.distributed names fail under oar.compat naming the PyTorch API.
"""

__all__ = ["is_available", "is_initialized"]


def is_available():
    return False


def is_initialized():
    """No default process group can exist (there is no init_process_group)."""
    return False
