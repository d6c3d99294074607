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
from .activation import (GLU, Hardshrink, Softshrink, Tanhshrink, LogSigmoid, Softsign, Softmin, Softmax2d, PReLU,
                         RReLU)
from .normalization import (BatchNorm3d, SyncBatchNorm, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, GroupNorm,
                            RMSNorm, LocalResponseNorm)
from .loss import (KLDivLoss, PoissonNLLLoss, GaussianNLLLoss, HingeEmbeddingLoss, CosineEmbeddingLoss,
                   MarginRankingLoss, SoftMarginLoss, MultiLabelSoftMarginLoss, MultiLabelMarginLoss, MultiMarginLoss,
                   TripletMarginLoss, TripletMarginWithDistanceLoss, CTCLoss)
from .distance import PairwiseDistance, CosineSimilarity
from .rnn import RNNBase, RNN, LSTM, GRU, RNNCellBase, RNNCell, LSTMCell, GRUCell
from .attention import MultiheadAttention
from .transformer import (Transformer, TransformerEncoder, TransformerDecoder, TransformerEncoderLayer,
                          TransformerDecoderLayer)
from .conv import Conv1d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .pooling import (MaxPool1d, MaxPool3d, AvgPool1d, AvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d,
                      AdaptiveMaxPool3d, AdaptiveAvgPool1d, AdaptiveAvgPool3d, LPPool1d, LPPool2d, MaxUnpool1d,
                      MaxUnpool2d, MaxUnpool3d)
from .upsampling import (Upsample, UpsamplingNearest2d, UpsamplingBilinear2d, PixelShuffle, PixelUnshuffle,
                         ChannelShuffle)
from .fold import Fold, Unfold
from .sparse import EmbeddingBag
from .layers import Bilinear, FeatureAlphaDropout
from .padding import (ConstantPad1d, ConstantPad2d, ConstantPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d, ReflectionPad1d,
                      ReflectionPad2d, ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                      CircularPad1d, CircularPad2d, CircularPad3d)
from .parameter import UninitializedParameter
from .lazy import (LazyLinear, LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d, LazyConvTranspose2d,
                   LazyConvTranspose3d)
from .loss import NLLLoss2d
from .adaptive import AdaptiveLogSoftmaxWithLoss
from . import functional, init
from . import utils
from . import parallel, grad, modules
from .parallel import DataParallel

__all__ = ["Parameter", "Buffer", "Module", "RemovableHandle", "Sequential", "ModuleList", "ModuleDict",
           "ParameterList", "ParameterDict", "Identity", "Linear", "Conv2d", "Embedding", "Dropout", "Dropout1d",
           "Dropout2d", "Dropout3d", "AlphaDropout", "Flatten", "Unflatten", "MaxPool2d", "AvgPool2d",
           "AdaptiveAvgPool2d", "ReLU", "ReLU6", "Hardtanh", "Hardsigmoid", "Hardswish", "Mish", "SELU", "CELU",
           "Threshold", "GELU", "SiLU", "Sigmoid",
           "Tanh", "LeakyReLU", "ELU", "Softplus", "Softmax", "LogSoftmax", "BatchNorm1d", "BatchNorm2d", "LayerNorm",
           "CrossEntropyLoss", "NLLLoss", "MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "BCELoss",
           "BCEWithLogitsLoss", "functional", "init", "utils"]
__all__ += ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell",
            "MultiheadAttention", "Transformer", "TransformerEncoder", "TransformerDecoder",
            "TransformerEncoderLayer", "TransformerDecoderLayer"]
__all__ += ["GLU", "Hardshrink", "Softshrink", "Tanhshrink", "LogSigmoid", "Softsign", "Softmin", "Softmax2d", "PReLU",
            "RReLU", "BatchNorm3d", "SyncBatchNorm", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "GroupNorm",
            "RMSNorm", "LocalResponseNorm", "KLDivLoss", "PoissonNLLLoss", "GaussianNLLLoss", "HingeEmbeddingLoss",
            "CosineEmbeddingLoss", "MarginRankingLoss", "SoftMarginLoss", "MultiLabelSoftMarginLoss",
            "MultiLabelMarginLoss", "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss",
            "CTCLoss", "PairwiseDistance", "CosineSimilarity"]
__all__ += ["Conv1d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d", "MaxPool1d", "MaxPool3d",
            "AvgPool1d", "AvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
            "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "LPPool1d", "LPPool2d", "MaxUnpool1d", "MaxUnpool2d",
            "MaxUnpool3d", "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d", "PixelShuffle",
            "PixelUnshuffle", "ChannelShuffle", "Fold", "Unfold", "EmbeddingBag"]
__all__ += ["Bilinear", "FeatureAlphaDropout", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ZeroPad1d",
            "ZeroPad2d", "ZeroPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d",
            "ReplicationPad2d", "ReplicationPad3d", "CircularPad1d", "CircularPad2d", "CircularPad3d",
            "UninitializedParameter", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
            "LazyConvTranspose2d", "LazyConvTranspose3d", "NLLLoss2d", "AdaptiveLogSoftmaxWithLoss", "DataParallel",
            "parallel", "grad", "modules"]
