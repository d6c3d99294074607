"""oar.utils.data.sampler (torch.utils.data.sampler): the index orders a DataLoader draws samples in.

Random samplers draw from NumPy seeded by oar's generator when no `generator` is given (a fresh stream
each epoch, reproducible under oar.manual_seed), else from one persistent stream made from `generator`
(an int seed, a NumPy Generator or an oar.Generator's seed), so successive epochs differ but a run
repeats.
"""
import numbers

import numpy as np

from ... import _C
from ..._C import Tensor
from ._random import _rng

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler",
           "BatchSampler"]


class Sampler:
    """Base class: __iter__ yields indices (or, for a batch sampler, lists of indices)."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A fresh permutation every epoch (drawn when iteration starts); with replacement, uniform draws."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source, self.replacement, self._num_samples = data_source, replacement, num_samples
        self.generator = generator
        self._persistent = None if generator is None else _rng(generator)
        if not isinstance(replacement, bool):
            raise TypeError(f"replacement should be a boolean value, but got replacement={replacement}")
        if not isinstance(self.num_samples, numbers.Integral) or self.num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        rng = self._persistent or _rng(None)
        n = len(self.data_source)
        if self.replacement:
            return iter(rng.integers(0, n, size=self.num_samples).tolist())
        reps = -(-self.num_samples // n)
        idx = np.concatenate([rng.permutation(n) for _ in range(reps)])[:self.num_samples]
        return iter(idx.tolist())

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a fresh random order every epoch."""

    def __init__(self, indices, generator=None):
        self.indices = indices if isinstance(indices, (list, tuple, range)) else list(indices)
        self.generator = generator
        self._persistent = None if generator is None else _rng(generator)

    def __iter__(self):
        rng = self._persistent or _rng(None)
        return iter([self.indices[i] for i in rng.permutation(len(self.indices)).tolist()])

    def __len__(self):
        return len(self.indices)


def _as_float64_array(weights):
    if isinstance(weights, Tensor):
        return np.asarray(weights.detach().cpu().numpy(), dtype=np.float64)
    try:
        return np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError):  # e.g. a list of 0-d tensors
        return np.asarray([float(w) for w in weights], dtype=np.float64)


class WeightedRandomSampler(Sampler):
    """num_samples indices in [0, len(weights)) drawn with probabilities proportional to `weights`
    (which need not sum to one): independently with replacement, else without repeating an index
    (successive draws among the ones left, like torch.multinomial). `weights` is kept as a float64
    tensor; as in PyTorch, bad weights (negative, non-finite, all zero, too few non-zero for
    replacement=False) raise RuntimeError when iteration starts."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        if not isinstance(num_samples, numbers.Integral) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError(f"num_samples should be a positive integer value, but got num_samples={num_samples}")
        if not isinstance(replacement, bool):
            raise ValueError(f"replacement should be a boolean value, but got replacement={replacement}")
        w = _as_float64_array(weights)
        if w.ndim != 1:
            raise ValueError(f"weights should be a 1d sequence but given weights have shape {tuple(w.shape)}")
        self.weights = _C.tensor(np.ascontiguousarray(w), _C.dtype.float64, None, False)
        self._w = w
        self.num_samples, self.replacement, self.generator = int(num_samples), replacement, generator
        self._persistent = None if generator is None else _rng(generator)

    def __iter__(self):
        w, k = self._w, self.num_samples
        if w.size == 0:
            raise RuntimeError("cannot sample from an empty probability distribution (weights is empty)")
        if not np.all(np.isfinite(w)):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry = infinity or NaN)")
        if np.any(w < 0):
            raise RuntimeError("invalid multinomial distribution (encountering probability entry < 0)")
        total = w.sum()
        if total <= 0:
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        if not self.replacement:
            if k > w.size:
                raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
            if k > np.count_nonzero(w):
                raise RuntimeError("invalid multinomial distribution (with replacement=False, not enough non-negative "
                                   "category to sample)")
        rng = self._persistent or _rng(None)
        return iter(rng.choice(w.size, size=k, replace=self.replacement, p=w / total).tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Groups another sampler's indices into lists of batch_size (the last one shorter unless drop_last)."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, numbers.Integral) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, int(batch_size), drop_last

    def __iter__(self):
        it = iter(self.sampler)  # drawn now, so a shuffle's permutation is fixed when the epoch starts
        return self._batches(it)

    def _batches(self, it):
        batch = []
        for i in it:
            batch.append(i)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
