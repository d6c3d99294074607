"""oar.save/oar.load (OARCHKPT and OARSTATE readers), DataLoader worker processes and Module hooks
with damaged and forged inputs and bad arguments, found in review: every damaged file is a typed
oar error (never a crash, a hang, a huge allocation or code run by NumPy's dtype parser), bad
DataLoader arguments are PyTorch's ValueErrors, hooks behave on unusual modules. Each test runs in
well under a few seconds.
"""
import collections
import io
import os
import pathlib
import struct
import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest

import oar
from oar import nn
from oar.utils.data import BatchSampler, DataLoader, Dataset, SequentialSampler

import oar.serialization as _ser


# ---------------------------------------------------------------- helpers: forging files
def _dump(obj):
    buf = io.BytesIO()
    oar.save(obj, buf)
    return buf.getvalue()


def _ckpt(payload, version=1):
    """A well-formed OARCHKPT frame (header and CRC right) around any payload."""
    body = struct.pack("<8sIQ", b"OARCHKPT", version, len(payload)) + payload
    return body + struct.pack("<I", zlib.crc32(body))


def _recrc(data):
    data = bytearray(data)
    data[-4:] = struct.pack("<I", zlib.crc32(bytes(data[:-4])))
    return bytes(data)


def _tree(tree, storages=(), tensors=(), data=b""):
    """OARCHKPT payload: storage table, tensor table, the value tree, the tensor data."""
    p = struct.pack("<Q", len(storages)) + b"".join(storages)
    p += struct.pack("<Q", len(tensors)) + b"".join(tensors)
    return _ckpt(p + tree + data)


def _storage(code, device, numel):
    return struct.pack(f"<BI{len(device)}sQ", code, len(device), device, numel)


def _tensor(si, off, flags, shape):
    return struct.pack(f"<QQBI{len(shape)}q", si, off, flags, len(shape), *shape)


def _blob(b):
    return struct.pack("<Q", len(b)) + b


def _u64(n):
    return struct.pack("<Q", n)


_TENSOR0 = bytes([16]) + _u64(0)


def _fnv(b):
    h = 0xcbf29ce484222325
    for x in b:
        h = ((h ^ x) * 0x100000001b3) & (2 ** 64 - 1)
    return h


def _state(entries, count=None):
    """An OARSTATE file (FNV-1a checksum right) from raw entries."""
    body = struct.pack("<8sIQ", b"OARSTATE", 1, len(entries) if count is None else count) + b"".join(entries)
    return body + struct.pack("<Q", _fnv(body))


def _state_entry(name, dtype, shape, data):
    return struct.pack(f"<I{len(name)}sII{len(shape)}qQ", len(name), name, dtype, len(shape), *shape,
                       len(data)) + data


def _nested_list(depth):
    root = cur = []
    for _ in range(depth - 1):
        nxt = []
        cur.append(nxt)
        cur = nxt
    return root


# ================================================================ oar.load: damaged files (passing)
def _sample_checkpoint_without_text():
    """A checkpoint with tensors (shared views, a Parameter, bf16, bool), containers, ints, floats,
    NumPy values and a REF, but no str/bytes/device values (so flips only hit numeric fields)."""
    w = oar.arange(6, dtype=oar.float32).reshape(2, 3)
    shared = [1, 2]
    return {1: [shared, shared, (shared,)], 2: w, 3: w[1], 4: nn.Parameter(oar.ones(2)),
            5: oar.tensor([True, False]), 6: oar.ones(2, dtype=oar.bfloat16), 7: np.arange(4.0).reshape(2, 2),
            8: np.int32(7), 9: -2 ** 90, 10: {1, 2}, 11: frozenset({(1, 2)}), 12: 3j, 13: oar.int8, 14: -0.5,
            15: collections.OrderedDict([(1, None)])}


def test_truncation_at_every_offset_raises_ioerror():
    data = _dump(_sample_checkpoint_without_text())
    for i in range(len(data)):
        with pytest.raises(oar.IOError):
            oar.load(io.BytesIO(data[:i]))


