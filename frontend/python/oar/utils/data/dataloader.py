"""oar.utils.data.dataloader (torch.utils.data.dataloader): DataLoader.

Shuffling draws its permutation from NumPy seeded by oar's generator (so
oar.manual_seed makes epochs reproducible) or by the `generator` / `seed`
given. A DataLoader over a TensorDataset (or a Subset of one) with the default
collation takes a fast path, `_native_batches()`: C++ threads gather each batch
with one index_select per tensor, without the GIL (`num_workers` sets their
count). Other datasets are read by `_slow_batches()` in the main process when
num_workers=0, else by worker processes as in PyTorch (oar.utils._worker_pool,
oar.utils._worker): each runs __getitem__ and collate_fn and hands the batch back
through shared memory (oar.utils._shared); get_worker_info() describes the worker.
"""
import itertools
import numbers
import weakref

from ... import _C
from ..._ops import ops
from .._worker import WorkerInfo, get_worker_info
from ._random import _rng
from ._utils.collate import default_collate, default_convert
from .dataset import IterableDataset, Subset, TensorDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info", "WorkerInfo"]


def _pool():
    """The worker-pool module, imported on first use (multiprocessing costs `import oar` ~15 ms)."""
    from .. import _worker_pool
    return _worker_pool


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
        # PyTorch 1.13's default was 2, so a 1.13 script may pass prefetch_factor=2 with num_workers=0 (1.13
        # accepts that; 2.x refuses any value): the 1.13 rule, which is the more permissive one.
        if prefetch_factor is not None and prefetch_factor != 2 and num_workers == 0:
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
