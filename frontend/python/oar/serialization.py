"""oar.save / oar.load: checkpoints of tensors, containers and plain values.

Two formats (docs/serialization.md), both versioned, checksummed and written
atomically to paths:

- OARSTATE, shared with the C++ API (oar::save / oar::load): a flat dict of
  str -> Tensor, e.g. model.state_dict(), is always written this way so C++
  reads what Python saved.
- OARCHKPT, Python only: any nesting of dicts, lists, tuples, sets, scalars,
  strings, bytes, tensors (device, requires_grad and shared memory kept) and
  NumPy arrays, in a tagged binary layout.

Loading never imports or calls anything named by the file (no pickle): a file
can only produce the types listed above. A file that is truncated, foreign,
from a newer format version or corrupted raises oar.IOError (a RuntimeError)
naming the file and the problem.
"""
import collections
import os
import re
import struct
import tempfile
import zlib

from . import _C

_STATE_MAGIC = b"OARSTATE"
_CKPT_MAGIC = b"OARCHKPT"
_CKPT_VERSION = 1
_HEADER = struct.Struct("<8sIQ")  # magic, version, payload length
_CRC = struct.Struct("<I")
_MAX_DIMS = 64
_MAX_DEPTH = 200  # the decoder takes ~3 Python frames a level: well inside the recursion limit
_REQUIRES_GRAD, _PARAMETER = 1, 2  # tensor flags

# Value tags of the OARCHKPT tree; never renumber, only append (and bump the version).
(_NONE, _FALSE, _TRUE, _INT, _BIGINT, _FLOAT, _COMPLEX, _STR, _BYTES, _BYTEARRAY, _LIST, _TUPLE, _DICT,
 _ORDERED_DICT, _SET, _FROZENSET, _TENSOR, _NDARRAY, _NPSCALAR, _DTYPE, _DEVICE, _REF, _NAMESPACE) = range(23)

# dtype codes: the ABI's frozen oar_dtype_t values, as in OARSTATE.
_DTYPE_CODES = {"float32": 0, "float64": 1, "float16": 2, "bfloat16": 3, "int8": 4, "uint8": 5,
                "int32": 6, "int64": 7, "bool": 8}
_DTYPE_NAMES = {v: k for k, v in _DTYPE_CODES.items()}
_ITEMSIZE = {"float32": 4, "float64": 8, "float16": 2, "bfloat16": 2, "int8": 1, "uint8": 1,
             "int32": 4, "int64": 8, "bool": 1}
# Little-endian NumPy view of each dtype's bytes (bfloat16 and bool are converted, see _host_bytes).
_NP_CODES = {"float32": "<f4", "float64": "<f8", "float16": "<f2", "bfloat16": "<u2", "int8": "i1",
             "uint8": "u1", "int32": "<i4", "int64": "<i8", "bool": "u1"}
_NP_KINDS = "biufc"  # NumPy dtype kinds a file may hold: no object, string or structured arrays

_ALLOWED = ("dict, OrderedDict, list, tuple, set, frozenset, None, bool, int, float, complex, str, bytes, "
            "bytearray, argparse.Namespace, oar.Tensor, oar.dtype, oar.device, numpy arrays and scalars of numeric "
            "or bool dtype")


def _is_namespace(x):
    """An argparse.Namespace (training scripts save their parsed arguments), told without importing argparse."""
    t = type(x)
    return t.__module__ == "argparse" and t.__qualname__ == "Namespace"


def _dtype_name(dtype):
    return str(dtype).replace("oar.", "")


def _display_name(f):
    if isinstance(f, (str, bytes, os.PathLike)):
        return os.fsdecode(f)
    name = getattr(f, "name", None)
    return name if isinstance(name, str) else f"<{type(f).__name__}>"


def _io_error(name, problem):
    return _C.IOError(f"load '{name}': {problem}")


# ---------------------------------------------------------------- tensor bytes
def _host_bytes(t):
    """t's elements as little-endian bytes in row-major order (bfloat16 via exact float32)."""
    import numpy as np
    h = t.detach().to("cpu")
    name = _dtype_name(h.dtype)
    if name == "bfloat16":
        bits = h.to(_C.dtype.float32).contiguous().numpy().view(np.uint32) >> 16
        return bits.astype("<u2").tobytes()
    if name == "bool":
        h = h.to(_C.dtype.uint8)
    return h.contiguous().numpy().tobytes()


