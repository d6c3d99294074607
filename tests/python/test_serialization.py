"""oar.save / oar.load: nested checkpoints (OARCHKPT) and flat state dicts (OARSTATE, shared with C++),
to paths and file objects, on every device; exact round trips of every dtype; tensor sharing; the typed
errors for damaged or foreign files; and TypeError, naming the place, for objects that can't be stored."""
import collections
import io
import os
import pathlib
import struct
import zlib

import numpy as np
import pytest

import oar
from oar import nn

DEVICES = oar._C.info()["devices"]
ALL_DTYPES = [oar.float32, oar.float64, oar.float16, oar.bfloat16, oar.int8, oar.uint8, oar.int32, oar.int64,
              oar.bool]


def N(t):
    return t.detach().cpu().numpy()


def _bits(t):
    """Exact element bits (bfloat16 through float32, which holds it exactly)."""
    t = t.detach().cpu()
    return N(t.to(oar.float32)).view(np.uint32) if t.dtype == oar.bfloat16 else N(t)


def _round_trip(obj, **load_kwargs):
    buf = io.BytesIO()
    oar.save(obj, buf)
    buf.seek(0)
    return oar.load(buf, **load_kwargs)


def _checkpoint(device):
    oar.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)).to(device)
    opt = oar.optim.Adam(model.parameters(), lr=0.01)
    model(oar.randn(5, 4).to(device)).sum().backward()
    opt.step()
    return model, opt, {"epoch": 3, "model": model.state_dict(), "optimizer": opt.state_dict(), "loss": 0.12}


def _assert_same(a, b):
    """Deep equality with tensors compared by dtype, device and exact values."""
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, oar.Tensor):
        assert a.dtype == b.dtype and a.device == b.device and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(_bits(a), _bits(b))
    elif isinstance(a, dict):
        assert list(a.keys()) == list(b.keys())
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _assert_same(x, y)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b


# ---------------------------------------------------------------- round trips
@pytest.mark.parametrize("device", DEVICES)
def test_training_checkpoint_round_trips_and_resumes(device, tmp_path):
    model, opt, ck = _checkpoint(device)
    path = tmp_path / "ck.oar"
    oar.save(ck, path)
    assert path.read_bytes()[:8] == b"OARCHKPT"
    loaded = oar.load(path)
    _assert_same(loaded, ck)
    assert loaded["model"]["0.weight"].device == oar.device(device)
    # resuming: a fresh model and optimizer take the state and step exactly like the original
    model2 = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2)).to(device)
    model2.load_state_dict(loaded["model"])
    opt2 = oar.optim.Adam(model2.parameters(), lr=0.01)
    opt2.load_state_dict(loaded["optimizer"])
    x = oar.randn(5, 4).to(device)
    for m, o in ((model, opt), (model2, opt2)):
        o.zero_grad()
        m(x).pow(2).sum().backward()
        o.step()
    for p, q in zip(model.parameters(), model2.parameters()):
        np.testing.assert_array_equal(N(p), N(q))


def test_paths_and_file_objects(tmp_path):
    _, _, ck = _checkpoint("cpu")
    oar.save(ck, str(tmp_path / "a.oar"))           # str
    _assert_same(oar.load(str(tmp_path / "a.oar")), ck)
    oar.save(ck, pathlib.Path(tmp_path / "b.oar"))  # os.PathLike
    _assert_same(oar.load(pathlib.Path(tmp_path / "b.oar")), ck)
    with open(tmp_path / "c.oar", "wb") as f:       # open file objects
        oar.save(ck, f)
    with open(tmp_path / "c.oar", "rb") as f:
        _assert_same(oar.load(f), ck)
    _assert_same(_round_trip(ck), ck)               # BytesIO
    buf = io.BytesIO()                              # several objects follow each other in one stream
    oar.save({"first": 1}, buf)
    oar.save([oar.ones(2), "second"], buf)
    buf.seek(0)
    assert oar.load(buf) == {"first": 1}
    second = oar.load(buf, weights_only=True)
    np.testing.assert_array_equal(N(second[0]), [1, 1])
    assert second[1] == "second"
    assert sorted(os.listdir(tmp_path)) == ["a.oar", "b.oar", "c.oar"]  # no temporary file is left behind


