// ONNX ops that move, select or create data without arithmetic: Constant,
// Shape, Size, Reshape, Flatten, (Un)Squeeze, Transpose, Slice, Gather(Elements),
// Concat, Split, Expand, Tile, Pad, CenterCropPad, ConstantOfShape, Range, Trilu, EyeLike,
// OneHot, Depth/SpaceToDepth. Shapes are static, so shape-valued inputs are
// read as constants and become the attributes of view ops; index lists that
// ONNX computes at run time (negative steps, negative indices in constants)
// are resolved here once.
#include <algorithm>
#include <cmath>
#include <limits>

#include "import_context.h"
#include "oar/onnx/onnx.h"

namespace oar::onnx::detail {

namespace {

Tensor host_tensor(const std::vector<double>& values, const Shape& shape, DType dtype) {
  Tensor t = Tensor::from_vector(values, shape, Device::cpu());
  return dtype == DType::f64 ? t : t.to(dtype);
}

std::vector<Value*> constant_op(NodeContext& c) {
  if (c.has_attr("value")) return {c.constant(c.attr_tensor("value"))};
  if (c.has_attr("value_float")) return {c.scalar(c.attr_float("value_float", 0), DType::f32)};
  if (c.has_attr("value_int")) return {c.constant(Tensor::full({}, double(c.attr_int("value_int")), DType::i64, Device::cpu()))};
  if (c.has_attr("value_ints")) return {c.ints(c.attr_ints("value_ints"))};
  if (c.has_attr("value_floats")) {
    auto v = c.attr_floats("value_floats");
    return {c.constant(host_tensor(v, {int64_t(v.size())}, DType::f32))};
  }
  if (c.has_attr("value_string") || c.has_attr("value_strings"))
    throw DTypeError(str(c.where(), ": string constants have no oar dtype"));
  if (c.has_attr("sparse_value")) c.unsupported("sparse constants are not supported");
  c.invalid("no value attribute");
}

std::vector<Value*> shape_op(NodeContext& c) {
  const Shape& s = c.shape(c.required_input(0));
  int64_t r = int64_t(s.size());
  int64_t start = c.attr_int("start", 0), end = c.attr_int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  return {c.ints(std::vector<int64_t>(s.begin() + start, s.begin() + std::max(start, end)))};
}

std::vector<Value*> reshape_op(NodeContext& c) {
  Value* x = c.required_input(0);
  std::vector<int64_t> target = c.opset() < 5 ? c.attr_ints("shape") : c.constant_ints(1, "shape");
  bool allowzero = c.attr_int("allowzero", 0) != 0;
  const Shape& in = c.shape(x);
  for (size_t i = 0; i < target.size(); ++i)
    if (target[i] == 0 && !allowzero) {
      if (i >= in.size()) c.invalid(str("shape entry ", i, " is 0 (copy) but the input has rank ", in.size()));
      target[i] = in[i];
    }
  return {c.reshape(x, target)};
}

std::vector<Value*> flatten_op(NodeContext& c) {
  Value* x = c.required_input(0);
  const Shape& s = c.shape(x);
  int64_t r = int64_t(s.size());
  int64_t a = c.attr_int("axis", 1);
  if (a < -r || a > r) c.invalid(str("axis ", a, " is out of range for rank ", r));
  if (a < 0) a += r;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < r; ++i) (i < a ? outer : inner) *= s[size_t(i)];
  return {c.reshape(x, {outer, inner})};
}

std::vector<Value*> squeeze_op(NodeContext& c) {
  Value* x = c.required_input(0);
  const Shape& s = c.shape(x);
  auto axes = c.ints_input_or_attr(1, "axes", 13);
  std::vector<bool> drop(s.size(), false);
  if (!axes) {
    for (size_t i = 0; i < s.size(); ++i) drop[i] = s[i] == 1;
  } else {
    for (int64_t a : *axes) {
      int64_t n = c.axis(a, int64_t(s.size()));
      if (s[size_t(n)] != 1) c.invalid(str("cannot squeeze axis ", a, " of size ", s[size_t(n)]));
      drop[size_t(n)] = true;
    }
  }
  Shape out;
  for (size_t i = 0; i < s.size(); ++i)
    if (!drop[i]) out.push_back(s[i]);
  return {c.reshape(x, out)};
}

std::vector<Value*> unsqueeze_op(NodeContext& c) {
  Value* x = c.required_input(0);
  auto axes = c.ints_input_or_attr(1, "axes", 13);
  if (!axes) c.invalid("axes are required");
  int64_t out_rank = c.rank(x) + int64_t(axes->size());
  std::vector<int64_t> norm;
  for (int64_t a : *axes) norm.push_back(c.axis(a, out_rank));
  std::sort(norm.begin(), norm.end());
  if (std::adjacent_find(norm.begin(), norm.end()) != norm.end()) c.invalid("axes repeat an axis");
  Shape out;
  const Shape& s = c.shape(x);
  size_t src = 0;
  for (int64_t i = 0; i < out_rank; ++i) {
    if (std::binary_search(norm.begin(), norm.end(), i)) out.push_back(1);
    else out.push_back(s[src++]);
  }
  return {c.reshape(x, out)};
}

std::vector<Value*> transpose_op(NodeContext& c) {
  Value* x = c.required_input(0);
  int64_t r = c.rank(x);
  std::vector<int64_t> perm = c.attr_ints("perm");
  if (perm.empty())
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  for (auto& p : perm) p = c.axis(p, r, "perm entry");
  return {c.permute(x, perm)};
}

// One axis of Slice, with ONNX's clamping rules.
Value* slice_axis(NodeContext& c, Value* x, int64_t axis, int64_t start, int64_t end, int64_t step) {
  if (step == 0) c.invalid("slice step 0");
  int64_t n = c.shape(x)[size_t(axis)];
  if (start < 0) start += n;
  if (end < 0) end += n;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, n);
    end = std::clamp<int64_t>(end, 0, n);
    return c.slice(x, axis, start, std::max(start, end), step);
  }
  start = std::clamp<int64_t>(start, 0, n - 1);
  end = std::clamp<int64_t>(end, -1, n - 1);
  std::vector<int64_t> idx;
  for (int64_t i = start; i > end; i += step) idx.push_back(i);
  if (idx.empty()) return c.slice(x, axis, 0, 0);
  return c.op("index_select", {x, c.ints(idx)}, {{"dim", axis}});
}