def _host_tensor(buf, name, numel):
    """A 1-D CPU tensor of `numel` elements of dtype `name` from little-endian bytes."""
    import numpy as np
    from ._creation import from_numpy
    a = np.frombuffer(buf, dtype=_NP_CODES[name], count=numel) if numel else np.empty(0, _NP_CODES[name])
    if name == "bfloat16":  # bfloat16 is the upper half of a float32: widen, then narrow exactly
        return from_numpy((a.astype(np.uint32) << 16).view(np.float32)).to(_C.dtype.bfloat16)
    t = from_numpy(a.astype(a.dtype.newbyteorder("="), copy=True))
    return t.to(_C.dtype.bool) if name == "bool" else t


# ---------------------------------------------------------------- OARSTATE (flat state dicts)
def _is_flat_state_dict(obj):
    return (type(obj) in (dict, collections.OrderedDict)
            and all(type(k) is str and _state_name_ok(k) and isinstance(v, _C.Tensor) for k, v in obj.items()))


def _state_name_ok(k):
    """A key the C++ OARSTATE writer stores: non-empty UTF-8 (others go to OARCHKPT)."""
    try:
        k.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return k != ""


def _has_state_format():
    return hasattr(_C, "save_state_dict") and hasattr(_C, "load_state_dict")


def _save_state(obj, f):
    items = list(obj.items())
    if not _is_file_like(f):
        _C.save_state_dict(items, os.fsdecode(f))
        return
    # The C++ writer takes paths: write a temporary file and copy its bytes.
    fd, tmp = tempfile.mkstemp(suffix=".oar")
    os.close(fd)
    try:
        _C.save_state_dict(items, tmp)
        with open(tmp, "rb") as src:
            for chunk in iter(lambda: src.read(1 << 20), b""):
                f.write(chunk)
    finally:
        os.unlink(tmp)
    _flush(f)


def _load_state(path, name, map_location):
    if not hasattr(_C, "load_state_dict"):
        raise RuntimeError("this oar build has no OARSTATE support (built without the C++ frontend)")
    simple = map_location is None or isinstance(map_location, (str, _C.device))
    try:
        items = _C.load_state_dict(path, map_location if simple else None)
    except _C.IOError as e:
        raise _C.IOError(str(e).replace(path, name)) from None
    except UnicodeDecodeError:
        raise _io_error(name, "corrupt file: an entry name is not valid UTF-8") from None
    if not simple:  # OARSTATE records no device: its tensors come from "cpu"
        items = [(k, _map_tensor(v, "cpu", map_location, name)) for k, v in items]
    return collections.OrderedDict(items)


def _load_state_bytes(data, name, map_location):
    fd, tmp = tempfile.mkstemp(suffix=".oar")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        return _load_state(tmp, name, map_location)
    finally:
        os.unlink(tmp)


