"""oar.utils.data: Dataset, TensorDataset, Subset, random_split, samplers and DataLoader (PyTorch API).

Shuffling draws its permutation from NumPy seeded by oar's generator (so
oar.manual_seed makes epochs reproducible) or by the `generator` / `seed`
given. A DataLoader over a TensorDataset (or a Subset of one) with the default
collation takes a fast path, `_native_batches()`: C++ threads gather each batch
with one index_select per tensor, without the GIL (`num_workers` sets their
count). Other datasets are read by `_slow_batches()` in the main process when
num_workers=0, else by worker processes as in PyTorch (_worker_pool.py,
_worker.py): each runs __getitem__ and collate_fn and hands the batch back
through shared memory (_shared.py); get_worker_info() describes the worker.
"""
import bisect
import collections.abc
import itertools
import math
import numbers
import weakref

import numpy as np

from .. import _C
from .._C import Tensor
from .._ops import ops
from ._worker import WorkerInfo, get_worker_info

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "Subset", "random_split", "Sampler",
           "SequentialSampler", "RandomSampler", "SubsetRandomSampler", "BatchSampler", "DataLoader",
           "default_collate", "default_convert", "get_worker_info", "WorkerInfo"]


def _pool():
    """The worker-pool module, imported on first use (multiprocessing costs `import oar` ~15 ms)."""
    from . import _worker_pool
    return _worker_pool


def _rng(generator=None):
    """A NumPy Generator from `generator` (int seed, NumPy Generator, None: seeded from oar's generator)."""
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


# ---- datasets ----
class Dataset:
    """Map-style dataset: __getitem__(index) and __len__."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must implement __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """Stream-style dataset: __iter__ yields samples (no sampler, no shuffling)."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must implement __iter__")


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


class ConcatDataset(Dataset):
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

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        n = len(self)
        if not -n <= idx < n:
            raise IndexError(f"index {idx} is out of range for a dataset of length {n}")
        idx = idx + n if idx < 0 else idx
        d = bisect.bisect_right(self.cumulative_sizes, idx)
        return self.datasets[d][idx - (self.cumulative_sizes[d - 1] if d else 0)]


class Subset(Dataset):
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


# ---- samplers ----
class Sampler:
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
    def __init__(self, indices, generator=None):
        self.indices = list(indices)
        self._persistent = None if generator is None else _rng(generator)

    def __iter__(self):
        rng = self._persistent or _rng(None)
        return iter([self.indices[i] for i in rng.permutation(len(self.indices)).tolist()])

    def __len__(self):
        return len(self.indices)


class BatchSampler(Sampler):
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


# ---- collation ----
def default_convert(data):
    """Converts NumPy arrays (recursively inside lists/tuples/dicts) to tensors; leaves the rest."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "SaUO":
        return _C.tensor(data, None, None, False)
    if isinstance(data, collections.abc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Stacks tensors/arrays along a new dim 0, turns numbers into tensors, recurses into dicts and sequences."""
    if not isinstance(batch, (list, tuple)) or len(batch) == 0:
        raise TypeError("default_collate expects a non-empty list of samples")
    elem = batch[0]
    if isinstance(elem, Tensor):
        return ops.stack(list(batch), dim=0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "SaUO":
            raise TypeError(f"default_collate: numpy arrays of dtype {elem.dtype} can't be converted to tensors")
        return ops.stack([_C.tensor(b, None, None, False) for b in batch], dim=0)
    if isinstance(elem, np.generic):
        return _C.tensor(np.array(batch), None, None, False)
    if isinstance(elem, bool):
        return _C.tensor(list(batch), _C.dtype.bool, None, False)
    if isinstance(elem, numbers.Integral):
        return _C.tensor(list(batch), _C.dtype.int64, None, False)
    if isinstance(elem, numbers.Real):
        return _C.tensor(list(batch), _C.dtype.float64, None, False)
    if isinstance(elem, (str, bytes)):
        return list(batch)
    if isinstance(elem, collections.abc.Mapping):
        return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(s)) for s in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                    f"found {type(elem).__name__}")


