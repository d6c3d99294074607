"""oar.optim: optimizers and learning-rate schedulers with PyTorch's formulas, signatures and state_dict layout.

Optimizers: SGD, Adam, AdamW (fused device ops), RMSprop, Adagrad, Adadelta, Adamax, NAdam, RAdam, Rprop, ASGD
(element-wise tensor ops on the parameters' device; all of these also run inside oar.jit.TrainGraph)
and LBFGS (eager only, step(closure)). Schedulers live in oar.optim.lr_scheduler; stochastic weight
averaging (AveragedModel, SWALR, update_bn) in oar.optim.swa_utils.
"""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from .rmsprop import RMSprop
from .adagrad import Adagrad
from .adadelta import Adadelta
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .rprop import Rprop
from .asgd import ASGD
from .lbfgs import LBFGS
from . import lr_scheduler
from . import swa_utils

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
           "Rprop", "ASGD", "LBFGS", "lr_scheduler", "swa_utils"]
