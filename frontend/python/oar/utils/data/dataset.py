"""oar.utils.data.dataset (torch.utils.data.dataset): map-style and iterable datasets, their combinations
(ConcatDataset, ChainDataset, StackDataset, Subset) and random_split.

`a + b` concatenates two map-style datasets (ConcatDataset) and chains two iterable ones (ChainDataset),
as in PyTorch.
"""
import bisect
import math
import numbers
import warnings

from ..._C import Tensor
from ._random import _rng

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset", "ChainDataset", "Subset",
           "random_split"]


class Dataset:
    """Map-style dataset: __getitem__(index) and __len__."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Stream-style dataset: __iter__ yields samples (no sampler, no shuffling). `a + b` chains two streams."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")

    def __add__(self, other):
        return ChainDataset([self, other])


class TensorDataset(Dataset):
    """Sample i is (t[i] for t in tensors); every tensor has the same size in dim 0."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        for t in tensors:
            if not isinstance(t, Tensor):
                raise TypeError(f"TensorDataset expects oar.Tensors, got {type(t).__name__}")
            if t.ndim == 0:
                raise ValueError("TensorDataset: tensors must have at least one dimension")
        n = tensors[0].shape[0]
        if any(t.shape[0] != n for t in tensors):
            raise ValueError("Size mismatch between tensors: dim 0 sizes are "
                             f"{[t.shape[0] for t in tensors]}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class StackDataset(Dataset):
    """Sample i of several equal-length datasets side by side: StackDataset(a, b)[i] == (a[i], b[i]),
    StackDataset(x=a, y=b)[i] == {"x": a[i], "y": b[i]} (PyTorch 2.1's StackDataset)."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Supported either ``tuple``- (via ``args``) or``dict``- (via ``kwargs``) like input/"
                             "output, but both types are given.")
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        self.datasets = args if args else kwargs
        sizes = [len(d) for d in (args if args else kwargs.values())]
        if any(n != sizes[0] for n in sizes):
            raise ValueError("Size mismatch between datasets")
        self._length = sizes[0]

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """Map-style datasets one after the other; `cumulative_sizes[i]` is the length of the first i + 1."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("datasets should not be an empty iterable")
        self.cumulative_sizes = []
        total = 0
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset")
            total += len(d)
            self.cumulative_sizes.append(total)

    @staticmethod
    def cumsum(sequence):
        out, total = [], 0
        for d in sequence:
            total += len(d)
            out.append(total)
        return out

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range for a dataset of length {n}")
        idx = idx + n if idx < 0 else idx
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        return self.datasets[d][idx - (self.cumulative_sizes[d - 1] if d else 0)]


class ChainDataset(IterableDataset):
    """Iterable datasets streamed one after the other (chained lazily, when iterated)."""

    def __init__(self, datasets):
        self.datasets = datasets

    @staticmethod
    def _check(d):
        if not isinstance(d, IterableDataset):
            raise TypeError(f"ChainDataset only supports IterableDataset, got {type(d).__name__}")

    def __iter__(self):
        for d in self.datasets:
            self._check(d)
            yield from d

    def __len__(self):
        total = 0
        for d in self.datasets:
            self._check(d)
            total += len(d)
        return total


class Subset(Dataset):
    """dataset restricted to (and reordered by) `indices`."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Splits into non-overlapping Subsets of the given lengths (or fractions summing to 1)."""
    n = len(dataset)
    lengths = list(lengths)
    if lengths and math.isclose(sum(lengths), 1) and sum(lengths) <= 1 and all(
            isinstance(f, float) or f in (0, 1) for f in lengths):
        if any(f < 0 for f in lengths):
            raise ValueError("fractions must be non-negative")
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):  # spread the remainder round-robin, as PyTorch does
            counts[i % len(counts)] += 1
        for i, c in enumerate(counts):
            if c == 0:
                warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.")
        lengths = counts
    if any(not isinstance(x, numbers.Integral) or x < 0 for x in lengths):
        raise ValueError(f"lengths must be non-negative ints or fractions summing to 1, got {lengths}")
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = _rng(generator).permutation(n).tolist()
    out, offset = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[offset:offset + length]))
        offset += length
    return out
