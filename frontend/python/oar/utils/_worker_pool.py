"""The main-process side of DataLoader(num_workers=N): the worker processes and the epoch iterator.

`WorkerPool` starts N processes running `_worker.worker_loop`, each with its own
index queue and one result queue shared by all, and stops them (first asking,
then terminating) when shut down: by the epoch iterator's end or deletion, by
the DataLoader's deletion for persistent workers, or at interpreter exit.
`MultiProcessIter` hands index lists round-robin to the workers, at most
`prefetch_factor * N` ahead, and returns batches in sampler order (or as they
come with in_order=False). While it waits it checks that every worker is alive,
so a worker that died raises instead of hanging.
"""
import itertools
import multiprocessing
import os
import pickle
import queue
import secrets
import signal
import time
import weakref

from .._C import Tensor
from . import _shared, _worker

_POLL_S = 0.1  # how often a waiting main process checks its workers' health
_SHUTDOWN_S = 5.0  # how long workers get to finish their batch and exit before being terminated


def get_context(multiprocessing_context):
    """A multiprocessing context: the one given (object or start-method name), else fork where there is one."""
    if multiprocessing_context is None:
        # fork: datasets and functions defined anywhere (even locally) need no pickling
        fork = "fork" in multiprocessing.get_all_start_methods()
        return multiprocessing.get_context("fork" if fork else None)
    if isinstance(multiprocessing_context, str):
        return multiprocessing.get_context(multiprocessing_context)
    if hasattr(multiprocessing_context, "Process") and hasattr(multiprocessing_context, "Queue"):
        return multiprocessing_context
    raise TypeError("multiprocessing_context must be a start method name or a multiprocessing context, got "
                    f"{type(multiprocessing_context).__name__}")


def _death_message(worker_id, process):
    code = process.exitcode
    how = f"exit code {code}"
    if code < 0:
        try:
            how += f" (killed by signal {signal.Signals(-code).name})"
        except ValueError:
            pass
    return f"DataLoader worker {worker_id} (pid {process.pid}) exited unexpectedly with {how}"


def _discard(raw):
    """Frees the shared memory of a message nobody will read."""
    try:
        _, data = pickle.loads(raw)
    except Exception:  # noqa: BLE001 - a message we can't read holds nothing we can free
        return
    if isinstance(data, _shared.Packed):
        data.free()


class WorkerPool:
    """N worker processes, their index queues and the shared result queue."""

    def __init__(self, spec, num_workers, ctx, base_seed, prefetch_factor):
        self.num_workers, self.prefetch = num_workers, num_workers * prefetch_factor
        self.pid = os.getpid()
        self.prefix = f"/oar{self.pid}_{secrets.token_hex(4)}"  # names this pool's shared-memory segments
        self.result_queue = ctx.Queue()
        self.done_event = ctx.Event()
        self.index_queues, self.workers = [], []
        self.alive, self.epoch = True, 0
        try:
            for i in range(num_workers):
                q = ctx.Queue()
                q.cancel_join_thread()  # our puts are small; never let them block exit
                w = ctx.Process(target=_worker.worker_loop, daemon=True, args=(
                    spec, q, self.result_queue, self.done_event, i, num_workers, base_seed + i, self.prefix))
                w.start()
                self.index_queues.append(q)
                self.workers.append(w)
        except BaseException:
            self.shutdown()
            raise

    def receive(self, timeout):
        """The next (task index, data) from any worker; raises if a worker died or `timeout` (0: none) passed."""
        deadline = time.monotonic() + timeout if timeout else None
        while True:
            wait = _POLL_S if deadline is None else max(0.0, min(_POLL_S, deadline - time.monotonic()))
            try:
                return pickle.loads(self.result_queue.get(timeout=wait))
            except queue.Empty:
                pass
            self.check_workers()
            if deadline is not None and time.monotonic() >= deadline:
                raise RuntimeError(f"DataLoader timed out after {timeout} seconds")

    def check_workers(self):
        """Raises RuntimeError naming the first worker that exited (workers only exit when shut down)."""
        for i, w in enumerate(self.workers):
            if w.exitcode is not None:
                message = _death_message(i, w)
                self.shutdown()
                raise RuntimeError(message)

    def begin_epoch(self, timeout):
        """Readies the workers for a new epoch (persistent workers drop the last epoch's leftovers)."""
        if self.epoch > 0:
            for q in self.index_queues:
                q.put(_worker._ResumeIteration())
            pending = self.num_workers
            while pending:
                idx, data = self.receive(timeout)
                if isinstance(idx, _worker._ResumeIteration):
                    pending -= 1
                elif isinstance(data, _shared.Packed):
                    data.free()
        self.epoch += 1
        return self.epoch

    def _drain(self, timeout):
        """Reads and frees what the workers still send, so none blocks exiting on a full pipe."""
        while True:
            try:
                raw = self.result_queue.get(timeout=timeout) if timeout else self.result_queue.get_nowait()
            except (queue.Empty, OSError, EOFError, ValueError):
                return
            _discard(raw)
            timeout = 0

    def shutdown(self):
        """Stops the workers (no zombies left) and frees every shared-memory segment still in flight."""
        if not self.alive or os.getpid() != self.pid:  # a forked child holds a copy of a pool it doesn't own
            return
        self.alive = False
        try:
            self.done_event.set()
            for q, w in zip(self.index_queues, self.workers):
                if w.exitcode is None:
                    q.put(None)
            deadline = time.monotonic() + _SHUTDOWN_S
            while any(w.exitcode is None for w in self.workers) and time.monotonic() < deadline:
                self._drain(_POLL_S / 4)
            for w in self.workers:
                if w.exitcode is None:
                    w.terminate()
                w.join(timeout=1.0)
                if w.exitcode is None:
                    w.kill()
                    w.join()
            self._drain(0)
            for q in self.index_queues:
                q.close()
            self.result_queue.cancel_join_thread()
            self.result_queue.close()
        finally:
            _shared.unlink_prefix(self.prefix)


