"""DataLoader(num_workers=N): worker processes (not threads), batches equal to num_workers=0 and in order,
worker_init_fn / get_worker_info / per-worker seeds, errors and dead workers surfacing in the main process,
persistent workers, IterableDataset sharding, dtypes and structures through shared memory, and clean shutdown."""
import collections
import gc
import glob
import multiprocessing
import os
import random
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import oar
from oar.utils import _shared
from oar.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset, get_worker_info

_init_id = None  # set by worker_init_fn inside a worker
Pair = collections.namedtuple("Pair", "x y")


def _record_init(worker_id):
    global _init_id
    _init_id = worker_id


class Squares(Dataset):
    """Sample i: (i, i*i as float32 tensor[2]); picklable, so it also works with spawn."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        return i, oar.tensor([float(i * i), -float(i)])


class WhoAmI(Dataset):
    """Sample i reports the process and worker that loaded it, and what worker_init_fn left behind."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = get_worker_info()
        return {"index": i, "pid": os.getpid(), "id": info.id, "num_workers": info.num_workers,
                "seed": info.seed, "init": -1 if _init_id is None else _init_id, "same_type": isinstance(info.dataset, WhoAmI)}


class Randoms(Dataset):
    """Draws from every generator a worker seeds: oar's, Python's random, NumPy's global one."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return {"oar": oar.rand(1), "py": random.random(), "np": float(np.random.rand()),
                "seed": get_worker_info().seed, "id": get_worker_info().id}


class Failing(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 3:
            raise_bad_sample(i)
        return i


def raise_bad_sample(i):
    raise ValueError(f"sample {i} is corrupt")


class Dying(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        if i == 2:
            os._exit(3)
        return i


class Range(IterableDataset):
    """0..n-1, split between workers by get_worker_info() as in PyTorch's docs."""

    def __init__(self, n):
        self.n = n

    def __iter__(self):
        info = get_worker_info()
        if info is None:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


class Mixed(Dataset):
    """Tensors of several dtypes inside a dict and a tuple, plus a plain string."""

    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"x": oar.tensor([[i, i + 0.5]]), "y": oar.tensor(i * 1000000007),
                "pair": (oar.tensor([i % 2 == 0, True]), oar.tensor([i, -i], dtype=oar.int32)),
                "half": oar.tensor([i / 4], dtype=oar.bfloat16), "empty": oar.zeros(0, 3),
                "name": f"s{i}"}


class Meeting(Dataset):
    """Each sample waits at a barrier for a sample loaded by another worker: passes only if workers run at once."""

    def __init__(self, barrier):
        self.barrier = barrier

    def __len__(self):
        return 4

    def __getitem__(self, i):
        self.barrier.wait(timeout=20)
        return os.getpid()


