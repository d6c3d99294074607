"""torch.nn.modules.loss: loss layers and their bases _Loss and _WeightedLoss, re-exported from oar.nn (the same
classes)."""
from ..loss import (_Loss, _WeightedLoss, L1Loss, NLLLoss, NLLLoss2d, PoissonNLLLoss, GaussianNLLLoss, KLDivLoss,
                    MSELoss, BCELoss, BCEWithLogitsLoss, HingeEmbeddingLoss, MultiLabelMarginLoss, SmoothL1Loss,
                    HuberLoss, SoftMarginLoss, CrossEntropyLoss, MultiLabelSoftMarginLoss, CosineEmbeddingLoss,
                    MarginRankingLoss, MultiMarginLoss, TripletMarginLoss, TripletMarginWithDistanceLoss, CTCLoss)

__all__ = ["L1Loss", "NLLLoss", "NLLLoss2d", "PoissonNLLLoss", "GaussianNLLLoss", "KLDivLoss", "MSELoss", "BCELoss",
           "BCEWithLogitsLoss", "HingeEmbeddingLoss", "MultiLabelMarginLoss", "SmoothL1Loss", "HuberLoss",
           "SoftMarginLoss", "CrossEntropyLoss", "MultiLabelSoftMarginLoss", "CosineEmbeddingLoss",
           "MarginRankingLoss", "MultiMarginLoss", "TripletMarginLoss", "TripletMarginWithDistanceLoss", "CTCLoss"]