def test_truncated_state_file_at_every_offset_raises_ioerror():
    sd = collections.OrderedDict(w=oar.arange(6, dtype=oar.float32).reshape(2, 3), b=oar.tensor([1, 2]),
                                 h=oar.ones(2, dtype=oar.bfloat16), z=oar.tensor(True))
    data = _dump(sd)
    assert data[:8] == b"OARSTATE"
    for i in range(len(data)):
        with pytest.raises(oar.IOError):
            oar.load(io.BytesIO(data[:i]))


def test_flipped_numeric_bytes_with_valid_crc_raise_typed_errors():
    """Every byte (outside the header and CRC) set to several values, CRC recomputed so the parser runs.
    The storage table's device names are text, so a flip there may give the documented DeviceError."""
    data = _dump(_sample_checkpoint_without_text())
    for i in range(20, len(data) - 4):
        for v in (0x00, 0x01, 0x40, 0x7F, 0x80, 0xFF):
            if data[i] == v:
                continue
            d = bytearray(data)
            d[i] = v
            try:
                oar.load(io.BytesIO(_recrc(d)))
            except (oar.IOError, oar.DeviceError):
                pass


@pytest.mark.parametrize("name,blob", [
    ("storage count", _ckpt(_u64(2 ** 64 - 1))),
    ("tensor count", _ckpt(_u64(0) + _u64(2 ** 64 - 1))),
    ("storage numel", _tree(bytes([0]), [_storage(7, b"cpu", 2 ** 64 - 1)])),
    ("tensor beyond data", _tree(_TENSOR0, [_storage(0, b"cpu", 1)], [_tensor(0, 0, 0, (2,))], b"\0" * 4)),
    ("tensor offset", _tree(_TENSOR0, [_storage(0, b"cpu", 1)], [_tensor(0, 2 ** 63, 0, (0,))], b"\0" * 4)),
    ("negative dim", _tree(_TENSOR0, [_storage(0, b"cpu", 1)], [_tensor(0, 0, 0, (-1,))], b"\0" * 4)),
    ("65 dims", _tree(_TENSOR0, [_storage(0, b"cpu", 1)], [_tensor(0, 0, 0, (1,) * 65)], b"\0" * 4)),
    ("rank 2**32-1", _tree(_TENSOR0, [_storage(0, b"cpu", 1)], [struct.pack("<QQBI", 0, 0, 0, 2 ** 32 - 1)],
                           b"\0" * 4)),
    ("dtype code 9", _tree(bytes([0]), [_storage(9, b"cpu", 1)], [], b"\0")),
    ("dtype code 255", _tree(bytes([0]), [_storage(255, b"cpu", 1)], [], b"\0")),
    ("oar.dtype code", _tree(bytes([19, 99]))),
    ("unknown flags", _tree(_TENSOR0, [_storage(0, b"cpu", 1)], [_tensor(0, 0, 4, (1,))], b"\0" * 4)),
    ("tensor index", _tree(bytes([16]) + _u64(1), [_storage(0, b"cpu", 1)], [_tensor(0, 0, 0, (1,))], b"\0" * 4)),
    ("storage index", _tree(_TENSOR0, [_storage(0, b"cpu", 1)], [_tensor(1, 0, 0, (1,))], b"\0" * 4)),
    ("unknown tag 22", _tree(bytes([22]))),
    ("unknown tag 255", _tree(bytes([255]))),
    ("no value", _tree(b"")),
    ("trailing bytes", _tree(bytes([0, 0]))),
    ("list count", _tree(bytes([10]) + _u64(2 ** 64 - 1))),
    ("str length", _tree(bytes([7]) + _u64(2 ** 64 - 1))),
    ("bigint length", _tree(bytes([4]) + _u64(2 ** 63))),
    ("forward ref", _tree(bytes([21]) + _u64(0))),
    ("self ref", _tree(bytes([10]) + _u64(1) + bytes([21]) + _u64(0))),
    ("unhashable key", _tree(bytes([12]) + _u64(1) + bytes([10]) + _u64(0) + bytes([0]))),
    ("object array", _tree(bytes([17]) + _blob(b"|O8") + struct.pack("<I", 0) + _blob(b"\0" * 8))),
    ("unknown np dtype", _tree(bytes([17]) + _blob(b"zzz") + struct.pack("<I", 0) + _blob(b"\0" * 8))),
    ("structured np dtype", _tree(bytes([17]) + _blob(b"f4,f4") + struct.pack("<I", 0) + _blob(b"\0" * 8))),
    ("np data size", _tree(bytes([17]) + _blob(b"<f4") + struct.pack("<I", 1) + struct.pack("<q", 3)
                           + _blob(b"\0" * 4))),
    ("version 2", struct.pack("<8sIQ", b"OARCHKPT", 2, 0) + b"\0" * 4),
    ("zip", b"PK\x03\x04" + b"\0" * 40),
    ("empty", b""),
], ids=lambda v: v if isinstance(v, str) else "file")
def test_forged_checkpoint_raises_ioerror(name, blob):  # noqa: ARG001 - name is the case's id
    with pytest.raises(oar.IOError):
        oar.load(io.BytesIO(blob))


