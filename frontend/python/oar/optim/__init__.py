"""oar.optim: optimizers (SGD, Adam, AdamW) and learning-rate schedulers, with PyTorch's formulas."""
from .optimizer import Optimizer
from .sgd import SGD
from .adam import Adam, AdamW
from . import lr_scheduler

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "lr_scheduler"]
