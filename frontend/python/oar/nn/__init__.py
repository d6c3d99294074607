"""oar.nn: modules, containers, losses, functional API and initializers (PyTorch names and semantics)."""
from .parameter import Parameter, Buffer
from .module import Module, RemovableHandle
from .container import Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict
from .layers import (Identity, Linear, Conv2d, Embedding, Dropout, Dropout1d, Dropout2d, Dropout3d, AlphaDropout,
                     Flatten, Unflatten, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d)
from .activation import (ReLU, ReLU6, Hardtanh, Hardsigmoid, Hardswish, Mish, SELU, CELU, Threshold, GELU, SiLU,
                         Sigmoid, Tanh, LeakyReLU, ELU, Softplus, Softmax, LogSoftmax)
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .loss import (CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, SmoothL1Loss, HuberLoss, BCELoss,
                   BCEWithLogitsLoss)
from . import functional, init
from . import utils

__all__ = ["Parameter", "Buffer", "Module", "RemovableHandle", "Sequential", "ModuleList", "ModuleDict",
           "ParameterList", "ParameterDict", "Identity", "Linear", "Conv2d", "Embedding", "Dropout", "Dropout1d",
           "Dropout2d", "Dropout3d", "AlphaDropout", "Flatten", "Unflatten", "MaxPool2d", "AvgPool2d",
           "AdaptiveAvgPool2d", "ReLU", "ReLU6", "Hardtanh", "Hardsigmoid", "Hardswish", "Mish", "SELU", "CELU",
           "Threshold", "GELU", "SiLU", "Sigmoid",
           "Tanh", "LeakyReLU", "ELU", "Softplus", "Softmax", "LogSoftmax", "BatchNorm1d", "BatchNorm2d", "LayerNorm",
           "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss",
           "BCEWithLogitsLoss", "functional", "init", "utils"]