def test_bytes_after_the_checksum_of_a_file(tmp_path):
    p = tmp_path / "x.oar"
    p.write_bytes(_tree(bytes([0])) + b"x")
    with pytest.raises(oar.IOError, match="after the checksum"):
        oar.load(p)


@pytest.mark.parametrize("name,blob", [
    ("count", _state([], count=2 ** 64 - 1)),
    ("dtype", _state([_state_entry(b"a", 9, (1,), b"\0")])),
    ("rank", _state([_state_entry(b"a", 0, (1,) * 65, b"\0" * 4)])),
    ("negative dim", _state([_state_entry(b"a", 0, (-1,), b"")])),
    ("numel overflow", _state([_state_entry(b"a", 5, (2 ** 32, 2 ** 32), b"")])),
    ("byte length", _state([_state_entry(b"a", 0, (2,), b"\0" * 4)])),
    ("duplicate", _state([_state_entry(b"a", 0, (1,), b"\0" * 4)] * 2)),
], ids=lambda v: v if isinstance(v, str) else "file")
def test_forged_state_file_raises_ioerror(name, blob, tmp_path):
    with pytest.raises(oar.IOError):
        oar.load(io.BytesIO(blob))
    p = tmp_path / "s.oar"
    p.write_bytes(blob)
    with pytest.raises(oar.IOError):
        oar.load(p)


