"""oar.utils.data as PyTorch's package: the submodule paths (dataset, sampler, dataloader, distributed,
_utils.collate / _utils.worker) re-exporting one set of classes; WeightedRandomSampler (with and without
replacement, generators, PyTorch's argument errors); DistributedSampler (PyTorch 1.13's shares with
shuffle off, a hand-written reference with shuffle on, padding and drop_last, set_epoch, no process
group); ChainDataset and `+` on iterable datasets; StackDataset; and the new pieces in DataLoaders. A
compat-mode script importing every new torch path prints the same under oar as under PyTorch."""
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import oar
from oar.utils import data as D

from torch_ref import import_torch

HERE = os.path.dirname(os.path.abspath(__file__))
OAR_PATH = os.path.abspath(os.environ.get("TEST_OAR_PYTHONPATH") or os.path.join(HERE, "..", "..", "build", "python"))


@pytest.fixture(scope="module")
def torch():
    return import_torch()


# ---------------------------------------------------------------- module layout
def test_submodule_paths_share_the_classes():
    from oar.utils.data.sampler import (SubsetRandomSampler, WeightedRandomSampler, BatchSampler, RandomSampler,
                                        SequentialSampler, Sampler)
    from oar.utils.data.dataset import (Dataset, IterableDataset, TensorDataset, Subset, ConcatDataset, ChainDataset,
                                        StackDataset, random_split)
    from oar.utils.data.dataloader import DataLoader, default_collate, get_worker_info
    from oar.utils.data.distributed import DistributedSampler
    from oar.utils.data._utils.collate import default_collate as dc, default_convert
    from oar.utils.data._utils.worker import get_worker_info as gwi
    for obj in (SubsetRandomSampler, WeightedRandomSampler, BatchSampler, RandomSampler, SequentialSampler, Sampler,
                Dataset, IterableDataset, TensorDataset, Subset, ConcatDataset, ChainDataset, StackDataset,
                random_split, DataLoader, default_collate, get_worker_info, DistributedSampler, default_convert):
        assert getattr(D, obj.__name__) is obj
    assert dc is D.default_collate and gwi is D.get_worker_info and D.get_worker_info() is None
    assert oar.utils.data.sampler.RandomSampler is D.RandomSampler
    assert set(D.__all__) >= {"WeightedRandomSampler", "DistributedSampler", "ChainDataset", "StackDataset"}


# ---------------------------------------------------------------- WeightedRandomSampler
def test_weighted_with_replacement_follows_the_weights():
    w = [1.0, 0.0, 3.0, 6.0]
    draws = list(D.WeightedRandomSampler(w, 20000, generator=3))
    assert len(draws) == 20000 and set(draws) <= {0, 2, 3}  # a zero weight is never drawn
    freq = np.bincount(draws, minlength=4) / len(draws)
    np.testing.assert_allclose(freq, np.array(w) / 10, atol=0.015)
    s = D.WeightedRandomSampler(oar.tensor([0.5, 0.5]), 3)
    assert len(s) == 3 and s.weights.dtype == oar.float64 and s.weights.tolist() == [0.5, 0.5]
    assert D.WeightedRandomSampler(np.array([2, 1]), 4).replacement is True


def test_weighted_without_replacement():
    s = D.WeightedRandomSampler([1.0, 2.0, 3.0, 4.0, 0.5], 5, replacement=False, generator=0)
    for _ in range(3):
        assert sorted(s) == [0, 1, 2, 3, 4]  # every index once
    # successive draws: the first index is drawn with probability weight / total
    firsts = [next(iter(D.WeightedRandomSampler([1.0, 9.0], 2, replacement=False, generator=i)))
              for i in range(3000)]
    assert abs(np.mean(np.array(firsts) == 1) - 0.9) < 0.02
    assert sorted(D.WeightedRandomSampler([0.0, 1.0, 1.0], 2, replacement=False)) == [1, 2]
    for w, k, replacement, msg in [([0.0, 1.0, 1.0], 3, False, "not enough non-negative category"),
                                   ([1.0, 1.0], 3, False, "cannot sample n_sample > prob_dist.size"),
                                   ([1.0, -1.0], 1, True, "probability entry < 0"),
                                   ([0.0, 0.0], 1, True, "sum of probabilities <= 0"),
                                   ([1.0, float("nan")], 1, True, "infinity or NaN")]:
        s = D.WeightedRandomSampler(w, k, replacement=replacement)  # as in PyTorch: checked when drawing
        with pytest.raises(RuntimeError, match=msg):
            list(s)


