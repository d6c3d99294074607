"""oar.utils.data (torch.utils.data): datasets, samplers, collation and DataLoader, with PyTorch's names and
module layout: oar.utils.data.dataset, .sampler, .dataloader, .distributed and ._utils.collate / ._utils.worker
hold the pieces, and everything is importable from oar.utils.data itself.
"""
from .dataset import (Dataset, IterableDataset, TensorDataset, StackDataset, ConcatDataset, ChainDataset, Subset,
                      random_split)
from .sampler import (Sampler, SequentialSampler, RandomSampler, SubsetRandomSampler, WeightedRandomSampler,
                      BatchSampler)
from .distributed import DistributedSampler
from ._utils.collate import default_collate, default_convert
from .dataloader import DataLoader, get_worker_info, WorkerInfo, _pool  # noqa: F401
from ._random import _rng  # noqa: F401
from . import dataset, sampler, dataloader, distributed, _utils  # noqa: F401

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
           "random_split", "Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler",
           "WeightedRandomSampler", "BatchSampler", "DistributedSampler", "DataLoader", "default_collate",
           "default_convert", "get_worker_info", "WorkerInfo"]