def test_plain_values_and_containers():
    inner = [1, 2]
    obj = collections.OrderedDict([
        ("none", None), ("t", True), ("f", False), ("int", -7), ("i64min", -(1 << 63)), ("big", 3 ** 90),
        ("negbig", -(2 ** 64)), ("float", 0.1), ("nan_free", float("inf")), ("complex", 1.5 - 2j),
        ("str", "h\u00e9llo \U0001F600"), ("bytes", b"\x00\xff"), ("bytearray", bytearray(b"ab")),
        ("tuple", (1, (2.5, "x"))), ("set", {1, "a"}), ("frozenset", frozenset({3})), ("dtype", oar.bfloat16),
        ("device", oar.device("cpu")), ("empty", {}), ("shared", (inner, inner)),
        (7, "int key"), (2.5, "float key"), (None, "None key"), (False, "bool key"), ((1, "a"), "tuple key"),
    ])
    out = _round_trip(obj)
    assert type(out) is collections.OrderedDict and list(out.keys()) == list(obj.keys())
    for k, v in obj.items():
        assert type(out[k]) is type(v) and out[k] == v, k
    assert out["shared"][0] is out["shared"][1]  # a container saved twice loads as one object
    plain = _round_trip({"b": 1, "a": [1.0, {"c": ()}]})
    assert type(plain) is dict and plain == {"b": 1, "a": [1.0, {"c": ()}]}
    assert _round_trip(5) == 5 and _round_trip("only a string") == "only a string"


def test_numpy_arrays_and_scalars():
    arrays = [np.arange(12, dtype=np.float32).reshape(3, 4), np.array([1, -2], dtype=">i4"),  # big-endian
              np.array([True, False]), np.zeros((0, 3), np.uint8), np.array(2.5), np.array([1 + 2j]),
              np.arange(6, dtype=np.float64).reshape(2, 3).T, np.float16([1.5, -0.0])]
    out = _round_trip({"a": arrays, "s": [np.float32(2.5), np.int64(-3), np.bool_(True)]})
    for a, b in zip(arrays, out["a"]):
        assert type(b) is np.ndarray and b.shape == a.shape and b.dtype == a.dtype.newbyteorder("=")
        np.testing.assert_array_equal(a, b)
    assert [type(v) for v in out["s"]] == [np.float32, np.int64, np.bool_]
    assert out["s"] == [2.5, -3, True]
    with pytest.raises(TypeError, match=r"obj\['x'\]: .*NumPy object"):
        oar.save({"x": np.array([object()])}, io.BytesIO())


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_every_dtype_round_trips_exactly(device, dtype):
    special = np.array([0.0, -0.0, 1.0 / 3, -2.5, 65504.0, 1e-3, np.inf, -np.inf, 7, 100])
    t = oar.tensor(special).to(dtype).to(device).reshape(2, 5)
    out = _round_trip({"t": t, "scalar": t[1, 2], "epoch": 1})  # not a flat state dict: OARCHKPT
    for k in ("t", "scalar"):
        src = t if k == "t" else t[1, 2]
        assert out[k].dtype == dtype and out[k].device == oar.device(device)
        assert tuple(out[k].shape) == tuple(src.shape)
        np.testing.assert_array_equal(_bits(out[k]), _bits(src))  # bit for bit: -0.0, inf, rounding


def test_float_nan_payload_kept():
    t = oar.tensor([float("nan"), 1.0])
    np.testing.assert_array_equal(_bits(_round_trip([t])[0]), _bits(t))


@pytest.mark.parametrize("device", DEVICES)
def test_map_location_forms(device):
    t = oar.arange(6).to(oar.float32).reshape(2, 3).to(device)
    saved = str(t.device)
    for ml in ("cpu", oar.device("cpu"), {saved: "cpu"}):
        out = _round_trip([t], map_location=ml)[0]
        assert out.device == oar.device("cpu")
        np.testing.assert_array_equal(N(out), N(t))
    assert _round_trip([t], map_location={"nowhere:3": "cpu"})[0].device == t.device  # unmatched: stays
    seen = []

    def where(tensor, location):
        seen.append((location, tensor.device))
        return tensor.to("cpu")
    out = _round_trip([t, t], map_location=where)
    assert seen == [(saved, oar.device("cpu"))]  # once per storage, given on the CPU with its location
    assert out[0] is out[1] and out[0].device == oar.device("cpu")
    out = _round_trip([t], map_location=lambda tensor, location: None)  # None: the default placement
    assert out[0].device == t.device
    with pytest.raises(TypeError, match="map_location"):
        _round_trip([t], map_location=lambda tensor, location: "not a tensor")


