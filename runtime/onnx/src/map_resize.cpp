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
  bool antialias = false;  // opset 18: linear/cubic filters widened by 1 / scale when downsampling
};

// Antialiased taps (ONNX's reference): the kernel evaluated at scale * (i -
// ratio) over a footprint widened by 1 / scale, normalized to sum to 1.
std::vector<double> antialiased(const ResizeMode& m, double ratio, double scale) {
  scale = std::min(scale, 1.0);
  std::vector<double> k;
  if (m.mode == "linear") {
    int64_t start = int64_t(std::floor(-1 / scale) + 1), footprint = 2 - 2 * start;
    for (int64_t i = start; i < start + footprint; ++i) k.push_back(std::clamp(1 - std::abs((double(i) - ratio) * scale), 0.0, 1.0));
  } else {
    double a = m.cubic_a;
    int64_t start = int64_t(std::floor(-2 / scale) + 1);
    for (int64_t i = start; i < 2 - start; ++i) {
      double x = std::abs(scale * (double(i) - ratio));
      k.push_back(x <= 1  ? ((a + 2) * x - (a + 3)) * x * x + 1
                  : x < 2 ? ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
                          : 0.0);
    }
  }
  double total = 0;
  for (double v : k) total += v;
  for (double& v : k) v /= total;
  return k;
}

std::vector<double> coefficients(const ResizeMode& m, double ratio, double scale) {
  if (m.antialias && m.mode != "nearest") return antialiased(m, ratio, scale);
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
std::optional<double> source_coordinate(const ResizeMode& m, int64_t o, int64_t in, int64_t out, double scale,
                                        double roi_start, double roi_end) {
  double out_width = scale * double(in);
  double x = double(o);
  const std::string& t = m.transform;
  if (t == "align_corners") return out_width == 1 ? 0.0 : x * double(in - 1) / (out_width - 1);
  if (t == "asymmetric") return x / scale;
  if (t == "pytorch_half_pixel") return out_width == 1 ? -0.5 : (x + 0.5) / scale - 0.5;
  if (t == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (t == "half_pixel_symmetric") {
    // opset 19: centres the input's implicit ROI when out != scale * in
    double offset = double(in) / 2 * (1 - double(out) / out_width);
    return offset + (x + 0.5) / scale - 0.5;
  }
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
    auto src = source_coordinate(m, o, in, out, scale, roi_start, roi_end);
    if (!src) {
      r.outside[size_t(o)] = 1;
      r.identity = false;
      continue;
    }
    double x = *src;
    double ratio = x == std::floor(x) ? 1.0 : x - std::floor(x);
    std::vector<double> k = coefficients(m, ratio, scale);
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
  m.antialias = c.attr_int("antialias", 0) != 0;
  if (m.antialias && m.mode == "nearest") c.invalid("antialias applies to the linear and cubic modes only");
  static const char* transforms[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                     "tf_half_pixel_for_nn", "tf_crop_and_resize", "half_pixel_symmetric"};
  if (std::find(std::begin(transforms), std::end(transforms), m.transform) == std::end(transforms))
    c.invalid(str("unknown coordinate_transformation_mode '", m.transform, "'"));
  std::string policy = c.attr_string("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    c.invalid(str("unknown keep_aspect_ratio_policy '", policy, "'"));

  // axes (opset 18): scales, sizes and roi list only these axes
  std::vector<int64_t> axes;
  if (c.has_attr("axes")) {
    for (int64_t a : c.attr_ints("axes")) axes.push_back(c.axis(a, r));
    std::vector<int64_t> sorted = axes;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) c.invalid("axes repeat an axis");
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  const size_t na = axes.size();
  std::vector<double> given_scales, given_roi;
  std::vector<int64_t> given_sizes;
  size_t scales_input = c.opset() < 11 ? 1 : 2;
  if (c.opset() >= 11 && c.has_input(1) && numel_of(c.shape(c.input(1))) > 0) given_roi = c.constant_doubles(1, "roi");
  if (c.has_input(scales_input) && numel_of(c.shape(c.input(scales_input))) > 0)
    given_scales = c.constant_doubles(scales_input, "scales");
  if (c.opset() >= 11 && c.has_input(3) && numel_of(c.shape(c.input(3))) > 0) given_sizes = c.constant_ints(3, "sizes");
  if (given_scales.empty() == given_sizes.empty()) c.invalid("exactly one of scales and sizes must be given");
  if (!given_roi.empty() && given_roi.size() != 2 * na) c.invalid(str("roi must have ", 2 * na, " entries"));
  if (!given_scales.empty() && given_scales.size() != na) c.invalid(str("scales must have ", na, " entries"));
  if (!given_sizes.empty() && given_sizes.size() != na) c.invalid(str("sizes must have ", na, " entries"));

  const Shape& in = c.shape(x);
  std::vector<double> scales(size_t(r), 1.0), roi;
  std::vector<int64_t> out(in.begin(), in.end());
  if (m.transform == "tf_crop_and_resize" && !given_roi.empty()) {
    roi.assign(size_t(r), 0.0);
    roi.resize(size_t(2 * r), 1.0);
    for (size_t i = 0; i < na; ++i) {
      roi[size_t(axes[i])] = given_roi[i];
      roi[size_t(r + axes[i])] = given_roi[na + i];
    }
  }
  if (!given_scales.empty()) {
    for (size_t i = 0; i < na; ++i) {
      int64_t a = axes[i];
      scales[size_t(a)] = given_scales[i];
      out[size_t(a)] = int64_t(std::floor(given_scales[i] * double(in[size_t(a)])));
    }
  } else if (policy == "stretch") {
    for (size_t i = 0; i < na; ++i) {
      int64_t a = axes[i];
      out[size_t(a)] = given_sizes[i];
      scales[size_t(a)] = double(given_sizes[i]) / double(in[size_t(a)]);
    }
  } else {
    // one scale for every listed axis, the largest that fits (not_larger) or
    // the smallest that covers (not_smaller); sizes round half up
    double common = policy == "not_larger" ? INFINITY : 0.0;
    for (size_t i = 0; i < na; ++i) {
      double f = double(given_sizes[i]) / double(in[size_t(axes[i])]);
      common = policy == "not_larger" ? std::min(common, f) : std::max(common, f);
    }
    for (int64_t a : axes) {
      scales[size_t(a)] = common;
      out[size_t(a)] = int64_t(common * double(in[size_t(a)]) + 0.5);
    }
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
