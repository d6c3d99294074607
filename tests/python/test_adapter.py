"""Subgraph offload from Python (docs/adapter.md): oar.inference.Predictor, oar.jit.load and
oar.onnx.load with an adapter driver, OAR_ADAPTER for unchanged scripts, placements, the
compiled-subgraph cache across processes (a changed driver version recompiles), and
oar-predict --explain. Results are compared with the plugin-only run within the precision table
tests/adapter/precision_tolerances.txt."""
import os
import subprocess
import sys

import numpy as np
import pytest

import oar
import oar.nn as nn

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("TEST_OAR_BUILD_DIR") or os.path.join(ROOT, "build")
PREDICT = os.path.join(BUILD, "bin", "oar-predict")
V2_DIR = os.path.join(BUILD, "test_adapters", "fake_npu_v2")


def tolerance(precision):
    with open(os.path.join(ROOT, "tests", "adapter", "precision_tolerances.txt")) as f:
        for line in f:
            parts = line.split()
            if parts and not parts[0].startswith("#") and parts[0] == precision:
                return float(parts[1]), float(parts[2])
    raise KeyError(precision)


def assert_within(got, want, precision):
    rtol, atol = tolerance(precision)
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape
    bound = atol + rtol * np.max(np.abs(want))
    assert np.max(np.abs(got - want)) <= bound, (precision, np.max(np.abs(got - want)), bound)


def loaded(name):
    return any(d["name"] == name and d["loaded"] for d in oar.adapter.drivers())


DRIVERS = ["fake_npu"] + (["openvino"] if loaded("openvino") else [])


def digits_cnn():
    oar.manual_seed(0)
    m = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 2 * 2, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 10))
    m.eval()
    return m


@pytest.fixture(scope="module")
def digits_file(tmp_path_factory):
    path = str(tmp_path_factory.mktemp("adapter") / "digits.oarg")
    x = oar.randn(8, 1, 8, 8)
    oar.jit.save(digits_cnn(), path, example_inputs=x)
    return path, x


def test_drivers_are_listed_with_versions_and_options():
    by_name = {d["name"]: d for d in oar.adapter.drivers()}
    assert by_name["fake_npu"]["loaded"]
    assert by_name["fake_npu"]["version"]
    assert "OAR_FAKE_NPU_PRECISION" in by_name["fake_npu"]["options"]
    assert oar.get_flag("OAR_FAKE_NPU_PRECISION") == "fp32"


@pytest.mark.parametrize("driver", DRIVERS)
def test_predictor_offloads_the_digits_cnn(digits_file, driver):
    path, x = digits_file
    want = oar.inference.Predictor(path, adapter="none").run(x).numpy()
    p = oar.inference.Predictor(path, adapter=driver)
    assert_within(p.run(x).numpy(), want, "fp32")
    pl = p.placement
    names = [n["name"] for n in pl["nodes"]]
    on_plugin = [n["name"] for n in pl["nodes"] if n["target"] == "plugin"]
    if driver == "fake_npu":
        assert on_plugin == [n for n in names if n.startswith("reshape")], pl["explain"]
        reason = next(n["reason"] for n in pl["nodes"] if n["target"] == "plugin")
        assert "fake_npu" in reason and "reshape" in reason
    else:
        assert on_plugin == [], pl["explain"]
    assert "nodes offloaded" in pl["explain"]


@pytest.mark.parametrize("precision", ["fp16", "int8"])
def test_fake_npu_precisions_stay_within_the_table(digits_file, precision):
    path, x = digits_file
    want = oar.inference.Predictor(path, adapter="none").run(x).numpy()
    p = oar.inference.Predictor(path, adapter="fake_npu", adapter_options={"OAR_FAKE_NPU_PRECISION": precision})
    got = p.run(x).numpy()
    assert_within(got, want, precision)
    assert not np.array_equal(got, want), "reduced precision changes the numbers"


@pytest.mark.skipif(not loaded("openvino"), reason="the openvino adapter driver is not built (scripts/install_openvino.sh)")
def test_openvino_fp16_within_its_tolerance(digits_file):
    path, x = digits_file
    want = oar.inference.Predictor(path, adapter="none").run(x).numpy()
    p = oar.inference.Predictor(path, adapter="openvino", adapter_options={"OAR_OPENVINO_PRECISION": "fp16"})
    assert_within(p.run(x).numpy(), want, "fp16")


def test_jit_load_and_pins(digits_file):
    path, x = digits_file
    f = oar.jit.load(path, adapter="fake_npu", deny=["op:max_pool2d"])
    assert f.placement is None
    y = f(x)
    pinned = [n for n in f.placement["nodes"] if n["op"] == "max_pool2d"]
    assert pinned and all(n["target"] == "plugin" and "op:max_pool2d" in n["reason"] for n in pinned)
    assert_within(y.numpy(), oar.jit.load(path)(x).numpy(), "fp32")
    with pytest.raises(TypeError):
        oar.jit.load(path, adapter="fake_npu", deny_list=["x"])


