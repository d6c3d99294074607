"""oar.utils.data._utils.collate (torch.utils.data._utils.collate): default_collate and default_convert,
which turn a list of samples into a batch and NumPy data into tensors."""
import collections.abc
import numbers

import numpy as np

from .... import _C
from ...._C import Tensor
from ...._ops import ops

__all__ = ["default_collate", "default_convert"]


def default_convert(data):
    """Converts NumPy arrays (recursively inside lists/tuples/dicts) to tensors; leaves the rest."""
    if isinstance(data, np.ndarray) and data.dtype.kind not in "SaUO":
        return _C.tensor(data, None, None, False)
    if isinstance(data, collections.abc.Mapping):
        return {k: default_convert(v) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, (list, tuple)):
        return [default_convert(d) for d in data]
    return data


def default_collate(batch):
    """Stacks tensors/arrays along a new dim 0, turns numbers into tensors, recurses into dicts and sequences."""
    if not isinstance(batch, (list, tuple)) or len(batch) == 0:
        raise TypeError("default_collate expects a non-empty list of samples")
    elem = batch[0]
    if isinstance(elem, Tensor):
        return ops.stack(list(batch), dim=0)
    if isinstance(elem, np.ndarray):
        if elem.dtype.kind in "SaUO":
            raise TypeError(f"default_collate: numpy arrays of dtype {elem.dtype} can't be converted to tensors")
        return ops.stack([_C.tensor(b, None, None, False) for b in batch], dim=0)
    if isinstance(elem, np.generic):
        return _C.tensor(np.array(batch), None, None, False)
    if isinstance(elem, bool):
        return _C.tensor(list(batch), _C.dtype.bool, None, False)
    if isinstance(elem, numbers.Integral):
        return _C.tensor(list(batch), _C.dtype.int64, None, False)
    if isinstance(elem, numbers.Real):
        return _C.tensor(list(batch), _C.dtype.float64, None, False)
    if isinstance(elem, (str, bytes)):
        return batch  # as torch: a tuple inside tuple samples (from the zip below), the sampled list at the top
    if isinstance(elem, collections.abc.Mapping):
        return {k: default_collate([d[k] for d in batch]) for k in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(s) for s in zip(*batch)]
    raise TypeError(f"default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                    f"found {type(elem).__name__}")