def pin_memory(data):
    """Pins the batch's tensors where this build can (Tensor.pin_memory); otherwise returns it unchanged."""
    if not hasattr(Tensor, "pin_memory"):
        return data
    tensors = []
    skeleton = _shared._strip(data, tensors)
    return _shared._fill(skeleton, [t.pin_memory() for t in tensors])


class MultiProcessIter:
    """One epoch over a WorkerPool; `tasks` yields the index lists (None each for an IterableDataset)."""

    def __init__(self, pool, tasks, timeout=0, in_order=True, pin=False, owns_pool=True):
        self._pool, self._tasks, self._timeout, self._in_order, self._pin = pool, tasks, timeout, in_order, pin
        # Non-persistent workers die with their epoch, also when the iterator is dropped unfinished.
        self._finalizer = weakref.finalize(self, pool.shutdown) if owns_pool else None
        self._epoch = pool.begin_epoch(timeout)
        self._active = [True] * pool.num_workers  # False: that worker's IterableDataset ran out
        self._cycle = itertools.cycle(range(pool.num_workers))
        self._send_idx = self._rcvd_idx = 0
        self._task_info = {}  # task index -> (worker,) while pending, (worker, batch) when it came early
        for _ in range(pool.prefetch):
            self._put_task()

    def __iter__(self):
        return self

    def __next__(self):
        if not self._pool.alive or self._pool.epoch != self._epoch:
            raise StopIteration  # shut down, or a newer epoch now owns these persistent workers
        while True:
            self._skip_finished()
            if self._rcvd_idx == self._send_idx:
                self._close()
                raise StopIteration
            info = self._task_info[self._rcvd_idx]
            if len(info) == 2:
                del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
                return self._deliver(info[1])
            idx, data = self._pool.receive(self._timeout)
            if isinstance(data, _shared.Packed):
                data = data.unpack()  # at once: the segment's name is freed, its memory follows the tensors
            if isinstance(data, _worker._IterableEnd):
                self._active[data.worker_id] = False
                self._task_info.pop(idx, None)
                self._put_task()
            elif idx == self._rcvd_idx or not self._in_order:
                del self._task_info[idx]
                return self._deliver(data)
            else:
                self._task_info[idx] = (self._task_info[idx][0], data)

    def _put_task(self):
        """Sends the next index list to the next worker still running, if any."""
        for _ in range(len(self._active)):
            worker = next(self._cycle)
            if self._active[worker]:
                break
        else:
            return
        try:
            index = next(self._tasks)
        except StopIteration:
            return
        self._pool.index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._send_idx += 1

    def _skip_finished(self):
        """Moves past tasks already delivered (out of order) or sent to a worker whose stream has ended."""
        while self._rcvd_idx < self._send_idx:
            info = self._task_info.get(self._rcvd_idx)
            if info is not None and (len(info) == 2 or self._active[info[0]]):
                return
            if info is not None:
                del self._task_info[self._rcvd_idx]
                self._put_task()  # that task will never be answered; keep the others fed
            self._rcvd_idx += 1

    def _deliver(self, data):
        self._put_task()
        if isinstance(data, _worker.ExceptionWrapper):
            data.reraise()
        return pin_memory(data) if self._pin else data

    def _close(self):
        if self._finalizer is not None:
            self._finalizer()  # shuts the pool down, once