def test_bad_adapter_input_is_a_typed_error(digits_file):
    path, x = digits_file
    with pytest.raises(oar.PluginError, match="no adapter driver 'nope'"):
        oar.inference.Predictor(path, adapter="nope")
    with pytest.raises(ValueError, match="OAR_FAKE_NPU_PRECISION"):
        oar.inference.Predictor(path, adapter="fake_npu", adapter_options={"OAR_FAKE_NPU_PRECISION": "fp8"})
    p = oar.inference.Predictor(path, adapter="fake_npu")
    with pytest.raises(oar.ShapeError):
        p.run(oar.randn(3, 1, 8, 8))


def _run(code, env_extra):
    env = dict(os.environ, **env_extra)
    env["PYTHONPATH"] = os.path.join(BUILD, "python") + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)


def test_oar_adapter_offloads_an_unchanged_script(digits_file):
    path, _ = digits_file
    code = (f"import oar; f = oar.jit.load({path!r}); y = f(oar.randn(8, 1, 8, 8)); "
            "print(f.placement['offloaded_fraction'], y.shape)")
    r = _run(code, {"OAR_ADAPTER": "fake_npu"})
    assert r.returncode == 0, r.stderr
    fraction = float(r.stdout.split()[0])
    assert 0.8 < fraction < 1.0, r.stdout
    r = _run(code, {"OAR_ADAPTER": ""})
    assert r.returncode != 0 and "NoneType" in r.stderr, "without OAR_ADAPTER nothing is offloaded"


def _explain(path, cache, env_extra=None, extra_args=()):
    env = dict(os.environ, OAR_ADAPTER_CACHE_DIR=str(cache), **(env_extra or {}))
    r = subprocess.run([PREDICT, path, "--adapter", "fake_npu", "--explain", *extra_args], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout, r.stderr


@pytest.mark.skipif(not os.path.exists(PREDICT), reason="oar-predict is not built")
def test_cache_across_processes_and_driver_versions(digits_file, tmp_path):
    path, _ = digits_file
    out, _ = _explain(path, tmp_path)
    assert out.count(", compiled") == 2 and "loaded from the cache" not in out, out
    out, _ = _explain(path, tmp_path)
    assert out.count("loaded from the cache") == 2 and ", compiled" not in out, out
    if os.path.isdir(V2_DIR):
        # The same driver, another version (test_adapters/fake_npu_v2 comes first): nothing cached is used.
        out, _ = _explain(path, tmp_path, {"OAR_ADAPTER_PATH": V2_DIR})
        assert out.count(", compiled") == 2, out
        assert "fake_npu 1.0.1" in out, out
    # Every entry corrupted: rebuilt (with a warning), never trusted.
    for root, _, files in os.walk(tmp_path):
        for name in files:
            p = os.path.join(root, name)
            with open(p, "r+b") as f:
                f.seek(-3, os.SEEK_END)
                f.write(b"\xff\x00\xff")
    out, err = _explain(path, tmp_path)
    assert out.count(", compiled") == 2, out
    assert "stale or corrupt entry rebuilt" in err, err


@pytest.mark.skipif(not os.path.exists(PREDICT), reason="oar-predict is not built")
def test_oar_predict_explain_and_run(digits_file, tmp_path):
    path, x = digits_file
    inputs = str(tmp_path / "in.oar")
    outputs = str(tmp_path / "out.oar")
    oar.save({"x": x}, inputs)
    r = subprocess.run([PREDICT, path, inputs, outputs, "--adapter", "fake_npu", "--deny", "node:conv2d_0", "--explain"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "conv2d_0 -> plugin cpu:0: pinned to the plugin device by 'node:conv2d_0'" in r.stdout, r.stdout
    y = oar.load(outputs)["output0"]
    assert_within(y.numpy(), oar.jit.load(path)(x).numpy(), "fp32")
    r = subprocess.run([PREDICT, path, "--explain"], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, OAR_ADAPTER=""))
    assert r.returncode == 0 and "no adapter driver selected" in r.stdout, r.stdout + r.stderr
    r = subprocess.run([PREDICT, path, "--adapter-option", "nonsense"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "NAME=VALUE" in r.stderr


def test_a_misspelled_driver_option_in_the_environment_is_named(digits_file):
    path, _ = digits_file
    r = _run(f"import oar; oar.inference.Predictor({path!r}, adapter='fake_npu')", {"OAR_FAKE_NPU_PRECISON": "fp16"})
    assert r.returncode == 0, r.stderr
    assert "OAR_FAKE_NPU_PRECISON" in r.stderr and "did you mean OAR_FAKE_NPU_PRECISION" in r.stderr, r.stderr