# ---------------------------------------------------------------- OARCHKPT writer
class _Encoder:
    """Encodes a Python value into OARCHKPT's tree, collecting its tensors."""

    def __init__(self):
        self.out = bytearray()
        self.tensors = []         # in index order
        self.tensor_index = {}    # hash(tensor) (its C++ impl) -> index
        self.containers = {}      # id(container) -> index, so a container saved twice loads as one object
        self.active = set()       # ids of containers being encoded (a cycle can't be stored)
        self.path = []

    def where(self):
        return "obj" + "".join(self.path)

    def fail(self, x, what="an object of type"):
        raise TypeError(f"oar.save can't store {self.where()}: {what} {type(x).__module__}.{type(x).__qualname__} "
                        f"is not allowed (allowed: {_ALLOWED})")

    def u8(self, v):
        self.out.append(v)

    def pack(self, fmt, *v):
        self.out += struct.pack(fmt, *v)

    def blob(self, b):
        self.pack("<Q", len(b))
        self.out += b

    def value(self, x):
        t = type(x)
        if x is None:
            self.u8(_NONE)
        elif t is bool:
            self.u8(_TRUE if x else _FALSE)
        elif t is int:
            self.integer(x)
        elif t is float:
            self.u8(_FLOAT)
            self.pack("<d", x)
        elif t is complex:
            self.u8(_COMPLEX)
            self.pack("<dd", x.real, x.imag)
        elif t is str:
            self.u8(_STR)
            self.blob(x.encode("utf-8", "surrogatepass"))
        elif t is bytes or t is bytearray:
            self.u8(_BYTES if t is bytes else _BYTEARRAY)
            self.blob(bytes(x))
        elif isinstance(x, _C.Tensor):
            self.tensor(x)
        elif t in _CONTAINER_TAGS:
            self.container(x, t)
        elif isinstance(x, _C.dtype):
            self.u8(_DTYPE)
            self.u8(_DTYPE_CODES[_dtype_name(x)])
        elif isinstance(x, _C.device):
            self.u8(_DEVICE)
            self.blob(str(x).encode())
        elif _is_namespace(x):  # its attributes, as a dict of str keys
            attrs = vars(x)
            for k in attrs:
                if type(k) is not str:
                    self.fail(k, "an argparse.Namespace attribute name of type")
            self.u8(_NAMESPACE)
            self.container(attrs, dict)
        else:
            self.numpy_value(x)

    def integer(self, x):
        if -(1 << 63) <= x < (1 << 63):
            self.u8(_INT)
            self.pack("<q", x)
        else:
            self.u8(_BIGINT)
            self.blob(x.to_bytes((x.bit_length() + 8) // 8, "little", signed=True))

    def tensor(self, x):
        key = _C.Tensor.__hash__(x)
        if key not in self.tensor_index:
            self.tensor_index[key] = len(self.tensors)
            self.tensors.append(x)
        self.u8(_TENSOR)
        self.pack("<Q", self.tensor_index[key])

    def container(self, x, t):
        if id(x) in self.active:
            raise ValueError(f"oar.save can't store {self.where()}: it contains itself (a reference cycle)")
        if id(x) in self.containers:
            self.u8(_REF)
            self.pack("<Q", self.containers[id(x)])
            return
        if len(self.active) >= _MAX_DEPTH:
            raise ValueError(f"oar.save can't store {self.where()}: containers nest deeper than {_MAX_DEPTH}")
        self.containers[id(x)] = len(self.containers)
        self.active.add(id(x))
        self.u8(_CONTAINER_TAGS[t])
        self.pack("<Q", len(x))
        if t is dict or t is collections.OrderedDict:
            for k, v in x.items():
                self.key(k)
                self.path.append(f"[{k!r}]")
                self.value(v)
                self.path.pop()
        else:
            for i, v in enumerate(x):
                self.path.append(f"[{i}]" if t in (list, tuple) else "{...}")
                self.value(v)
                self.path.pop()
        self.active.discard(id(x))

    def key(self, k):
        if not _is_key(k):
            self.fail(k, "a dict key of type")
        self.value(k)

    def numpy_value(self, x):
        np = _numpy_if_loaded()
        if np is None or not isinstance(x, (np.ndarray, np.generic)):
            self.fail(x)
        if type(x) is not np.ndarray and not isinstance(x, np.generic) or x.dtype.kind not in _NP_KINDS:
            self.fail(x, f"a NumPy {x.dtype} value of type")
        a = np.asarray(x)
        code = a.dtype.newbyteorder("<").str if a.dtype.byteorder != "|" else a.dtype.str
        self.u8(_NDARRAY if type(x) is np.ndarray else _NPSCALAR)
        self.blob(code.encode())
        self.pack("<I", a.ndim)
        self.pack(f"<{a.ndim}q", *a.shape)
        self.blob(a.astype(code, copy=False).tobytes())


_CONTAINER_TAGS = {list: _LIST, tuple: _TUPLE, dict: _DICT, collections.OrderedDict: _ORDERED_DICT,
                   set: _SET, frozenset: _FROZENSET}
_KEY_TYPES = (type(None), bool, int, float, complex, str, bytes)


def _is_key(k):
    if type(k) in _KEY_TYPES or isinstance(k, (_C.dtype, _C.device)):
        return True
    return type(k) in (tuple, frozenset) and all(_is_key(v) for v in k)


def _numpy_if_loaded():
    try:
        import numpy
    except ImportError:
        return None
    return numpy


class _Storage:
    """Bytes that one or more saved tensors view: written once, viewed by each on load."""

    def __init__(self, device, dtype, start, nbytes, members):
        self.device, self.dtype, self.start, self.nbytes, self.members = device, dtype, start, nbytes, members


def _address_range(t):
    """(start, end) bytes of a contiguous host tensor's elements, or None where memory is not host-visible."""
    if t.numel() == 0 or not t.is_contiguous():
        return None
    try:
        start = t.data_ptr()
    except _C.OarError:  # device memory without host addresses: stored on its own
        return None
    return start, start + t.numel() * t.element_size()


def _group_storages(tensors):
    """Storages for the tensors, merging those whose memory overlaps (views of one tensor) so that
    they share memory again after loading. Returns (storages, [(storage index, element offset)])."""
    groups = collections.defaultdict(list)  # (device, dtype) -> [(start, end, tensor index)]
    storages, placement = [], [None] * len(tensors)
    for i, t in enumerate(tensors):
        r = _address_range(t)
        if r is None:  # stored on its own
            placement[i] = (len(storages), 0)
            storages.append(_Storage(str(t.device), _dtype_name(t.dtype), None, t.numel() * t.element_size(), [i]))
        else:
            groups[(str(t.device), _dtype_name(t.dtype))].append((r[0], r[1], i))
    for (device, dtype), ranges in groups.items():
        for run in _overlapping_runs(sorted(ranges)):
            _add_run(storages, placement, device, dtype, run)
    return storages, placement


def _overlapping_runs(ranges):
    """Splits sorted (start, end, i) ranges into runs whose union is contiguous memory."""
    run, end = [], None
    for r in ranges:
        if run and r[0] >= end:  # merely adjacent memory may be another allocation: not merged
            yield run
            run = []
        end = r[1] if not run else max(end, r[1])
        run.append(r)
    if run:
        yield run


def _add_run(storages, placement, device, dtype, run):
    size = _ITEMSIZE[dtype]
    start = run[0][0]
    if any((s - start) % size for s, _, _ in run):  # overlapping at odd offsets: keep each apart
        for s, e, i in run:
            placement[i] = (len(storages), 0)
            storages.append(_Storage(device, dtype, s, e - s, [i]))
        return
    for s, _, i in run:
        placement[i] = (len(storages), (s - start) // size)
    storages.append(_Storage(device, dtype, start, max(e for _, e, _ in run) - start, [i for _, _, i in run]))


def _storage_bytes(storage, tensors):
    if len(storage.members) == 1:
        return _host_bytes(tensors[storage.members[0]])
    import numpy as np
    buf = np.empty(storage.nbytes, dtype=np.uint8)  # every byte lies in some member: the run is contiguous
    for i in storage.members:
        b = _host_bytes(tensors[i])
        off = tensors[i].data_ptr() - storage.start
        buf[off:off + len(b)] = np.frombuffer(b, dtype=np.uint8)
    return buf.tobytes()


def _parameter_class():
    from .nn.parameter import Parameter  # late: nn imports this module's users
    return Parameter


def _tensor_flags(t):
    return (_REQUIRES_GRAD if t.requires_grad else 0) | (_PARAMETER if isinstance(t, _parameter_class()) else 0)


def _encode(obj):
    """(metadata bytes, storages, tensors): everything but the tensor data, which is streamed after."""
    enc = _Encoder()
    enc.value(obj)
    storages, placement = _group_storages(enc.tensors)
    meta = bytearray(struct.pack("<Q", len(storages)))
    for s in storages:
        dev = s.device.encode()
        meta += struct.pack(f"<BI{len(dev)}sQ", _DTYPE_CODES[s.dtype], len(dev), dev, s.nbytes // _ITEMSIZE[s.dtype])
    meta += struct.pack("<Q", len(enc.tensors))
    for t, (si, off) in zip(enc.tensors, placement):
        shape = tuple(t.shape)
        meta += struct.pack(f"<QQBI{len(shape)}q", si, off, _tensor_flags(t), len(shape), *shape)
    meta += enc.out
    return bytes(meta), storages, enc.tensors


def _write_checkpoint(f, obj_parts):
    meta, storages, tensors = obj_parts
    length = len(meta) + sum(s.nbytes for s in storages)
    crc = 0
    for chunk in _chunks(_HEADER.pack(_CKPT_MAGIC, _CKPT_VERSION, length), meta, storages, tensors):
        crc = zlib.crc32(chunk, crc)
        f.write(chunk)
    f.write(_CRC.pack(crc))


def _chunks(header, meta, storages, tensors):
    yield header
    yield meta
    for s in storages:  # one storage in memory at a time
        yield _storage_bytes(s, tensors)


# ---------------------------------------------------------------- OARCHKPT reader
class _Reader:
    """Bounds-checked cursor over a payload; every problem names the file."""

    def __init__(self, data, name, end):
        self.data, self.name, self.pos, self.end = data, name, 0, end

    def fail(self, problem):
        raise _io_error(self.name, f"corrupt checkpoint: {problem}")

    def take(self, n, what):
        if n > self.end - self.pos:
            self.fail(f"{what} needs {n} bytes at offset {self.pos} but only {self.end - self.pos} remain")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def unpack(self, fmt, what):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), what))

    def u8(self, what):
        return self.take(1, what)[0]

    def u32(self, what):
        return self.unpack("<I", what)[0]

    def u64(self, what):
        return self.unpack("<Q", what)[0]

    def blob(self, what):
        return bytes(self.take(self.u64(what + " length"), what))

    def text(self, what):
        try:
            return self.blob(what).decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            self.fail(f"a {what} that is not valid UTF-8")

    def count(self, what, min_bytes=1):
        n = self.u64(what)
        if n * min_bytes > self.end - self.pos:
            self.fail(f"{what} {n} is larger than the rest of the file allows")
        return n

    def shape(self, what):
        ndim = self.u32(what + " rank")
        if ndim > _MAX_DIMS:
            self.fail(f"{what} has {ndim} dimensions (at most {_MAX_DIMS})")
        shape = self.unpack(f"<{ndim}q", what)
        if any(d < 0 for d in shape):
            self.fail(f"{what} has a negative size {shape}")
        return shape


def _numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _read_tables(r):
    """Storage and tensor tables, validated against each other."""
    storages = []
    for _ in range(r.count("storage count", 13)):
        code = r.u8("storage dtype")
        if code not in _DTYPE_NAMES:
            r.fail(f"unknown dtype code {code}")
        device = bytes(r.take(r.u32("device name length"), "device name")).decode("utf-8", "replace")
        storages.append((_DTYPE_NAMES[code], device, r.u64("storage size")))
    tensors = []
    for i in range(r.count("tensor count", 21)):
        si, off, flags = r.unpack("<QQB", "tensor header")
        shape = r.shape(f"tensor {i}")
        if si >= len(storages) or off + _numel(shape) > storages[si][2]:
            r.fail(f"tensor {i} lies outside its storage")
        if flags & ~(_REQUIRES_GRAD | _PARAMETER):
            r.fail(f"tensor {i} has unknown flags {flags:#x}")
        tensors.append((si, off, flags, shape))
    return storages, tensors


def _data_bytes(storages, r):
    total = sum(n * _ITEMSIZE[dt] for dt, _, n in storages)
    if total > r.end - r.pos:
        r.fail(f"the tensor data needs {total} bytes but only {r.end - r.pos} remain")
    return total


def _target_device(saved, map_location):
    if map_location is None:
        return saved
    if isinstance(map_location, (str, _C.device)):
        return map_location
    if isinstance(map_location, dict):
        for k, v in map_location.items():
            if _same_device(k, saved):
                return v
        return saved
    raise TypeError(f"map_location must be None, a str, an oar.device, a dict or a callable, "
                    f"got {type(map_location).__name__}")


def _same_device(a, b):
    try:
        return _C.to_device(a) == _C.to_device(b)
    except (_C.OarError, TypeError):  # a device type absent here: compare names, "cuda" meaning "cuda:0"
        return _device_name(a) == _device_name(b)


def _device_name(d):
    d = str(d)
    return d if ":" in d else d + ":0"


def _map_tensor(t, saved, map_location, name):
    """t (on the CPU, from device `saved`) moved where map_location says, as torch.load does."""
    if callable(map_location) and not isinstance(map_location, (str, _C.device, dict)):
        r = map_location(t, saved)
        if r is None:
            return _to_device(t, saved, name)
        if not isinstance(r, _C.Tensor) or tuple(r.shape) != tuple(t.shape) or r.dtype != t.dtype:
            raise TypeError(f"map_location returned {type(r).__name__}; it must return None or a tensor "
                            f"of the same shape and dtype as the one it was given")
        return r
    return _to_device(t, _target_device(saved, map_location), name)


def _to_device(t, device, name):
    try:
        return t.to(device)
    except _C.OarError as e:
        raise _C.DeviceError(f"load '{name}': cannot place a tensor on {device} ({e}); "
                             "pass map_location (e.g. map_location='cpu')") from None


def _build_tensors(storages, tensors, data, name, map_location):
    built = []
    pos = 0
    for dtype, device, numel in storages:
        nbytes = numel * _ITEMSIZE[dtype]
        host = _host_tensor(data[pos:pos + nbytes], dtype, numel)
        built.append(_map_tensor(host, device, map_location, name))
        pos += nbytes
    out = []
    for si, off, flags, shape in tensors:
        base = built[si].detach()  # a fresh alias per tensor: requires_grad set on one is not the others'
        t = (base if off == 0 and _numel(shape) == base.numel() else base.narrow(0, off, _numel(shape))).reshape(shape)
        grad = bool(flags & _REQUIRES_GRAD) and t.is_floating_point()
        if flags & _PARAMETER:
            t = _parameter_class()(t, requires_grad=grad)
        elif grad:
            t.requires_grad_(True)
        out.append(t)
    return out


class _Decoder:
    def device(self, text):
        """An oar.device value, mapped like tensors when map_location is a device or a dict; a device
        this machine lacks is an error naming the file (oar.device objects exist only for loaded devices)."""
        mapped = text
        if isinstance(self.map_location, (str, _C.device, dict)):
            mapped = _target_device(text, self.map_location)
        try:
            return _C.device(str(mapped))
        except (_C.OarError, ValueError, TypeError) as e:
            self.r.fail(f"the file holds device '{text}', which is not usable here ({e}); pass map_location")

    def __init__(self, reader, tensors, map_location=None):
        self.map_location = map_location
        self.r, self.tensors, self.containers = reader, tensors, []

    def value(self, depth=0):
        r = self.r
        tag = r.u8("type tag")
        if tag == _NONE:
            return None
        if tag in (_FALSE, _TRUE):
            return tag == _TRUE
        if tag == _INT:
            return r.unpack("<q", "int")[0]
        if tag == _BIGINT:
            return int.from_bytes(r.blob("int"), "little", signed=True)
        if tag == _FLOAT:
            return r.unpack("<d", "float")[0]
        if tag == _COMPLEX:
            return complex(*r.unpack("<dd", "complex"))
        if tag == _STR:
            return r.text("str")
        if tag == _BYTES:
            return r.blob("bytes")
        if tag == _BYTEARRAY:
            return bytearray(r.blob("bytearray"))
        if tag == _TENSOR:
            i = r.u64("tensor index")
            if i >= len(self.tensors):
                r.fail(f"tensor index {i} out of range ({len(self.tensors)} tensors)")
            return self.tensors[i]
        if tag in _TAG_CONTAINERS:
            return self.container(_TAG_CONTAINERS[tag], depth)
        if tag == _REF:
            i = r.u64("reference")
            if i >= len(self.containers) or self.containers[i] is None:
                r.fail(f"reference to container {i}, which is not complete")
            return self.containers[i]
        if tag in (_NDARRAY, _NPSCALAR):
            return self.array(tag)
        if tag == _DTYPE:
            code = r.u8("dtype")
            if code not in _DTYPE_NAMES:
                r.fail(f"unknown dtype code {code}")
            return getattr(_C.dtype, _DTYPE_NAMES[code])
        if tag == _DEVICE:
            return self.device(r.text("device"))
        if tag == _NAMESPACE:
            import argparse
            attrs = self.value(depth + 1)
            if type(attrs) is not dict or not all(type(k) is str for k in attrs):
                r.fail("an argparse.Namespace whose attributes are not a dict of str keys")
            return argparse.Namespace(**attrs)
        r.pos -= 1
        r.fail(f"unknown type tag {tag} at offset {r.pos}")

    def container(self, t, depth):
        if depth >= _MAX_DEPTH:
            self.r.fail(f"containers nest deeper than {_MAX_DEPTH}")
        slot = len(self.containers)
        self.containers.append(None)  # filled once complete: references only reach complete containers
        n = self.r.count("container size")
        if t is dict or t is collections.OrderedDict:
            out = t()
            for _ in range(n):
                k = self.value(depth + 1)
                v = self.value(depth + 1)
                try:
                    out[k] = v
                except TypeError:
                    self.r.fail(f"an unhashable dict key of type {type(k).__name__}")
        else:
            items = [self.value(depth + 1) for _ in range(n)]
            try:
                out = t(items)
            except TypeError:
                self.r.fail(f"an unhashable {t.__name__} element")
        self.containers[slot] = out
        return out

    def array(self, tag):
        import numpy as np
        code = self.r.blob("array dtype").decode("ascii", "replace")
        dtype = None
        # Only plain numeric codes reach np.dtype (it would parse other strings as Python literals).
        if re.fullmatch(r"[<>|=]?[biufc][0-9]{1,2}", code):
            try:
                dtype = np.dtype(code)
            except (TypeError, ValueError):
                dtype = None
        if dtype is None or dtype.kind not in _NP_KINDS or dtype.str != code:
            self.r.fail(f"NumPy dtype {code!r} is not allowed")
        shape = self.r.shape("array")
        data = self.r.blob("array data")
        if len(data) != _numel(shape) * dtype.itemsize:
            self.r.fail(f"array of shape {shape} and dtype {code} has {len(data)} bytes")
        if tag == _NPSCALAR and shape:
            self.r.fail(f"a NumPy scalar with shape {shape}")
        try:
            a = np.frombuffer(data, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))
        except (ValueError, MemoryError) as e:
            self.r.fail(f"array of shape {shape}: {e}")
        return a if tag == _NDARRAY else a[()]


