// ONNX Resize and Upsample as matrix products. Every mode (nearest, linear,
// cubic) with every coordinate transformation is separable: along each
// resized axis the output is a fixed linear combination of input elements,
// so the importer computes that interpolation matrix once, in double, with
// ONNX's rules (edge-clamped neighbours, exclude_outside, the
// tf_crop_and_resize extrapolation value), and the graph applies it with
// matmul. Shapes are static, so the matrices are constants.
#include <algorithm>
#include <cmath>

#include "import_context.h"

namespace oar::onnx::detail {

namespace {

struct ResizeMode {
  std::string mode = "nearest";
  std::string transform = "half_pixel";
  std::string nearest_mode = "round_prefer_floor";
  double cubic_a = -0.75;
  bool exclude_outside = false;
  double extrapolation = 0.0;
};

std::vector<double> coefficients(const ResizeMode& m, double ratio) {
  if (m.mode == "linear") return {1 - ratio, ratio};
  if (m.mode == "cubic") {
    double a = m.cubic_a, r = ratio, s = 1 - ratio;
    return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
            ((a + 2) * r - (a + 3)) * r * r + 1,
            ((a + 2) * s - (a + 3)) * s * s + 1,
            ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
  }
  // nearest: pick the left or the right neighbour
  if (ratio == 1.0) return {0, 1};
  bool right = m.nearest_mode == "round_prefer_floor" ? ratio > 0.5
               : m.nearest_mode == "round_prefer_ceil" ? ratio >= 0.5
               : m.nearest_mode == "ceil";
  return {right ? 0.0 : 1.0, right ? 1.0 : 0.0};
}

// Input coordinate of output element `o`; nullopt when tf_crop_and_resize
// puts it outside the input (the output is the extrapolation value then).
std::optional<double> source_coordinate(const ResizeMode& m, int64_t o, int64_t in, double scale, double roi_start,
                                        double roi_end) {
  double out_width = scale * double(in);
  double x = double(o);
  const std::string& t = m.transform;
  if (t == "align_corners") return out_width == 1 ? 0.0 : x * double(in - 1) / (out_width - 1);
  if (t == "asymmetric") return x / scale;
  if (t == "pytorch_half_pixel") return out_width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (t == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (t == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  // tf_crop_and_resize
  double src = out_width == 1 ? (roi_end - roi_start) * double(in - 1) / 2
                              : x * (roi_end - roi_start) * double(in - 1) / (out_width - 1);
  src += roi_start * double(in - 1);
  if (src < 0 || src > double(in - 1)) return std::nullopt;
  return src;
}

// The [in, out] matrix W with y = x @ W along one axis, and which outputs
// take the extrapolation value.
struct AxisMatrix {
  std::vector<double> w;
  std::vector<uint8_t> outside;
  bool identity = true;
};

AxisMatrix axis_matrix(const ResizeMode& m, int64_t in, int64_t out, double scale, double roi_start, double roi_end) {
  AxisMatrix r;
  r.w.assign(size_t(in * out), 0.0);
  r.outside.assign(size_t(out), 0);
  for (int64_t o = 0; o < out; ++o) {
    auto src = source_coordinate(m, o, in, scale, roi_start, roi_end);
    if (!src) {
      r.outside[size_t(o)] = 1;
      r.identity = false;
      continue;
    }
    double x = *src;
    double ratio = x == std::floor(x) ? 1.0 : x - std::floor(x);
    std::vector<double> k = coefficients(m, ratio);
    int64_t n = int64_t(k.size());
    // The n nearest positions of the edge-padded input, ties to the left.
    int64_t pad = (n + 1) / 2;
    double xp = x + double(pad);
    int64_t limit = in + 2 * pad;
    std::vector<int64_t> cand;
    for (int64_t j = int64_t(std::floor(xp)) - n - 1; j <= int64_t(std::floor(xp)) + n + 1; ++j)
      if (j >= 0 && j < limit) cand.push_back(j);
    std::sort(cand.begin(), cand.end(), [&](int64_t a, int64_t b) {
      double da = std::abs(xp - double(a)), db = std::abs(xp - double(b));
      return da != db ? da < db : a < b;
    });
    cand.resize(size_t(std::min<int64_t>(n, int64_t(cand.size()))));
    std::sort(cand.begin(), cand.end());
    if (m.exclude_outside) {
      double total = 0;
      for (size_t i = 0; i < cand.size(); ++i) {
        int64_t idx = cand[i] - pad;
        if (idx < 0 || idx >= in) k[i] = 0;
        total += k[i];
      }
      for (double& v : k) v /= total;
    }
    for (size_t i = 0; i < cand.size(); ++i) {
      int64_t idx = std::clamp<int64_t>(cand[i] - pad, 0, in - 1);
      r.w[size_t(idx * out + o)] += k[i];
    }
  }
  if (in != out) r.identity = false;
  for (int64_t i = 0; r.identity && i < in; ++i)
    for (int64_t o = 0; r.identity && o < out; ++o) r.identity = r.w[size_t(i * out + o)] == (i == o ? 1.0 : 0.0);
  return r;
}

Value* resize(NodeContext& c, Value* x, const ResizeMode& m, const std::vector<int64_t>& out_shape,
              const std::vector<double>& scales, const std::vector<double>& roi) {
  DType d = c.dtype(x);
  DType compute = is_floating(d) ? d : DType::f64;
  Value* y = c.cast(x, compute);
  int64_t r = c.rank(x);
  for (int64_t a = 0; a < r; ++a) {
    int64_t in = c.shape(x)[size_t(a)], out = out_shape[size_t(a)];
    double roi_start = roi.empty() ? 0.0 : roi[size_t(a)], roi_end = roi.empty() ? 1.0 : roi[size_t(r + a)];
    AxisMatrix mat = axis_matrix(m, in, out, scales[size_t(a)], roi_start, roi_end);
    if (mat.identity) continue;
    const auto [perm, inverse] = axis_last(r, a);
    Tensor w = Tensor::from_vector(mat.w, {in, out}, Device::cpu()).to(compute);
    y = c.permute(c.op("matmul", {c.permute(y, perm), c.constant(w)}), inverse);
    if (std::find(mat.outside.begin(), mat.outside.end(), 1) != mat.outside.end()) {
      Shape ms(size_t(r), 1);
      ms[size_t(a)] = out;
      Value* mask = c.constant(Tensor::from_host(mat.outside.data(), out, ms, DType::boolean, Device::cpu()));
      y = c.where(mask, c.scalar(m.extrapolation, compute), y);
    }
  }
  if (is_floating(d)) return y;
  return c.cast(c.op("round", {y}), d);
}

std::vector<Value*> resize_op(NodeContext& c) {
  Value* x = c.required_input(0);
  int64_t r = c.rank(x);
  ResizeMode m;
  m.mode = c.attr_string("mode", "nearest");
  if (m.mode != "nearest" && m.mode != "linear" && m.mode != "cubic") c.invalid(str("unknown mode '", m.mode, "'"));
  m.transform = c.attr_string("coordinate_transformation_mode", c.opset() < 11 ? "asymmetric" : "half_pixel");
  m.nearest_mode = c.attr_string("nearest_mode", c.opset() < 11 ? "floor" : "round_prefer_floor");
  m.cubic_a = c.attr_float("cubic_coeff_a", -0.75);
  m.exclude_outside = c.attr_int("exclude_outside", 0) != 0;
  m.extrapolation = c.attr_float("extrapolation_value", 0.0);
  if (c.has_attr("axes") || c.attr_int("antialias", 0) != 0) c.unsupported("axes and antialias (opset 18)");
  static const char* transforms[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                     "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  if (std::find(std::begin(transforms), std::end(transforms), m.transform) == std::end(transforms))
    c.invalid(str("unknown coordinate_transformation_mode '", m.transform, "'"));

  std::vector<double> scales, roi;
  std::vector<int64_t> sizes;
  size_t scales_input = c.opset() < 11 ? 1 : 2;
  if (c.opset() >= 11 && c.has_input(1) && numel_of(c.shape(c.input(1))) > 0) roi = c.constant_doubles(1, "roi");
  if (c.has_input(scales_input) && numel_of(c.shape(c.input(scales_input))) > 0)
    scales = c.constant_doubles(scales_input, "scales");
  if (c.opset() >= 11 && c.has_input(3) && numel_of(c.shape(c.input(3))) > 0) sizes = c.constant_ints(3, "sizes");
  if (scales.empty() == sizes.empty()) c.invalid("exactly one of scales and sizes must be given");
  if (!roi.empty() && roi.size() != size_t(2 * r)) c.invalid(str("roi must have ", 2 * r, " entries"));
  if (m.transform != "tf_crop_and_resize") roi.clear();
  std::vector<int64_t> out(static_cast<size_t>(r));
  if (!scales.empty()) {
    if (scales.size() != size_t(r)) c.invalid(str("scales must have ", r, " entries"));
    for (int64_t i = 0; i < r; ++i) out[size_t(i)] = int64_t(std::floor(scales[size_t(i)] * double(c.shape(x)[size_t(i)])));
  } else {
    if (sizes.size() != size_t(r)) c.invalid(str("sizes must have ", r, " entries"));
    out = sizes;
    for (int64_t i = 0; i < r; ++i) scales.push_back(double(sizes[size_t(i)]) / double(c.shape(x)[size_t(i)]));
  }
  return {resize(c, x, m, out, scales, roi)};
}

std::vector<Value*> upsample_op(NodeContext& c) {
  Value* x = c.required_input(0);
  int64_t r = c.rank(x);
  ResizeMode m;
  m.mode = c.attr_string("mode", "nearest");
  if (m.mode == "bilinear") m.mode = "linear";
  m.transform = "asymmetric";
  m.nearest_mode = "floor";
  std::vector<double> scales =
      c.opset() >= 9 ? c.constant_doubles(1, "scales") : c.attr_floats("scales");
  if (scales.size() != size_t(r)) c.invalid(str("scales must have ", r, " entries"));
  std::vector<int64_t> out(static_cast<size_t>(r));
  for (int64_t i = 0; i < r; ++i) out[size_t(i)] = int64_t(std::floor(scales[size_t(i)] * double(c.shape(x)[size_t(i)])));
  return {resize(c, x, m, out, scales, {})};
}

}  // namespace

void register_resize_mappers(MapperTable& t) {
  t.add("Resize", resize_op);
  t.add("Upsample", upsample_op);
}

}  // namespace oar::onnx::detail
