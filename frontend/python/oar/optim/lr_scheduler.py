"""Learning-rate schedulers with PyTorch's (chainable) formulas, signatures and state_dict layout.

Construction performs the initial step (last_epoch becomes 0) and records 'initial_lr' in each param
group; step() advances one epoch and writes the new lr into the optimizer's groups; get_last_lr()
returns what was last written. state_dict() holds everything but the optimizer (functions and lambdas
are left out, as in PyTorch), and load_state_dict() restores it.

Chainable schedulers compute the next lr from the current one (get_lr), so several can act on one
optimizer (ChainedScheduler); step(epoch) uses the closed form where there is one. OneCycleLR and
CyclicLR also cycle the momentum (or Adam's beta1) when asked to.
"""
from bisect import bisect_right
from collections import Counter
import math
import numbers
import types
import warnings

from .optimizer import Optimizer

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau",
           "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated where possible. "
    "Please use `scheduler.step()` to step the scheduler. During the deprecation, if epoch is different from "
    "None, the closed form is used instead of the new chainable form, where available.")


def _format_param(name, optimizer, param):
    """One value per param group: a list of that length, or one value repeated."""
    n = len(optimizer.param_groups)
    if isinstance(param, (list, tuple)):
        if len(param) != n:
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. {name} has "
                             f"{len(param)} values, param_groups has {n}.")
        return list(param)
    return [param] * n


def _epoch_str(epoch):
    """PyTorch's epoch label in verbose messages: 00012, or 1.50 for a fractional epoch."""
    return ("%.2f" if isinstance(epoch, float) else "%.5d") % epoch


def _check_optimizer(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


class LRScheduler:
    _is_initial = False  # True during the step the constructor makes

    def __init__(self, optimizer, last_epoch=-1, verbose=False):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        self.verbose = verbose  # set before the constructor's step, which prints too (as PyTorch 1.13)
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] when resuming an "
                                   "optimizer")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        """Resets the step count and makes the constructor's step (SequentialLR calls it again)."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        raise NotImplementedError

    def get_last_lr(self):
        return self._last_lr

    def print_lr(self, is_verbose, group, lr, epoch=None):
        """Prints a group's new lr when is_verbose, in PyTorch 1.13's words (the epoch when one was given)."""
        if is_verbose:
            if epoch is None:
                print(f"Adjusting learning rate of group {group} to {lr:.4e}.")
            else:
                print(f"Epoch {_epoch_str(epoch)}: adjusting learning rate of group {group} to {lr:.4e}.")

    def step(self, epoch=None):
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        if epoch is None:
            self.last_epoch += 1
            values = self.get_lr()
        else:
            self.last_epoch = epoch
            values = self._get_closed_form_lr() if hasattr(self, "_get_closed_form_lr") else self.get_lr()
        for i, (group, lr) in enumerate(zip(self.optimizer.param_groups, values)):
            group["lr"] = lr
            self.print_lr(self.verbose, i, lr, epoch)
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


class _LRScheduler(LRScheduler):
    """The old name, kept for code that subclasses it."""


class _LambdaState:
    """state_dict for schedulers holding lr functions: functions and lambdas are left out (None); a callable
    object's __dict__ is saved and restored into the object the scheduler holds."""

    def state_dict(self):
        sd = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        sd["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                            for fn in self.lr_lambdas]
        return sd

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        lr_lambdas = state_dict.pop("lr_lambdas")
        self.__dict__.update(state_dict)
        for fn, saved in zip(self.lr_lambdas, lr_lambdas):
            if saved is not None:
                fn.__dict__.update(saved)


def _lambdas(optimizer, lr_lambda):
    n = len(optimizer.param_groups)
    if not isinstance(lr_lambda, (list, tuple)):
        return [lr_lambda] * n
    if len(lr_lambda) != n:
        raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
    return list(lr_lambda)


class LambdaLR(_LambdaState, LRScheduler):
    """lr = base_lr * lr_lambda(epoch); one function, or one per param group."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose=False):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        return [b * f(self.last_epoch) for f, b in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaState, LRScheduler):
    """lr = lr * lr_lambda(epoch) at each step after the first."""

    def __init__(self, optimizer, lr_lambda, last_epoch=-1, verbose=False):
        self.optimizer = optimizer
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        for fn in self.lr_lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got {type(fn).__name__}")
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self._is_initial:
            return [g["lr"] for g in groups]
        return [g["lr"] * f(self.last_epoch) for f, g in zip(self.lr_lambdas, groups)]


class StepLR(LRScheduler):
    """lr = base_lr * gamma ** (epoch // step_size)."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1, verbose=False):
        # PyTorch takes any positive number (its seq2seq tutorial passes 1.0); the formulas hold for floats too
        if not isinstance(step_size, numbers.Real) or isinstance(step_size, bool) or step_size <= 0:
            raise ValueError(f"step_size must be a positive number, got {step_size!r}")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return [g["lr"] for g in self.optimizer.param_groups]
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr = base_lr * gamma ** (number of milestones <= epoch); a milestone listed twice counts twice."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1, verbose=False):
        self.milestones, self.gamma = Counter(milestones), gamma
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        if self.last_epoch not in self.milestones:
            return [g["lr"] for g in self.optimizer.param_groups]
        return [g["lr"] * self.gamma ** self.milestones[self.last_epoch] for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        passed = sum(c for m, c in self.milestones.items() if m <= self.last_epoch)
        return [b * self.gamma ** passed for b in self.base_lrs]

    def state_dict(self):
        # a plain dict rather than PyTorch's Counter: oar.save stores plain containers only (no pickle)
        sd = super().state_dict()
        sd["milestones"] = dict(self.milestones)
        return sd

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        self.milestones = Counter(self.milestones)


class ConstantLR(LRScheduler):
    """lr = base_lr * factor until epoch total_iters, then base_lr."""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1, verbose=False):
        if factor > 1.0 or factor < 0:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.factor for g in groups]
        if self.last_epoch != self.total_iters:
            return [g["lr"] for g in groups]
        return [g["lr"] * (1.0 / self.factor) for g in groups]

    def _get_closed_form_lr(self):
        return [b * (self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)) for b in self.base_lrs]