std::vector<Value*> slice_op(NodeContext& c) {
  Value* x = c.required_input(0);
  int64_t r = c.rank(x);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset() < 10) {
    starts = c.attr_ints("starts");
    ends = c.attr_ints("ends");
    axes = c.attr_ints("axes");
  } else {
    starts = c.constant_ints(1, "starts");
    ends = c.constant_ints(2, "ends");
    if (c.has_input(3)) axes = c.constant_ints(3, "axes");
    if (c.has_input(4)) steps = c.constant_ints(4, "steps");
  }
  if (starts.size() != ends.size()) c.invalid("starts and ends differ in length");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    c.invalid("starts, ends, axes and steps differ in length");
  for (size_t i = 0; i < starts.size(); ++i)
    x = slice_axis(c, x, c.axis(axes[i], r), starts[i], ends[i], steps[i]);
  return {x};
}

}  // namespace

Value* wrap_indices(NodeContext& c, Value* idx, int64_t n) {
  if (NodeContext::is_constant(idx)) {
    auto v = idx->tensor.to_vector<int64_t>();
    bool any = false;
    for (auto& i : v)
      if (i < 0) i += n, any = true;
    if (!any) return idx;
    return c.constant(Tensor::from_vector(v, c.shape(idx), Device::cpu()).to(c.dtype(idx)));
  }
  Value* zero = c.scalar(0, c.dtype(idx));
  return c.where(c.op("lt", {idx, zero}), c.add(idx, c.scalar(double(n), c.dtype(idx))), idx);
}

