"""oar.optim.lr_scheduler: every scheduler's learning-rate (and momentum / beta1) sequence over 40 steps
against PyTorch's when it can be imported and against closed forms (OneCycleLR's phases, SGDR restarts with
fractional epochs, the triangular CLR formula, polynomial decay, SequentialLR / ChainedScheduler as
compositions); state_dict round trips, also through oar.save / oar.load, that continue like an
uninterrupted run; argument errors."""
import math
import warnings

import numpy as np
import pytest

import oar
from oar import nn, optim
from oar.optim import lr_scheduler as oar_sched

from torch_ref import import_torch

STEPS = 40


@pytest.fixture(scope="module")
def torch():
    return import_torch()


# Each config: (optimizer class name, its options, one or two param groups' lrs, scheduler factory).
# The factory gets the scheduler module (oar's or PyTorch's) and the optimizer.
def _seq(m, o):
    return m.SequentialLR(o, [m.LinearLR(o, start_factor=0.1, total_iters=5), m.CosineAnnealingLR(o, T_max=20)],
                          milestones=[5])


def _seq3(m, o):
    return m.SequentialLR(o, [m.ConstantLR(o, factor=0.5, total_iters=2), m.ExponentialLR(o, gamma=0.9),
                              m.StepLR(o, step_size=5, gamma=0.5)], milestones=[4, 12])


def _chain(m, o):
    return m.ChainedScheduler([m.ConstantLR(o, factor=0.1, total_iters=5), m.ExponentialLR(o, gamma=0.9)])


def _chain_seq(m, o):  # a SequentialLR inside a ChainedScheduler
    return m.ChainedScheduler([_seq(m, o), m.MultiplicativeLR(o, lambda e: 0.99)])


CONFIGS = {
    "OneCycle-cos-sgd": ("SGD", dict(momentum=0.9), [0.1],
                         lambda m, o: m.OneCycleLR(o, max_lr=0.1, total_steps=STEPS + 1)),
    "OneCycle-linear-3phase-2groups": ("SGD", dict(momentum=0.9), [0.1, 0.05],
                                       lambda m, o: m.OneCycleLR(o, max_lr=[0.1, 0.05], total_steps=STEPS + 1,
                                                                 anneal_strategy="linear", three_phase=True,
                                                                 pct_start=0.25, div_factor=10.0,
                                                                 final_div_factor=100.0, base_momentum=[0.8, 0.7],
                                                                 max_momentum=0.95)),
    "OneCycle-adam-betas": ("Adam", {}, [0.01],
                            lambda m, o: m.OneCycleLR(o, max_lr=0.01, epochs=5, steps_per_epoch=9)),
    "OneCycle-no-momentum": ("Adam", {}, [0.01],
                             lambda m, o: m.OneCycleLR(o, max_lr=0.02, total_steps=50, cycle_momentum=False,
                                                       pct_start=0.5)),
    "WarmRestarts-mult2": ("SGD", {}, [0.1], lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=5, T_mult=2,
                                                                                          eta_min=0.001)),
    "WarmRestarts-7": ("SGD", {}, [0.1, 0.3], lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=7)),
    "Sequential-linear-cosine": ("SGD", {}, [0.1], _seq),
    "Sequential-three": ("SGD", {}, [0.1, 0.2], _seq3),
    "Chained": ("SGD", {}, [1.0], _chain),
    "Chained-sequential": ("SGD", {}, [0.1], _chain_seq),
    "Cyclic-triangular": ("SGD", dict(momentum=0.9), [0.1],
                          lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4)),
    "Cyclic-triangular2": ("SGD", dict(momentum=0.9), [0.1, 0.1],
                           lambda m, o: m.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.2], step_size_up=3,
                                                   step_size_down=5, mode="triangular2", base_momentum=0.7)),
    "Cyclic-exp_range": ("SGD", dict(momentum=0.9), [0.1],
                         lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=5, mode="exp_range",
                                                 gamma=0.95)),
    "Cyclic-scale_fn-no-momentum": ("SGD", {}, [0.1],
                                    lambda m, o: m.CyclicLR(o, base_lr=0.01, max_lr=0.1, step_size_up=4,
                                                            scale_fn=lambda x: 0.9 ** x, scale_mode="iterations",
                                                            cycle_momentum=False)),
    "Cyclic-adam-betas": ("Adam", {}, [0.01],  # cycles beta1: PyTorch >= 2.2 only
                          lambda m, o: m.CyclicLR(o, base_lr=0.001, max_lr=0.01, step_size_up=6)),
    "Polynomial": ("SGD", {}, [0.1], lambda m, o: m.PolynomialLR(o, total_iters=20, power=2.0)),
    "Polynomial-linear": ("SGD", {}, [0.1], lambda m, o: m.PolynomialLR(o, total_iters=25)),
    "Multiplicative": ("SGD", {}, [0.1, 0.2], lambda m, o: m.MultiplicativeLR(o, lambda e: 0.95)),
    "Lambda": ("SGD", {}, [0.1], lambda m, o: m.LambdaLR(o, lambda e: 1.0 / (1 + e))),
    "Constant": ("SGD", {}, [0.1], lambda m, o: m.ConstantLR(o, factor=0.25, total_iters=6)),
    "Linear": ("SGD", {}, [0.1], lambda m, o: m.LinearLR(o, start_factor=0.2, end_factor=0.9, total_iters=10)),
    "Exponential": ("SGD", {}, [0.1], lambda m, o: m.ExponentialLR(o, gamma=0.93)),
    "Step": ("SGD", {}, [0.1], lambda m, o: m.StepLR(o, step_size=7, gamma=0.3)),
    "MultiStep": ("SGD", {}, [0.1], lambda m, o: m.MultiStepLR(o, milestones=[3, 10, 10, 25], gamma=0.5)),
    "CosineAnnealing": ("SGD", {}, [0.1], lambda m, o: m.CosineAnnealingLR(o, T_max=12, eta_min=0.01)),
}


