"""oar.utils.data: datasets, splits, samplers, collation and DataLoader batching/shuffling, with the
TensorDataset fast path checked against per-sample collation."""
import collections

import numpy as np
import pytest

import oar
from oar.utils.data import (DataLoader, Dataset, IterableDataset, TensorDataset, Subset, ConcatDataset, random_split,
                            RandomSampler, BatchSampler, SequentialSampler, default_collate)

X = np.arange(10 * 3, dtype=np.float32).reshape(10, 3)
Y = np.arange(10, dtype=np.int64) * 10


def tds():
    return TensorDataset(oar.tensor(X), oar.tensor(Y))


class SlowTensorDataset(TensorDataset):
    """A subclass, so the loader takes the per-sample path."""


def test_tensor_dataset_indexing_and_errors():
    ds = tds()
    assert len(ds) == 10
    x, y = ds[3]
    assert np.array_equal(x.numpy(), X[3]) and y.item() == 30
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(oar.zeros(3, 2), oar.zeros(4))
    with pytest.raises(ValueError):
        TensorDataset()
    with pytest.raises(IndexError):
        ds[10]


@pytest.mark.parametrize("batch_size,drop_last,sizes", [(3, False, [3, 3, 3, 1]), (3, True, [3, 3, 3]),
                                                       (5, False, [5, 5]), (1, False, [1] * 10), (20, False, [10])])
def test_batch_sizes_and_drop_last(batch_size, drop_last, sizes):
    loader = DataLoader(tds(), batch_size=batch_size, drop_last=drop_last)
    batches = list(loader)
    assert [b[0].shape[0] for b in batches] == sizes and len(loader) == len(sizes)
    xs = np.concatenate([b[0].numpy() for b in batches])
    assert np.array_equal(xs, X[:len(xs)])  # sequential order
    assert all(isinstance(b, list) and len(b) == 2 for b in batches)
    assert batches[0][1].dtype == oar.int64 and batches[0][0].shape[1:] == (3,)


def test_shuffle_covers_every_sample_once_per_epoch():
    oar.manual_seed(0)
    loader = DataLoader(tds(), batch_size=4, shuffle=True)
    orders = []
    for _ in range(3):
        ys = np.concatenate([y.numpy() for _, y in loader])
        assert sorted(ys.tolist()) == Y.tolist()
        orders.append(ys.tolist())
        for xb, yb in loader:  # samples stay paired
            assert np.array_equal(xb.numpy()[:, 0] / 3 * 10, yb.numpy())
    assert orders[0] != orders[1] or orders[1] != orders[2]
    with_drop = DataLoader(tds(), batch_size=4, shuffle=True, drop_last=True)
    ys = np.concatenate([y.numpy() for _, y in with_drop])
    assert len(ys) == 8 and len(set(ys.tolist())) == 8


def test_shuffle_is_reproducible_with_seed_or_manual_seed():
    def epoch(**kw):
        return np.concatenate([y.numpy() for _, y in DataLoader(tds(), batch_size=3, shuffle=True, **kw)]).tolist()
    assert epoch(seed=5) == epoch(seed=5)
    assert epoch(generator=np.random.default_rng(9)) == epoch(generator=np.random.default_rng(9))
    oar.manual_seed(42)
    a = epoch()
    oar.manual_seed(42)
    assert epoch() == a


def test_fast_path_matches_per_sample_collation():
    fast = DataLoader(tds(), batch_size=4, shuffle=True, seed=3)
    slow = DataLoader(SlowTensorDataset(oar.tensor(X), oar.tensor(Y)), batch_size=4, shuffle=True, seed=3)
    assert fast._use_fast_path() and not slow._use_fast_path()
    for (fx, fy), (sx, sy) in zip(fast, slow):
        assert np.array_equal(fx.numpy(), sx.numpy()) and np.array_equal(fy.numpy(), sy.numpy())
    # a Subset of a TensorDataset also takes the fast path, with its indices mapped
    sub = DataLoader(Subset(tds(), [7, 2, 5]), batch_size=2)
    assert sub._use_fast_path()
    assert [y.numpy().tolist() for _, y in sub] == [[70, 20], [50]]


def test_prefetching_workers_give_the_same_batches():
    a = [y.numpy().tolist() for _, y in DataLoader(tds(), batch_size=3, shuffle=True, seed=1)]
    b = [y.numpy().tolist() for _, y in DataLoader(tds(), batch_size=3, shuffle=True, seed=1, num_workers=2)]
    assert a == b
    it = iter(DataLoader(tds(), batch_size=1, num_workers=1))
    next(it)  # abandoning an epoch early must not hang

    class Bad(Dataset):
        def __len__(self):
            return 4

        def __getitem__(self, i):
            if i == 2:
                raise KeyError("broken sample")
            return i
    with pytest.raises(KeyError, match="broken sample"):
        list(DataLoader(Bad(), batch_size=1, num_workers=2))


class Dicts(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"x": np.full((2,), i, dtype=np.float32), "label": i, "w": i * 0.5, "name": f"s{i}",
                "pair": (oar.tensor([i, i]), True)}


def test_default_collate_structures():
    b = next(iter(DataLoader(Dicts(), batch_size=3)))
    assert b["x"].shape == (3, 2) and b["x"].dtype == oar.float32
    assert b["label"].tolist() == [0, 1, 2] and b["label"].dtype == oar.int64
    assert b["w"].dtype == oar.float64 and b["w"].tolist() == [0.0, 0.5, 1.0]
    assert b["name"] == ["s0", "s1", "s2"]
    assert b["pair"][0].shape == (3, 2) and b["pair"][1].dtype == oar.bool
    Point = collections.namedtuple("Point", "a b")
    p = default_collate([Point(1, 2.0), Point(3, 4.0)])
    assert isinstance(p, Point) and p.a.tolist() == [1, 3]
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [1]])
    with pytest.raises(TypeError):
        default_collate([object(), object()])
    # custom collate_fn and batch_size=None (no batching)
    assert list(DataLoader(range(4), batch_size=2, collate_fn=lambda s: sum(s))) == [1, 5]
    assert [int(v) for v in DataLoader(range(3), batch_size=None)] == [0, 1, 2]


def test_subset_random_split_concat():
    ds = tds()
    sub = Subset(ds, [9, 0])
    assert len(sub) == 2 and sub[0][1].item() == 90
    parts = random_split(ds, [6, 4], generator=0)
    assert [len(p) for p in parts] == [6, 4]
    assert sorted(parts[0].indices + parts[1].indices) == list(range(10))
    fr = random_split(ds, [0.5, 0.3, 0.2], generator=1)
    assert [len(p) for p in fr] == [5, 3, 2]
    with pytest.raises(ValueError):
        random_split(ds, [5, 6])
    cat = ds + sub
    assert len(cat) == 12 and cat[11][1].item() == 0 and cat[-1][1].item() == 0
    assert isinstance(cat, ConcatDataset)


def test_samplers_and_iterable_dataset():
    assert list(SequentialSampler(range(3))) == [0, 1, 2]
    s = RandomSampler(range(6), generator=3)
    assert sorted(s) == list(range(6))
    assert len(list(RandomSampler(range(6), replacement=True, num_samples=20))) == 20
    assert list(BatchSampler(range(5), 2, True)) == [[0, 1], [2, 3]]
    loader = DataLoader(tds(), batch_sampler=BatchSampler(SequentialSampler(range(10)), 4, False))
    assert [b[1].shape[0] for b in loader] == [4, 4, 2]

    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))
    assert [b.tolist() for b in DataLoader(Stream(), batch_size=3)] == [[0, 1, 2], [3, 4, 5], [6]]


def test_loader_argument_errors():
    ds = tds()
    with pytest.raises(ValueError):
        DataLoader(ds, batch_size=0)
    with pytest.raises(ValueError):
        DataLoader(ds, shuffle=True, sampler=SequentialSampler(ds))
    with pytest.raises(ValueError):
        DataLoader(ds, batch_sampler=BatchSampler(range(10), 2, False), batch_size=4)
    with pytest.raises(ValueError):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(ValueError):
        BatchSampler(range(3), 2, drop_last="yes")