class LinearLR(LRScheduler):
    """lr = base_lr * factor, the factor going linearly from start_factor to end_factor over total_iters."""

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5, last_epoch=-1, verbose=False):
        if start_factor > 1.0 or start_factor <= 0:
            raise ValueError("Starting multiplicative factor expected to be greater than 0 and less or equal to 1.")
        if end_factor > 1.0 or end_factor < 0:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self.last_epoch == 0:
            return [g["lr"] * self.start_factor for g in groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return [g["lr"] for g in groups]
        s, e, t = self.start_factor, self.end_factor, self.total_iters
        return [g["lr"] * (1.0 + (e - s) / (t * s + (self.last_epoch - 1) * (e - s))) for g in groups]

    def _get_closed_form_lr(self):
        s, e, t = self.start_factor, self.end_factor, self.total_iters
        return [b * (s + (e - s) * min(t, self.last_epoch) / t) for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    """lr = base_lr * gamma ** epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1, verbose=False):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        # resuming (last_epoch given), the constructor's step must not decay once more
        if self._is_initial:
            return [g["lr"] for g in self.optimizer.param_groups]
        return [g["lr"] * self.gamma for g in self.optimizer.param_groups]

    def _get_closed_form_lr(self):
        return [b * self.gamma ** self.last_epoch for b in self.base_lrs]


class PolynomialLR(LRScheduler):
    """lr = base_lr * (1 - min(epoch, total_iters) / total_iters) ** power."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1, verbose=False):
        self.total_iters, self.power = total_iters, power
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        groups = self.optimizer.param_groups
        if self._is_initial or self.last_epoch > self.total_iters:
            return [g["lr"] for g in groups]
        e, t = self.last_epoch, self.total_iters
        decay = ((1.0 - e / t) / (1.0 - (e - 1) / t)) ** self.power
        return [g["lr"] * decay for g in groups]

    def _get_closed_form_lr(self):
        return [b * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
                for b in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2 (computed recursively, as PyTorch)."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1, verbose=False):
        if T_max <= 0:
            raise ValueError(f"T_max must be positive, got {T_max}")
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        groups, e, T, lo = self.optimizer.param_groups, self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return [g["lr"] for g in groups]
        if self._step_count == 1 and e > 0:
            return [lo + (b - lo) * (1 + math.cos(e * math.pi / T)) / 2 for b in self.base_lrs]
        if (e - 1 - T) % (2 * T) == 0:
            return [g["lr"] + (b - lo) * (1 - math.cos(math.pi / T)) / 2 for b, g in zip(self.base_lrs, groups)]
        return [(1 + math.cos(math.pi * e / T)) / (1 + math.cos(math.pi * (e - 1) / T)) * (g["lr"] - lo) + lo
                for g in groups]

    def _get_closed_form_lr(self):
        return [self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for b in self.base_lrs]


class _Composite:
    """state_dict for schedulers made of schedulers: the inner ones' state_dicts under '_schedulers'."""

    def state_dict(self):
        sd = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        sd["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return sd

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        inner = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for s, sd in zip(self._schedulers, inner):
            s.load_state_dict(sd)

    def _check_schedulers(self, schedulers, optimizer):
        name = type(self).__name__
        if len(schedulers) < 1:
            raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
        for i, s in enumerate(schedulers):
            if not hasattr(s, "optimizer"):
                raise TypeError(f"{name} at index {i} should have `optimizer` as its attribute.")
            if isinstance(s, ReduceLROnPlateau):
                raise ValueError(f"{name} does not support `ReduceLROnPlateau` scheduler as it requires additional "
                                 f"kwargs to be specified when calling `step`, but got one at index {i} in the given "
                                 "schedulers sequence.")
            if s.optimizer is not optimizer:
                raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, but got scheduler "
                                 f"{type(s).__name__} at index {i} has {s.optimizer}, which is different from "
                                 f"{type(optimizer).__name__}.")


class SequentialLR(_Composite, LRScheduler):
    """Runs schedulers[i] between milestones[i - 1] and milestones[i]; each starts at its epoch 0."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1, verbose=False):  # verbose: unused, as 1.13
        self._check_schedulers(schedulers, optimizer)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be one more than the "
                             f"number of milestone points, but got number of schedulers {len(schedulers)} and the "
                             f"number of milestones to be equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # the schedulers' constructors each made a step: undo them and start the first one afresh
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self._undo(self)
        self._schedulers[0]._initial_step()
        self._last_lr = schedulers[0].get_last_lr()

    def _undo(self, sched):
        if hasattr(sched, "_schedulers"):
            for s in sched._schedulers:
                self._undo(s)
        elif hasattr(sched, "last_epoch"):
            sched.last_epoch -= 1

    def step(self):
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)  # a scheduler taking over starts at its epoch 0 (closed form)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_Composite, LRScheduler):
    """Steps every scheduler in turn at each step(): their (chainable) effects multiply."""

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler to be chained, but got no "
                             "scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        self._check_schedulers(schedulers, optimizer)
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = [g["lr"] for g in self._schedulers[-1].optimizer.param_groups]

    def step(self):
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = [g["lr"] for g in self._schedulers[-1].optimizer.param_groups]


class ReduceLROnPlateau(LRScheduler):
    """Multiplies lr by `factor` after `patience` epochs without improvement of the metric passed to step()."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, eps=1e-8, verbose=False):
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        self.factor = factor
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != len(optimizer.param_groups):
                raise ValueError(f"expected {len(optimizer.param_groups)} min_lrs, got {len(min_lr)}")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * len(optimizer.param_groups)
        self.patience, self.cooldown, self.eps, self.verbose = patience, cooldown, eps, verbose
        self.last_epoch = 0
        self._last_lr = [g["lr"] for g in optimizer.param_groups]
        self._init_is_better(mode=mode, threshold=threshold, threshold_mode=threshold_mode)
        self._reset()

    def _reset(self):
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    def step(self, metrics, epoch=None):
        current = float(metrics)  # a 0-d tensor works too
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown don't count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr(epoch)
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def _reduce_lr(self, epoch):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(f"The number of param groups in the `optimizer` ({len(groups)}) differs from when "
                                   f"`ReduceLROnPlateau` was initialized ({len(self.min_lrs)}), usually due to a new "
                                   "param group being added to the optimizer. Please modify the `min_lrs` field to "
                                   "match the length of the `optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for i, (g, lo) in enumerate(zip(groups, self.min_lrs)):
            old = float(g["lr"])
            new = max(old * self.factor, lo)
            if old - new > self.eps:
                g["lr"] = new
                if self.verbose:
                    print(f"Epoch {_epoch_str(epoch)}: reducing learning rate of group {i} to {new:.4e}.")

    @property
    def in_cooldown(self):
        return self.cooldown_counter > 0

    def _is_better(self, a, best):
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode, threshold, threshold_mode):
        if mode not in {"min", "max"}:
            raise ValueError("mode " + mode + " is unknown!")
        if threshold_mode not in {"rel", "abs"}:
            raise ValueError("threshold mode " + threshold_mode + " is unknown!")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self._init_is_better(mode=self.mode, threshold=self.threshold, threshold_mode=self.threshold_mode)


def _set_momentum(group, momentum, use_beta1):
    if use_beta1:
        group["betas"] = (momentum, *group["betas"][1:])
    else:
        group["momentum"] = momentum


def _momentum_key(optimizer):
    """'betas' (cycle beta1, Adam-like) or 'momentum' (SGD-like); an error for optimizers with neither."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` option enabled")
    return "betas" in optimizer.defaults


class CyclicLR(LRScheduler):
    """Cycles lr between base_lr and max_lr (triangular, triangular2, exp_range or a custom scale_fn), one
    step per batch; momentum (or beta1) cycles inversely between max_momentum and base_momentum.

        cycle = floor(1 + it / (up + down));  x = 1 + it / (up + down) - cycle
        s = x / r if x <= r else (x - 1) / (r - 1)   with r = up / (up + down)
        lr = base_lr + (max_lr - base_lr) * s * scale_fn(cycle or it)
    """

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None, mode="triangular",
                 gamma=1.0, scale_fn=None, scale_mode="cycle", cycle_momentum=True, base_momentum=0.8,
                 max_momentum=0.9, last_epoch=-1, verbose=False):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        base_lrs = _format_param("base_lr", optimizer, base_lr)
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
        self.max_lrs = _format_param("max_lr", optimizer, max_lr)
        step_size_up = float(step_size_up)
        step_size_down = float(step_size_down) if step_size_down is not None else step_size_up
        self.total_size = step_size_up + step_size_down
        self.step_ratio = step_size_up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode, self.gamma = mode, gamma
        self._scale_fn_custom = scale_fn
        self.scale_mode = scale_mode
        self._init_scale_fn()
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _momentum_key(optimizer)
            self.base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            self.max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            if last_epoch == -1:
                for m_max, m_base, group in zip(self.max_momentums, self.base_momentums, optimizer.param_groups):
                    _set_momentum(group, m_max, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = m_max, m_base
        super().__init__(optimizer, last_epoch, verbose)
        self.base_lrs = base_lrs

    def _init_scale_fn(self):
        # the built-in policies are picked by name, so state_dict holds no function
        if self._scale_fn_custom is not None:
            return
        self.scale_mode = "iterations" if self.mode == "exp_range" else "cycle"

    def scale_fn(self, x):
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        scale_factor = x / self.step_ratio if x <= self.step_ratio else (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [b + (m - b) * scale_factor * scale for b, m in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, m_base, m_max in zip(self.optimizer.param_groups, self.base_momentums, self.max_momentums):
                _set_momentum(group, m_max - (m_max - m_base) * scale_factor * scale, self.use_beta1)
        return lrs

    def state_dict(self):
        sd = super().state_dict()
        fn = sd.pop("_scale_fn_custom")
        # like PyTorch: a function or lambda is not saved, a callable object's __dict__ is
        sd["_scale_fn_custom"] = None if fn is None or isinstance(fn, types.FunctionType) else fn.__dict__.copy()
        return sd

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        fn = state_dict.pop("_scale_fn_custom", None)
        super().load_state_dict(state_dict)
        if fn is not None:
            self._scale_fn_custom.__dict__.update(fn)
        self._init_scale_fn()


class CosineAnnealingWarmRestarts(LRScheduler):
    """SGDR: lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2, restarting (T_cur = 0)
    after T_i epochs, with T_i growing by T_mult at each restart. step(epoch) takes fractional epochs
    (epoch + batch / batches) to anneal within an epoch."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1, verbose=False):
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        if not isinstance(eta_min, (float, int)):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min} of type {type(eta_min)}")
        self.T_0, self.T_i, self.T_mult, self.eta_min = T_0, T_0, T_mult, eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch, verbose)

    def get_lr(self):
        return [self.eta_min + (b - self.eta_min) * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for b in self.base_lrs]

    def step(self, epoch=None):
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur = self.T_cur + 1
            if self.T_cur >= self.T_i:
                self.T_cur = self.T_cur % self.T_i
                self.T_i = self.T_i * self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    # restart n: T_0 (T_mult^n - 1) / (T_mult - 1) epochs have passed
                    n = int(math.log((epoch / self.T_0 * (self.T_mult - 1) + 1), self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        for i, (group, lr) in enumerate(zip(self.optimizer.param_groups, self.get_lr())):
            group["lr"] = lr
            self.print_lr(self.verbose, i, lr, epoch)
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]


class OneCycleLR(LRScheduler):
    """The 1cycle policy, one step per batch: lr anneals (cos or linear) from max_lr / div_factor up to max_lr
    over pct_start of total_steps, then down to initial_lr / final_div_factor (three_phase: back to
    initial_lr first, then down); momentum (or beta1) anneals inversely between max_momentum and
    base_momentum."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None, pct_start=0.3,
                 anneal_strategy="cos", cycle_momentum=True, base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1, verbose=False):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if total_steps is not None:
            if total_steps <= 0 or not isinstance(total_steps, int):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not isinstance(epochs, int) or epochs <= 0:
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not isinstance(steps_per_epoch, int) or steps_per_epoch <= 0:
                raise ValueError(f"Expected positive integer steps_per_epoch, but got {steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")

        def phase(end_step, start_lr, end_lr, start_momentum, end_momentum):
            return dict(end_step=end_step, start_lr=start_lr, end_lr=end_lr, start_momentum=start_momentum,
                        end_momentum=end_momentum)

        if three_phase:
            self._schedule_phases = [
                phase(float(pct_start * self.total_steps) - 1, "initial_lr", "max_lr", "max_momentum",
                      "base_momentum"),
                phase(float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr", "base_momentum",
                      "max_momentum"),
                phase(self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                phase(float(pct_start * self.total_steps) - 1, "initial_lr", "max_lr", "max_momentum",
                      "base_momentum"),
                phase(self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        if pct_start < 0 or pct_start > 1 or not isinstance(pct_start, float):
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}")
        self._anneal_func_type = anneal_strategy  # a name, not a function, so state_dict stays plain data

        max_lrs = _format_param("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor

        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _momentum_key(optimizer)
            max_momentums = _format_param("max_momentum", optimizer, max_momentum)
            base_momentums = _format_param("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m_max, m_base, group in zip(max_momentums, base_momentums, optimizer.param_groups):
                    _set_momentum(group, m_max, self.use_beta1)
                    group["max_momentum"], group["base_momentum"] = m_max, m_base
        super().__init__(optimizer, last_epoch, verbose)

    @staticmethod
    def _annealing_cos(start, end, pct):
        """Cosine anneal from start to end as pct goes from 0 to 1."""
        return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)

    @staticmethod
    def _annealing_linear(start, end, pct):
        return (end - start) * pct + start

    def _anneal_func(self, start, end, pct):
        f = self._annealing_cos if self._anneal_func_type == "cos" else self._annealing_linear
        return f(start, end, pct)

    def get_lr(self):
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total steps is "
                             f"{self.total_steps}")
        lrs = []
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, ph in enumerate(self._schedule_phases):
                end_step = ph["end_step"]
                if step_num <= end_step or i == len(self._schedule_phases) - 1:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(self._anneal_func(group[ph["start_lr"]], group[ph["end_lr"]], pct))
                    if self.cycle_momentum:
                        momentum = self._anneal_func(group[ph["start_momentum"]], group[ph["end_momentum"]], pct)
                        _set_momentum(group, momentum, self.use_beta1)
                    break
                start_step = ph["end_step"]
        return lrs
