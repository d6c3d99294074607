"""The DataLoader worker process: its loop, its seeding, get_worker_info() and error wrapping.

A worker takes `(task index, sample indices)` from its own index queue, builds
the batch (dataset[i] for each index, then collate_fn; or the next items of an
IterableDataset) and puts `(task index, result)` on the shared result queue,
the result pickled here (so an unpicklable batch or exception becomes an error
the main process sees, not an item silently dropped by the queue's feeder
thread). Tensors travel through shared memory (see _shared.py). `None` on the
index queue stops the worker; `_ResumeIteration` starts a new epoch for
persistent workers.
"""
import ctypes
import os
import pickle
import queue
import random
import sys
import traceback

import numpy as np

from .. import _C
from . import _shared

_POLL_S = 1.0  # how often an idle worker checks that the main process still lives

_worker_info = None


class WorkerInfo:
    """What get_worker_info() returns inside a worker: id, num_workers, seed, dataset (read-only)."""

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            object.__setattr__(self, k, v)

    def __setattr__(self, key, value):
        raise RuntimeError(f"Cannot assign attributes to {type(self).__name__} objects")

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed})"


def get_worker_info():
    """In a DataLoader worker process: its WorkerInfo (id, num_workers, seed, dataset). None in the main process."""
    return _worker_info


class _KeyErrorMessage(str):
    """KeyError quotes its message through repr(); this keeps the traceback's newlines readable."""

    def __repr__(self):
        return self


class ExceptionWrapper:
    """An exception caught in a worker, carried as its type and formatted traceback."""

    def __init__(self, exc_info, where):
        self.exc_type = exc_info[0] if _picklable(exc_info[0]) else None
        self.exc_name = exc_info[0].__name__
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        """Raises the worker's exception type (RuntimeError where it can't be rebuilt) with its traceback text."""
        msg = f"Caught {self.exc_name} {self.where}.\nOriginal {self.exc_msg}"
        exc_type = self.exc_type or RuntimeError
        if exc_type is KeyError:
            msg = _KeyErrorMessage(msg)
        try:
            exc = exc_type(msg)
        except Exception:  # noqa: BLE001 - a constructor that wants other arguments
            exc = RuntimeError(msg)
        raise exc


def _picklable(obj):
    try:
        pickle.dumps(obj)
        return True
    except Exception:  # noqa: BLE001
        return False


class _ResumeIteration:
    """Asks a persistent worker to start a new epoch; echoed back once the worker has reset."""


class _IterableEnd:
    """A worker's IterableDataset is exhausted for this epoch."""

    def __init__(self, worker_id):
        self.worker_id = worker_id


class _MapFetcher:
    def __init__(self, dataset, auto_collation, collate_fn):
        self.dataset, self.auto_collation, self.collate_fn = dataset, auto_collation, collate_fn

    def fetch(self, index):
        if self.auto_collation:
            return self.collate_fn([self.dataset[i] for i in index])
        return self.collate_fn(self.dataset[index])


class _IterableFetcher:
    """Runs the worker's own iterator over the dataset; StopIteration ends this worker's epoch."""

    def __init__(self, dataset, auto_collation, collate_fn, batch_size, drop_last):
        self.it = iter(dataset)
        self.auto_collation, self.collate_fn = auto_collation, collate_fn
        self.batch_size, self.drop_last = batch_size, drop_last

    def fetch(self, _):
        if not self.auto_collation:
            return self.collate_fn(next(self.it))
        batch = []
        for sample in self.it:
            batch.append(sample)
            if len(batch) == self.batch_size:
                break
        if not batch or (self.drop_last and len(batch) < self.batch_size):
            raise StopIteration
        return self.collate_fn(batch)


def _one_compute_thread():
    """Limits OpenMP to one thread in this worker, as PyTorch does.

    N workers each using every core would oversubscribe the machine, and GNU OpenMP's thread pool
    does not survive fork: a forked worker's first parallel region would wait forever for threads
    that only exist in the parent. Only an OpenMP runtime already loaded (by the CPU plugin) is touched.
    """
    os.environ["OMP_NUM_THREADS"] = "1"  # for an OpenMP runtime loaded later in this process
    for name in ("libgomp.so.1", "libiomp5.so", "libomp.so"):
        try:
            runtime = ctypes.CDLL(name, mode=getattr(os, "RTLD_NOLOAD", 0) | ctypes.RTLD_LOCAL)
            runtime.omp_set_num_threads(1)
        except (OSError, AttributeError):  # not loaded here, or not an OpenMP runtime
            continue