def test_tensor_from_a_missing_device_needs_map_location():
    buf = io.BytesIO()
    oar.save([oar.arange(3).to(oar.float32)], buf)
    body = buf.getvalue()[:-4]
    saved_on = b"\x03\x00\x00\x00cpu"  # the device's name as the file spells it, after its length
    assert body.count(saved_on) == 1
    f = io.BytesIO(_with_crc(body.replace(saved_on, b"\x03\x00\x00\x00xpu")))  # as if saved on a device absent here
    f.name = "elsewhere.oar"
    with pytest.raises(oar.DeviceError, match=r"'elsewhere\.oar'.*xpu.*map_location"):
        oar.load(f)
    for ml in ("cpu", {"xpu": "cpu"}):
        f.seek(0)
        out = oar.load(f, map_location=ml)[0]
        assert out.device == oar.device("cpu")
        np.testing.assert_array_equal(N(out), [0, 1, 2])


@pytest.mark.parametrize("device", DEVICES)
def test_requires_grad_and_non_leaf_tensors(device):
    p = nn.Parameter(oar.ones(3).to(device))
    y = p * 2
    out = _round_trip({"p": p, "y": y, "plain": oar.ones(2).to(device), "note": "x"})
    assert out["p"].requires_grad and out["p"].is_leaf and isinstance(out["p"], nn.Parameter)
    assert out["y"].requires_grad and out["y"].is_leaf  # saved as data, like torch.save
    np.testing.assert_array_equal(N(out["y"]), [2, 2, 2])
    assert not out["plain"].requires_grad


# ---------------------------------------------------------------- sharing
@pytest.mark.parametrize("device", DEVICES)
def test_same_tensor_twice_loads_as_one_object(device):
    w = oar.randn(3, 4).to(device)
    out = _round_trip({"a": w, "b": [w, (w,)]})
    flat = _round_trip({"a": w, "b": w})  # a flat state dict is OARSTATE, which keeps no sharing
    assert flat["a"] is not flat["b"]
    np.testing.assert_array_equal(N(flat["a"]), N(flat["b"]))
    assert out["a"] is out["b"][0] is out["b"][1][0]
    buf = io.BytesIO()
    oar.save([w, w, w], buf)
    once = len(buf.getvalue())
    buf = io.BytesIO()
    oar.save([w], buf)
    assert once - len(buf.getvalue()) < 64  # stored once, referenced thrice


def test_views_of_one_tensor_share_memory_after_loading():
    base = oar.arange(24).to(oar.float32)
    mat = base.view(4, 6)
    row = mat[1]
    part = base.narrow(0, 20, 4)
    out = _round_trip({"base": base, "row": row, "mat": mat, "part": part, "other": oar.zeros(2), "step": 1})
    np.testing.assert_array_equal(N(out["row"]), np.arange(6, 12))
    np.testing.assert_array_equal(N(out["part"]), np.arange(20, 24))
    assert out["row"].data_ptr() - out["base"].data_ptr() == 6 * 4
    out["base"].mul_(10)  # one storage: every view sees the write
    np.testing.assert_array_equal(N(out["row"]), np.arange(6, 12) * 10)
    np.testing.assert_array_equal(N(out["mat"]), np.arange(24).reshape(4, 6) * 10)
    np.testing.assert_array_equal(N(out["part"]), np.arange(20, 24) * 10)
    np.testing.assert_array_equal(N(out["other"]), [0, 0])
    # views without their base, overlapping each other, also come back as one storage
    a, b = base.narrow(0, 0, 10), base.narrow(0, 5, 10)
    out = _round_trip([a, b])
    assert out[1].data_ptr() - out[0].data_ptr() == 5 * 4
    # aliases with different requires_grad keep their own flags
    p = nn.Parameter(oar.ones(3))
    out = _round_trip([p, p.detach()])
    assert out[0].requires_grad and out[0].is_leaf and not out[1].requires_grad and out[1].grad_fn is None
    assert out[0].data_ptr() == out[1].data_ptr()
    # a non-contiguous view is stored as a copy of its values
    t = mat.t()
    np.testing.assert_array_equal(N(_round_trip(t)), N(t))


