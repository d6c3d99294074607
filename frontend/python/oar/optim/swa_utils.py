"""oar.optim.swa_utils (torch.optim.swa_utils): stochastic weight averaging and EMA of a model's weights.

AveragedModel(model) keeps a deep copy of `model` whose parameters (and buffers, with use_buffers=True)
update_parameters(model) turns into a running average: the first call copies, later calls apply
avg_fn(averaged, current, num_averaged) per tensor or multi_avg_fn(averaged_list, current_list,
num_averaged) per device and dtype group (equal weights when neither is given; get_ema_avg_fn /
get_ema_multi_avg_fn make an exponential moving average). Without use_buffers the copy's buffers follow
the model's (PyTorch 2.x; PyTorch 1.13 left them as copied). SWALR anneals each group's lr to swa_lr;
update_bn recomputes batch-norm statistics with one pass over a loader.
"""
import copy
import itertools
import math

from .._C import Tensor
from ..autograd import no_grad
from ..nn.module import Module
from ..nn.normalization import _BatchNorm
from .lr_scheduler import LRScheduler, _format_param

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn", "get_swa_multi_avg_fn", "get_ema_avg_fn",
           "get_swa_avg_fn"]


def get_ema_avg_fn(decay=0.999):
    """avg_fn for an exponential moving average: decay * averaged + (1 - decay) * current."""

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param

    return ema_update


def get_swa_avg_fn():
    """avg_fn for the equal-weight average: averaged + (current - averaged) / (num_averaged + 1)."""

    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)

    return swa_update


def get_ema_multi_avg_fn(decay=0.999):
    """multi_avg_fn for an exponential moving average, updating the averaged tensors in place."""

    def ema_update(ema_param_list, current_param_list, _num_averaged):
        with no_grad():
            for ema, cur in zip(ema_param_list, current_param_list):
                if ema.is_floating_point():
                    ema.lerp_(cur, 1 - decay)
                else:
                    ema.copy_(ema * decay + cur * (1 - decay))

    return ema_update


def get_swa_multi_avg_fn():
    """multi_avg_fn for the equal-weight average, updating the averaged tensors in place."""

    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            for avg, cur in zip(averaged_param_list, current_param_list):
                if avg.is_floating_point():
                    n = float(num_averaged.item()) if isinstance(num_averaged, Tensor) else float(num_averaged)
                    avg.lerp_(cur, 1 / (n + 1))
                else:
                    avg.copy_(avg + (cur - avg) / (num_averaged + 1))

    return swa_update


class AveragedModel(Module):
    """AveragedModel(model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False): a deep copy of
    `model` (moved to `device` if given) holding the running average of its parameters; forward runs the
    copy. `n_averaged` (an int64 buffer) counts the update_parameters calls."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        from .._creation import tensor
        from .._dtypes import int64
        self.register_buffer("n_averaged", tensor(0, dtype=int64, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def _averaged_pairs(self, model):
        if self.use_buffers:
            mine = itertools.chain(self.module.parameters(), self.module.buffers())
            theirs = itertools.chain(model.parameters(), model.buffers())
        else:
            mine, theirs = self.module.parameters(), model.parameters()
        return list(zip(mine, theirs))

    def update_parameters(self, model):
        """Folds `model`'s current parameters (and buffers with use_buffers) into the average."""
        n = int(self.n_averaged.item())
        with no_grad():
            pairs = []
            for mine, theirs in self._averaged_pairs(model):
                mine = mine.detach()
                theirs = theirs.detach().to(mine.device)
                if n == 0:
                    mine.copy_(theirs)
                pairs.append((mine, theirs))
            if n > 0:
                if self.avg_fn is not None:
                    for mine, theirs in pairs:
                        mine.copy_(self.avg_fn(mine, theirs, self.n_averaged.to(mine.device)))
                elif self.multi_avg_fn is not None:
                    groups = {}  # one call per (device, dtype), as PyTorch groups the tensors
                    for mine, theirs in pairs:
                        groups.setdefault((str(mine.device), str(mine.dtype)), []).append((mine, theirs))
                    for group in groups.values():
                        self.multi_avg_fn([m for m, _ in group], [t for _, t in group],
                                          self.n_averaged.to(group[0][0].device))
                else:  # the equal-weight average, PyTorch's formula (integer buffers truncate, as there)
                    for mine, theirs in pairs:
                        mine.copy_(mine + (theirs - mine) / (n + 1))
            if not self.use_buffers:  # the copy's buffers follow the model's
                for mine, theirs in zip(self.module.buffers(), model.buffers()):
                    mine.detach().copy_(theirs.detach().to(mine.device))
            self.n_averaged.add_(1)


def update_bn(loader, model, device=None):
    """Recomputes the running statistics of model's batch-norm layers from one pass over `loader`: each
    batch is a tensor, or a list/tuple whose first element is the input. The statistics become the plain
    average over the batches (momentum None during the pass); the model's training mode is restored."""
    momenta = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    try:
        with no_grad():
            for batch in loader:
                if isinstance(batch, (list, tuple)):
                    batch = batch[0]
                if device is not None:
                    batch = batch.to(device)
                model(batch)
    finally:
        for m, momentum in momenta.items():
            m.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each param group's lr from its value to swa_lr over anneal_epochs steps ("cos" or "linear"),
    then holds it at swa_lr. swa_lr: one value, or one per param group (stored as group["swa_lr"])."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos", last_epoch=-1):
        for lr, group in zip(_format_param("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must by one of 'cos' or 'linear', instead got {anneal_strategy}")
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got {anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        """The lr the annealing started from, given the lr it reached with weight alpha on swa_lr."""
        if alpha == 1:
            return swa_lr
        return (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        # Chainable: the start lr is recovered from the current lr (another scheduler may have changed it).
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        out = []
        for group in self.optimizer.param_groups:
            start = self._get_initial_lr(group["lr"], group["swa_lr"], prev_alpha)
            out.append(group["swa_lr"] * alpha + start * (1 - alpha))
        return out