_TAG_CONTAINERS = {v: k for k, v in _CONTAINER_TAGS.items()}


def _check_header(data, name):
    """Payload (a memoryview) of an OARCHKPT file, after checking magic, version, length and checksum."""
    if len(data) < _HEADER.size:
        raise _io_error(name, f"file is truncated: the header needs {_HEADER.size} bytes but the file has "
                              f"{len(data)} bytes")
    _, version, length = _HEADER.unpack_from(data)
    if version == 0 or version > _CKPT_VERSION:
        raise _io_error(name, f"format version {version} is newer than this build supports ({_CKPT_VERSION})")
    need = _HEADER.size + length + _CRC.size
    if len(data) < need:
        raise _io_error(name, f"file is truncated: the header announces {need} bytes but the file has "
                              f"{len(data)} bytes")
    if len(data) > need:
        raise _io_error(name, f"unexpected bytes after the checksum ({len(data) - need} bytes)")
    (crc,) = _CRC.unpack_from(data, need - _CRC.size)
    if zlib.crc32(data[:need - _CRC.size]) != crc:
        raise _io_error(name, "checksum mismatch: the file is corrupt")
    return data[_HEADER.size:need - _CRC.size]


def _load_checkpoint(data, name, map_location):
    payload = _check_header(data, name)
    r = _Reader(payload, name, len(payload))
    storages, tensors = _read_tables(r)
    total = _data_bytes(storages, r)
    r.end = len(payload) - total  # the tree lies between the tables and the tensor data
    built = _build_tensors(storages, tensors, payload[r.end:], name, map_location)
    try:
        obj = _Decoder(r, built, map_location).value()
    except RecursionError:
        r.fail("containers nest too deep to read")
    if r.pos != r.end:
        r.fail(f"{r.end - r.pos} unread bytes after the value")
    return obj