# ---------------------------------------------------------------- OARSTATE (C++-readable state dicts)
@pytest.mark.parametrize("device", DEVICES)
def test_flat_state_dict_stays_cpp_readable(device, tmp_path):
    model, _, _ = _checkpoint(device)
    sd = model.state_dict()
    path = tmp_path / "model.oar"
    oar.save(sd, path)
    assert path.read_bytes()[:8] == b"OARSTATE"
    cpp = oar._C.load_state_dict(str(path), None)  # what C++ oar::load reads
    assert [k for k, _ in cpp] == list(sd.keys())
    for (_, v), w in zip(cpp, sd.values()):
        np.testing.assert_array_equal(N(v), N(w))
    loaded = oar.load(path)  # OARSTATE records no device: CPU, or map_location
    assert type(loaded) is collections.OrderedDict and all(v.device == oar.device("cpu") for v in loaded.values())
    on_device = oar.load(path, map_location=device)
    assert all(v.device == oar.device(device) for v in on_device.values())
    buf = io.BytesIO()  # the same bytes through a file object
    oar.save(sd, buf)
    assert buf.getvalue() == path.read_bytes()
    buf.seek(0)
    moved = oar.load(buf, map_location={"cpu": device})
    for k in sd:
        assert moved[k].device == oar.device(device)
        np.testing.assert_array_equal(N(moved[k]), N(sd[k]))


def test_files_written_by_cpp_load(tmp_path):
    path = str(tmp_path / "cpp.oar")
    items = [("w", oar.randn(2, 3)), ("h", oar.ones(4).half()), ("i", oar.arange(3))]
    oar._C.save_state_dict(items, path)  # the C++ writer, oar::save
    for src in (path, io.BytesIO(pathlib.Path(path).read_bytes())):
        out = oar.load(src)
        assert list(out) == ["w", "h", "i"]
        for k, v in items:
            assert out[k].dtype == v.dtype
            np.testing.assert_array_equal(N(out[k]), N(v))


def test_old_format_errors_name_the_file(tmp_path):
    path = tmp_path / "cpp.oar"
    oar.save({"w": oar.ones(8)}, path)
    data = path.read_bytes()
    (tmp_path / "cut.oar").write_bytes(data[:-20])
    with pytest.raises(oar.IOError, match=r"cut\.oar.*truncated"):
        oar.load(tmp_path / "cut.oar")
    f = io.BytesIO(data[:-20])
    f.name = "stream.oar"
    with pytest.raises(oar.IOError, match=r"'stream\.oar'.*truncated"):
        oar.load(f)


# ---------------------------------------------------------------- damaged and foreign files
def _valid_bytes():
    buf = io.BytesIO()
    oar.save({"w": [oar.arange(10).to(oar.float32)], "n": 1}, buf)
    return buf.getvalue()


def _with_crc(body):
    return body + struct.pack("<I", zlib.crc32(body))


