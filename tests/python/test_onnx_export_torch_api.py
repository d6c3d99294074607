"""oar.onnx.export with torch.onnx.export's calling convention: export(model, args, f, ...) with f a path
or a binary file object, input_names / output_names, opset_version, a trailing kwargs dict in args,
eval mode during the trace, dynamic_axes refused with a warning (static shapes); and sort / topk exported
as ONNX TopK. Checked with onnx's full checker, its reference evaluator and a re-import."""
import io
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
from onnx.reference import ReferenceEvaluator  # noqa: E402

import oar  # noqa: E402
import oar.nn as nn  # noqa: E402


class _Ranker(nn.Module):
    """Linear + dropout (off in eval mode), then the top 3 and the full ascending sort of each row."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.drop = nn.Dropout(0.9)

    def forward(self, x, scale=1.0):
        y = self.drop(self.fc(x)) * scale
        values, index = oar.topk(y, 3, dim=1)
        ordered, order = oar.sort(y, dim=-1)
        return values, index, ordered, order


def _inputs():
    rng = np.random.default_rng(3)
    return oar.tensor(rng.standard_normal((4, 6)).astype(np.float32))  # distinct values: no ties


@pytest.mark.parametrize("opset", [13, 17, 18, 21])
def test_torch_calling_convention_names_and_topk(tmp_path, opset):
    model, x = _Ranker(), _inputs()
    path = tmp_path / "ranker.onnx"
    oar.onnx.export(model, (x, {"scale": 2.0}), str(path), export_params=True, opset_version=opset,
                    input_names=["features"], output_names=["top", "top_index", "sorted", "sorted_index"],
                    do_constant_folding=True)
    assert model.training  # traced in eval mode, then put back
    proto = onnx.load(str(path))
    onnx.checker.check_model(proto, full_check=True)
    assert proto.opset_import[0].version == opset
    assert [i.name for i in proto.graph.input] == ["features"]
    assert [o.name for o in proto.graph.output] == ["top", "top_index", "sorted", "sorted_index"]
    assert [n.op_type for n in proto.graph.node].count("TopK") == 2
    model.eval()
    want = [t.detach().numpy() for t in model(x, scale=2.0)]
    # the independent reference: NumPy on the linear layer's output
    y = (x.numpy() @ model.fc.weight.detach().numpy().T + model.fc.bias.detach().numpy()) * 2.0
    np.testing.assert_allclose(want[2], np.sort(y, axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(want[3], np.argsort(y, axis=1, kind="stable"))
    np.testing.assert_array_equal(want[1], np.argsort(-y, axis=1, kind="stable")[:, :3])
    got = ReferenceEvaluator(proto).run(None, {"features": x.numpy()})
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    back = oar.onnx.load(path)(x)
    for g, w in zip(back, want):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-5, atol=1e-6)


def test_ties_keep_the_lower_index_first(tmp_path):
    """ONNX TopK orders equal elements by index; oar's stable sort gives that order, both ways."""
    x = oar.tensor([[3.0, 1, 2, 2, 5, 2], [0, 0, 1, -1, 4, 0]])
    oar.onnx.export(lambda t: (oar.topk(t, 4)[1], oar.topk(t, 4, largest=False)[1]), (x,), tmp_path / "t.onnx")
    for got in (oar.onnx.load(tmp_path / "t.onnx")(x), (oar.topk(x, 4)[1], oar.topk(x, 4, largest=False)[1])):
        assert got[0].tolist() == [[4, 0, 2, 3], [4, 2, 0, 1]]
        assert got[1].tolist() == [[1, 2, 3, 5], [3, 0, 1, 5]]


def test_file_object_old_order_and_warnings(tmp_path):
    model, x = _Ranker(), _inputs()
    buffer = io.BytesIO()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        oar.onnx.export(model, x, buffer, dynamic_axes={"x": {0: "batch"}})
    assert any("dynamic_axes" in str(w.message) for w in caught)
    from_buffer = onnx.load_from_string(buffer.getvalue())
    onnx.checker.check_model(from_buffer)
    oar.onnx.export(model, tmp_path / "old.onnx", x)  # oar's older order: (model, path, example_inputs)
    oar.onnx.export(model, tmp_path / "old2.onnx", example_inputs=x, opset=18)
    assert onnx.load(str(tmp_path / "old2.onnx")).opset_import[0].version == 18
    assert len(onnx.load(str(tmp_path / "old.onnx")).graph.node) == len(from_buffer.graph.node)


def test_bad_names_and_arguments_are_typed_errors(tmp_path):
    model, x = _Ranker(), _inputs()
    path = tmp_path / "bad.onnx"
    with pytest.raises(ValueError, match="given twice"):
        oar.onnx.export(model, (x,), path, output_names=["a", "a"])
    with pytest.raises(ValueError, match="input_names"):
        oar.onnx.export(model, (x,), path, input_names=["x", "y"])
    with pytest.raises(ValueError, match="5 output names"):
        oar.onnx.export(model, (x,), path, output_names=list("abcde"))
    with pytest.raises(ValueError, match="empty"):
        oar.onnx.export(model, (x,), path, output_names=[""])
    with pytest.raises(TypeError, match="unexpected option"):
        oar.onnx.export(model, (x,), path, no_such_option=True)
    with pytest.raises(TypeError, match="destination"):
        oar.onnx.export(model, (x,))
    assert not path.exists()


def test_integer_division_exports_exactly(tmp_path):
    # floor / trunc quotients and both remainders of int64 tensors as ONNX's integer Div and Mod.
    def divide(a, b):
        return a // b, a % b, oar.fmod(a, b), oar.div(a, b, rounding_mode="trunc")

    def expected(A, B):
        trunc = [abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1) for x, y in zip(A, B)]
        return [[x // y for x, y in zip(A, B)], [x % y for x, y in zip(A, B)],
                [x - t * y for x, y, t in zip(A, B, trunc)], trunc]

    A, B = [-7, 7, -9, 9, 123456789, -2**40 - 3], [2, -2, -4, 4, 1000003, 7]
    oar.onnx.export(divide, (oar.tensor(A), oar.tensor(B)), tmp_path / "div.onnx", input_names=["a", "b"])
    proto = onnx.load(str(tmp_path / "div.onnx"))
    onnx.checker.check_model(proto, full_check=True)
    # onnx's reference evaluator divides integers through float64, so it checks values below 2**53 ...
    got = ReferenceEvaluator(proto).run(None, {"a": np.array(A, np.int64), "b": np.array(B, np.int64)})
    assert [g.tolist() for g in got] == expected(A, B)
    # ... and the re-imported graph is exact past it, where a float64 round trip would round.
    A, B = [2**62 + 3, -(2**62 + 3), 123456789123456789, -2**63, 2**63 - 1, 5], [2, 2, 1000003, 7, -3, -1]
    got = oar.onnx.load(tmp_path / "div.onnx")(oar.tensor(A), oar.tensor(B))
    assert [t.tolist() for t in got] == expected(A, B)