def test_weighted_generators_and_manual_seed():
    a = D.WeightedRandomSampler([1, 2, 3, 4], 12, generator=np.random.default_rng(5))
    b = D.WeightedRandomSampler([1, 2, 3, 4], 12, generator=np.random.default_rng(5))
    ea, eb = [list(a), list(a)], [list(b), list(b)]
    assert ea == eb and ea[0] != ea[1]  # a persistent stream: the same run twice, new draws each epoch
    g = oar.Generator()
    g.manual_seed(7)
    assert list(D.WeightedRandomSampler([1, 2, 3], 9, generator=g)) == \
        list(D.WeightedRandomSampler([1, 2, 3], 9, generator=g))
    oar.manual_seed(1)
    x = list(D.WeightedRandomSampler([1, 2, 3], 9))
    oar.manual_seed(1)
    assert list(D.WeightedRandomSampler([1, 2, 3], 9)) == x


@pytest.mark.parametrize("args", [dict(weights=[1, 2], num_samples=0), dict(weights=[1, 2], num_samples=True),
                                  dict(weights=[1, 2], num_samples=2.0), dict(weights=[1, 2], num_samples=-3),
                                  dict(weights=[1, 2], num_samples=2, replacement=1),
                                  dict(weights=[[1, 2], [3, 4]], num_samples=2)])
def test_weighted_argument_errors_match_pytorch(torch, args):
    with pytest.raises(ValueError) as want:
        torch.utils.data.WeightedRandomSampler(**args)
    with pytest.raises(ValueError) as got:
        D.WeightedRandomSampler(**args)
    assert str(got.value) == str(want.value)


# ---------------------------------------------------------------- DistributedSampler
SIZES = [(10, 3), (9, 3), (7, 4), (2, 5), (1, 2), (12, 1)]


def ref_distributed(n, replicas, rank, shuffle, seed, epoch, drop_last):
    """The shares written out: the epoch's list, padded with its start (or cut), then every replicas-th."""
    if shuffle:
        g = oar.Generator()
        g.manual_seed(seed + epoch)
        order = oar.randperm(n, generator=g).tolist()
    else:
        order = list(range(n))
    if drop_last:
        per = n // replicas
        order = order[:per * replicas]
    else:
        per = -(-n // replicas)
        while len(order) < per * replicas:
            order = order + order[:per * replicas - len(order)]
    return order[rank::replicas]


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("n, replicas", SIZES)
def test_distributed_without_shuffle_matches_pytorch(torch, n, replicas, drop_last):
    for rank in range(replicas):
        want = torch.utils.data.DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False,
                                                   drop_last=drop_last)
        got = D.DistributedSampler(range(n), num_replicas=replicas, rank=rank, shuffle=False, drop_last=drop_last)
        assert list(got) == list(want) and len(got) == len(want)
        assert (got.num_samples, got.total_size) == (want.num_samples, want.total_size)