namespace {

std::vector<Value*> gather_op(NodeContext& c) {
  Value* x = c.required_input(0);
  Value* idx = c.required_input(1);
  const Shape& s = c.shape(x);
  int64_t a = c.axis(c.attr_int("axis", 0), int64_t(s.size()));
  if (c.rank(idx) == 0 && NodeContext::is_constant(idx))
    return {c.op("select", {x}, {{"dim", a}, {"index", int64_t(idx->tensor.item())}})};
  idx = wrap_indices(c, idx, s[size_t(a)]);
  Value* flat = c.reshape(idx, {numel_of(c.shape(idx))});
  Value* picked = c.op("index_select", {x, flat}, {{"dim", a}});
  Shape out(s.begin(), s.begin() + a);
  out.insert(out.end(), c.shape(idx).begin(), c.shape(idx).end());
  out.insert(out.end(), s.begin() + a + 1, s.end());
  return {c.reshape(picked, out)};
}

std::vector<Value*> gather_elements_op(NodeContext& c) {
  Value* x = c.required_input(0);
  int64_t a = c.axis(c.attr_int("axis", 0), c.rank(x));
  Value* idx = wrap_indices(c, c.required_input(1), c.shape(x)[size_t(a)]);
  return {c.op("gather", {x, idx}, {{"dim", a}})};
}

std::vector<Value*> concat_op(NodeContext& c) {
  std::vector<Value*> in;
  for (size_t i = 0; i < c.input_count(); ++i) in.push_back(c.required_input(i));
  int64_t a = c.axis(c.attr_int("axis"), c.rank(in.at(0)));
  if (in.size() == 1) return {in[0]};
  return {c.op("concat", in, {{"dim", a}})};
}

std::vector<Value*> split_op(NodeContext& c) {
  Value* x = c.required_input(0);
  int64_t a = c.axis(c.attr_int("axis", 0), c.rank(x));
  int64_t n = c.shape(x)[size_t(a)];
  auto sizes = c.ints_input_or_attr(1, "split", 13);
  std::vector<int64_t> split;
  if (sizes) {
    split = *sizes;
  } else {
    int64_t parts = c.has_attr("num_outputs") ? c.attr_int("num_outputs") : int64_t(c.output_count());
    if (parts <= 0) c.invalid("no outputs to split into");
    int64_t each = (n + parts - 1) / parts;  // the last part may be smaller (opset 18)
    for (int64_t i = 0; i < parts; ++i) split.push_back(std::max<int64_t>(0, std::min(each, n - i * each)));
  }
  int64_t total = 0;
  for (int64_t v : split) total += v;
  if (total != n) c.invalid(str("split sizes sum to ", total, " but axis ", a, " has size ", n));
  std::vector<Value*> outs;
  int64_t offset = 0;
  for (int64_t v : split) {
    outs.push_back(c.slice(x, a, offset, offset + v));
    offset += v;
  }
  return outs;
}

std::vector<Value*> expand_op(NodeContext& c) {
  Value* x = c.required_input(0);
  std::vector<int64_t> target = c.constant_ints(1, "shape");
  Shape out = broadcast_shapes(c.shape(x), target);  // ONNX's Expand broadcasts both ways
  return {c.expand(x, out)};
}

std::vector<Value*> tile_op(NodeContext& c) {
  Value* x = c.required_input(0);
  std::vector<int64_t> repeats = c.constant_ints(1, "repeats");
  const Shape& s = c.shape(x);
  if (repeats.size() != s.size()) c.invalid("repeats must have one entry per input dimension");
  // [d0, d1] -> [1, d0, 1, d1] -> [r0, d0, r1, d1] -> [r0 * d0, r1 * d1]
  Shape inter, expanded, out;
  for (size_t i = 0; i < s.size(); ++i) {
    inter.insert(inter.end(), {1, s[i]});
    expanded.insert(expanded.end(), {repeats[i], s[i]});
    out.push_back(repeats[i] * s[i]);
  }
  return {c.reshape(c.expand(c.reshape(x, inter), expanded), out)};
}

// Pad mode "wrap" (opset 19): along each axis, position i of the output reads
// input (i - begin) mod n, which also covers pads wider than the axis and
// negative (cropping) pads.
Value* pad_wrap(NodeContext& c, Value* x, const std::vector<int64_t>& axes, const std::vector<int64_t>& pads) {
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t n = c.shape(x)[size_t(axes[i])], begin = pads[i], end = pads[i + axes.size()];
    if (begin == 0 && end == 0) continue;
    if (n == 0) c.invalid(str("cannot wrap-pad axis ", axes[i], " of size 0"));
    std::vector<int64_t> idx;
    for (int64_t k = -begin; k < n + end; ++k) idx.push_back(((k % n) + n) % n);
    x = idx.empty() ? c.slice(x, axes[i], 0, 0) : c.op("index_select", {x, c.ints(idx)}, {{"dim", axes[i]}});
  }
  return x;
}

std::vector<Value*> pad_op(NodeContext& c) {
  Value* x = c.required_input(0);
  int64_t r = c.rank(x);
  std::vector<int64_t> pads = c.opset() < 11 ? c.attr_ints("pads") : c.constant_ints(1, "pads");
  double value = 0;
  if (c.opset() < 11) value = c.attr_float("value", 0);
  else if (c.has_input(2)) value = c.constant_input(2, "constant_value").item();
  std::vector<int64_t> axes;
  if (c.has_input(3)) {
    for (int64_t a : c.constant_ints(3, "axes")) axes.push_back(c.axis(a, r));
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size()) c.invalid(str("pads has ", pads.size(), " entries for ", axes.size(), " axes"));
  std::string mode = c.attr_string("mode", "constant");
  if (mode == "wrap") return {pad_wrap(c, x, axes, pads)};
  if (mode == "edge") mode = "replicate";
  else if (mode != "constant" && mode != "reflect") c.unsupported(str("pad mode '", mode, "'"));
  // ONNX: all begins then all ends; oar: (begin, end) pairs from the last dim.
  std::vector<int64_t> per_axis(size_t(2 * r), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    per_axis[size_t(2 * axes[i])] = pads[i];
    per_axis[size_t(2 * axes[i] + 1)] = pads[i + axes.size()];
  }
  std::vector<int64_t> oar_pads;
  for (int64_t d = r - 1; d >= 0; --d) oar_pads.insert(oar_pads.end(), {per_axis[size_t(2 * d)], per_axis[size_t(2 * d + 1)]});
  if (std::all_of(oar_pads.begin(), oar_pads.end(), [](int64_t p) { return p == 0; })) return {x};
  return {c.op("pad", {x}, {{"pads", oar_pads}, {"mode", mode}, {"value", value}})};
}

