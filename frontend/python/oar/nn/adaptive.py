"""AdaptiveLogSoftmaxWithLoss (Grave et al., "Efficient softmax approximation for GPUs"), with PyTorch's
constructor, parameters (head Linear, tail ModuleList of Sequential(Linear, Linear) projections), forward
(output, loss), log_prob and predict. The per-cluster terms are composed without in-place writes
(index_select, gather, index_add, cat), so gradients reach the input and every projection on every device."""
from collections import namedtuple

import numpy as np

from .. import _C
from .. import _functions as _fn
from .._C import ShapeError
from .._creation import zeros
from .._ops import ops
from . import functional as F
from .container import ModuleList, Sequential
from .layers import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


def _index(values, like):
    from .._creation import tensor
    return tensor(np.asarray(values, dtype=np.int64), dtype=_C.dtype.int64, device=like.device)


class AdaptiveLogSoftmaxWithLoss(Module):
    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False, device=None, dtype=None):
        super().__init__()
        cutoffs = list(cutoffs)
        if (len(cutoffs) == 0 or cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted in an increasing "
                             "order, where each value is between 1 and n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = [int(c) for c in cutoffs] + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(self.in_features, self.head_size, bias=self.head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(self.in_features // (self.div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(self.in_features, hsz, bias=False, device=device, dtype=dtype),
                                        Linear(hsz, osz, bias=False, device=device, dtype=dtype)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def _tail(self, i, x):
        """tail[i](x); a zero-width hidden layer (in_features // div_value ** (i + 1) == 0) gives zero logits,
        computed directly (PyTorch runs the empty matmuls)."""
        i2h, h2o = self.tail[i]
        if i2h.out_features == 0:
            return zeros(x.shape[0], h2o.out_features, dtype=x.dtype, device=x.device)
        return self.tail[i](x)

    def forward(self, input_, target_):
        targ_dim = target_.ndim
        if targ_dim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise ShapeError("Input and target should have the same size in the batch dimension.")
            if input_.ndim != 2:
                raise ShapeError(f"1D target tensor expects 2D input tensors, but found inputs with size "
                                 f"{tuple(input_.shape)}")
        elif targ_dim == 0:
            if input_.ndim != 1:
                raise ShapeError(f"0D target tensor expects 1D input tensors, but found inputs with size "
                                 f"{tuple(input_.shape)}")
        else:
            raise ShapeError("0D or 1D target tensor expected, multi-target not supported")
        if target_.is_floating_point():
            raise _C.DTypeError(f"AdaptiveLogSoftmaxWithLoss: target must be an integer tensor, got {target_.dtype}")
        is_batched = targ_dim > 0
        input = input_ if is_batched else input_.unsqueeze(0)
        target = target_ if is_batched else target_.unsqueeze(0)
        t = np.asarray(target.tolist(), dtype=np.int64).reshape(-1)
        if t.size and (t.min() < 0 or t.max() > self.n_classes - 1):
            raise _C.ValueError(f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                                f"[{t.min()}, {t.max()}] were found. ")
        # the head's column for each row: its class in the shortlist, else its cluster's entry
        cluster = np.searchsorted(np.asarray(self.cutoffs), t, side="right")  # 0: shortlist, i: tail[i - 1]
        gather_inds = np.where(cluster == 0, t, self.shortlist_size + cluster - 1)
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = head_logprob.gather(1, _index(gather_inds, input).unsqueeze(1)).squeeze(1)
        for i in range(1, self.n_clusters + 1):
            rows = np.nonzero(cluster == i)[0]
            if rows.size == 0:
                continue
            rows_t = _index(rows, input)
            cluster_logprob = F.log_softmax(self._tail(i - 1, input.index_select(0, rows_t)), dim=1)
            relative = _index(t[rows] - self.cutoffs[i - 1], input)
            local = cluster_logprob.gather(1, relative.unsqueeze(1)).squeeze(1)
            output = output.index_add(0, rows_t, local)
        loss = (-output).mean()
        if not is_batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logprob = F.log_softmax(self._tail(i, input), dim=1)
            parts.append(cluster_logprob + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return ops.concat(parts, dim=1)

    def log_prob(self, input):
        """Log-probabilities of every class, [N, n_classes] (or [n_classes] for a 1-D input)."""
        if input.ndim == 1:
            return self.log_prob(input.unsqueeze(0)).squeeze(0)
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most likely class of each row: the head's argmax when it is in the shortlist, else the argmax of
        the full distribution (equal to PyTorch's, which computes that only for those rows)."""
        if input.ndim == 1:
            return self.predict(input.unsqueeze(0)).squeeze(0)
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        not_in_shortlist = output >= self.shortlist_size
        if not bool(not_in_shortlist.any()):
            return output
        full = self._get_full_log_prob(input, head_output).argmax(dim=1)
        if bool(not_in_shortlist.all()):
            return full
        return _fn.where(not_in_shortlist, full, output)
