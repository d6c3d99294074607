"""oar.onnx: ONNX models in and out, through the graph IR (liboar_onnx.so, docs/onnx.md).

    f = oar.onnx.load("model.onnx")                  # a callable, like oar.jit.load
    y = f(x)
    oar.onnx.export(model, (x,), "model.onnx")       # torch.onnx.export's form: traced on x

Import maps each ONNX node onto oar ops (opsets up to 17); shapes are static, taken from the model
or from `input_shapes`. Export traces the function (so the graph has the example inputs' shapes),
skips the fusions into oar-only ops (conv2d_act, linear_act, fused_elementwise) and writes the file atomically. Errors are
typed and name the file: IOError (missing, truncated, corrupt), ValueError (a newer model),
NotImplementedError (an op with no mapping), DTypeError (an element type oar lacks).
"""
import os
import warnings

from . import _C
from ._C import Tensor
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


def _is_destination(f):
    return isinstance(f, (str, bytes, os.PathLike)) or hasattr(f, "write")


def export(model, args=None, f=None, *positional, opset_version=None, input_names=None, output_names=None,
           dynamic_axes=None, training=None, opset=None, example_inputs=None, **options):
    """Traces `model` (a Module or a function of tensors) on example inputs and writes an ONNX model.

    Both torch.onnx.export's order, `export(model, args, f, ...)` with `f` a path or a binary file object,
    and oar's older `export(model, path, example_inputs, opset=17)` are accepted. A Module is traced in eval
    mode (as torch's default training=TrainingMode.EVAL) and put back as it was. `input_names` and
    `output_names` name the model's inputs and outputs in order. Shapes are those of the example inputs:
    `dynamic_axes` cannot make a traced oar graph shape-polymorphic, so it is refused with a warning that
    the exported model takes only the example's shapes."""
    _require()
    if args is not None and _is_destination(args) and not _is_destination(f):  # oar's order
        args, f = f if example_inputs is None else example_inputs, args
        if positional:
            opset, positional = positional[0], positional[1:]
    elif example_inputs is not None and args is None:
        args = example_inputs
    if positional:  # torch's export_params, verbose, training, ... positionally: only the defaults mean anything
        raise TypeError("oar.onnx.export: pass options after f by keyword (opset_version=, input_names=, ...)")
    if f is None:
        raise TypeError("oar.onnx.export: missing the destination f (a path or a binary file object)")
    if args is None:
        raise TypeError("oar.onnx.export: missing the example inputs (args)")
    opset = int(opset_version if opset_version is not None else opset if opset is not None else 17)
    unknown = set(options) - _IGNORED_OPTIONS
    if unknown:
        raise TypeError(f"oar.onnx.export: unexpected option(s) {sorted(unknown)}")
    if options.get("operator_export_type") not in (None, "ONNX") and str(options["operator_export_type"]) not in (
            "OperatorExportTypes.ONNX",):
        raise NotImplementedError("oar.onnx.export: only standard ONNX operators are exported "
                                  "(operator_export_type=ONNX)")
    if dynamic_axes:
        warnings.warn("oar.onnx.export: dynamic_axes is not supported; oar traces static shapes, so the exported "
                      "model takes only the example inputs' shapes", UserWarning, stacklevel=2)
    if isinstance(model, StaticFunction):
        model = model._fn
    if isinstance(args, Tensor):
        args = (args,)
    args = tuple(args) if isinstance(args, (tuple, list)) else (args,)
    kwargs = {}
    if args and isinstance(args[-1], dict):  # torch: a trailing dict holds keyword arguments
        args, kwargs = args[:-1], dict(args[-1])
    module = model if isinstance(model, Module) else None
    was_training = module.training if module is not None else False
    eval_mode = training is None or str(training).endswith("EVAL") or training is False
    if module is not None and eval_mode:
        module.eval()
    try:
        tensors = []
        spec = _flatten((args, kwargs), tensors)
        graph, _, _ = _record(model, spec, tensors, _module_names(module), input_prefix="input",
                              input_names=list(input_names or []))
    finally:
        if module is not None and eval_mode and was_training:
            module.train()
    graph.optimize(_device_of(tensors), fuse=False)
    inputs, outputs = list(input_names or []), list(output_names or [])
    if len(inputs) > len(tensors):
        raise ValueError(f"oar.onnx.export: {len(inputs)} input_names for {len(tensors)} tensor inputs")
    if hasattr(f, "write"):
        f.write(_C.onnx_export_bytes(graph, opset, inputs, outputs))
    else:
        _C.onnx_export(graph, os.fspath(f) if not isinstance(f, bytes) else f.decode(), opset, inputs, outputs)


# torch.onnx.export options that change nothing in oar's export (each has one meaning here).
_IGNORED_OPTIONS = {"export_params", "verbose", "do_constant_folding", "keep_initializers_as_inputs",
                    "custom_opsets", "export_modules_as_functions", "operator_export_type", "autograd_inlining",
                    "dynamo", "external_data", "report", "optimize", "verify"}


def supported_ops():
    """The ONNX op types the importer maps."""
    _require()
    return list(_C.onnx_supported_ops())
