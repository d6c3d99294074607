"""oar.multiprocessing (torch.multiprocessing): Python's multiprocessing, plus spawn() to start N
processes running fn(i, *args) and join them, raising in the parent when one fails.

A CPU tensor moved into shared memory (Tensor.share_memory_(), nn.Module.share_memory(), for Hogwild-style
training) is the same memory in every process: children forked afterwards inherit it, and pickled to a
process (spawn Process args, Queue, Pipe) it travels as a file descriptor and arrives mapped onto the same
memory (oar/_shared_storage.py). Other tensors cross by pickling, as copies: unlike torch, which first
moves them into shared memory. A process receiving a shared tensor through a Queue needs the sender to be
alive until it has been taken off the queue (as torch's file_descriptor strategy does).
"""
import multiprocessing as _mp
import traceback as _traceback
from multiprocessing import *  # noqa: F401,F403  Process, Queue, Pool, set_start_method, ...

__all__ = [name for name in dir(_mp) if not name.startswith("_")] + [
    "spawn", "start_processes", "ProcessContext", "ProcessRaisedException", "ProcessExitedException"]


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.error_index = error_index
        self.pid = pid


class ProcessRaisedException(ProcessException):
    """A spawned process raised; the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A spawned process exited with a non-zero code (or a signal) without a Python exception."""

    def __init__(self, msg, error_index, pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, pid)
        self.exit_code = exit_code
        self.signal_name = signal_name


def _wrap(fn, i, args, errors):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except BaseException:
        errors.put(_traceback.format_exc())
        raise SystemExit(1)


class ProcessContext:
    def __init__(self, processes, error_queues):
        self.processes = processes
        self.error_queues = error_queues

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """Waits for the processes; True when all ended. The first failure ends the others and raises."""
        for i, p in enumerate(self.processes):
            p.join(timeout)
            if p.exitcode is None:
                return False
            if p.exitcode != 0:
                for other in self.processes:
                    if other.is_alive():
                        other.terminate()
                        other.join()
                if not self.error_queues[i].empty():
                    raise ProcessRaisedException(
                        f"\n\n-- Process {i} terminated with the following error:\n{self.error_queues[i].get()}",
                        i, p.pid)
                if p.exitcode < 0:
                    raise ProcessExitedException(f"process {i} terminated with signal {-p.exitcode}", i, p.pid,
                                                 p.exitcode, str(-p.exitcode))
                raise ProcessExitedException(f"process {i} terminated with exit code {p.exitcode}", i, p.pid,
                                             p.exitcode)
        return True


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    ctx = _mp.get_context(start_method)
    errors, processes = [], []
    for i in range(nprocs):
        q = ctx.SimpleQueue()
        p = ctx.Process(target=_wrap, args=(fn, i, args, q), daemon=daemon)
        p.start()
        errors.append(q)
        processes.append(p)
    context = ProcessContext(processes, errors)
    if not join:
        return context
    while not context.join():
        pass
    return None


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Starts nprocs processes running fn(i, *args) (i = 0 .. nprocs-1), as torch.multiprocessing.spawn."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