@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("n, replicas", SIZES)
def test_distributed_shuffle_shares(n, replicas, drop_last):
    for epoch in (0, 3):
        shares = []
        for rank in range(replicas):
            s = D.DistributedSampler(list(range(n)), num_replicas=replicas, rank=rank, seed=11, drop_last=drop_last)
            s.set_epoch(epoch)
            shares.append(list(s))
            assert shares[-1] == ref_distributed(n, replicas, rank, True, 11, epoch, drop_last)
            assert len(shares[-1]) == len(s)
            assert list(s) == shares[-1]  # the same epoch gives the same order
        flat = [i for share in shares for i in share]
        if drop_last:
            assert len(set(flat)) == len(flat) == (n // replicas) * replicas  # disjoint, nothing padded
        else:
            assert set(flat) == set(range(n)) and len(flat) == -(-n // replicas) * replicas
    s = D.DistributedSampler(range(50), num_replicas=2, rank=0)
    e0 = list(s)
    s.set_epoch(1)
    assert list(s) != e0 and sorted(set(list(s) + list(D.DistributedSampler(range(50), 2, 1)))) != []


def test_distributed_errors_and_loader():
    with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
        D.DistributedSampler(range(4))
    with pytest.raises(RuntimeError, match="Default process group has not been initialized"):
        D.DistributedSampler(range(4), num_replicas=2)
    with pytest.raises(ValueError, match=r"Invalid rank 2, rank should be in the interval \[0, 1\]"):
        D.DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="Invalid rank -1"):
        D.DistributedSampler(range(4), num_replicas=2, rank=-1)
    x = oar.arange(10.0)
    seen = []
    for rank in range(2):
        sampler = D.DistributedSampler(D.TensorDataset(x), num_replicas=2, rank=rank, seed=3)
        loader = D.DataLoader(D.TensorDataset(x), batch_size=2, sampler=sampler)
        assert len(loader) == 3
        seen += [v for (b,) in loader for v in b.tolist()]
    assert sorted(seen) == list(range(10))


# ---------------------------------------------------------------- datasets
class Stream(D.IterableDataset):
    def __init__(self, lo, hi):
        self.lo, self.hi = lo, hi

    def __iter__(self):
        return iter(range(self.lo, self.hi))

    def __len__(self):
        return self.hi - self.lo


class Endless(D.IterableDataset):
    def __iter__(self):
        return iter([7, 8])


def test_chain_dataset_and_iterable_plus(torch):
    a, b, c = Stream(0, 3), Stream(10, 12), Stream(20, 21)
    ab = a + b
    assert isinstance(ab, D.ChainDataset) and list(ab) == [0, 1, 2, 10, 11] and len(ab) == 5
    assert list(ab + c) == [0, 1, 2, 10, 11, 20] and list(ab) == list(ab)  # iterable again
    chain = D.ChainDataset([a, Endless()])
    assert list(chain) == [0, 1, 2, 7, 8]
    with pytest.raises(TypeError):
        len(chain)  # Endless has no length
    with pytest.raises(TypeError, match="ChainDataset only supports IterableDataset"):
        list(D.ChainDataset([a, D.TensorDataset(oar.zeros(2))]))
    assert isinstance(D.TensorDataset(oar.zeros(2)) + D.TensorDataset(oar.ones(3)), D.ConcatDataset)
    batches = [b.tolist() for b in D.DataLoader(a + b + c, batch_size=4)]
    assert batches == [[0, 1, 2, 10], [11, 20]]

    class TStream(torch.utils.data.IterableDataset):
        def __init__(self, lo, hi):
            self.lo, self.hi = lo, hi

        def __iter__(self):
            return iter(range(self.lo, self.hi))

        def __len__(self):
            return self.hi - self.lo

    t = TStream(0, 3) + TStream(10, 12) + TStream(20, 21)
    assert list(t) == list(a + b + c) and len(t) == len(a + b + c)


def test_stack_dataset():
    x, y = D.TensorDataset(oar.arange(4.0)), [10, 11, 12, 13]
    s = D.StackDataset(x, y)
    assert len(s) == 4 and s[2][1] == 12 and s[2][0][0].item() == 2.0
    d = D.StackDataset(inp=x, target=y)
    assert set(d[1]) == {"inp", "target"} and d[1]["target"] == 11
    batch = next(iter(D.DataLoader(d, batch_size=3)))
    assert batch["target"].tolist() == [10, 11, 12]
    with pytest.raises(ValueError, match="Size mismatch"):
        D.StackDataset(x, [1, 2])
    with pytest.raises(ValueError):
        D.StackDataset(x, t=y)


def test_random_split_warns_on_an_empty_fraction():
    with pytest.warns(UserWarning, match="Length of split at index 2 is 0"):
        parts = D.random_split(range(5), [0.5, 0.5, 0.0], generator=1)
    assert [len(p) for p in parts] == [3, 2, 0]  # the remainder goes round-robin from the first split


def test_subset_random_sampler_and_batch_sampler_in_loaders():
    x = oar.arange(20.0)
    sampler = D.SubsetRandomSampler(range(5, 15), generator=2)
    assert sampler.generator == 2 and len(sampler) == 10
    got = sorted(v for (b,) in D.DataLoader(D.TensorDataset(x), batch_size=3, sampler=sampler) for v in b.tolist())
    assert got == list(range(5, 15))
    ws = D.WeightedRandomSampler([0.0] * 10 + [1.0] * 10, 30, generator=4)
    bs = D.BatchSampler(ws, batch_size=8, drop_last=True)
    out = [b.tolist() for (b,) in D.DataLoader(D.TensorDataset(x), batch_sampler=bs)]
    assert len(out) == 3 and all(len(b) == 8 and min(b) >= 10 for b in out)


# ---------------------------------------------------------------- compat mode: the torch paths
COMPAT_SCRIPT = """
    import warnings
    import torch
    from torch.utils.data.sampler import (SubsetRandomSampler, WeightedRandomSampler, BatchSampler, RandomSampler,
                                          SequentialSampler, Sampler)
    from torch.utils.data.dataset import Dataset, TensorDataset, Subset, ConcatDataset, random_split
    from torch.utils.data.dataloader import DataLoader, default_collate
    from torch.utils.data.distributed import DistributedSampler
    from torch.utils.data import ChainDataset, IterableDataset, get_worker_info
    import torch.utils.data
    import torch.optim.swa_utils
    from torch.optim.swa_utils import AveragedModel, SWALR, update_bn
    from torch.nn.utils.stateless import functional_call
    from torch.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters
    from torch.nn.utils.fusion import fuse_conv_bn_eval, fuse_linear_bn_eval
    from torch.nn.utils import skip_init

    print("collate", torch.utils.data.default_collate is default_collate, get_worker_info())
    print("batches", list(BatchSampler(SequentialSampler(range(7)), 3, False)))
    print("dist", [list(DistributedSampler(range(10), num_replicas=3, rank=r, shuffle=False)) for r in range(3)])
    print("weighted", len(WeightedRandomSampler([1.0, 2.0], 5)), sorted(WeightedRandomSampler([0, 1, 1], 2, False)))
    print("concat", len(TensorDataset(torch.zeros(3)) + TensorDataset(torch.zeros(2))))

    class S(IterableDataset):
        def __init__(self, n):
            self.n = n
        def __iter__(self):
            return iter(range(self.n))
    print("chain", list(S(2) + S(3)))

    torch.manual_seed(0)
    lin = torch.nn.Linear(3, 2)
    w = torch.arange(6.0).reshape(2, 3).requires_grad_()
    out = functional_call(lin, {"weight": w, "bias": torch.ones(2)}, (torch.ones(1, 3),))
    out.sum().backward()
    print("functional_call", out.tolist(), w.grad.tolist(), lin.weight.grad)
    print("vector", parameters_to_vector(lin.parameters()).shape[0])
    print("skip_init", tuple(skip_init(torch.nn.Linear, 3, 4).weight.shape))

    p = torch.nn.Parameter(torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64))
    opts = [torch.optim.Rprop([p], lr=0.1), torch.optim.ASGD([p], lr=0.1, t0=1)]
    for g in ([1.0, 1.0, -1.0], [1.0, -1.0, -1.0], [0.5, 2.0, 1.0]):
        for opt in opts:
            p.grad = torch.tensor(g, dtype=torch.float64)
            opt.step()
    print("optim", [round(v, 5) for v in p.tolist()])
    sched = SWALR(opts[0], swa_lr=0.01, anneal_epochs=2)
    lrs = []
    for _ in range(3):
        opts[0].step()
        sched.step()
        lrs.append(round(opts[0].param_groups[0]["lr"], 6))
    print("swalr", lrs)
    swa = AveragedModel(lin)
    swa.update_parameters(lin)
    print("swa", int(swa.n_averaged))
"""


def test_compat_script_gives_pytorchs_output(tmp_path):
    path = tmp_path / "paths.py"
    path.write_text(textwrap.dedent(COMPAT_SCRIPT))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([OAR_PATH] + ([os.environ["PYTHONPATH"]]
                                                                     if os.environ.get("PYTHONPATH") else [])))
    got = subprocess.run([sys.executable, "-m", "oar.compat", str(path)], env=env, capture_output=True, text=True,
                         timeout=300)
    assert got.returncode == 0, got.stderr
    assert "dist [[0, 3, 6, 9], [1, 4, 7, 0], [2, 5, 8, 1]]" in got.stdout and "chain [0, 1, 0, 1, 2]" in got.stdout
    # the same script under PyTorch, where an interpreter here has it
    for python in ("/usr/bin/python3",):
        if not os.path.exists(python) or subprocess.run([python, "-c", "import torch"], capture_output=True,
                                                         timeout=120).returncode:
            continue
        want = subprocess.run([python, str(path)], capture_output=True, text=True, timeout=300,
                              env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
        assert want.returncode == 0, want.stderr
        assert got.stdout == want.stdout
        return
    pytest.skip("no interpreter with PyTorch to compare the output with")
