"""oar.nn.utils.rnn: packed and padded variable-length sequences (PyTorch's torch.nn.utils.rnn).

A PackedSequence stores a batch of sequences of different lengths time step by
time step: `data` holds, for t = 0, 1, ..., the rows of the sequences still
running at step t (batch_sizes[t] of them), the sequences sorted by decreasing
length. `sorted_indices[i]` is the batch position of the i-th longest sequence
and `unsorted_indices` its inverse (both None when the batch came sorted,
enforce_sorted=True). batch_sizes is an int64 tensor on the CPU; the indices
live on the data's device.

Packing and unpacking are each one index_select (a gather with a gradient), so
the whole batch moves in one op and the gradient flows back to the padded input.
"""
import numbers
from collections import namedtuple

from ... import _C
from ..._C import Tensor, ShapeError
from ..._ops import ops

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "unpad_sequence", "pack_sequence", "unpack_sequence"]

_I64 = _C.dtype.int64


def _index(values, device):
    return _C.tensor(list(values), _I64, device, False)


def _int_list(t):
    if t is None:
        return None
    if isinstance(t, Tensor):
        return [int(v) for v in t.tolist()]
    return [int(v) for v in t]


def invert_permutation(permutation):
    """The inverse permutation (None for None): output[permutation[i]] = i."""
    if permutation is None:
        return None
    perm = _int_list(permutation)
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    device = permutation.device if isinstance(permutation, Tensor) else None
    return _index(inv, device)