def make(mod, optim_mod, tensor, name):
    opt_name, kw, lrs, factory = CONFIGS[name]
    groups = [{"params": [tensor()], "lr": lr} for lr in lrs]
    opt = getattr(optim_mod, opt_name)(groups, lr=lrs[0], **kw)
    return opt, factory(mod, opt)


def make_oar(name):
    return make(oar_sched, optim, lambda: nn.Parameter(oar.ones(2)), name)


def momenta(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum") for g in opt.param_groups]


def trace(opt, sched, steps=STEPS):
    """(lrs, momenta) after construction and after each of `steps` steps; get_last_lr must match the groups."""
    lrs, moms = [], []
    for i in range(steps + 1):
        if i:
            opt.step()
            sched.step()
        last = [float(v) for v in sched.get_last_lr()]
        assert last == [float(g["lr"]) for g in opt.param_groups]
        lrs.append(last)
        moms.append(momenta(opt))
    return np.array(lrs), np.array(moms, dtype=float)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_matches_pytorch(torch, name):
    got_lr, got_m = trace(*make_oar(name))
    try:
        topt, tsched = make(torch.optim.lr_scheduler, torch.optim, lambda: torch.ones(2, requires_grad=True), name)
    except ValueError as e:  # e.g. beta1 cycling in CyclicLR is newer than this PyTorch
        pytest.skip(f"torch {torch.__version__}: {e}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's warnings about step order (nothing is trained here)
        want_lr, want_m = trace(topt, tsched)
    np.testing.assert_allclose(got_lr, want_lr, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got_m, want_m, rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------- closed forms
def one_cycle_lr(step, total, max_lr, pct=0.3, div=25.0, final_div=1e4, three_phase=False, anneal="cos"):
    f = ((lambda a, b, t: b + (a - b) * (1 + math.cos(math.pi * t)) / 2) if anneal == "cos"
         else (lambda a, b, t: a + (b - a) * t))
    lo, hi = max_lr / div, max_lr
    e1 = pct * total - 1
    if step <= e1:
        return f(lo, hi, step / e1)
    if three_phase:
        e2 = 2 * pct * total - 2
        if step <= e2:
            return f(hi, lo, (step - e1) / (e2 - e1))
        return f(lo, lo / final_div, (step - e2) / (total - 1 - e2))
    return f(hi, lo / final_div, (step - e1) / (total - 1 - e1))


def test_one_cycle_closed_form():
    lrs, moms = trace(*make_oar("OneCycle-cos-sgd"))
    want = [one_cycle_lr(s, STEPS + 1, 0.1) for s in range(STEPS + 1)]
    np.testing.assert_allclose(lrs[:, 0], want, rtol=1e-12)
    lo, hi, end = 0.1 / 25, 0.1, 0.1 / 25 / 1e4
    assert lrs[0, 0] == pytest.approx(lo) and lrs[-1, 0] == pytest.approx(end)
    assert np.argmax(lrs[:, 0]) == 12 and lrs[12, 0] == pytest.approx(hi, rel=2e-3)  # phase 1 ends at 0.3 * 41 - 1
    assert moms[0, 0] == pytest.approx(0.95) and moms[-1, 0] == pytest.approx(0.95)
    # the momentum mirrors the lr (high lr, low momentum) on the same annealing curve
    up, down = slice(0, 12), slice(12, None)
    np.testing.assert_allclose((0.95 - moms[up, 0]) / 0.1, (lrs[up, 0] - lo) / (hi - lo), atol=1e-12)
    np.testing.assert_allclose((moms[down, 0] - 0.85) / 0.1, (hi - lrs[down, 0]) / (hi - end), atol=1e-12)

    lrs, moms = trace(*make_oar("OneCycle-linear-3phase-2groups"))
    for g, m in enumerate([0.1, 0.05]):
        want = [one_cycle_lr(s, STEPS + 1, m, pct=0.25, div=10.0, final_div=100.0, three_phase=True,
                             anneal="linear") for s in range(STEPS + 1)]
        np.testing.assert_allclose(lrs[:, g], want, rtol=1e-12)
    assert list(moms[0]) == [0.95, 0.95] and 0.8 < moms[:, 0].min() < 0.81 and 0.7 < moms[:, 1].min() < 0.71

    opt, sched = make_oar("OneCycle-adam-betas")
    _, moms = trace(opt, sched, 44)
    assert moms[0, 0] == 0.95 and opt.param_groups[0]["betas"][1] == 0.999  # beta1 cycles, beta2 stays
    with pytest.raises(ValueError, match="Tried to step 46 times"):
        opt.step()
        sched.step()
        sched.step()


def sgdr(epoch, T_0, T_mult, base, eta_min=0.0):
    """The SGDR lr at a (possibly fractional) epoch: find the cycle it falls in, then anneal within it."""
    start, T_i = 0.0, T_0
    while epoch >= start + T_i:
        start += T_i
        T_i *= T_mult
    return eta_min + (base - eta_min) * (1 + math.cos(math.pi * (epoch - start) / T_i)) / 2


def test_warm_restarts_closed_form_and_fractional_epochs():
    lrs, _ = trace(*make_oar("WarmRestarts-mult2"))
    np.testing.assert_allclose(lrs[:, 0], [sgdr(e, 5, 2, 0.1, 0.001) for e in range(STEPS + 1)], rtol=1e-12)
    assert lrs[5, 0] == lrs[15, 0] == lrs[35, 0] == pytest.approx(0.1)  # restarts after 5, 10, 20 epochs
    lrs, _ = trace(*make_oar("WarmRestarts-7"))
    np.testing.assert_allclose(lrs[:, 1], [sgdr(e, 7, 1, 0.3) for e in range(STEPS + 1)], rtol=1e-12)

    # step(epoch + batch / batches): annealing within epochs, and the restarts land where they should
    opt, sched = make_oar("WarmRestarts-mult2")
    got, want = [], []
    for epoch in range(12):
        for batch in range(4):
            e = epoch + batch / 4
            sched.step(e)
            got.append(sched.get_last_lr()[0])
            want.append(sgdr(e, 5, 2, 0.1, 0.001))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert sched.last_epoch == 11 and sched.T_i == 10 and sched.T_cur == pytest.approx(6.75)
    sched.step()  # after step(epoch), step() continues from the last epoch
    assert sched.last_epoch == 12 and sched.get_last_lr()[0] == pytest.approx(sgdr(12.75, 5, 2, 0.1, 0.001))


def test_warm_restarts_fractional_epochs_match_pytorch(torch):
    def run(mod, opt):
        sched = mod.CosineAnnealingWarmRestarts(opt, T_0=3, T_mult=3, eta_min=0.01)
        out = []
        for e in np.arange(0, 15, 0.3):
            sched.step(float(e))
            out.append(sched.get_last_lr()[0])
        for _ in range(5):
            sched.step()
            out.append(sched.get_last_lr()[0])
        return out
    got = run(oar_sched, optim.SGD([nn.Parameter(oar.ones(1))], lr=0.5))
    want = run(torch.optim.lr_scheduler, torch.optim.SGD([torch.ones(1, requires_grad=True)], lr=0.5))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_cyclic_closed_form():
    lrs, moms = trace(*make_oar("Cyclic-triangular"))
    it = np.arange(STEPS + 1)
    cycle = np.floor(1 + it / 8)
    x = np.abs(it / 4 - 2 * cycle + 1)
    scale = np.maximum(0, 1 - x)  # the CLR paper's triangular formula
    np.testing.assert_allclose(lrs[:, 0], 0.01 + 0.09 * scale, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(moms[:, 0], 0.9 - 0.1 * scale, rtol=1e-12)

    lrs, _ = trace(*make_oar("Cyclic-triangular2"))
    assert lrs[3, 0] == pytest.approx(0.1) and lrs[11, 0] == pytest.approx(0.01 + 0.09 / 2)  # halves each cycle
    assert lrs[19, 1] == pytest.approx(0.02 + 0.18 / 4)

    lrs, _ = trace(*make_oar("Cyclic-exp_range"))
    np.testing.assert_allclose(lrs[5, 0], 0.01 + 0.09 * 0.95 ** 5)

    opt, sched = make_oar("Cyclic-adam-betas")
    _, moms = trace(opt, sched, 12)
    np.testing.assert_allclose(moms[[0, 6, 12], 0], [0.9, 0.8, 0.9])
    assert opt.param_groups[0]["betas"][1] == 0.999
    with pytest.raises(ValueError, match="momentum"):  # neither momentum nor betas
        oar_sched.CyclicLR(optim.Adagrad([nn.Parameter(oar.ones(1))]), base_lr=0.1, max_lr=1.0)


def test_polynomial_sequential_chained_closed_forms():
    lrs, _ = trace(*make_oar("Polynomial"))
    np.testing.assert_allclose(lrs[:, 0], [0.1 * (1 - min(e, 20) / 20) ** 2 for e in range(STEPS + 1)], atol=1e-15)

    lrs, _ = trace(*make_oar("Sequential-linear-cosine"))
    want = [0.1 * (0.1 + 0.9 * e / 5) if e < 5 else 0.1 * (1 + math.cos(math.pi * (e - 5) / 20)) / 2
            for e in range(STEPS + 1)]
    np.testing.assert_allclose(lrs[:, 0], want, rtol=1e-10, atol=1e-15)

    lrs, _ = trace(*make_oar("Sequential-three"))
    for g, base in enumerate([0.1, 0.2]):
        want = [base * (0.5 if e < 2 else 1.0) if e < 4 else base * 0.9 ** (e - 4) if e < 12
                else base * 0.5 ** ((e - 12) // 5) for e in range(STEPS + 1)]
        np.testing.assert_allclose(lrs[:, g], want, rtol=1e-10)

    lrs, _ = trace(*make_oar("Chained"))
    np.testing.assert_allclose(lrs[:, 0], [(0.1 if e < 5 else 1.0) * 0.9 ** e for e in range(STEPS + 1)],
                               rtol=1e-10)


def test_every_pytorch_scheduler_exists():
    names = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR",
             "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
             "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR", "LRScheduler"]
    for n in names:
        assert n in oar_sched.__all__ and isinstance(getattr(oar_sched, n), type)
    assert issubclass(oar_sched._LRScheduler, oar_sched.LRScheduler)
    assert issubclass(oar_sched.ReduceLROnPlateau, oar_sched.LRScheduler)


# ---------------------------------------------------------------- ReduceLROnPlateau
METRICS = [1.0, 0.9, 0.95, 0.91, 0.92, 0.89, 0.9, 0.9, 0.9, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 0.4, 0.4, 0.4, 0.4]


@pytest.mark.parametrize("kw", [dict(patience=1, factor=0.5), dict(mode="max", patience=0, cooldown=2),
                                dict(threshold_mode="abs", threshold=0.05, patience=2, min_lr=[0.02, 0.05])])
def test_reduce_on_plateau_matches_pytorch(torch, kw):
    def run(mod, optim_mod, tensor):
        opt = optim_mod.SGD([{"params": [tensor()]}, {"params": [tensor()], "lr": 0.3}], lr=0.1)
        sched = mod.ReduceLROnPlateau(opt, **kw)
        out = []
        for m in METRICS:
            sched.step(m)
            out.append([g["lr"] for g in opt.param_groups])
        return out
    got = run(oar_sched, optim, lambda: nn.Parameter(oar.ones(1)))
    want = run(torch.optim.lr_scheduler, torch.optim, lambda: torch.ones(1, requires_grad=True))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_reduce_on_plateau_state_dict_and_tensor_metric(tmp_path):
    opt = optim.SGD([nn.Parameter(oar.ones(1))], lr=1.0)
    sched = oar_sched.ReduceLROnPlateau(opt, patience=0, factor=0.5)
    for m in [1.0, 2.0]:
        sched.step(oar.tensor(m))  # a 0-d tensor metric
    assert sched.get_last_lr() == [0.5]
    oar.save(sched.state_dict(), tmp_path / "plateau.oar")
    sched2 = oar_sched.ReduceLROnPlateau(optim.SGD([nn.Parameter(oar.ones(1))], lr=0.5), mode="max")
    sched2.load_state_dict(oar.load(tmp_path / "plateau.oar"))
    assert sched2.mode == "min" and sched2.best == 1.0 and sched2.mode_worse == math.inf
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        oar_sched.ReduceLROnPlateau(opt, factor=1.0)
    with pytest.raises(ValueError, match="expected 1 min_lrs, got 2"):
        oar_sched.ReduceLROnPlateau(opt, min_lr=[0.1, 0.2])


# ---------------------------------------------------------------- state_dict round trips
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_state_dict_round_trip_continues_identically(name, tmp_path):
    want, want_m = trace(*make_oar(name))
    opt, sched = make_oar(name)
    for _ in range(15):
        opt.step()
        sched.step()
    oar.save({"optimizer": opt.state_dict(), "scheduler": sched.state_dict()}, tmp_path / "ckpt.oar")
    assert "optimizer" not in sched.state_dict()

    ckpt = oar.load(tmp_path / "ckpt.oar")
    opt2, sched2 = make_oar(name)  # a fresh run, resumed from the checkpoint
    opt2.load_state_dict(ckpt["optimizer"])
    sched2.load_state_dict(ckpt["scheduler"])
    assert sched2.get_last_lr() == sched.get_last_lr()
    got, got_m = trace(opt2, sched2, STEPS - 15)
    np.testing.assert_allclose(got, want[15:], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(got_m, want_m[15:], rtol=1e-12, atol=1e-15)


def test_lambda_state_dict_keeps_callable_objects_only():
    class Decay:
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, epoch):
            return self.rate ** epoch

    opt = optim.SGD([{"params": [nn.Parameter(oar.ones(1))]}, {"params": [nn.Parameter(oar.ones(1))]}], lr=1.0)
    sched = oar_sched.LambdaLR(opt, [Decay(0.5), lambda e: 1.0])
    sd = sched.state_dict()
    assert sd["lr_lambdas"] == [{"rate": 0.5}, None]
    sched2 = oar_sched.LambdaLR(opt, [Decay(0.9), lambda e: 2.0])
    sched2.load_state_dict(sd)
    assert sched2.lr_lambdas[0].rate == 0.5
    assert "lr_lambdas" in sd  # loading leaves the dict as it was


def test_cyclic_state_dict_leaves_functions_out():
    opt, sched = make_oar("Cyclic-scale_fn-no-momentum")
    sd = sched.state_dict()
    assert sd["_scale_fn_custom"] is None and not any(callable(v) for v in sd.values())
    opt, sched = make_oar("OneCycle-cos-sgd")
    assert sched.state_dict()["_anneal_func_type"] == "cos"


# ---------------------------------------------------------------- errors
def test_argument_errors():
    opt = optim.SGD([nn.Parameter(oar.ones(1))], lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match="You must define either total_steps OR"):
        oar_sched.OneCycleLR(opt, max_lr=0.1)
    with pytest.raises(ValueError, match="Expected positive integer total_steps"):
        oar_sched.OneCycleLR(opt, max_lr=0.1, total_steps=0)
    with pytest.raises(ValueError, match="Expected float between 0 and 1 pct_start"):
        oar_sched.OneCycleLR(opt, max_lr=0.1, total_steps=10, pct_start=1.5)
    with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear'"):
        oar_sched.OneCycleLR(opt, max_lr=0.1, total_steps=10, anneal_strategy="exp")
    with pytest.raises(ValueError, match="max_lr must have the same length"):
        oar_sched.OneCycleLR(opt, max_lr=[0.1, 0.2], total_steps=10)
    with pytest.raises(ValueError, match="Expected positive integer T_0"):
        oar_sched.CosineAnnealingWarmRestarts(opt, T_0=0)
    with pytest.raises(ValueError, match="Expected integer T_mult >= 1"):
        oar_sched.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=1.5)
    with pytest.raises(ValueError, match="Expected non-negative epoch"):
        oar_sched.CosineAnnealingWarmRestarts(opt, T_0=2).step(-1)
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        oar_sched.CyclicLR(opt, 0.01, 0.1, mode="sine")
    with pytest.raises(ValueError, match="one more than the number of milestone points"):
        oar_sched.SequentialLR(opt, [oar_sched.StepLR(opt, 2)], milestones=[3])
    other = optim.SGD([nn.Parameter(oar.ones(1))], lr=0.1)
    with pytest.raises(ValueError, match="belong to the same optimizer"):
        oar_sched.ChainedScheduler([oar_sched.StepLR(opt, 2), oar_sched.StepLR(other, 2)])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        oar_sched.SequentialLR(opt, [oar_sched.StepLR(opt, 2), oar_sched.ReduceLROnPlateau(opt)], milestones=[2])
    with pytest.raises(ValueError, match="expects at least one scheduler"):
        oar_sched.ChainedScheduler([])
    with pytest.raises(ValueError, match="Constant multiplicative factor"):
        oar_sched.ConstantLR(opt, factor=2.0)
    with pytest.raises(TypeError, match="lr_lambda should be a function"):
        oar_sched.MultiplicativeLR(opt, 0.9)
    with pytest.raises(TypeError, match="is not an Optimizer"):
        oar_sched.OneCycleLR(object(), max_lr=0.1, total_steps=10)
    with pytest.warns(UserWarning, match="epoch parameter"):
        oar_sched.StepLR(opt, 2).step(3)


# -- verbose=True (PyTorch 1.13 accepts it on every scheduler and prints each change) ---------------------------

def _verbose_run(m, optim_mod, params, factory, steps):
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt = optim_mod.SGD(params, lr=0.1, momentum=0.9)
        sched = factory(m, opt)
        for step in steps:
            step(sched)
    return out.getvalue()


_VERBOSE_CONFIGS = {
    "step": (lambda m, o: m.StepLR(o, 2, gamma=0.5, verbose=True), [lambda s: s.step()] * 5),
    "step_epoch": (lambda m, o: m.MultiStepLR(o, [2, 4], 0.1, -1, True), [lambda s: s.step(3)]),
    "lambda": (lambda m, o: m.LambdaLR(o, lambda e: 1 / (e + 1), verbose=True), [lambda s: s.step()] * 3),
    "plateau": (lambda m, o: m.ReduceLROnPlateau(o, factor=0.5, patience=1, verbose=True),
                [lambda s, v=v: s.step(v) for v in (1.0, 1.0, 1.0, 1.0, 0.5, 0.6, 0.7)]),
    "sgdr_fractional": (lambda m, o: m.CosineAnnealingWarmRestarts(o, T_0=2, verbose=True),
                        [lambda s, e=e: s.step(e) for e in (0.5, 1.25, 2.0, 3)] + [lambda s: s.step()]),
    "onecycle": (lambda m, o: m.OneCycleLR(o, max_lr=0.5, total_steps=6, verbose=True), [lambda s: s.step()] * 4),
    "sequential": (lambda m, o: m.SequentialLR(o, [m.ConstantLR(o, 0.5, 2, verbose=True),
                                                   m.ExponentialLR(o, 0.9, verbose=True)], [3], verbose=True),
                   [lambda s: s.step()] * 5),
}


@pytest.mark.parametrize("name", sorted(_VERBOSE_CONFIGS))
def test_verbose_prints_like_pytorch(name, torch):
    factory, steps = _VERBOSE_CONFIGS[name]
    ours = _verbose_run(oar_sched, optim, [nn.Parameter(oar.ones(2)), ], factory, steps)
    theirs = _verbose_run(torch.optim.lr_scheduler, torch.optim, [torch.nn.Parameter(torch.ones(2))], factory, steps)
    assert ours == theirs
    assert "learning rate of group 0" in ours


def test_verbose_false_prints_nothing(capsys):
    opt = optim.SGD([nn.Parameter(oar.ones(1))], lr=0.1)
    sched = oar_sched.ReduceLROnPlateau(opt, patience=0)
    sched.step(1.0)
    sched.step(2.0)
    assert opt.param_groups[0]["lr"] == pytest.approx(0.01)
    assert capsys.readouterr().out == ""
    assert not oar_sched.StepLR(opt, 1).verbose


def test_step_lr_takes_a_float_step_size(torch):
    """StepLR(optimizer, 1.0, gamma=0.95), as PyTorch's seq2seq tutorial writes it; a fractional step_size decays
    where epoch % step_size == 0, and step(epoch) uses epoch // step_size, as PyTorch does."""
    def run(m, optim_mod, param):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt = optim_mod.SGD([param], lr=5.0)
            lrs = []
            s = m.StepLR(opt, 1.0, gamma=0.95)
            for _ in range(3):
                s.step()
                lrs.append(s.get_last_lr()[0])
            s = m.StepLR(opt, 2.5, gamma=0.5)
            for _ in range(6):
                s.step()
                lrs.append(s.get_last_lr()[0])
            s.step(10)
            lrs.append(s.get_last_lr()[0])
        return lrs
    ours = run(oar_sched, optim, nn.Parameter(oar.zeros(1)))
    np.testing.assert_allclose(ours, run(torch.optim.lr_scheduler, torch.optim, torch.nn.Parameter(torch.zeros(1))),
                               rtol=1e-12)
    for bad in (0, -1.0, True):
        with pytest.raises(ValueError, match="step_size must be a positive number"):
            oar_sched.StepLR(optim.SGD([nn.Parameter(oar.zeros(1))], lr=0.1), bad)
