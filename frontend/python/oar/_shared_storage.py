"""Shared-memory CPU tensors (torch's share_memory_): Tensor.share_memory_(), Tensor.is_shared(), and the
pickling that sends a shared tensor to another process as the same memory.

share_memory_() copies a CPU tensor's values into a new shared-memory segment and makes the tensor show
it (`t.data = ...`, which keeps the object, its class and its autograd state). The segment has no name
(memfd_create; elsewhere shm_open, unlinked at once), so nothing can be left behind in /dev/shm and no
resource tracker is involved: the kernel frees the memory when the last mapping and descriptor, in any
process, are gone. Processes forked later inherit the mapping. Other processes get it through
multiprocessing's pickler (spawn Process args, Queue, Pipe, Pool): a shared tensor is sent as the
segment's file descriptor (multiprocessing.reduction.DupFd, torch's "file_descriptor" strategy) and
mapped again on arrival. Tensors not in shared memory are still pickled as copies (see _reduce_for_ipc).

In-place ops write into this memory rather than swapping in a new buffer: it is imported through DLPack,
so its storage is marked external and Tensor::update_ never replaces it.
"""
import bisect
import ctypes
import mmap
import multiprocessing.reduction as _reduction
import os

import numpy as np

from . import _C
from ._C import Tensor

try:
    import _posixshmem
except ImportError:  # not POSIX: share_memory_() raises
    _posixshmem = None

# oar dtype -> the NumPy dtype its bytes are mapped as (bfloat16: its bits, see _as_bfloat16)
_NUMPY = {"float32": "float32", "float64": "float64", "float16": "float16", "bfloat16": "uint16",
          "int8": "int8", "uint8": "uint8", "int32": "int32", "int64": "int64", "bool": "bool"}

# Live segments of this process: start address -> (end address, fd). A tensor is shared when its
# data_ptr lies in one. The fd stays open while the segment is mapped so it can be sent on (as torch's).
_segments = {}
_starts = []  # the keys of _segments, sorted

_NONLEAF = ("Cowardly refusing to serialize non-leaf tensor which requires_grad, since autograd does not "
            "support crossing process boundaries.  If you just want to transfer the data, call detach() on "
            "the tensor before serializing (e.g., putting it on the queue).")


def _new_fd(nbytes):
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("oar_shared", os.MFD_CLOEXEC)
    elif _posixshmem is not None:
        name = f"/oar_shared_{os.getpid()}_{os.urandom(8).hex()}"
        fd = _posixshmem.shm_open(name, os.O_CREAT | os.O_EXCL | os.O_RDWR, mode=0o600)
        _posixshmem.shm_unlink(name)  # nameless from now on: freed with its last user
    else:
        raise RuntimeError("share_memory_(): this platform has no POSIX shared memory")
    try:
        os.ftruncate(fd, nbytes)
    except OSError:
        os.close(fd)
        raise
    return fd


_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_MAP_FAILED = ctypes.c_void_p(-1).value


class _Segment:
    """One mapping of a segment, with its descriptor: unmapped and closed when the last buffer made by
    buffer() (and so the last tensor on it) is gone. Mapped through libc rather than Python's mmap, which
    keeps a second descriptor of its own: one per segment is what fd limits allow for."""

    def __init__(self, fd, nbytes):
        addr = _libc.mmap(None, nbytes, mmap.PROT_READ | mmap.PROT_WRITE, mmap.MAP_SHARED, fd, 0)
        if addr is None or addr == _MAP_FAILED:
            err = ctypes.get_errno()
            raise OSError(err, f"share_memory_(): mapping {nbytes} bytes of shared memory: {os.strerror(err)}")
        self.start, self.nbytes, self.fd = addr, nbytes, fd
        bisect.insort(_starts, addr)
        _segments[addr] = (addr + nbytes, fd)

    def buffer(self):
        buf = (ctypes.c_char * self.nbytes).from_address(self.start)
        buf._segment = self  # NumPy arrays on `buf`, and the tensors on them, keep the mapping alive
        return buf

    def __del__(self, _segments=_segments, _starts=_starts, munmap=_libc.munmap, close=os.close):
        # Defaults bind what this needs, as at interpreter exit the module's globals may be gone first.
        if not hasattr(self, "fd"):  # __init__ failed: nothing mapped, and the caller closes the fd
            return
        if _segments.pop(self.start, None) is not None:
            _starts.remove(self.start)
        munmap(self.start, self.nbytes)
        close(self.fd)


