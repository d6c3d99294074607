"""oar.nn.parallel (torch.nn.parallel): DataParallel and data_parallel for one device.

oar runs one device per process, so these wrap the module and call it on that device (as PyTorch does with
a single device id); more than one device id raises NotImplementedError. DistributedDataParallel,
replicate, scatter, gather and parallel_apply are not provided here.
"""
from .data_parallel import DataParallel, data_parallel

__all__ = ["DataParallel", "data_parallel"]