// CenterCropPad (opset 18): per axis, crop or zero-pad to the target size,
// centred with the odd element at the end.
std::vector<Value*> center_crop_pad_op(NodeContext& c) {
  Value* x = c.required_input(0);
  int64_t r = c.rank(x);
  std::vector<int64_t> target = c.constant_ints(1, "shape");
  std::vector<int64_t> axes;
  if (c.has_attr("axes")) {
    for (int64_t a : c.attr_ints("axes")) axes.push_back(c.axis(a, r));
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  if (target.size() != axes.size()) c.invalid(str("shape has ", target.size(), " entries for ", axes.size(), " axes"));
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i], n = c.shape(x)[size_t(a)], want = target[i];
    if (want < 0) c.invalid(str("negative target size ", want));
    if (want < n) {
      int64_t begin = (n - want) / 2;
      x = c.slice(x, a, begin, begin + want);
    } else if (want > n) {
      std::vector<int64_t> pads(size_t(2 * (r - a)), 0);  // oar order: from the last dim
      pads[size_t(2 * (r - 1 - a))] = (want - n) / 2;
      pads[size_t(2 * (r - 1 - a) + 1)] = want - n - (want - n) / 2;
      x = c.op("pad", {x}, {{"pads", pads}, {"mode", std::string("constant")}, {"value", 0.0}});
    }
  }
  return {x};
}

std::vector<Value*> constant_of_shape_op(NodeContext& c) {
  std::vector<int64_t> shape = c.constant_ints(0, "input");
  double value = 0;
  DType dtype = DType::f32;
  if (c.has_attr("value")) {
    Tensor v = c.attr_tensor("value");
    if (v.numel() != 1) c.invalid("value must hold one element");
    value = v.item();
    dtype = v.dtype();
  }
  return {c.op("fill", {}, {{"shape", shape}, {"value", value}, {"dtype", dtype}})};
}

std::vector<Value*> range_op(NodeContext& c) {
  const Tensor& start_t = c.constant_input(0, "start");
  double start = start_t.item(), limit = c.constant_input(1, "limit").item(), delta = c.constant_input(2, "delta").item();
  if (delta == 0) c.invalid("delta is 0");
  DType d = start_t.dtype();
  int64_t n = std::max<int64_t>(int64_t(std::ceil((limit - start) / delta)), 0);
  std::vector<double> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[size_t(i)] = start + double(i) * delta;
  return {c.constant(host_tensor(values, {n}, d))};
}

std::vector<Value*> trilu_op(NodeContext& c) {
  Value* x = c.required_input(0);
  const Shape& s = c.shape(x);
  if (s.size() < 2) c.invalid("input must have rank >= 2");
  int64_t k = c.has_input(1) ? int64_t(c.constant_input(1, "k").item()) : 0;
  bool upper = c.attr_int("upper", 1) != 0;
  int64_t m = s[s.size() - 2], n = s[s.size() - 1];
  std::vector<uint8_t> keep(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) keep[size_t(i * n + j)] = upper ? j - i >= k : j - i <= k;
  Value* mask = c.constant(Tensor::from_host(keep.data(), m * n, {m, n}, DType::boolean, Device::cpu()));
  return {c.where(mask, x, c.scalar(0, c.dtype(x)))};
}

std::vector<Value*> eye_like_op(NodeContext& c) {
  Value* x = c.required_input(0);
  const Shape& s = c.shape(x);
  if (s.size() != 2) c.invalid("input must be 2-D");
  DType d = c.has_attr("dtype") ? dtype_from_onnx(int32_t(c.attr_int("dtype")), c.where()) : c.dtype(x);
  int64_t k = c.attr_int("k", 0);
  std::vector<double> v(size_t(s[0] * s[1]), 0.0);
  for (int64_t i = 0; i < s[0]; ++i)
    if (i + k >= 0 && i + k < s[1]) v[size_t(i * s[1] + i + k)] = 1.0;
  return {c.constant(host_tensor(v, s, d))};
}

