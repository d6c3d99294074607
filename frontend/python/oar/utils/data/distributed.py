"""oar.utils.data.distributed (torch.utils.data.distributed): DistributedSampler.

Each of `num_replicas` processes (ranks) reads its own share of the dataset: the epoch's index list
(a permutation drawn from an oar.Generator seeded with seed + epoch when shuffling, else 0..n-1) is
padded by repeating its start (or cut, with drop_last) to a multiple of num_replicas, and rank r takes
every num_replicas-th index from position r. Every rank draws the same permutation, so the shares
are disjoint and cover the dataset. Nothing here talks to other processes: num_replicas and rank
are given, or read from oar.distributed's default process group when such a module exists and is
initialized.
"""
import math

from .sampler import Sampler

__all__ = ["DistributedSampler"]


def _process_group(what):
    """(world size, rank) of the default process group, or PyTorch's error when there is none."""
    try:
        from ... import distributed as dist  # noqa: F401 - not part of oar (yet): no process group then
    except ImportError:
        dist = None
    if dist is not None and getattr(dist, "is_initialized", lambda: False)():
        return dist.get_world_size() if what == "num_replicas" else dist.get_rank()
    raise RuntimeError(f"Default process group has not been initialized, please make sure to call "
                       f"init_process_group. (DistributedSampler needs {what} when no process group exists: "
                       f"pass num_replicas= and rank=.)")


class DistributedSampler(Sampler):
    """DistributedSampler(dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False).

    len() is num_samples = ceil(n / num_replicas) (drop_last with a remainder: ceil((n - num_replicas) /
    num_replicas)). Call set_epoch(epoch) before each epoch so shuffling gives a new order every epoch
    (the same on every rank)."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None:
            num_replicas = _process_group("num_replicas")
        if rank is None:
            rank = _process_group("rank")
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        n = len(dataset)
        if drop_last and n % num_replicas != 0:
            self.num_samples = math.ceil((n - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(n / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            from ..._creation import Generator, randperm
            g = Generator()
            g.manual_seed(self.seed + self.epoch)
            indices = randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:  # pad with the list's start (repeated whole when it is shorter than the padding)
            pad = self.total_size - len(indices)
            if pad > 0:
                indices += (indices * math.ceil(pad / len(indices)))[:pad]
        assert len(indices) == self.total_size
        mine = indices[self.rank:self.total_size:self.num_replicas]
        assert len(mine) == self.num_samples
        return iter(mine)

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch shuffling seeds with (seed + epoch): call it before each epoch's iteration."""
        self.epoch = epoch