def test_damaged_files_raise_io_errors_naming_file_and_problem(tmp_path):
    good = _valid_bytes()
    cases = {
        "cut.oar": (good[:len(good) // 2], "truncated"),
        "header.oar": (good[:12], "truncated"),
        "magic.oar": (good[:5], "truncated"),
        "empty.oar": (b"", "empty"),
        "foreign.oar": (b"hello world, not a checkpoint", "not an oar file"),
        "pickle.oar": (b"\x80\x04\x95" + b"\x00" * 30, "not an oar file"),
        "torch.pt": (b"PK\x03\x04" + b"\x00" * 30, "zip archive"),
        "newer.oar": (good[:8] + struct.pack("<I", 2) + good[12:], "format version 2 is newer than this build "
                                                                   r"supports \(1\)"),
        "flipped.oar": (good[:40] + bytes([good[40] ^ 0x10]) + good[41:], "checksum mismatch"),
        "crc.oar": (good[:-1] + bytes([good[-1] ^ 1]), "checksum mismatch"),
        "trailing.oar": (good + b"x", "unexpected bytes after the checksum"),
    }
    for name, (data, problem) in cases.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(oar.IOError, match=rf"{name.replace('.', '[.]')}'.*{problem}"):
            oar.load(tmp_path / name)
        assert issubclass(oar.IOError, RuntimeError)
    with pytest.raises(oar.IOError, match=r"missing\.oar.*cannot open"):
        oar.load(tmp_path / "missing.oar")


def test_unknown_type_tag_and_inconsistent_tables():
    # Hand-made payloads with valid checksums: no storages, no tensors, then a value.
    def file_with(payload):
        return io.BytesIO(_with_crc(struct.pack("<8sIQ", b"OARCHKPT", 1, len(payload)) + payload))
    empty_tables = struct.pack("<QQ", 0, 0)
    assert oar.load(file_with(empty_tables + bytes([3]) + struct.pack("<q", 42))) == 42
    with pytest.raises(oar.IOError, match="unknown type tag 200"):
        oar.load(file_with(empty_tables + bytes([200])))
    with pytest.raises(oar.IOError, match="tensor index 0 out of range"):
        oar.load(file_with(empty_tables + bytes([16]) + struct.pack("<Q", 0)))
    with pytest.raises(oar.IOError, match="corrupt"):  # a list announcing more items than bytes exist
        oar.load(file_with(empty_tables + bytes([10]) + struct.pack("<Q", 1 << 40)))
    storage = struct.pack("<BI3sQ", 0, 3, b"cpu", 2)  # float32, 2 elements
    tensor = struct.pack("<QQBI1q", 0, 1, 0, 1, 2)     # 2 elements from offset 1: outside the storage
    with pytest.raises(oar.IOError, match="outside its storage"):
        oar.load(file_with(struct.pack("<Q", 1) + storage + struct.pack("<Q", 1) + tensor + bytes([0]) + b"\0" * 8))
    with pytest.raises(oar.IOError, match="NumPy dtype 'O' is not allowed"):  # an object array never loads
        blob = b"O"
        oar.load(file_with(empty_tables + bytes([17]) + struct.pack("<Q", len(blob)) + blob
                           + struct.pack("<I", 0) + struct.pack("<Q", 8) + b"\0" * 8))


# ---------------------------------------------------------------- what can't be saved
class _Thing:
    pass


def test_unsupported_objects_raise_type_error_with_their_path(tmp_path):
    _, _, ck = _checkpoint("cpu")
    ck["optimizer"]["state"][0] = lambda: 0
    with pytest.raises(TypeError, match=r"obj\['optimizer'\]\['state'\]\[0\]: an object of type builtins\.function"):
        oar.save(ck, io.BytesIO())
    with pytest.raises(TypeError, match=r"obj\[1\]\['k'\]: an object of type .*_Thing"):
        oar.save([0, {"k": _Thing()}], io.BytesIO())
    with pytest.raises(TypeError, match=r"obj\['a'\]: a dict key of type .*_Thing"):
        oar.save({"a": {_Thing(): 1}}, io.BytesIO())
    with pytest.raises(TypeError, match=r"obj: an object of type .*Linear"):
        oar.save(nn.Linear(2, 2), io.BytesIO())  # save model.state_dict(), not the module
    loop = [1]
    loop.append(loop)
    with pytest.raises(ValueError, match="reference cycle"):
        oar.save(loop, io.BytesIO())
    # a failed save leaves an existing file untouched and no temporary behind
    path = tmp_path / "keep.oar"
    oar.save({"v": 1}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError):
        oar.save({"v": _Thing()}, path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["keep.oar"]


def test_save_to_unwritable_place_raises_io_error(tmp_path):
    target = tmp_path / "no_such_dir" / "ck.oar"
    with pytest.raises(oar.IOError, match=r"no_such_dir/ck\.oar.*cannot create temporary file"):
        oar.save({"v": [1]}, target)
    with pytest.raises(TypeError, match="path or a writable file object"):
        oar.save({"v": 1}, 12)
