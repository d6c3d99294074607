// ONNX Conv, ConvTranspose, MaxPool and AveragePool on oar's 2-D kernels; LpPool as
// strided slices.
// 1-D inputs get a unit height; padding ONNX allows but the kernels do not
// (asymmetric, auto_pad SAME_*, more than half the window) becomes an
// explicit pad op; ConvTranspose is conv2d_backward_data, which is the same
// computation, followed by the crop its pads ask for.
#include <algorithm>
#include <cmath>

#include "import_context.h"

namespace oar::onnx::detail {

namespace {

struct Window {
  std::vector<int64_t> kernel, strides, dilations, pads;  // pads: begins then ends, per spatial dim
};

// Resolves auto_pad / pads for a window over `spatial` input sizes.
std::vector<int64_t> resolve_pads(NodeContext& c, const Shape& spatial, const std::vector<int64_t>& kernel,
                                  const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations) {
  size_t n = spatial.size();
  std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET") {
    std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
    if (pads.size() != 2 * n) c.invalid(str("pads must have ", 2 * n, " entries"));
    return pads;
  }
  if (auto_pad == "VALID") return std::vector<int64_t>(2 * n, 0);
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") c.invalid(str("unknown auto_pad '", auto_pad, "'"));
  std::vector<int64_t> pads(2 * n);
  for (size_t i = 0; i < n; ++i) {
    int64_t out = (spatial[i] + strides[i] - 1) / strides[i];
    int64_t extent = (kernel[i] - 1) * dilations[i] + 1;
    int64_t total = std::max<int64_t>((out - 1) * strides[i] + extent - spatial[i], 0);
    int64_t small = total / 2, large = total - small;
    pads[i] = auto_pad == "SAME_UPPER" ? small : large;
    pads[i + n] = auto_pad == "SAME_UPPER" ? large : small;
  }
  return pads;
}

Window window(NodeContext& c, const Shape& spatial, const std::vector<int64_t>& kernel) {
  size_t n = spatial.size();
  Window w;
  w.kernel = kernel;
  w.strides = c.attr_ints("strides", std::vector<int64_t>(n, 1));
  w.dilations = c.attr_ints("dilations", std::vector<int64_t>(n, 1));
  if (w.strides.size() != n || w.dilations.size() != n || w.kernel.size() != n)
    c.invalid(str("kernel_shape, strides and dilations must have ", n, " entries"));
  w.pads = resolve_pads(c, spatial, w.kernel, w.strides, w.dilations);
  return w;
}

// [N, C, L] -> [N, C, 1, L] and the window likewise, so 1-D runs as 2-D.
void lift_1d(NodeContext& c, Value*& x, Window& w) {
  x = c.unsqueeze(x, 2);
  w.kernel.insert(w.kernel.begin(), 1);
  w.strides.insert(w.strides.begin(), 1);
  w.dilations.insert(w.dilations.begin(), 1);
  w.pads = {0, w.pads[0], 0, w.pads[1]};
}

Value* drop_1d(NodeContext& c, Value* y) {
  Shape s = c.shape(y);
  s.erase(s.begin() + 2);
  return c.reshape(y, s);
}

// Explicit padding of the two spatial dims of [N, C, H, W] (ONNX pads order).
Value* pad_spatial(NodeContext& c, Value* x, const std::vector<int64_t>& pads, double value) {
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) return x;
  std::vector<int64_t> oar_pads{pads[1], pads[3], pads[0], pads[2]};  // W then H
  return c.op("pad", {x}, {{"pads", oar_pads}, {"mode", std::string("constant")}, {"value", value}});
}

bool symmetric(const std::vector<int64_t>& pads) { return pads[0] == pads[2] && pads[1] == pads[3]; }

void check_spatial_rank(NodeContext& c, Value* x) {
  if (c.rank(x) == 5) c.unsupported("3-D (volumetric) inputs; oar's convolution and pooling kernels are 2-D");
  if (c.rank(x) != 3 && c.rank(x) != 4) c.invalid(str("input must be [N, C, L] or [N, C, H, W], got rank ", c.rank(x)));
}

}  // namespace