std::vector<Value*> one_hot_op(NodeContext& c) {
  Value* idx = c.required_input(0);
  int64_t depth = int64_t(c.constant_input(1, "depth").to(DType::f64).item());
  Value* values = c.required_input(2);
  int64_t out_rank = c.rank(idx) + 1;
  int64_t a = c.axis(c.attr_int("axis", -1), out_rank);
  // negative indices count from the end of the depth
  Value* zero = c.scalar(0, c.dtype(idx));
  idx = c.where(c.op("lt", {idx, zero}), c.add(idx, c.scalar(double(depth), c.dtype(idx))), idx);
  std::vector<double> range(static_cast<size_t>(depth));
  for (int64_t i = 0; i < depth; ++i) range[size_t(i)] = double(i);
  Shape range_shape(size_t(out_rank), 1);
  range_shape[size_t(a)] = depth;
  Value* hot = c.op("eq", {c.unsqueeze(idx, a), c.constant(host_tensor(range, range_shape, c.dtype(idx)))});
  Value* off = c.op("select", {values}, {{"dim", int64_t(0)}, {"index", int64_t(0)}});
  Value* on = c.op("select", {values}, {{"dim", int64_t(0)}, {"index", int64_t(1)}});
  return {c.where(hot, on, off)};
}

std::vector<Value*> depth_to_space_op(NodeContext& c) {
  Value* x = c.required_input(0);
  const Shape& s = c.shape(x);
  if (s.size() != 4) c.invalid("input must be 4-D [N, C, H, W]");
  int64_t b = c.attr_int("blocksize");
  int64_t n = s[0], ch = s[1], h = s[2], w = s[3];
  if (b <= 0 || ch % (b * b)) c.invalid(str("channels ", ch, " are not divisible by blocksize^2 = ", b * b));
  bool crd = c.attr_string("mode", "DCR") == "CRD";
  Value* t = crd ? c.reshape(x, {n, ch / (b * b), b, b, h, w}) : c.reshape(x, {n, b, b, ch / (b * b), h, w});
  t = crd ? c.permute(t, {0, 1, 4, 2, 5, 3}) : c.permute(t, {0, 3, 4, 1, 5, 2});
  return {c.reshape(t, {n, ch / (b * b), h * b, w * b})};
}

std::vector<Value*> space_to_depth_op(NodeContext& c) {
  Value* x = c.required_input(0);
  const Shape& s = c.shape(x);
  if (s.size() != 4) c.invalid("input must be 4-D [N, C, H, W]");
  int64_t b = c.attr_int("blocksize");
  int64_t n = s[0], ch = s[1], h = s[2], w = s[3];
  if (b <= 0 || h % b || w % b) c.invalid(str("height and width must be divisible by blocksize ", b));
  Value* t = c.reshape(x, {n, ch, h / b, b, w / b, b});
  t = c.permute(t, {0, 3, 5, 1, 2, 4});
  return {c.reshape(t, {n, ch * b * b, h / b, w / b})};
}

}  // namespace

void register_shape_mappers(MapperTable& t) {
  t.add("Constant", constant_op);
  t.add("Shape", shape_op);
  t.add("Size", [](NodeContext& c) -> std::vector<Value*> {
    return {c.constant(Tensor::full({}, double(numel_of(c.shape(c.required_input(0)))), DType::i64, Device::cpu()))};
  });
  t.add("Reshape", reshape_op);
  t.add("Flatten", flatten_op);
  t.add("Squeeze", squeeze_op);
  t.add("Unsqueeze", unsqueeze_op);
  t.add("Transpose", transpose_op);
  t.add("Slice", slice_op);
  t.add("Gather", gather_op);
  t.add("GatherElements", gather_elements_op);
  t.add("Concat", concat_op);
  t.add("Split", split_op);
  t.add("Expand", expand_op);
  t.add("Tile", tile_op);
  t.add("Pad", pad_op);
  t.add("CenterCropPad", center_crop_pad_op);
  t.add("ConstantOfShape", constant_of_shape_op);
  t.add("Range", range_op);
  t.add("Trilu", trilu_op);
  t.add("EyeLike", eye_like_op);
  t.add("OneHot", one_hot_op);
  t.add("DepthToSpace", depth_to_space_op);
  t.add("SpaceToDepth", space_to_depth_op);
}

}  // namespace oar::onnx::detail