_PackedSequenceBase = namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_PackedSequenceBase):
    """(data, batch_sizes, sorted_indices, unsorted_indices); see the module docstring. Build it with
    pack_padded_sequence / pack_sequence rather than by hand."""
    __slots__ = ()

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:  # the legacy form PackedSequence((data, batch_sizes))
            data, batch_sizes = data
        if not isinstance(batch_sizes, Tensor):
            batch_sizes = _index(_int_list(batch_sizes), "cpu")
        elif str(batch_sizes.device).split(":")[0] != "cpu" or batch_sizes.ndim != 1:
            raise ValueError("PackedSequence: batch_sizes should always be a 1-D tensor on the CPU")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """data converted as Tensor.to(...) would; the indices follow the data's device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data or (data.device == self.data.device and data.dtype == self.data.dtype):
            return self  # Tensor.to to the same device and dtype converts nothing
        dev = data.device
        s = None if self.sorted_indices is None else self.sorted_indices.to(dev)
        u = None if self.unsorted_indices is None else self.unsorted_indices.to(dev)
        return type(self)(data, self.batch_sizes, s, u)

    def cpu(self, *args, **kwargs):
        return self.to("cpu")

    def double(self):
        return self.to(dtype=_C.dtype.float64)

    def float(self):
        return self.to(dtype=_C.dtype.float32)

    def half(self):
        return self.to(dtype=_C.dtype.float16)

    def long(self):
        return self.to(dtype=_I64)

    def int(self):
        return self.to(dtype=_C.dtype.int32)

    def detach(self):
        return type(self)(self.data.detach(), self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    @property
    def is_cuda(self):
        return str(self.data.device).startswith("cuda")

    def is_pinned(self):
        return False

    @property
    def device(self):
        return self.data.device

    @property
    def dtype(self):
        return self.data.dtype


def _lengths_list(lengths):
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1:
            raise ValueError(f"lengths must be a 1-D tensor, got shape {tuple(lengths.shape)}")
        return [int(v) for v in lengths.tolist()]
    if isinstance(lengths, numbers.Integral):
        return [int(lengths)]
    return [int(v) for v in lengths]


def _batch_sizes(sorted_lengths):
    """batch_sizes[t] = how many of the (decreasing) lengths exceed t."""
    sizes, n = [], len(sorted_lengths)
    for t in range(sorted_lengths[0] if sorted_lengths else 0):
        while n and sorted_lengths[n - 1] <= t:
            n -= 1
        sizes.append(n)
    return sizes


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch [T, B, *] ([B, T, *] with batch_first) whose sequence b has lengths[b] steps.

    enforce_sorted=True requires lengths in decreasing order (sorted_indices is then None); otherwise the
    batch is sorted here and the permutation kept so pad_packed_sequence restores the original order."""
    if not isinstance(input, Tensor):
        raise TypeError(f"pack_padded_sequence(): input must be a Tensor, got {type(input).__name__}")
    lens = _lengths_list(lengths)
    if input.ndim < 2:
        raise ShapeError(f"pack_padded_sequence(): input must have at least 2 dims, got {tuple(input.shape)}")
    T, B = (input.shape[1], input.shape[0]) if batch_first else (input.shape[0], input.shape[1])
    if len(lens) != B:
        raise ValueError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} "
                         f"(batch_size={B})")
    if enforce_sorted:
        if any(lens[i] < lens[i + 1] for i in range(len(lens) - 1)):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                               "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                               "pack_sequence to sidestep this requirement if you do not need ONNX "
                               "exportability.")
        order = list(range(B))
    else:
        order = sorted(range(B), key=lambda b: -lens[b])  # stable: equal lengths keep their order
    sorted_lens = [lens[b] for b in order]
    if B and sorted_lens[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if B and sorted_lens[0] > T:
        raise ValueError(f"pack_padded_sequence(): a length ({sorted_lens[0]}) exceeds the padded length ({T})")
    batch_sizes = _batch_sizes(sorted_lens)
    # Row of step t of the sorted sequence i in the input flattened to [T * B, *] (or [B * T, *]).
    rows = [order[i] * T + t if batch_first else t * B + order[i]
            for t, bs in enumerate(batch_sizes) for i in range(bs)]
    flat = input.reshape(T * B, *input.shape[2:])
    data = ops.index_select(flat, _index(rows, input.device), dim=0)
    if enforce_sorted:
        return PackedSequence(data, batch_sizes, None, None)
    sorted_indices = _index(order, input.device)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The inverse of pack_padded_sequence: (padded [T, B, *] or [B, T, *], lengths (int64, CPU)) in the
    original batch order; total_length pads T further (it must be at least the longest length)."""
    data, batch_sizes = sequence.data, _int_list(sequence.batch_sizes)
    T, B = len(batch_sizes), (batch_sizes[0] if batch_sizes else 0)
    if total_length is not None:
        if total_length < T:
            raise ValueError(f"Expected total_length to be at least the length of the longest sequence in "
                             f"the input, but got total_length={total_length} and max sequence length being {T}")
        T_out = int(total_length)
    else:
        T_out = T
    sorted_lens = [sum(1 for bs in batch_sizes if bs > i) for i in range(B)]
    unsorted = _int_list(sequence.unsorted_indices)
    sorted_of = unsorted if unsorted is not None else list(range(B))  # batch position b -> sorted position
    offsets, off = [], 0
    for bs in batch_sizes:
        offsets.append(off)
        off += bs
    pad_row = off  # one padding row appended after the data
    rows = []
    outer, inner = (B, T_out) if batch_first else (T_out, B)
    for a in range(outer):
        for c in range(inner):
            b, t = (a, c) if batch_first else (c, a)
            i = sorted_of[b]
            rows.append(offsets[t] + i if t < T and i < batch_sizes[t] else pad_row)
    feat = tuple(data.shape[1:])
    pad = _C.call("fill", [], {"shape": [1, *feat], "value": float(padding_value), "dtype": data.dtype},
                  data.device)
    src = ops.concat([data, pad], dim=0)
    padded = ops.index_select(src, _index(rows, data.device), dim=0).reshape(outer, inner, *feat)
    lengths = [sorted_lens[sorted_of[b]] for b in range(B)]
    return padded, _index(lengths, "cpu")


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks tensors [L_i, *] into [L_max, B, *] ([B, L_max, *] with batch_first), padding the short
    ones with padding_value at the end (padding_side='left': at the start)."""
    if isinstance(sequences, Tensor):
        sequences = list(sequences.unbind(0))
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    feat = tuple(sequences[0].shape[1:])
    for s in sequences:
        if tuple(s.shape[1:]) != feat:
            raise ShapeError(f"pad_sequence(): all sequences must have the same trailing shape {feat}, got "
                             f"{tuple(s.shape)}")
    lens = [s.shape[0] for s in sequences]
    L, B = max(lens), len(sequences)
    starts, off = [], 0
    for n in lens:
        starts.append(off)
        off += n
    pad_row = off
    rows = []
    for a in range(B if batch_first else L):
        for c in range(L if batch_first else B):
            b, t = (a, c) if batch_first else (c, a)
            if padding_side == "left":
                t -= L - lens[b]
            rows.append(starts[b] + t if 0 <= t < lens[b] else pad_row)
    ref = sequences[0]
    pad = _C.call("fill", [], {"shape": [1, *feat], "value": float(padding_value), "dtype": ref.dtype}, ref.device)
    src = ops.concat(list(sequences) + [pad], dim=0)
    out = ops.index_select(src, _index(rows, ref.device), dim=0)
    return out.reshape(B, L, *feat) if batch_first else out.reshape(L, B, *feat)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences padded_sequences[:lengths[b], b] (the inverse of pad_sequence)."""
    lens = _lengths_list(lengths)
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[b, :n] for b, n in enumerate(lens)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of tensors [L_i, *] (decreasing lengths unless enforce_sorted=False)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """The list of sequences of a PackedSequence, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
