"""The catalog's composites (flip, roll, einsum, logsumexp, cdist, ...: runtime/src/catalog/composites_*.cpp)
in traced graphs and ONNX: a trace records their parts, so a function using them exports to ONNX, onnx's
checker and reference evaluator accept the file and agree with oar, and the file imports back to the same
numbers. An imported ONNX Einsum is the catalog's einsum and exports back as Einsum. C++ and Python call the
same catalog entries (oar.ops.<op> here is what oar::<op> is in C++)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

import oar  # noqa: E402


def _uses_composites(x, y):
    a = oar.flip(x, (0, 2))
    b = oar.roll(x, shifts=(1, -2), dims=(1, 2))
    c = oar.einsum("bij,kj->bik", x, y)
    d = oar.logsumexp(x, dim=2)
    e = oar.cdist(x[0], y, p=2.0)
    f = oar.take_along_dim(x, oar.tensor([[[4, 0, 1]], [[2, 2, 3]]]), dim=2)
    g = oar.diagonal(x, 0, 1, 2)
    h = oar.movedim(x, 0, 2) * 2
    return a, b, c, d, e, f, g, h


def test_traced_composites_export_and_match(tmp_path):
    rng = np.random.default_rng(0)
    x_np = rng.standard_normal((2, 4, 5)).astype(np.float32)
    y_np = rng.standard_normal((3, 5)).astype(np.float32)
    x, y = oar.tensor(x_np), oar.tensor(y_np)
    want = [t.numpy() for t in _uses_composites(x, y)]
    path = tmp_path / "composites.onnx"
    oar.onnx.export(_uses_composites, path, example_inputs=(x, y), opset=18)
    model = onnx.load(str(path))
    onnx.checker.check_model(model, full_check=True)
    kinds = {n.op_type for n in model.graph.node}
    assert "Einsum" not in kinds, "a trace records einsum's parts (a MatMul), not an Einsum node"
    assert "MatMul" in kinds
    feeds = {model.graph.input[0].name: x_np, model.graph.input[1].name: y_np}
    for got, w in zip(ReferenceEvaluator(model).run(None, feeds), want):
        np.testing.assert_allclose(got, w, rtol=1e-4, atol=1e-4)
    back = oar.onnx.load(path)
    for got, w in zip(back(x, y), want):
        np.testing.assert_allclose(got.numpy(), w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("equation,shapes", [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("ii->i", [(4, 4)]),
    ("...j,j->...", [(2, 3, 4), (4,)]),
    ("ij", [(3, 4)]),
    ("ba,ca", [(2, 3), (4, 3)]),
])
def test_onnx_einsum_imports_as_the_catalog_op(equation, shapes, tmp_path):
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    names = [f"x{i}" for i in range(len(shapes))]
    node = helper.make_node("Einsum", names, ["y"], equation=equation)
    graph = helper.make_graph(
        [node], "einsum", [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s)) for n, s in zip(names, shapes)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    src = tmp_path / "einsum.onnx"
    onnx.save(model, str(src))
    want = np.einsum(equation, *arrays)
    f = oar.onnx.load(src)
    got = f(*[oar.tensor(a) for a in arrays])
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-5)
    out = tmp_path / "back.onnx"
    oar._C.onnx_export(f.graph, str(out), 18)
    exported = onnx.load(str(out))
    onnx.checker.check_model(exported, full_check=True)
    assert [n.op_type for n in exported.graph.node] == ["Einsum"]
    feeds = {i.name: a for i, a in zip(exported.graph.input, arrays)}
    np.testing.assert_allclose(ReferenceEvaluator(exported).run(None, feeds)[0], want, rtol=1e-5, atol=1e-5)


def test_onnx_einsum_bad_equation_is_a_clear_error(tmp_path):
    node = helper.make_node("Einsum", ["a", "b"], ["y"], equation="ij,jk->iz")
    graph = helper.make_graph([node], "bad", [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
                                              helper.make_tensor_value_info("b", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / "bad.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), str(path))
    with pytest.raises(ValueError, match="output subscript z"):
        oar.onnx.load(path)


def test_python_and_cpp_share_the_catalog_entry():
    # oar.flip and oar.ops.flip (oar::flip in C++) are one op: same values, and the Python function is a
    # thin mapping of torch's arguments.
    x = oar.arange(24, dtype=oar.float32).reshape(2, 3, 4)
    np.testing.assert_array_equal(oar.flip(x, (0, -1)).numpy(), oar.ops.flip(x, dims=[0, 2]).numpy())
    np.testing.assert_array_equal(oar.nonzero(x > 20).numpy(), oar.ops.nonzero(x > 20).numpy())
