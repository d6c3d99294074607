"""torch.nn.modules: the package PyTorch keeps its layer classes in. Every submodule re-exports oar.nn's own
classes (no copies), so `from torch.nn.modules.loss import _Loss`, `torch.nn.modules.conv._ConvNd` and
isinstance checks against those bases work, and pickles naming torch.nn.modules.<file>.<Class> load."""
from .activation import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .channelshuffle import *  # noqa: F401,F403
from .container import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .lazy import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .module import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from . import (activation, adaptive, batchnorm, channelshuffle, container, conv, distance, dropout, flatten, fold,
               instancenorm, lazy, linear, loss, module, normalization, padding, pixelshuffle, pooling, rnn,
               sparse, transformer, upsampling, utils)  # noqa: F401

__all__ = ["Threshold", "ReLU", "RReLU", "Hardtanh", "ReLU6", "Sigmoid", "Hardsigmoid", "Tanh", "SiLU", "Mish",
           "Hardswish", "ELU", "CELU", "SELU", "GLU", "GELU", "Hardshrink", "LeakyReLU", "LogSigmoid", "Softplus",
           "Softshrink", "PReLU", "Softsign", "Tanhshrink", "Softmin", "Softmax", "Softmax2d", "LogSoftmax",
           "MultiheadAttention", "AdaptiveLogSoftmaxWithLoss", "BatchNorm1d", "BatchNorm2d", "BatchNorm3d",
           "SyncBatchNorm", "ChannelShuffle", "Sequential", "ModuleList", "ModuleDict", "ParameterList",
           "ParameterDict", "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
           "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
           "LazyConvTranspose3d", "PairwiseDistance", "CosineSimilarity", "Dropout", "Dropout1d", "Dropout2d",
           "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "Flatten", "Unflatten", "Fold", "Unfold",
           "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyModuleMixin", "Identity", "Linear",
           "Bilinear", "LazyLinear", "NonDynamicallyQuantizableLinear", "L1Loss", "NLLLoss", "NLLLoss2d",
           "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "MSELoss", "BCELoss", "BCEWithLogitsLoss",
           "HingeEmbeddingLoss", "MultiLabelMarginLoss", "SmoothL1Loss", "HuberLoss", "SoftMarginLoss",
           "CrossEntropyLoss", "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss", "MarginRankingLoss",
           "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss", "Module",
           "register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_full_backward_hook", "Parameter",
           "RemovableHandle", "LocalResponseNorm", "LayerNorm", "GroupNorm", "RMSNorm", "ConstantPad1d",
           "ConstantPad2d", "ConstantPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d", "ReflectionPad1d",
           "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
           "CircularPad1d", "CircularPad2d", "CircularPad3d", "PixelShuffle", "PixelUnshuffle", "MaxPool1d",
           "MaxPool3d", "AvgPool1d", "AvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
           "AdaptiveAvgPool1d", "AdaptiveAvgPool3d", "LPPool1d", "LPPool2d", "MaxUnpool1d", "MaxUnpool2d",
           "MaxUnpool3d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "RNNBase", "RNN", "LSTM", "GRU",
           "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell", "Embedding", "EmbeddingBag", "Transformer",
           "TransformerEncoder", "TransformerDecoder", "TransformerEncoderLayer", "TransformerDecoderLayer",
           "Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]