# ---- loader ----
class DataLoader:
    """Iterates over batches of a dataset: DataLoader(dataset, batch_size=1, shuffle=False, ...).

    num_workers > 0 loads batches in that many processes (multiprocessing_context: a start method
    name or context; fork where available, else the platform's default), prefetch_factor batches
    ahead per worker, in sampler order unless in_order=False. Worker i is seeded with base + i
    (oar, random, NumPy), the base drawn from `generator`/`seed` or oar's generator; worker_init_fn(i)
    runs first. A worker's exception re-raises here with its traceback; a worker that dies raises
    RuntimeError. persistent_workers keeps the processes between epochs. pin_memory pins where the
    build supports it and is otherwise a no-op. A TensorDataset with default collation and no
    worker_init_fn keeps the C++ fast path, whose `num_workers` threads gather batches.
    """

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                 pin_memory_device="", seed=None, in_order=True):
        if not isinstance(num_workers, numbers.Integral) or num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to disable prefetching")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        if prefetch_factor is not None and num_workers == 0:
            raise ValueError("prefetch_factor option could only be specified in multiprocessing; let num_workers > 0 "
                             "to enable it")
        if prefetch_factor is not None and (not isinstance(prefetch_factor, numbers.Integral) or prefetch_factor < 1):
            raise ValueError(f"prefetch_factor should be a positive integer, got {prefetch_factor}")
        if generator is not None and seed is not None:
            raise ValueError("give either generator or seed, not both")
        if seed is not None:
            generator = int(seed)
        self.dataset, self.num_workers, self.pin_memory, self.timeout = dataset, int(num_workers), pin_memory, timeout
        self.worker_init_fn, self.generator = worker_init_fn, generator
        self.prefetch_factor = 2 if prefetch_factor is None and num_workers > 0 else prefetch_factor
        self.persistent_workers, self.in_order = persistent_workers, in_order
        self.multiprocessing_context = multiprocessing_context
        if num_workers > 0:
            _pool().get_context(multiprocessing_context)  # a bad start method fails here, not at iter()
        self._seed_rng = None  # draws the workers' base seeds (from `generator` when one is given)
        self._workers = None  # the persistent workers' pool
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle or sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: shuffle, sampler and batch_sampler are not "
                                 "supported")
        elif batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                                 "and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually exclusive with drop_last")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_size is not None and (not isinstance(batch_size, numbers.Integral) or isinstance(batch_size, bool)
                                       or batch_size <= 0):
            raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.drop_last, self.sampler, self.batch_sampler = batch_size, drop_last, sampler, batch_sampler
        self._auto_collation = batch_sampler is not None or (self._iterable and batch_size is not None)
        self._default_collate = collate_fn is None
        self.collate_fn = collate_fn or (default_collate if self._auto_collation else default_convert)

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler) if self.batch_sampler is not None else len(self.sampler)

    def _tensor_source(self):
        """(tensors, index map or None) when the dataset is a TensorDataset or a Subset chain over one."""
        ds, mapping = self.dataset, None
        while isinstance(ds, Subset):
            mapping = list(ds.indices) if mapping is None else [ds.indices[i] for i in mapping]
            ds = ds.dataset
        if type(ds) is TensorDataset:  # a subclass may override __getitem__
            return ds.tensors, mapping
        return None

    def _use_fast_path(self):
        return (self._default_collate and self.batch_sampler is not None and not self._iterable
                and self._tensor_source() is not None)

    def _fast_batches(self, batches=None):
        """Batches of a TensorDataset: one index_select per tensor; `batches` yields index lists."""
        tensors, mapping = self._tensor_source()
        for indices in (iter(self.batch_sampler) if batches is None else batches):
            if mapping is not None:
                indices = [mapping[i] for i in indices]
            idx = {}
            batch = []
            for t in tensors:
                if t.device not in idx:
                    idx[t.device] = _C.tensor(list(indices), _C.dtype.int64, t.device, False)
                batch.append(ops.index_select(t, idx[t.device], dim=0))
            yield batch

    def _native_batches(self, batches=None):
        """The fast path run by the C++ prefetcher: worker threads gather whole batches without the GIL."""
        tensors, mapping = self._tensor_source()
        index_lists = []
        for indices in (iter(self.batch_sampler) if batches is None else batches):
            indices = [int(i) for i in indices]
            index_lists.append([mapping[i] for i in indices] if mapping is not None else indices)
        threads = max(1, self.num_workers)
        prefetch = max(2, threads * (self.prefetch_factor or 2))
        for batch in _C.BatchPrefetcher(list(tensors), index_lists, threads, prefetch):
            yield list(batch)

    def _slow_batches(self, batches=None):
        """Batches collated from per-sample __getitem__ calls (or from an IterableDataset's stream)."""
        if self._iterable:
            yield from self._iterable_batches()
            return
        if self.batch_sampler is None:
            for i in (iter(self.sampler) if batches is None else batches):
                yield self.collate_fn(self.dataset[i])
            return
        for indices in (iter(self.batch_sampler) if batches is None else batches):
            yield self.collate_fn([self.dataset[i] for i in indices])

    def _iterable_batches(self):
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __iter__(self):
        # The epoch's order (a shuffle's permutation) is drawn here, in the main process, so it stays
        # reproducible under oar.manual_seed whoever produces the batches.
        batches = None
        if not self._iterable:
            batches = iter(self.batch_sampler if self.batch_sampler is not None else self.sampler)
        if self._use_fast_path() and (self.num_workers == 0 or self.worker_init_fn is None):
            return self._native_batches(batches)  # no user code would run in a worker: threads suffice
        if self.num_workers > 0:
            return self._worker_batches(batches)
        source = self._slow_batches(batches)
        if self.pin_memory:
            source = map(_pool().pin_memory, source)
        return source

    def _worker_batches(self, batches):
        """Batches from worker processes; persistent workers are started once and reused every epoch."""
        tasks = itertools.repeat(None) if self._iterable else batches
        if not self.persistent_workers:
            return _pool().MultiProcessIter(self._new_pool(), tasks, self.timeout, self.in_order,
                                                 self.pin_memory)
        if self._workers is None or not self._workers.alive:
            self._workers = self._new_pool()
            weakref.finalize(self, self._workers.shutdown)  # the pool holds no reference back to the loader
        return _pool().MultiProcessIter(self._workers, tasks, self.timeout, self.in_order, self.pin_memory,
                                             owns_pool=False)

    def _new_pool(self):
        spec = {"dataset": self.dataset, "collate_fn": self.collate_fn, "worker_init_fn": self.worker_init_fn,
                "iterable": self._iterable, "auto_collation": self._auto_collation, "batch_size": self.batch_size,
                "drop_last": self.drop_last}
        return _pool().WorkerPool(spec, self.num_workers, _pool().get_context(self.multiprocessing_context),
                                       self._base_seed(), self.prefetch_factor)

    def _base_seed(self):
        """Worker i is seeded with base + i; base comes from `generator` if given, else from oar's generator."""
        if self._seed_rng is None and self.generator is not None:
            rng = _rng(self.generator)
            if rng is self.generator:  # a NumPy Generator the sampler draws from too: leave its stream alone
                try:
                    rng = rng.spawn(1)[0]
                except (AttributeError, TypeError, ValueError):  # NumPy < 1.25, or no SeedSequence to spawn from
                    pass
            self._seed_rng = rng
        # below 2**52: a seed (plus worker id) stays exact where it passes through a float64, as tensor() does
        return int((self._seed_rng or _rng(None)).integers(0, 2 ** 52))