class Compute(Dataset):
    """Runs parallel kernels (matmul, random fill) inside the worker."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        x = oar.randn(128, 128)
        return (x @ x).relu().sum()


class Slow(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        time.sleep(0.6)
        return i


def _values(batch):
    """A batch as plain Python values, for comparisons."""
    if isinstance(batch, oar.Tensor):
        return (str(batch.dtype), batch.tolist())
    if isinstance(batch, dict):
        return {k: _values(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch)(_values(b) for b in batch)
    return batch


def _no_children():
    gc.collect()
    deadline = time.monotonic() + 5
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.05)
    return multiprocessing.active_children() == []


def _no_segments():
    return glob.glob(f"/dev/shm/oar{os.getpid()}_*") == []


def test_batches_equal_the_main_process_ones_in_order():
    main = [_values(b) for b in DataLoader(Squares(), batch_size=3, shuffle=True, seed=7)]
    workers = [_values(b) for b in DataLoader(Squares(), batch_size=3, shuffle=True, seed=7, num_workers=2)]
    assert workers == main
    assert [b[0] for b in main] != [("int64", [0, 1, 2]), ("int64", [3, 4, 5])]  # really shuffled
    assert sorted(sum((b[0][1] for b in workers), [])) == list(range(10))
    # batch_size=None: samples one by one, converted but not collated
    single = list(DataLoader(Squares(), batch_size=None, num_workers=2))
    assert [s[0] for s in single] == list(range(10)) and single[4][1].tolist() == [16.0, -4.0]
    assert _no_children() and _no_segments()


def test_workers_are_processes_with_init_fn_and_worker_info():
    batches = list(DataLoader(WhoAmI(), batch_size=2, num_workers=2, worker_init_fn=_record_init))
    samples = [dict(zip(b, row)) for b in batches for row in zip(*(v.tolist() for v in b.values()))]
    assert [s["index"] for s in samples] == list(range(8))
    pids = {s["pid"] for s in samples}
    assert len(pids) == 2 and os.getpid() not in pids
    # round-robin: batch k is loaded by worker k % 2, whose worker_init_fn ran with its id
    assert [s["id"] for s in samples] == [0, 0, 1, 1, 0, 0, 1, 1]
    assert all(s["init"] == s["id"] and s["num_workers"] == 2 and s["same_type"] for s in samples)
    seeds = {s["id"]: s["seed"] for s in samples}
    assert seeds[1] == seeds[0] + 1
    assert get_worker_info() is None
    assert _no_children()


def test_workers_run_concurrently():
    barrier = multiprocessing.get_context("fork").Barrier(2)
    pids = [p for b in DataLoader(Meeting(barrier), batch_size=1, num_workers=2) for p in b.tolist()]
    assert len(set(pids)) == 2 and os.getpid() not in pids


def test_workers_forked_after_parallel_kernels_do_not_hang():
    a = oar.randn(256, 256)
    (a @ a).sum().item()  # the parent's OpenMP thread pool is up; a forked worker must not wait for it
    out = list(DataLoader(Compute(), batch_size=2, num_workers=2, timeout=20))
    assert len(out) == 2 and out[0].shape == (2,)


def test_per_worker_seeds_are_reproducible():
    def draws(seed):
        out = {}
        for b in DataLoader(Randoms(), batch_size=1, num_workers=2, seed=seed):
            out[b["id"].item()] = (b["oar"].tolist(), b["py"].tolist(), b["np"].tolist(), b["seed"].item())
        return out
    a, b, c = draws(3), draws(3), draws(4)
    assert a == b and a != c
    assert a[0][:3] != a[1][:3]  # each worker has its own streams
    assert a[1][3] == a[0][3] + 1


def test_worker_exception_keeps_type_and_traceback():
    with pytest.raises(ValueError) as err:
        list(DataLoader(Failing(), batch_size=2, num_workers=2))
    text = str(err.value)
    del err  # its traceback holds the iterator, and so the workers
    assert "Caught ValueError in DataLoader worker process 1" in text
    assert "Original Traceback" in text and "raise_bad_sample" in text and "sample 3 is corrupt" in text
    assert _no_children()
    # as in PyTorch, the epoch can go on past a failed batch
    it = iter(DataLoader(Failing(), batch_size=2, num_workers=2))
    assert next(it).tolist() == [0, 1]
    with pytest.raises(ValueError):
        next(it)
    assert next(it).tolist() == [4, 5]
    with pytest.raises(StopIteration):
        next(it)
    assert _no_children()


def test_unpicklable_exception_type_becomes_runtime_error():
    class LocalError(Exception):  # a local class can't be pickled back to the main process
        pass

    class Bad(Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            raise LocalError("only here")
    with pytest.raises(RuntimeError, match="Caught LocalError in DataLoader worker process 0(.|\n)*only here"):
        next(iter(DataLoader(Bad(), num_workers=1)))
    assert _no_children()


def test_dead_worker_raises_instead_of_hanging():
    start = time.monotonic()
    with pytest.raises(RuntimeError, match=r"DataLoader worker 1 \(pid \d+\) exited unexpectedly with exit code 3"):
        list(DataLoader(Dying(), batch_size=2, num_workers=2))
    assert time.monotonic() - start < 10
    assert _no_children() and _no_segments()


def test_timeout():
    with pytest.raises(RuntimeError, match="timed out after 0.2 seconds"):
        next(iter(DataLoader(Slow(), num_workers=1, timeout=0.2)))
    assert _no_children()
    assert [b.tolist() for b in DataLoader(Slow(), num_workers=2, timeout=5)] == [[0], [1]]


def test_persistent_workers_survive_epochs():
    loader = DataLoader(WhoAmI(), batch_size=4, num_workers=2, persistent_workers=True)
    epochs = [[(b["index"].tolist(), set(b["pid"].tolist())) for b in loader] for _ in range(2)]
    assert epochs[0][0][0] == [0, 1, 2, 3] and [e[0] for e in epochs[0]] == [e[0] for e in epochs[1]]
    assert [e[1] for e in epochs[0]] == [e[1] for e in epochs[1]]  # the same processes
    it = iter(loader)
    next(it)  # an abandoned epoch: the next one must not see its leftovers
    assert [b["index"].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert len(multiprocessing.active_children()) == 2
    del it, loader
    assert _no_children() and _no_segments()
    # without persistent_workers each epoch starts fresh processes
    loader = DataLoader(WhoAmI(), batch_size=4, num_workers=2)
    pids = [{p for b in loader for p in b["pid"].tolist()} for _ in range(2)]
    assert not pids[0] & pids[1]


def test_iterable_dataset_sharded_by_worker():
    for batch_size in (None, 3):
        out = list(DataLoader(Range(11), batch_size=batch_size, num_workers=2))
        got = [v for b in out for v in (b if isinstance(b, list) else b.tolist())] if batch_size else out
        assert sorted(got) == list(range(11))
    # persistent workers restart their iterator each epoch; drop_last drops each worker's short tail
    loader = DataLoader(Range(11), batch_size=2, num_workers=2, persistent_workers=True, drop_last=True)
    for _ in range(2):
        assert sorted(v for b in loader for v in b.tolist()) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 10]  # no 9
    del loader
    assert _no_children()


def test_dtypes_and_structures_cross_intact():
    main = [_values(b) for b in DataLoader(Mixed(), batch_size=2)]
    work = [_values(b) for b in DataLoader(Mixed(), batch_size=2, num_workers=2, pin_memory=True)]
    assert work == main
    first = next(iter(DataLoader(Mixed(), batch_size=2, num_workers=1)))
    assert first["x"].dtype == oar.float32 and first["x"].shape == (2, 1, 2)
    assert first["y"].dtype == oar.int64 and first["y"].tolist() == [0, 1000000007]
    assert first["pair"][0].dtype == oar.bool and first["pair"][0].tolist() == [[True, True], [False, True]]
    assert first["pair"][1].dtype == oar.int32 and first["half"].dtype == oar.bfloat16
    assert first["empty"].shape == (2, 0, 3) and first["name"] == ["s0", "s1"]
    # a collate_fn's own structure comes back as it was: tuple, namedtuple, OrderedDict
    def collate(samples):
        xs = oar.stack([s["x"] for s in samples])
        return (Pair(xs, [s["name"] for s in samples]), collections.OrderedDict(y=oar.stack([s["y"] for s in samples])))
    got = next(iter(DataLoader(Mixed(), batch_size=2, num_workers=1, collate_fn=collate)))
    assert type(got) is tuple and type(got[0]) is Pair and type(got[1]) is collections.OrderedDict
    assert got[0].x.tolist() == [[[0.0, 0.5]], [[1.0, 1.5]]] and got[0].y == ["s0", "s1"]
    assert got[1]["y"].tolist() == [0, 1000000007]
    assert _no_children() and _no_segments()


def test_batches_travel_in_shared_memory():
    batch = {"a": oar.tensor([[1.5, 2.5]]), "b": (oar.tensor([7]), "text")}
    name = f"/oar{os.getpid()}_test_0_1"
    packed = _shared.pack(batch, name)
    assert packed.name == name and packed.arrays is None  # tensors went to the segment, not the pickle
    assert os.path.exists("/dev/shm" + name)
    out = packed.unpack()
    assert not os.path.exists("/dev/shm" + name)  # unlinked at once; the tensors keep the mapping
    assert out["a"].tolist() == [[1.5, 2.5]] and out["b"][0].tolist() == [7] and out["b"][1] == "text"
    out["a"] += 1  # the memory is private to this process now, and writable
    assert out["a"].tolist() == [[2.5, 3.5]]


def test_deleting_an_unfinished_iterator_stops_the_workers():
    it = iter(DataLoader(Squares(), batch_size=1, num_workers=2, prefetch_factor=3))
    assert next(it)[0].tolist() == [0]
    assert len(multiprocessing.active_children()) == 2
    del it
    assert _no_children() and _no_segments()


def test_in_order_false_returns_every_batch():
    got = [b[0].tolist() for b in DataLoader(Squares(), batch_size=2, num_workers=2, in_order=False)]
    assert sorted(v for b in got for v in b) == list(range(10))


def test_worker_init_fn_takes_tensor_datasets_to_processes():
    ds = TensorDataset(oar.tensor(np.arange(6, dtype=np.float32)), oar.tensor(np.arange(6) * 2))
    seen = []
    loader = DataLoader(ds, batch_size=4, num_workers=2, worker_init_fn=lambda i: seen.append(i))
    assert [(x.tolist(), y.tolist()) for x, y in loader] == [([0.0, 1.0, 2.0, 3.0], [0, 2, 4, 6]),
                                                              ([4.0, 5.0], [8, 10])]
    assert seen == []  # it ran in the worker processes, not here


def test_spawn_context_with_a_picklable_dataset():
    loader = DataLoader(Squares(), batch_size=4, num_workers=2, multiprocessing_context="spawn")
    assert [b[0].tolist() for b in loader] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    with pytest.raises(ValueError):
        DataLoader(Squares(), num_workers=2, multiprocessing_context="no-such-method")


def test_interpreter_exit_with_live_workers_does_not_hang():
    script = textwrap.dedent("""
        import sys
        sys.path[:] = {path!r}
        import oar
        from oar.utils.data import DataLoader
        from test_dataloader_workers import Squares
        it = iter(DataLoader(Squares(), batch_size=1, num_workers=2))
        print(next(it)[0].tolist(), flush=True)
        # exits with the workers running and the iterator alive
    """).format(path=[os.path.dirname(os.path.abspath(__file__))] + sys.path)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[0]"
    assert "Traceback" not in done.stderr and "leaked" not in done.stderr


def test_fork_while_a_thread_prefetcher_is_alive_does_not_hang():
    # A TensorDataset loader's C++ prefetcher threads are waiting when the worker processes fork; the
    # forked copy of that prefetcher must not wait for threads that do not exist in the child.
    script = textwrap.dedent("""
        import gc, sys
        sys.path.insert(0, sys.argv[1])
        import oar
        from oar.utils.data import DataLoader, Dataset, TensorDataset
        gc.disable()  # the abandoned iterator below stays uncollected garbage until a worker collects it
        fast = DataLoader(TensorDataset(oar.arange(64.0).reshape(64, 1)), batch_size=2, num_workers=2)
        it = iter(fast)
        next(it)  # the prefetcher threads now wait for the consumer
        cycle = [it]
        cycle.append(cycle)
        del it, cycle
        class Squares(Dataset):
            def __len__(self):
                return 8
            def __getitem__(self, i):
                gc.collect()  # in the worker: closes the forked copy of the prefetcher
                return oar.tensor([float(i * i)])
        got = [b.tolist() for b in DataLoader(Squares(), batch_size=4, num_workers=2)]
        assert got == [[[0.0], [1.0], [4.0], [9.0]], [[16.0], [25.0], [36.0], [49.0]]], got
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", script, os.path.dirname(oar.__path__[0])],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr
