"""oar.onnx: ONNX models in and out, through the graph IR (liboar_onnx.so, docs/onnx.md).

    f = oar.onnx.load("model.onnx")                  # a callable, like oar.jit.load
    y = f(x)
    oar.onnx.export(model, "model.onnx", example_inputs=x)   # a Module or function, traced on x

Import maps each ONNX node onto oar ops (opsets up to 17); shapes are static, taken from the model
or from `input_shapes`. Export traces the function (so the graph has the example inputs' shapes),
skips the fusions into oar-only ops (conv2d_act, linear_act, fused_elementwise) and writes the file atomically. Errors are
typed and name the file: IOError (missing, truncated, corrupt), ValueError (a newer model),
NotImplementedError (an op with no mapping), DTypeError (an element type oar lacks).
"""
from . import _C
from .jit import LoadedFunction, StaticFunction, _device_of, _flatten, _module_names, _record
from .nn.module import Module

__all__ = ["load", "export", "supported_ops"]


def _require():
    if not hasattr(_C, "onnx_import"):
        raise RuntimeError("this oar build has no ONNX support (libonnx-dev was missing when it was built)")


def load(path, input_shapes=None, adapter=None, **adapter_options):
    """Imports an ONNX model; returns a callable LoadedFunction (its `.graph` is the oar graph).

    `adapter` (or OAR_ADAPTER) offloads subgraphs to that adapter driver (docs/adapter.md);
    `adapter_options` as for `oar.inference.Predictor`."""
    _require()
    shapes = [list(s) for s in input_shapes] if input_shapes else []
    return LoadedFunction(_C.onnx_import(str(path), shapes), adapter=adapter, **adapter_options)


def export(function, path, example_inputs, opset=17):
    """Traces `function` (a Module or a function of tensors) on `example_inputs` and writes an ONNX model."""
    _require()
    if isinstance(function, StaticFunction):
        function = function._fn
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    tensors = []
    spec = _flatten((tuple(example_inputs), {}), tensors)
    module = function if isinstance(function, Module) else None
    graph, _, _ = _record(function, spec, tensors, _module_names(module), input_prefix="input")
    graph.optimize(_device_of(tensors), fuse=False)
    _C.onnx_export(graph, str(path), opset)


def supported_ops():
    """The ONNX op types the importer maps."""
    _require()
    return list(_C.onnx_supported_ops())