def test_loading_imports_and_calls_nothing():
    """Audit hooks can't be removed, so this runs in a child interpreter."""
    code = textwrap.dedent("""
        import collections, io, sys
        import numpy as np
        import oar
        obj = {"a": [1, 2.5, "s", b"b", None, True, 2**80, 1j, bytearray(b"x")], "t": oar.ones(2),
               "p": oar.nn.Parameter(oar.ones(1)), "n": np.arange(3), "sc": np.float32(1), "d": oar.float16,
               "dev": oar.device("cpu"), "s": {1}, "fs": frozenset([2]), "od": collections.OrderedDict(a=1)}
        buf = io.BytesIO(); oar.save(obj, buf); data = buf.getvalue()
        oar.load(io.BytesIO(data))
        events = []
        sys.addaudithook(lambda ev, args: events.append(ev) if ev in (
            "import", "exec", "compile", "pickle.find_class", "os.system", "subprocess.Popen") else None)
        oar.load(io.BytesIO(data))
        print(sorted(set(events)))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                         env=_child_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def _child_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([os.path.dirname(os.path.dirname(oar.__file__)),
                                         env.get("PYTHONPATH", "")])
    return env


# ================================================================ oar.load: confirmed defects
def test_what_save_accepts_loads_back_deeply_nested():
    data = _dump(_nested_list(199))  # the documented limit is 200 levels
    out = oar.load(io.BytesIO(data))
    depth = 0
    while out:
        out, depth = out[0], depth + 1
    assert depth == 198
    with pytest.raises(ValueError, match="nest deeper than 200"):
        _dump(_nested_list(400))  # refused at save, so nothing saved is unreadable


def test_forged_deep_nesting_raises_ioerror():
    tree = (bytes([10]) + _u64(1)) * 499 + bytes([10]) + _u64(0)  # 500 levels: within _MAX_DEPTH
    with pytest.raises(oar.IOError):
        oar.load(io.BytesIO(_tree(tree)))


def test_save_too_deep_raises_documented_valueerror():
    with pytest.raises(ValueError, match="nest deeper"):
        _dump(_nested_list(600))


def test_huge_declared_length_from_a_file_object(tmp_path):
    good = _dump([1, 2, 3])
    forged = struct.pack("<8sIQ", b"OARCHKPT", 1, 2 ** 50) + good[20:]
    p = tmp_path / "h.oar"
    p.write_bytes(forged)
    with pytest.raises(oar.IOError):
        oar.load(p)  # a path: fine
    with open(p, "rb") as f, pytest.raises(oar.IOError):
        oar.load(f)  # BufferedReader.read(2**50 + 4) allocates first


def test_length_beyond_ssize_t_from_a_file_object():
    good = _dump([1, 2, 3])
    forged = struct.pack("<8sIQ", b"OARCHKPT", 1, 2 ** 64 - 1) + good[20:]
    with pytest.raises(oar.IOError):
        oar.load(io.BytesIO(forged))


def test_invalid_utf8_string_raises_ioerror():
    with pytest.raises(oar.IOError):
        oar.load(io.BytesIO(_tree(bytes([7]) + _blob(b"\xff"))))


def test_flipped_text_bytes_with_valid_crc_raise_ioerror():
    data = _dump({"key": "value", "dev": oar.device("cpu")})
    for i in range(20, len(data) - 4):
        for v in (0x00, 0x80, 0xFF):
            d = bytearray(data)
            d[i] = v
            try:
                oar.load(io.BytesIO(_recrc(d)))
            except (oar.IOError, oar.DeviceError):
                pass


@pytest.mark.parametrize("name", [b"", b"\xff\xfe", b"cpu:x"], ids=["empty", "not-utf8", "bad-index"])
def test_invalid_device_value_raises_ioerror(name):
    with pytest.raises(oar.IOError):
        oar.load(io.BytesIO(_tree(bytes([20]) + _blob(name))))


def _cuda_missing():
    try:
        oar.device("cuda:0")
        return False
    except oar.OarError:
        return True


@pytest.mark.skipif(not _cuda_missing(), reason="needs a machine without cuda:0")
def test_device_value_of_an_absent_device_loads_with_map_location():
    # What {"device": oar.device("cuda:0"), "w": [t]} saved on a GPU machine looks like.
    tree = bytes([12]) + _u64(1) + bytes([7]) + _blob(b"device") + bytes([20]) + _blob(b"cuda:0")
    # oar.device objects exist only for devices loaded here: map_location maps the value as it maps
    # tensors, and without it the error names the device and the way out.
    out = oar.load(io.BytesIO(_tree(tree)), map_location="cpu")
    assert out["device"] == oar.device("cpu")
    with pytest.raises(oar.IOError, match="cuda:0.*map_location"):
        oar.load(io.BytesIO(_tree(tree)))


@pytest.mark.parametrize("code", [b"04", b",", b"(99999999999999999999,)f4", b"(-1,)f4"],
                         ids=["leading-zero", "comma", "huge-subarray", "negative-subarray"])
def test_numpy_dtype_text_is_not_parsed_by_numpy(code):
    tree = bytes([17]) + _blob(code) + struct.pack("<I", 0) + _blob(b"\0" * 4)
    with pytest.raises(oar.IOError):
        oar.load(io.BytesIO(_tree(tree)))


def test_zero_size_array_with_huge_dims_raises_ioerror():
    tree = bytes([17]) + _blob(b"<f4") + struct.pack("<I", 2) + struct.pack("<qq", 0, 2 ** 63 - 1) + _blob(b"")
    with pytest.raises(oar.IOError):
        oar.load(io.BytesIO(_tree(tree)))


def test_numpy_scalar_tag_with_a_shape_is_refused():
    tree = bytes([18]) + _blob(b"<f4") + struct.pack("<I", 1) + struct.pack("<q", 3) + _blob(b"\0" * 12)
    with pytest.raises(oar.IOError):
        oar.load(io.BytesIO(_tree(tree)))


def test_state_file_non_utf8_name_raises_ioerror():
    with pytest.raises(oar.IOError):
        oar.load(io.BytesIO(_state([_state_entry(b"\xff", 0, (1,), b"\0" * 4)])))


def test_state_file_bool_bytes_are_validated_or_normalised():
    blob = _state([_state_entry(b"a", 8, (2,), b"\x07\x01")])
    try:
        t = oar.load(io.BytesIO(blob))["a"]
    except oar.IOError:
        return
    assert t.to(oar.uint8).tolist() == [1, 1]
    assert t.sum().item() == 2
    assert (~t).tolist() == [False, False]


def test_state_dict_with_an_empty_key_saves():
    buf = io.BytesIO()
    oar.save({"": oar.ones(1)}, buf)
    buf.seek(0)
    assert list(oar.load(buf)) == [""]


# ================================================================ oar.save: atomicity and round trips (passing)
def test_failed_save_leaves_the_old_file_and_no_temp_files(tmp_path, monkeypatch):
    p = tmp_path / "ck.oar"
    oar.save({"v": 1}, p)
    old = p.read_bytes()

    def boom(storage, tensors):
        raise RuntimeError("boom")

    monkeypatch.setattr(_ser, "_storage_bytes", boom)  # fails after the header was written
    with pytest.raises(RuntimeError, match="boom"):
        oar.save({"v": [oar.ones(3)]}, p)

    def interrupt(storage, tensors):
        raise KeyboardInterrupt

    monkeypatch.setattr(_ser, "_storage_bytes", interrupt)
    with pytest.raises(KeyboardInterrupt):
        oar.save({"v": [oar.ones(3)]}, p)
    monkeypatch.undo()
    with pytest.raises(TypeError):
        oar.save({"v": lambda: 1}, p)
    assert p.read_bytes() == old
    assert sorted(os.listdir(tmp_path)) == ["ck.oar"]


def test_save_into_a_missing_directory_raises_ioerror(tmp_path):
    for obj in ({"w": oar.ones(2)}, {"w": [1]}):
        with pytest.raises(oar.IOError):
            oar.save(obj, tmp_path / "missing" / "x.oar")


def _bits(t):
    t = t.detach().cpu()
    if t.dtype == oar.bfloat16:
        return (t.to(oar.float32).contiguous().numpy().reshape(-1).view(np.uint32) >> 16).tolist()
    return t.contiguous().numpy().reshape(-1).view(np.uint8).tolist()


_DTYPES = ["float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool"]


def _values(name):
    if name.startswith(("float", "bfloat")):
        vals = [0.0, -0.0, 1.5, float("inf"), float("-inf"), float("nan"), 3e38, 1e-40, 65504.0, -7.25]
        return oar.tensor(vals, dtype=oar.float64).to(getattr(oar, name))
    if name == "bool":
        return oar.tensor([True, False, True, True, False, False, True, False, True, True])
    if name == "int64":
        return oar.tensor([0, 2 ** 62 + 1, -2 ** 63, 2 ** 63 - 1, 5, 6, 7, 8, 9, 10], dtype=oar.int64)
    if name == "uint8":
        return oar.tensor([0, 1, 255, 128, 127, 3, 4, 5, 6, 7]).to(oar.uint8)
    return oar.tensor([0, 1, -1, 127, -128, 100, 5, 6, 7, 8]).to(getattr(oar, name))


@pytest.mark.parametrize("name", _DTYPES)
@pytest.mark.parametrize("fmt", ["OARCHKPT", "OARSTATE"])
def test_round_trip_is_bit_exact(name, fmt):
    base = _values(name)
    m = base.reshape(2, 5)
    cases = {"base": base, "0d": base[3], "empty": base[:0], "empty2d": m[:, :0], "transposed": m.t(),
             "strided": base[::3], "view": base[2:7]}
    data = _dump(cases if fmt == "OARSTATE" else {"x": cases})
    assert data[:8] == fmt.encode()
    out = oar.load(io.BytesIO(data))
    out = out if fmt == "OARSTATE" else out["x"]
    for k, v in cases.items():
        assert tuple(out[k].shape) == tuple(v.shape), k
        assert out[k].dtype == v.dtype, k
        assert _bits(out[k]) == _bits(v), k


def test_round_trip_keeps_nested_sharing():
    w = oar.arange(12, dtype=oar.float32).reshape(3, 4)
    p = nn.Parameter(oar.ones(3))
    lst = [w, w[1], w.view(-1), w.t()]
    out = oar.load(io.BytesIO(_dump({"a": lst, "b": lst, "c": (w, p), "p": p, "sub": w[1:]})))
    assert out["a"] is out["b"] and out["a"][0] is out["c"][0] and out["c"][1] is out["p"]
    assert isinstance(out["p"], nn.Parameter) and out["p"].requires_grad
    out["a"][0][1, 0] = 100.0
    assert out["a"][1].tolist()[0] == 100.0 and out["a"][2].tolist()[4] == 100.0 and out["sub"].tolist()[0][0] == 100.0
    assert out["a"][3].tolist()[0][1] == 4.0  # a non-contiguous view is a copy (documented)


def test_round_trip_of_plain_values_and_numpy():
    vals = [0, -1, 2 ** 63 - 1, -2 ** 63, 2 ** 63, -2 ** 63 - 1, 2 ** 1000, -2 ** 1000, "a\ud800b\U0001f600",
            -0.0, complex(float("inf"), -0.0), b"x", bytearray(b"y"), None, True, oar.bfloat16, oar.device("cpu")]
    assert oar.load(io.BytesIO(_dump(vals))) == vals
    arrs = {"f": np.arange(6, dtype=">f8").reshape(2, 3)[:, ::2], "b": np.array([True, False]),
            "c": np.array([1 + 2j], dtype=np.complex64), "s": np.float16(1.5), "u": np.uint64(2 ** 64 - 1),
            "0d": np.array(3, dtype=np.int8), "e": np.zeros((0, 3), dtype=np.int32)}
    out = oar.load(io.BytesIO(_dump(arrs)))
    for k, v in arrs.items():
        assert type(out[k]) is type(v), k
        assert np.asarray(out[k]).shape == np.asarray(v).shape, k
        assert np.array_equal(np.asarray(out[k]), np.asarray(v)), k


def test_paths_of_every_kind(tmp_path):
    oar.save([1], pathlib.Path(tmp_path / "a.oar"))
    assert oar.load(tmp_path / "a.oar") == [1]
    oar.save({"w": oar.ones(2)}, os.fsencode(tmp_path / "b.oar"))
    assert list(oar.load(os.fsencode(tmp_path / "b.oar"))) == ["w"]
    with pytest.raises(oar.IOError, match="cannot open"):
        oar.load(tmp_path)


# ================================================================ DataLoader arguments
class _Range(Dataset):
    def __init__(self, f=lambda i: oar.tensor([float(i)]), n=6):
        self.f, self.n = f, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.f(i)


@pytest.mark.parametrize("kwargs", [
    dict(num_workers=-1), dict(num_workers=1.5), dict(prefetch_factor=3), dict(num_workers=1, prefetch_factor=0),
    dict(timeout=-1), dict(batch_size=0), dict(batch_size=-1), dict(batch_size=2.0),
    dict(batch_size=None, drop_last=True), dict(sampler=[0, 1], shuffle=True), dict(drop_last="yes"),
    dict(num_workers=1, multiprocessing_context="bogus"),
])
def test_bad_arguments_raise_valueerror(kwargs):
    with pytest.raises(ValueError):
        DataLoader(_Range(), **kwargs)


@pytest.mark.parametrize("extra", [dict(batch_size=3), dict(shuffle=True), dict(drop_last=True),
                                   dict(sampler=[0, 1])])
def test_batch_sampler_is_exclusive(extra):
    bs = BatchSampler(SequentialSampler(range(6)), 2, False)
    with pytest.raises(ValueError):
        DataLoader(_Range(), batch_sampler=bs, **extra)


def test_persistent_workers_need_workers():
    with pytest.raises(ValueError):
        DataLoader(_Range(), persistent_workers=True)


def test_non_callable_worker_init_fn_is_reported_from_the_worker():
    with pytest.raises(TypeError, match="worker process 0"):
        list(DataLoader(_Range(), num_workers=1, worker_init_fn=3))


# ================================================================ DataLoader: non-tensor samples
@pytest.mark.parametrize("sample", [
    lambda i: f"s{i}",
    lambda i: {"a": np.full(3, i, dtype=np.float32), "b": np.int64(i)},
    lambda i: (oar.tensor([i]), "x", {"k": [i, i]}),
    lambda i: oar.ones(2, dtype=oar.bfloat16) * i,
    lambda i: oar.tensor([True, False]),
    lambda i: oar.tensor(float(i)),
    lambda i: oar.zeros(0, 3),
    lambda i: oar.arange(6, dtype=oar.float32).reshape(2, 3).t(),
])
@pytest.mark.parametrize("batch_size", [2, None])
def test_workers_give_the_main_process_batches(sample, batch_size):
    def norm(x):
        if isinstance(x, oar.Tensor):
            return ("T", str(x.dtype), tuple(x.shape), x.to(oar.float64).tolist())
        if isinstance(x, dict):
            return {k: norm(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return (type(x).__name__, [norm(v) for v in x])
        return (type(x).__name__, x)

    ds = _Range(sample, 4)
    main = [norm(b) for b in DataLoader(ds, batch_size=batch_size)]
    workers = [norm(b) for b in DataLoader(ds, batch_size=batch_size, num_workers=2)]
    assert workers == main


def test_none_samples():
    ds = _Range(lambda i: None, 4)
    assert list(DataLoader(ds, batch_size=None, num_workers=2)) == [None] * 4
    with pytest.raises(TypeError, match="NoneType"):
        list(DataLoader(ds, batch_size=2, num_workers=2))


def test_workers_keep_requires_grad():
    ds = _Range(lambda i: oar.ones(2, requires_grad=True), 2)
    assert all(b.requires_grad for b in DataLoader(ds, batch_size=None))
    assert all(b.requires_grad for b in DataLoader(ds, batch_size=None, num_workers=2))


# ================================================================ Module hooks
class _KwOnly(nn.Module):
    def forward(self, x=None, y=None):
        return x * 2 + y


class _Tuple(nn.Module):
    def forward(self, x):
        return x * 2, x * 3, "s"


class _Dict(nn.Module):
    def forward(self, x):
        return {"a": x * 2}


class _Scale(nn.Module):
    def forward(self, x, k, flag=True):
        return x * k


def test_handle_removed_twice():
    m = nn.Linear(2, 2)
    calls = []
    h = m.register_forward_hook(lambda mod, a, o: calls.append(1))
    h.remove()
    h.remove()
    m(oar.ones(1, 2))
    h2 = m.register_forward_hook(lambda mod, a, o: calls.append(2), always_call=True, prepend=True)
    with h2:
        m(oar.ones(1, 2))
    h2.remove()
    m(oar.ones(1, 2))
    assert calls == [2]
    assert not m._forward_hooks and not m._forward_hooks_always_called
    from oar.nn import module as module_mod
    g = module_mod.register_module_forward_hook(lambda mod, a, o: calls.append(3))
    g.remove()
    g.remove()
    m(oar.ones(1, 2))
    assert calls == [2] and not module_mod._global_hooks_on


def test_hooks_on_a_module_called_with_kwargs_only():
    m = _KwOnly()
    seen, grads = [], []
    m.register_forward_pre_hook(lambda mod, args: seen.append(("pre", args)))
    m.register_forward_pre_hook(lambda mod, args, kwargs: seen.append(("prekw", sorted(kwargs))), with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: seen.append(("fwdkw", sorted(kwargs))), with_kwargs=True)
    m.register_full_backward_hook(lambda mod, gin, gout: grads.append((gin, [g.tolist() for g in gout])))
    x = oar.ones(2, requires_grad=True)
    y = oar.ones(2, requires_grad=True)
    m(x=x, y=y).sum().backward()
    assert seen == [("pre", ()), ("prekw", ["x", "y"]), ("fwdkw", ["x", "y"])]
    assert grads == [((), [[1.0, 1.0]])]
    assert x.grad.tolist() == [2.0, 2.0] and y.grad.tolist() == [1.0, 1.0]


def test_backward_hooks_on_tuple_outputs_with_a_non_tensor():
    m = _Tuple()
    got = []
    m.register_full_backward_pre_hook(lambda mod, gout: got.append(("pre", [g if g is None else g.tolist()
                                                                             for g in gout])))
    m.register_full_backward_hook(lambda mod, gin, gout: got.append(([g.tolist() for g in gin], len(gout))))
    x = oar.ones(2, requires_grad=True)
    a, b, s = m(x)
    (a.sum() + 2 * b.sum()).backward()
    assert got == [("pre", [[1.0, 1.0], [2.0, 2.0], None]), ([[8.0, 8.0]], 3)]
    assert x.grad.tolist() == [8.0, 8.0]


def test_dict_output_forward_hook_and_backward():
    m = _Dict()
    calls = []
    m.register_full_backward_hook(lambda mod, gin, gout: calls.append(1))  # as PyTorch: not called for a dict
    m.register_forward_hook(lambda mod, a, o: {"a": o["a"] + 1})
    x = oar.ones(2, requires_grad=True)
    out = m(x)
    out["a"].sum().backward()
    assert out["a"].tolist() == [3.0, 3.0] and x.grad.tolist() == [2.0, 2.0] and calls == []


def test_backward_hook_with_non_tensor_inputs():
    m = _Scale()
    got = []
    m.register_full_backward_hook(lambda mod, gin, gout: got.append([g if g is None else g.tolist() for g in gin]))
    x = oar.ones(2, requires_grad=True)
    m(x, 3.0, flag=False).sum().backward()
    m(x, None or 1.0).sum().backward()
    assert got == [[[3.0, 3.0], None], [[1.0, 1.0], None]]
    assert x.grad.tolist() == [4.0, 4.0]


def test_backward_hook_with_0d_input_and_bad_return():
    class Sq(nn.Module):
        def forward(self, x):
            return (x * x).sum()

    m = Sq()
    got = []
    m.register_full_backward_hook(lambda mod, gin, gout: got.append((gin[0].tolist(), gout[0].tolist())))
    x = oar.tensor(3.0, requires_grad=True)
    m(x).backward()
    assert got == [(6.0, 1.0)] and x.grad.tolist() == 6.0
    lin = nn.Linear(2, 2)
    lin.register_full_backward_hook(lambda mod, gin, gout: (1, 2, 3))
    with pytest.raises(RuntimeError, match="invalid number of grad_input"):
        lin(oar.ones(1, 2, requires_grad=True)).sum().backward()


def test_no_leak_report_at_exit_after_hooks():
    code = textwrap.dedent("""
        import oar
        from oar import nn
        lin = nn.Linear(3, 3)
        lin.register_full_backward_hook(lambda mod, gin, gout: None)
        y = lin(oar.ones(3, requires_grad=True))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=_child_env())
    assert out.returncode == 0
    assert "leaked" not in out.stderr, out.stderr[:300]