# ---------------------------------------------------------------- files
def _is_file_like(f):
    return not isinstance(f, (str, bytes, os.PathLike)) and (hasattr(f, "write") or hasattr(f, "read"))


def _flush(f):
    flush = getattr(f, "flush", None)
    if flush is not None:
        flush()


def _atomic_write(path, write):
    """Calls write(file) on a temporary file next to `path`, then renames it over `path`."""
    tmp = f"{path}.tmp.{os.getpid()}"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError as e:
        raise _C.IOError(f"save '{path}': cannot create temporary file '{tmp}': {e.strerror}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            write(out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise _C.IOError(f"save '{path}': {e.strerror or e}") from None
        raise
    _fsync_dir(path)


def _fsync_dir(path):
    """Persists the rename itself; best effort, the data is already durable."""
    try:
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _read_all(f, name):
    if _is_file_like(f):
        if not hasattr(f, "read"):
            raise TypeError(f"oar.load needs a path or a readable file object, got {type(f).__name__}")
        return _read_stream(f, name)
    try:
        with open(f, "rb") as src:
            return src.read()
    except OSError as e:
        raise _io_error(name, f"cannot open: {e.strerror}") from None


def _read_stream(f, name):
    """Reads one object from a stream: exactly an OARCHKPT record (so several can follow each
    other), or everything left for OARSTATE, whose length is not in its header."""
    head = _read_exact(f, _HEADER.size)
    if head[:8] == _CKPT_MAGIC and len(head) == _HEADER.size:
        _, _, length = _HEADER.unpack(head)
        return head + _read_exact(f, length + _CRC.size)
    return head + f.read()


def _read_exact(f, n):
    parts, got = [], 0
    while got < n:
        b = f.read(min(n - got, 1 << 20))  # a forged length must not allocate it up front
        if not b:
            break
        parts.append(bytes(b))
        got += len(b)
    return b"".join(parts)


def _magic_problem(data):
    if not data:
        return "file is empty (truncated)"
    if len(data) < 8 and (_CKPT_MAGIC.startswith(data) or _STATE_MAGIC.startswith(data)):
        return f"file is truncated: the magic needs 8 bytes but the file has {len(data)} bytes"
    if data[:4] == b"PK\x03\x04":
        return "not an oar file (it is a zip archive, e.g. a PyTorch checkpoint)"
    return f"not an oar file (it starts with {bytes(data[:8])!r}, not {_CKPT_MAGIC!r} or {_STATE_MAGIC!r})"


# ---------------------------------------------------------------- public API
def save(obj, f):
    """Saves obj to the path or writable file object `f`.

    obj may nest dicts, OrderedDicts, lists, tuples, sets, None, bool, int, float,
    complex, str, bytes, tensors (any dtype and device) and NumPy arrays. A flat
    dict of str -> Tensor (a state_dict) is written in the C++-readable OARSTATE
    format. Anything else (a lambda, a class instance) raises TypeError naming
    where it sits, e.g. obj['optimizer']['state'][0]. Writes to a path are atomic.
    """
    if not _is_file_like(f) and not isinstance(f, (str, bytes, os.PathLike)):
        raise TypeError(f"oar.save needs a path or a writable file object, got {type(f).__name__}")
    if _is_file_like(f) and not hasattr(f, "write"):
        raise TypeError(f"oar.save needs a path or a writable file object; {type(f).__name__} has no write()")
    if _is_flat_state_dict(obj) and _has_state_format():
        _save_state(obj, f)
        return
    parts = _encode(obj)  # validates everything before a file is touched
    if _is_file_like(f):
        _write_checkpoint(f, parts)
        _flush(f)
    else:
        _atomic_write(os.fsdecode(f), lambda out: _write_checkpoint(out, parts))


def load(f, map_location=None, weights_only=None):
    """Loads what oar.save (or oar::save in C++) wrote to the path or readable file object `f`.

    map_location is as in torch.load: None (each tensor to the device it was saved
    from), a device or str (everything there), a dict {saved: target} such as
    {"cuda:0": "cpu"}, or a callable (tensor_on_cpu, saved_location) -> tensor or None.
    weights_only is accepted for PyTorch compatibility: loading never runs code
    named by the file, whatever its value.
    """
    del weights_only  # always safe: no pickle
    name = _display_name(f)
    if not _is_file_like(f) and not isinstance(f, (str, bytes, os.PathLike)):
        raise TypeError(f"oar.load needs a path or a readable file object, got {type(f).__name__}")
    if not _is_file_like(f) and _read_magic(f) == _STATE_MAGIC:
        return _load_state(os.fsdecode(f), name, map_location)  # the C++ reader, without a copy
    data = _read_all(f, name)
    magic = bytes(data[:8])
    if magic == _STATE_MAGIC:
        return _load_state_bytes(data, name, map_location)
    if magic != _CKPT_MAGIC:
        raise _io_error(name, _magic_problem(data))
    return _load_checkpoint(memoryview(data), name, map_location)


def _read_magic(path):
    try:
        with open(path, "rb") as src:
            return src.read(8)
    except OSError:
        return None  # reported by the full read


# ---- copy.deepcopy and pickle of tensors (models are deep-copied for EMA,
# checkpoint averaging, DataLoader workers): values go through NumPy on the
# CPU, bfloat16 through float32 (exact), and dtype/device/requires_grad return.
def _tensor_from_state(values, dtype_name, device, requires_grad):
    from ._creation import from_numpy
    t = from_numpy(values.copy()).to(getattr(_C.dtype, dtype_name)).to(device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _tensor_state(t):
    host = t.detach().to("cpu")
    name = _dtype_name(t.dtype)
    values = (host.to(_C.dtype.float32) if name == "bfloat16" else host).contiguous().numpy().copy()
    return values, name, str(t.device), t.requires_grad


def _tensor_reduce_ex(self, protocol):
    if not self.is_leaf:
        raise RuntimeError("only leaf tensors (not results of recorded ops) can be pickled or deep-copied; "
                           "use .detach() first")
    return _tensor_from_state, _tensor_state(self)


def _tensor_deepcopy(self, memo):
    if id(self) in memo:
        return memo[id(self)]
    if not self.is_leaf:
        raise RuntimeError("only leaf tensors (not results of recorded ops) support deepcopy; use .detach() first")
    out = self.detach().clone()
    if self.requires_grad:
        out.requires_grad_(True)
    memo[id(self)] = out
    # Each .grad read makes a new Python object that dies right after, so its id() can't key
    # the memo (a later grad reusing the id would get this copy): copy it directly.
    grad = self.grad
    if grad is not None:
        out.grad = grad.detach().clone()
    return out


_C.Tensor.__reduce_ex__ = _tensor_reduce_ex
_C.Tensor.__deepcopy__ = _tensor_deepcopy
