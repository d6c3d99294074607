"""oar.inference: the deployment API, as the C++ ``oar::inference::Predictor``.

    p = oar.inference.Predictor("digits.oarg", device="cpu", adapter="openvino")
    y = p.run(x)                     # or p(x)
    print(p.placement["explain"])    # which node went where, and why

A Predictor freezes the graph's weights, folds batch norms into convolutions and, when an adapter
driver is selected (``adapter=`` or ``OAR_ADAPTER``), offloads the subgraphs the driver supports
(docs/adapter.md); the rest runs on ``device``. The model is a saved graph (``oar.jit.save``), an
ONNX file (``.onnx``) or a Graph.
"""
from . import _C
from .jit import _device_of

__all__ = ["Predictor"]


class Predictor:
    """Runs a saved graph, an ONNX model or a Graph for inference, optionally offloaded to an adapter driver.

    adapter: driver name ("openvino", "fake_npu"); None means OAR_ADAPTER (empty: no offload); "none": no
        offload whatever OAR_ADAPTER says.
    adapter_options: {"OAR_OPENVINO_PRECISION": "fp16", ...}, on top of the flags' values.
    deny: pins kept on the device ("softmax", "op:reshape", "node:conv2d_3").
    min_nodes, min_macs: the offload threshold (None: OAR_ADAPTER_MIN_NODES / _MIN_MACS).
    cache_dir: compiled-subgraph cache (None: OAR_ADAPTER_CACHE_DIR).
    """

    def __init__(self, model, device="cpu", adapter=None, adapter_options=None, deny=None, min_nodes=None,
                 min_macs=None, cache_dir=None, input_shapes=None):
        graph = _load_graph(model, device, input_shapes)
        self._p = _C.Predictor(graph, device, driver=adapter or "",
                               options={str(k): str(v) for k, v in (adapter_options or {}).items()},
                               deny=list(deny or []), min_nodes=-1 if min_nodes is None else int(min_nodes),
                               min_macs=-1.0 if min_macs is None else float(min_macs), cache_dir=cache_dir or "")
        self.graph = graph

    def run(self, *inputs):
        """Runs on tensors of the graph's input shapes and dtypes; returns a tensor or a tuple."""
        if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)):
            inputs = tuple(inputs[0])
        outputs = self._p.run(list(inputs))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    __call__ = run

    @property
    def device(self):
        return self._p.device

    @property
    def placement(self):
        """None without an adapter; else a dict: driver, device, nodes (name, op, target, subgraph, reason),
        subgraphs, offloaded_fraction and explain (the text ``oar-predict --explain`` prints)."""
        return self._p.placement


def _load_graph(model, device, input_shapes):
    if isinstance(model, _C.Graph):
        return model
    path = str(model)
    if path.endswith(".onnx"):
        if not hasattr(_C, "onnx_import"):
            raise RuntimeError("this oar build has no ONNX support (libonnx-dev was missing when it was built)")
        return _C.onnx_import(path, [list(s) for s in input_shapes] if input_shapes else [])
    return _C.load_graph(path, device)


def _offloading_predictor(graph, tensors, adapter, cache):
    """The Predictor a LoadedFunction uses when an adapter is selected (None otherwise)."""
    driver = _C.adapter_selected(adapter.get("adapter") or "")
    if not driver:
        return None
    device = _device_of(tensors)
    p = cache.get(device)
    if p is None:
        opts = dict(adapter)
        opts.pop("adapter", None)
        p = cache[device] = Predictor(graph, device, adapter=driver, **opts)
    return p