def _segment_of(t):
    """(start, end, fd) of the segment holding `t`'s memory, or None."""
    if t.device.type != "cpu":
        return None
    ptr = t.data_ptr()
    i = bisect.bisect_right(_starts, ptr) - 1
    if i < 0:
        return None
    start = _starts[i]
    end, fd = _segments[start]
    return (start, end, fd) if ptr < end else None


def _dtype_name(dtype):
    return str(dtype).replace("oar.", "")


def _as_bfloat16(array):
    """NumPy has no bfloat16: hand oar the uint16 array's DLPack capsule with the dtype code rewritten to
    kDLBfloat (4). The capsule keeps `array`, and so the mapping, alive for as long as oar uses it."""
    capsule = array.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    # DLManagedTensor starts with DLTensor {void* data; DLDevice (2 x int32); int32 ndim; DLDataType
    # {uint8 code; uint8 bits; uint16 lanes}; ...}: the code byte is at offset 20 on 64-bit hosts.
    ctypes.c_uint8.from_address(get(capsule, b"dltensor") + 20).value = 4
    return _C.from_dlpack(capsule)


def _wrap(buf, offset, shape, strides, dtype_name):
    """A tensor showing `buf` from byte `offset` with this shape and these strides (in elements)."""
    npdt = np.dtype(_NUMPY[dtype_name])
    array = np.ndarray(shape, npdt, buffer=buf, offset=offset, strides=[s * npdt.itemsize for s in strides])
    return _as_bfloat16(array) if dtype_name == "bfloat16" else _C.from_dlpack(array)


def share_memory_(self):
    """Moves this CPU tensor's memory into shared memory (values kept) and returns self; a no-op when it is
    already there. Processes forked afterwards, and those it is sent to through oar.multiprocessing, see
    the same memory. Strides are kept. Tensors on other devices are returned as they are (torch does the
    same for CUDA; oar's other devices have no inter-process memory).

    Unlike torch, tensors made from this one's memory before the call (views, detach(), .data, numpy())
    keep the old, private memory: oar can't swap the memory under a storage that others hold."""
    if self.device.type != "cpu" or _segment_of(self) is not None:
        return self
    name = _dtype_name(self.dtype)
    if name not in _NUMPY:
        raise TypeError(f"share_memory_(): tensors of dtype {self.dtype} can't be shared")
    shape, strides = tuple(self.shape), tuple(self.stride())
    # Enough elements for every index the strides reach (stride 0 of an expand() stays one element).
    span = 0 if 0 in shape else 1 + sum((n - 1) * s for n, s in zip(shape, strides))
    nbytes = max(span * np.dtype(_NUMPY[name]).itemsize, 1)  # mmap refuses an empty file
    fd = _new_fd(nbytes)
    try:
        segment = _Segment(fd, nbytes)
    except BaseException:
        os.close(fd)
        raise
    shared = _wrap(segment.buffer(), 0, shape, strides, name)
    shared.copy_(self.detach())  # detached: this copy is no step of the tensor's history
    self.data = shared
    return self


def is_shared(self):
    """Whether this tensor's memory is in shared memory (share_memory_, or received from another process)."""
    return _segment_of(self) is not None


def _reduce_for_ipc(t):
    """multiprocessing's pickling of a Tensor: a shared one travels as its segment's descriptor and arrives
    showing the same memory. Any other is copied, as before. (torch first moves it into shared memory
    in the sender; oar doesn't, since views of it made earlier would silently stop sharing its memory.)"""
    seg = _segment_of(t)
    if seg is None:
        return t.__reduce_ex__(2)
    if t.requires_grad and not t.is_leaf:
        raise RuntimeError(_NONLEAF)
    start, end, fd = seg
    return _rebuild, (_reduction.DupFd(fd), end - start, t.data_ptr() - start, tuple(t.shape),
                      tuple(t.stride()), _dtype_name(t.dtype), t.requires_grad)


def _rebuild(dupfd, nbytes, offset, shape, strides, dtype_name, requires_grad):
    fd = dupfd.detach()  # this process's own descriptor; kept, so the tensor can be sent on
    try:
        segment = _Segment(fd, nbytes)
    except BaseException:
        os.close(fd)
        raise
    t = _wrap(segment.buffer(), offset, shape, strides, dtype_name)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _install():
    Tensor.share_memory_ = share_memory_
    Tensor.is_shared = is_shared
    # For exactly Tensor; nn.Parameter's own reduction pickles its memory as a plain Tensor, which lands here.
    _reduction.ForkingPickler.register(Tensor, _reduce_for_ipc)