Value* conv_mapping(NodeContext& c, Value* x, Value* weight, Value* bias) {
  check_spatial_rank(c, x);
  bool one_d = c.rank(x) == 3;
  Shape spatial(c.shape(x).begin() + 2, c.shape(x).end());
  Window w = window(c, spatial, std::vector<int64_t>(c.shape(weight).begin() + 2, c.shape(weight).end()));
  if (one_d) {
    lift_1d(c, x, w);
    weight = c.unsqueeze(weight, 2);
  }
  Attrs attrs{{"stride", w.strides}, {"dilation", w.dilations}, {"groups", c.attr_int("group", 1)}};
  if (symmetric(w.pads)) {
    attrs.set("padding", std::vector<int64_t>{w.pads[0], w.pads[1]});
  } else {
    x = pad_spatial(c, x, w.pads, 0.0);
    attrs.set("padding", std::vector<int64_t>{0, 0});
  }
  Value* y = c.op("conv2d", {x, weight, bias}, attrs);
  return one_d ? drop_1d(c, y) : y;
}

namespace {

std::vector<Value*> conv_transpose_op(NodeContext& c) {
  Value* x = c.required_input(0);
  Value* weight = c.required_input(1);  // [C_in, C_out / groups, k...]
  Value* bias = c.input(2);
  check_spatial_rank(c, x);
  bool one_d = c.rank(x) == 3;
  size_t n = size_t(c.rank(x) - 2);
  Shape spatial(c.shape(x).begin() + 2, c.shape(x).end());
  std::vector<int64_t> kernel(c.shape(weight).begin() + 2, c.shape(weight).end());
  std::vector<int64_t> strides = c.attr_ints("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> dilations = c.attr_ints("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> out_pad = c.attr_ints("output_padding", std::vector<int64_t>(n, 0));
  int64_t groups = c.attr_int("group", 1);
  if (strides.size() != n || dilations.size() != n || out_pad.size() != n)
    c.invalid(str("strides, dilations and output_padding must have ", n, " entries"));
  // The uncropped output: every input position scattered through the kernel.
  std::vector<int64_t> full(n);
  for (size_t i = 0; i < n; ++i) full[i] = (spatial[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1;
  std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  std::vector<int64_t> pads(2 * n, 0);
  std::vector<int64_t> output_shape = c.attr_ints("output_shape");
  if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    if (output_shape.empty())
      for (size_t i = 0; i < n; ++i) output_shape.push_back(spatial[i] * strides[i]);
    if (output_shape.size() != n) c.invalid(str("output_shape must have ", n, " entries"));
    for (size_t i = 0; i < n; ++i) {
      // What does not divide evenly goes to the end, except for SAME_LOWER
      // (an output larger than the full one is padded at the end, like output_padding).
      int64_t total = full[i] + out_pad[i] - output_shape[i];
      bool upper = auto_pad != "SAME_LOWER";
      pads[i] = upper ? total / 2 : total - total / 2;
      pads[i + n] = upper ? total - total / 2 : total / 2;
    }
  } else if (auto_pad == "NOTSET") {
    pads = c.attr_ints("pads", pads);
    if (pads.size() != 2 * n) c.invalid(str("pads must have ", 2 * n, " entries"));
  }
  int64_t c_out = c.shape(weight)[1] * groups;
  if (one_d) {
    x = c.unsqueeze(x, 2);
    weight = c.unsqueeze(weight, 2);
    full.insert(full.begin(), 1);
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
    out_pad.insert(out_pad.begin(), 0);
    pads = {0, pads[0], 0, pads[1]};
  }
  Shape full_shape{c.shape(x)[0], c_out, full[0], full[1]};
  Value* y = c.op("conv2d_backward_data", {x, weight},
                  {{"input_shape", full_shape},
                   {"stride", strides},
                   {"padding", std::vector<int64_t>{0, 0}},
                   {"dilation", dilations},
                   {"groups", groups}});
  // Crop the pads (negative amounts for oar's pad) and add output_padding zeros at the end.
  y = pad_spatial(c, y, {-pads[0], -pads[1], out_pad[0] - pads[2], out_pad[1] - pads[3]}, 0.0);
  if (bias != nullptr) y = c.add(y, c.reshape(bias, {c_out, 1, 1}));
  return {one_d ? drop_1d(c, y) : y};
}

// Pooling any number of spatial dims, with dilation, as the max or mean of
// one strided slice per kernel position: what the 2-D kernels cannot do
// (3-D inputs, dilated windows, MaxPool's Indices output), at the cost of
// k^n slices. With `indices`, the max also yields the flat (row-major, NCHW)
// index of the first element that attains it, as ONNX's Indices output.
Value* pool_by_slices(NodeContext& c, Value* x, const Window& w, bool max, bool ceil_mode, bool include_pad,
                      Value** indices = nullptr, bool sum = false) {
  size_t n = w.kernel.size();
  const Shape& s = c.shape(x);
  std::vector<int64_t> out(n), extra(n, 0);
  for (size_t i = 0; i < n; ++i) {
    int64_t extent = (w.kernel[i] - 1) * w.dilations[i] + 1;
    int64_t span = s[2 + i] + w.pads[i] + w.pads[i + n] - extent;
    out[i] = (ceil_mode ? (span + w.strides[i] - 1) / w.strides[i] : span / w.strides[i]) + 1;
    extra[i] = std::max<int64_t>(0, (out[i] - 1) * w.strides[i] + extent - (s[2 + i] + w.pads[i] + w.pads[i + n]));
  }
  // ONNX order pads -> oar's (begin, end) pairs from the last dim; ceil mode may need more at the end
  auto padded = [&](Value* v, double value) {
    std::vector<int64_t> pads;
    for (size_t i = n; i-- > 0;) pads.insert(pads.end(), {w.pads[i], w.pads[i + n] + extra[i]});
    if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) return v;
    return c.op("pad", {v}, {{"pads", pads}, {"mode", std::string("constant")}, {"value", value}});
  };
  auto windows = [&](Value* v, bool take_max) {
    Value* acc = nullptr;
    std::vector<int64_t> pos(n, 0);
    for (;;) {
      Value* part = v;
      for (size_t i = 0; i < n; ++i) {
        int64_t start = pos[i] * w.dilations[i];
        part = c.slice(part, int64_t(2 + i), start, start + (out[i] - 1) * w.strides[i] + 1, w.strides[i]);
      }
      acc = acc == nullptr ? part : c.op(take_max ? "maximum" : "add", {acc, part});
      size_t i = 0;
      while (i < n && ++pos[i] == w.kernel[i]) pos[i++] = 0;
      if (i == n) return acc;
    }
  };
  if (max && indices != nullptr) {
    // flat index of every input element: row-major over NC, then the spatial
    // dims in row-major (storage_order 0) or column-major (1) order
    bool column_major = c.attr_int("storage_order", 0) != 0;
    int64_t spatial = numel_of(Shape(s.begin() + 2, s.end()));
    std::vector<int64_t> flat(static_cast<size_t>(numel_of(s)));
    for (size_t i = 0; i < flat.size(); ++i) {
      int64_t rest = int64_t(i) % spatial, index = 0, stride = 1;
      std::vector<int64_t> coord(n);
      for (size_t k = n; k-- > 0;) coord[k] = rest % s[2 + k], rest /= s[2 + k];
      for (size_t k = 0; k < n; ++k) {
        size_t dim = column_major ? k : n - 1 - k;  // fastest-varying first
        index += coord[dim] * stride;
        stride *= s[2 + dim];
      }
      flat[i] = int64_t(i) - int64_t(i) % spatial + index;
    }
    Value* where_from = padded(c.reshape(c.ints(flat), s), -1.0);
    Value* xp = padded(x, -INFINITY);
    Value* best = nullptr;
    Value* best_index = nullptr;
    std::vector<int64_t> pos(n, 0);
    for (;;) {
      Value* part = xp;
      Value* part_index = where_from;
      for (size_t i = 0; i < n; ++i) {
        int64_t start = pos[i] * w.dilations[i], end = start + (out[i] - 1) * w.strides[i] + 1;
        part = c.slice(part, int64_t(2 + i), start, end, w.strides[i]);
        part_index = c.slice(part_index, int64_t(2 + i), start, end, w.strides[i]);
      }
      if (best == nullptr) {
        best = part;
        best_index = part_index;
      } else {
        Value* better = c.op("gt", {part, best});  // strictly: the first maximum keeps its index
        best = c.where(better, part, best);
        best_index = c.where(better, part_index, best_index);
      }
      size_t i = 0;
      while (i < n && ++pos[i] == w.kernel[i]) pos[i++] = 0;
      if (i == n) break;
    }
    *indices = best_index;
    return best;
  }
  if (max) return windows(padded(x, -INFINITY), true);
  Value* sums = windows(padded(x, 0.0), false);
  if (sum) return sums;
  if (include_pad && !ceil_mode) {
    int64_t count = 1;
    for (int64_t k : w.kernel) count *= k;
    return c.div(sums, c.scalar(double(count), c.dtype(x)));
  }
  // divide by the number of real elements in each window (a constant, folded)
  Value* ones = c.op("fill", {}, {{"shape", s}, {"value", 1.0}, {"dtype", c.dtype(x)}});
  return c.div(sums, windows(padded(ones, 0.0), false));
}

// Pooling: oar's kernels take symmetric padding of at most half the window,
// without dilation, on floating inputs; the rest is arranged around them.
std::vector<Value*> pool_op(NodeContext& c, bool max) {
  Value* x = c.required_input(0);
  bool with_indices = max && c.output_used(1);
  if (c.rank(x) < 3) c.invalid(str("input must be [N, C, spatial...], got rank ", c.rank(x)));
  Shape spatial(c.shape(x).begin() + 2, c.shape(x).end());
  Window w = window(c, spatial, c.attr_ints("kernel_shape"));
  bool dilated = std::any_of(w.dilations.begin(), w.dilations.end(), [](int64_t d) { return d != 1; });
  DType d = c.dtype(x);
  if (dilated || c.rank(x) > 4 || with_indices) {
    if (!is_floating(d)) x = c.cast(x, DType::f32);
    Value* indices = nullptr;
    Value* y = pool_by_slices(c, x, w, max, c.attr_int("ceil_mode", 0) != 0, c.attr_int("count_include_pad", 0) != 0,
                              with_indices ? &indices : nullptr);
    return {c.cast(y, d), indices};
  }
  bool one_d = c.rank(x) == 3;
  if (one_d) lift_1d(c, x, w);
  if (!is_floating(d)) x = c.cast(x, DType::f32);  // exact for 8-bit integers
  bool ceil_mode = c.attr_int("ceil_mode", 0) != 0;
  bool include_pad = c.attr_int("count_include_pad", 0) != 0;
  Attrs attrs{{"kernel_size", std::vector<int64_t>{w.kernel[0], w.kernel[1]}},
              {"stride", std::vector<int64_t>{w.strides[0], w.strides[1]}},
              {"ceil_mode", ceil_mode}};
  bool direct = symmetric(w.pads) && w.pads[0] * 2 <= w.kernel[0] && w.pads[1] * 2 <= w.kernel[1];
  Value* y;
  if (direct) {
    attrs.set("padding", std::vector<int64_t>{w.pads[0], w.pads[1]});
    if (!max) attrs.set("count_include_pad", include_pad);
    y = c.op(max ? "max_pool2d" : "avg_pool2d", {x}, attrs);
  } else if (max) {
    y = c.op("max_pool2d", {pad_spatial(c, x, w.pads, -INFINITY)}, attrs);
  } else {
    Value* sums = c.op("avg_pool2d", {pad_spatial(c, x, w.pads, 0.0)}, attrs);
    if (include_pad) {
      y = sums;
    } else {
      // divide by the number of real (unpadded) elements in each window
      Value* ones = c.op("fill", {}, {{"shape", c.shape(x)}, {"value", 1.0}, {"dtype", c.dtype(x)}});
      y = c.div(sums, c.op("avg_pool2d", {pad_spatial(c, ones, w.pads, 0.0)}, attrs));
    }
  }
  if (one_d) y = drop_1d(c, y);
  return {c.cast(y, d)};
}

// LpPool: (sum of |x|^p over each window)^(1/p); padding adds zeros.
std::vector<Value*> lp_pool_op(NodeContext& c) {
  Value* x = c.required_input(0);
  if (c.rank(x) < 3) c.invalid(str("input must be [N, C, spatial...], got rank ", c.rank(x)));
  if (!is_floating(c.dtype(x))) c.invalid("LpPool takes floating inputs");
  const int64_t p = c.attr_int("p", 2);
  if (p <= 0) c.invalid(str("p must be positive, got ", p));
  Shape spatial(c.shape(x).begin() + 2, c.shape(x).end());
  Window w = window(c, spatial, c.attr_ints("kernel_shape"));
  const DType d = c.dtype(x);
  Value* ax = c.op("abs", {x});
  Value* powered = p == 1 ? ax : c.op("pow", {ax, c.scalar(double(p), d)});
  Value* sums = pool_by_slices(c, powered, w, false, c.attr_int("ceil_mode", 0) != 0, true, nullptr, true);
  return {p == 1 ? sums : c.op("pow", {sums, c.scalar(1.0 / double(p), d)})};
}

}  // namespace

void register_pool_conv_mappers(MapperTable& t) {
  t.add("Conv", [](NodeContext& c) -> std::vector<Value*> {
    return {conv_mapping(c, c.required_input(0), c.required_input(1), c.input(2))};
  });
  t.add("ConvTranspose", conv_transpose_op);
  t.add("MaxPool", [](NodeContext& c) { return pool_op(c, true); });
  t.add("AveragePool", [](NodeContext& c) { return pool_op(c, false); });
  t.add("LpPool", lp_pool_op);
}

}  // namespace oar::onnx::detail
