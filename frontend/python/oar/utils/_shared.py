"""Moves a DataLoader worker's batch to the main process through POSIX shared memory.

`pack()` (in the worker) copies every tensor of a batch into one shared-memory
segment and returns a small picklable `Packed` record: the batch's structure with
each tensor replaced by a `_Ref`, plus each tensor's offset, shape and dtype.
`Packed.unpack()` (in the main process) maps the segment and wraps it in
tensors without copying, then unlinks the name at once, so the memory lives
exactly as long as the tensors that use it. Only the record is pickled.

Segments are created without multiprocessing's resource tracker (which would
warn about, or unlink, a segment created by one process and freed by another);
the main process owns every name instead, and `unlink_prefix()` removes any a
dead worker left behind. Where POSIX shared memory is missing, arrays travel
inside the record (pickled, correct but slower).
"""
import collections.abc
import glob
import mmap
import os

import numpy as np

from .. import _C
from .._C import Tensor

try:
    import _posixshmem
except ImportError:  # not POSIX: arrays are pickled instead
    _posixshmem = None

_ALIGN = 64  # each tensor starts on a cache line


class _Ref:
    """Stands for the i-th tensor of a packed batch."""
    __slots__ = ("i",)

    def __init__(self, i):
        self.i = i

    def __getstate__(self):
        return self.i

    def __setstate__(self, i):
        self.i = i


def _strip(data, tensors):
    """The structure of `data` with tensors replaced by _Refs (appended to `tensors`)."""
    if isinstance(data, Tensor):
        tensors.append(data)
        return _Ref(len(tensors) - 1)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {k: _strip(v, tensors) for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(_strip(d, tensors) for d in data))
    if isinstance(data, (list, tuple)):
        return type(data)(_strip(d, tensors) for d in data) if type(data) in (list, tuple) else data
    return data


def _fill(skeleton, tensors):
    """Inverse of _strip: puts tensors back where the _Refs are."""
    if isinstance(skeleton, _Ref):
        return tensors[skeleton.i]
    if isinstance(skeleton, collections.abc.Mapping):
        return _rebuild_mapping(skeleton, {k: _fill(v, tensors) for k, v in skeleton.items()})
    if isinstance(skeleton, tuple) and hasattr(skeleton, "_fields"):
        return type(skeleton)(*(_fill(d, tensors) for d in skeleton))
    if type(skeleton) in (list, tuple):
        return type(skeleton)(_fill(d, tensors) for d in skeleton)
    return skeleton


def _rebuild_mapping(like, items):
    try:  # keep OrderedDict and friends
        return type(like)(items)
    except Exception:  # noqa: BLE001 - a Mapping that can't be built from a dict
        return items


def _host_array(t):
    """A contiguous NumPy view of `t` on the CPU; bfloat16 widens to float32 (exact), NumPy has none."""
    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if t.dtype == _C.dtype.bfloat16:
        t = t.to(_C.dtype.float32)
    return t.contiguous().numpy()


class Packed:
    """A batch in transit: structure, tensor layout and the shared-memory segment name (or the arrays)."""

    def __init__(self, skeleton, metas, name, size, arrays=None):
        self.skeleton, self.metas, self.name, self.size, self.arrays = skeleton, metas, name, size, arrays

    def unpack(self):
        """The batch as oar tensors, sharing the segment's memory; the segment's name is unlinked."""
        buf = None
        if self.name is not None:
            buf = _open(self.name, self.size)
        arrays = self.arrays or [_view(buf, m) for m in self.metas]
        tensors = [_to_tensor(a, m) for a, m in zip(arrays, self.metas)]
        return _fill(self.skeleton, tensors)

    def free(self):
        """Drops a batch that will never be unpacked."""
        if self.name is not None:
            _unlink(self.name)


def pack(data, name):
    """Packs `data` (any structure of tensors and picklable values) into a segment called `name`."""
    tensors = []
    skeleton = _strip(data, tensors)
    arrays = [_host_array(t) for t in tensors]
    metas, size = [], 0
    for t, a in zip(tensors, arrays):
        metas.append((size, a.shape, a.dtype.str, str(t.dtype).replace("oar.", ""), str(t.device), t.requires_grad))
        size += -(-a.nbytes // _ALIGN) * _ALIGN
    if _posixshmem is None or size == 0:
        return Packed(skeleton, metas, None, 0, [a.copy() for a in arrays] if arrays else None)
    _write(name, size, metas, arrays)
    return Packed(skeleton, metas, name, size)


def _write(name, size, metas, arrays):
    fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600)
    try:
        os.ftruncate(fd, size)
        buf = mmap.mmap(fd, size)
    finally:
        os.close(fd)
    try:
        for (offset, *_), a in zip(metas, arrays):
            np.ndarray(a.shape, a.dtype, buffer=buf, offset=offset)[...] = a
    finally:
        buf.close()


def _open(name, size):
    fd = _posixshmem.shm_open(name, os.O_RDWR, mode=0o600)
    try:
        return mmap.mmap(fd, size)
    finally:
        os.close(fd)
        _unlink(name)  # the mapping keeps the memory; nothing else needs the name


def _view(buf, meta):
    offset, shape, dtype = meta[:3]
    dtype = np.dtype(dtype)
    count = int(np.prod(shape, dtype=np.int64))
    if count == 0:
        return np.empty(shape, dtype)
    return np.frombuffer(buf, dtype, count=count, offset=offset).reshape(shape)


def _to_tensor(array, meta):
    name, device = meta[3], meta[4]
    t = _C.from_dlpack(array)  # keeps `array` (and the mapping) alive
    if name == "bfloat16":
        t = t.to(_C.dtype.bfloat16)
    if device != "cpu":
        t = t.to(device)
    if len(meta) > 5 and meta[5]:  # a leaf that required grad keeps the flag, as PyTorch's transfer does
        t.requires_grad_(True)
    return t


def _unlink(name):
    try:
        _posixshmem.shm_unlink(name)
    except FileNotFoundError:
        pass


def unlink_prefix(prefix):
    """Removes segments whose names start with `prefix` (left by a worker that died mid-batch); Linux only."""
    if _posixshmem is None or not os.path.isdir("/dev/shm"):
        return
    for path in glob.glob(os.path.join("/dev/shm", glob.escape(prefix.lstrip("/")) + "*")):
        _unlink("/" + os.path.basename(path))