def _seed_all(seed):
    """Seeds every generator a dataset may draw from: oar's, Python's random, NumPy's global one."""
    _C.manual_seed(seed)
    random.seed(seed)
    np.random.seed(seed % 2 ** 32)


class _ParentWatch:
    """Notices that the main process died (the worker was re-parented), so an orphan worker exits."""

    def __init__(self):
        self.ppid = os.getppid()

    def alive(self):
        return os.getppid() == self.ppid


def _make_fetcher(spec):
    if spec["iterable"]:
        return _IterableFetcher(spec["dataset"], spec["auto_collation"], spec["collate_fn"], spec["batch_size"],
                                spec["drop_last"])
    return _MapFetcher(spec["dataset"], spec["auto_collation"], spec["collate_fn"])


def _start(spec, worker_id, num_workers, seed):
    """Seeds, sets WorkerInfo and runs worker_init_fn; the error, wrapped, if worker_init_fn raised."""
    global _worker_info
    _one_compute_thread()
    _seed_all(seed)
    _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=spec["dataset"])
    try:
        if spec["worker_init_fn"] is not None:
            spec["worker_init_fn"](worker_id)
    except Exception:  # noqa: BLE001 - reported for every batch, since the worker is unusable
        return ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
    return None


def _new_fetcher(spec, worker_id):
    """(fetcher, None), or (None, the error wrapped) when e.g. an IterableDataset's __iter__ raises."""
    try:
        return _make_fetcher(spec), None
    except Exception:  # noqa: BLE001
        return None, ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")


def _encode(idx, data, name, worker_id):
    """The message for the main process, pickled here so that a failure to pickle is reported, not lost."""
    try:
        if not isinstance(data, (ExceptionWrapper, _IterableEnd, _ResumeIteration)):
            data = _shared.pack(data, name)
        return pickle.dumps((idx, data), pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001
        if isinstance(data, _shared.Packed):
            data.free()
        wrapped = ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id} (sending the batch)")
        return pickle.dumps((idx, wrapped), pickle.HIGHEST_PROTOCOL)


def _fetch(fetcher, error, index, worker_id):
    """The batch for `index`, or what the main process should see instead (an error, the end of the stream)."""
    if fetcher is None:
        return error
    try:
        return fetcher.fetch(index)
    except StopIteration:
        if isinstance(fetcher, _IterableFetcher):
            return _IterableEnd(worker_id)
        return ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")
    except Exception:  # noqa: BLE001 - re-raised in the main process
        return ExceptionWrapper(sys.exc_info(), f"in DataLoader worker process {worker_id}")


def worker_loop(spec, index_queue, result_queue, done_event, worker_id, num_workers, seed, shm_prefix):
    """A worker process's body (spec: dataset, collate_fn, worker_init_fn and batching options)."""
    try:
        _run(spec, index_queue, result_queue, done_event, worker_id, num_workers, seed, shm_prefix)
    except KeyboardInterrupt:
        pass  # the main process gets the interrupt too and shuts the workers down


def _run(spec, index_queue, result_queue, done_event, worker_id, num_workers, seed, shm_prefix):
    init_error = _start(spec, worker_id, num_workers, seed)
    fetcher, error = (None, init_error) if init_error else _new_fetcher(spec, worker_id)
    parent, ended, count = _ParentWatch(), False, 0
    while parent.alive():
        try:
            task = index_queue.get(timeout=_POLL_S)
        except queue.Empty:
            continue
        if task is None:
            break
        if isinstance(task, _ResumeIteration):
            if init_error is None:
                fetcher, error = _new_fetcher(spec, worker_id)  # a fresh iterator over an IterableDataset
            ended = False
            result_queue.put(pickle.dumps((task, None), pickle.HIGHEST_PROTOCOL))
            continue
        if done_event.is_set() or ended:
            continue  # an IterableDataset worker that ran out ignores the tasks still queued
        idx, index = task
        count += 1
        data = _fetch(fetcher, error, index, worker_id)
        ended = isinstance(data, _IterableEnd)
        result_queue.put(_encode(idx, data, f"{shm_prefix}_{worker_id}_{count}", worker_id))
        del data  # don't hold the batch's tensors while waiting for the next task
    if not parent.alive():
        result_queue.cancel_join_thread()  # nobody will read what is left; don't block exiting
    result_queue.close()
