"""Inference latency with subgraph offload (docs/adapter.md), side by side in one process.

For the digits CNN (the main job's network, 1x8x8 images) and a ResNet-18-style network
(bench_resnet_step.build, 3xSxS images), at batch 1 and 32, in eval mode, saved with oar.jit.save:
  - plugin: oar.inference.Predictor on the cpu plugin alone (the baseline);
  - openvino: the same Predictor offloading to the openvino adapter driver (fp32);
  - onnxruntime: the same model exported with oar.onnx.export, run by ONNX Runtime's CPU provider,
    when the onnxruntime package is installed.
Prints the median latency of each and the ratio plugin_time / other_time (> 1: faster than the
plugin alone). The issue's target: openvino >= 1.5x the plugin at batch 1. Quote `lscpu`'s model
name with the numbers (the script prints it). Without the openvino driver it says so and exits 0.

Run: python bench/bench_adapter.py [--size 64] [--repeats 20]
"""
import argparse
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import oar  # noqa: E402
from bench_resnet_step import build as build_resnet, median_step  # noqa: E402

try:
    import onnxruntime
except ImportError:
    onnxruntime = None


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        for line in out.splitlines():
            if line.startswith("Model name:"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def digits_cnn(nn):
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * 2 * 2, 64), nn.ReLU(), nn.Dropout(0.1), nn.Linear(64, 10))


def bench_model(name, model, shape, repeats, tmp):
    model.eval()
    x = oar.randn(*shape)
    path = os.path.join(tmp, f"{name}_{shape[0]}.oarg")
    oar.jit.save(model, path, example_inputs=x)
    plugin = oar.inference.Predictor(path, device="cpu", adapter="none")
    results = {"plugin": median_step(lambda: plugin.run(x), 3, repeats)}
    want = plugin.run(x).numpy()
    ov = oar.inference.Predictor(path, device="cpu", adapter="openvino",
                                 adapter_options={"OAR_OPENVINO_PRECISION": "fp32"})
    got = ov.run(x).numpy()
    err = float(np.max(np.abs(got - want)) / max(1e-12, float(np.max(np.abs(want)))))
    offloaded = ov.placement["offloaded_fraction"]
    results["openvino"] = median_step(lambda: ov.run(x), 3, repeats)
    if onnxruntime is not None:
        onnx_path = os.path.join(tmp, f"{name}_{shape[0]}.onnx")
        oar.onnx.export(model, onnx_path, example_inputs=x)
        sess = onnxruntime.InferenceSession(onnx_path, providers=["CPUExecutionProvider"])
        feed = {sess.get_inputs()[0].name: x.numpy()}
        results["onnxruntime"] = median_step(lambda: sess.run(None, feed), 3, repeats)
    base = results["plugin"]
    line = f"{name:10s} batch {shape[0]:3d}: plugin {base * 1e3:8.3f} ms"
    for k in ("openvino", "onnxruntime"):
        if k in results:
            line += f" | {k} {results[k] * 1e3:8.3f} ms ({base / results[k]:5.2f}x)"
    line += f" | offloaded {offloaded:.0%}, max rel err {err:.1e}"
    print(line, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", type=int, default=64, help="ResNet input height/width")
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    if not any(d["name"] == "openvino" and d["loaded"] for d in oar.adapter.drivers()):
        print("bench_adapter: the openvino adapter driver is not loaded (scripts/install_openvino.sh, then rebuild)")
        return 0
    print(f"CPU: {cpu_model()}; threads: oar default, OpenVINO default; "
          f"ONNX Runtime {'%s' % onnxruntime.__version__ if onnxruntime else 'not installed'}")
    print("ratio = plugin time / other time (> 1: faster than the cpu plugin alone)")
    with tempfile.TemporaryDirectory() as tmp:
        oar.manual_seed(0)
        for batch in (1, 32):
            bench_model("digits", digits_cnn(oar.nn), (batch, 1, 8, 8), args.repeats, tmp)
        for batch in (1, 32):
            bench_model("resnet18", build_resnet(oar.nn), (batch, 3, args.size, args.size),
                        max(3, args.repeats // (4 if batch > 1 else 1)), tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
