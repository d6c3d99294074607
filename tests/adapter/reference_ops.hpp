// Test helper: independent plain-loop references of oar's ops (semantics as in
// docs/ops.md), for the adapter driver tests to check a driver's results
// against. Row-major tensors (NCHW for the 2-D ops), floats in and out,
// double accumulation. Also the small helpers those tests share: seeded
// random inputs, dequantization and the relative-to-max comparison.
//
//   Dims yd;
//   Floats want = ref::conv2d(x, {1, 3, 8, 8}, w, {4, 3, 3, 3}, &b, {1, 1}, {1, 1}, {1, 1}, 1, &yd);
//   expect_close(got, want, relative_to_max(1e-5), "conv2d");
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "c_model.hpp"

namespace oar_test {

using Dims = std::vector<int64_t>;
using Floats = std::vector<float>;

// n floats uniform in [lo, hi), the same for the same seed.
inline Floats random_floats(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Floats v(static_cast<size_t>(n));
  for (float& f : v) f = dist(gen);
  return v;
}

// The real values of quantized integers q: scale * (q - zero_point), one scale
// (per tensor) or one per channel along dim 0 (q's channels are contiguous).
template <class Q>
Floats dequantize(const std::vector<Q>& q, const std::vector<float>& scales, const std::vector<int32_t>& zero_points = {}) {
  const size_t per_channel = q.size() / scales.size();
  Floats real(q.size());
  for (size_t i = 0; i < q.size(); ++i) {
    const size_t c = i / per_channel;
    real[i] = scales[c] * (float(q[i]) - float(zero_points.empty() ? 0 : zero_points[c]));
  }
  return real;
}

// How close a result must come to its reference: element i may be off by
// of_element * |ref[i]| + of_output * S, where S is max |ref|, or the
// reference's range max - min when of_range.
struct Bound {
  double of_element = 0;
  double of_output = 0;
  bool of_range = false;
};
// |got - ref| <= t * max |ref| for every element.
constexpr Bound relative_to_max(double t) { return {0.0, t, false}; }

// Fails (naming up to 5 elements) where `got` is not within `bound` of `ref`.
inline void expect_close(const Floats& got, const Floats& ref, const Bound& bound, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double maxabs = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (float r : ref) maxabs = std::max(maxabs, std::fabs(double(r))), lo = std::min(lo, double(r)), hi = std::max(hi, double(r));
  const double scale = bound.of_range ? hi - lo : maxabs;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double allowed = bound.of_element * std::fabs(double(ref[i])) + bound.of_output * scale;
    if (!(std::fabs(double(got[i]) - double(ref[i])) <= allowed) && bad++ < 5)
      ADD_FAILURE() << what << " element " << i << ": got " << got[i] << ", reference " << ref[i] << ", allowed "
                    << allowed << " (max |reference| " << maxabs << ")";
  }
}

namespace ref {

namespace detail {
inline Dims strides_of(const Dims& d) {
  Dims s(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * d[i];
  return s;
}
// A dim given as in the catalog (negative counts from the end).
inline size_t axis(int64_t dim, size_t rank) { return size_t(dim < 0 ? dim + int64_t(rank) : dim); }
// A 2-D attribute (stride, padding, ...) given as 1 or 2 values: one serves both dims.
inline Dims pair(const Dims& v) { return {v.front(), v.back()}; }
}  // namespace detail

// ---- elementwise ----
inline double relu(double v) { return std::max(v, 0.0); }
inline double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }
// approximate='none': x * Phi(x)
inline double gelu(double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); }
// approximate='tanh'
inline double gelu_tanh(double v) { return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))); }
inline double silu(double v) { return v * sigmoid(v); }
inline double leaky_relu(double v, double negative_slope) { return v > 0 ? v : negative_slope * v; }
// min(max(x, min), max): with min > max every value becomes max.
inline double clamp(double v, double min, double max) { return std::min(std::max(v, min), max); }
// The activation of conv2d_act and linear_act: relu, sigmoid or tanh.
inline double activation(const std::string& name, double v) {
  if (name == "relu") return relu(v);
  if (name == "sigmoid") return sigmoid(v);
  if (name == "tanh") return std::tanh(v);
  throw std::invalid_argument("no activation " + name);
}

inline Floats unary(const Floats& x, const std::function<double(double)>& f) {
  Floats y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = float(f(x[i]));
  return y;
}

// f(a, b) with NumPy broadcasting (dims aligned from the right; size 1 stretches).
inline Floats broadcast(const Floats& a, Dims ad, const Floats& b, Dims bd, const std::function<double(double, double)>& f,
                        Dims* out_dims = nullptr) {
  const size_t rank = std::max(ad.size(), bd.size());
  ad.insert(ad.begin(), rank - ad.size(), 1);
  bd.insert(bd.begin(), rank - bd.size(), 1);
  Dims od(rank);
  for (size_t i = 0; i < rank; ++i) od[i] = std::max(ad[i], bd[i]);
  if (out_dims != nullptr) *out_dims = od;
  const Dims as = detail::strides_of(ad), bs = detail::strides_of(bd), os = detail::strides_of(od);
  Floats y(size_t(CModel::count(od)));
  for (int64_t flat = 0; flat < int64_t(y.size()); ++flat) {
    int64_t ai = 0, bi = 0;
    for (size_t i = 0; i < rank; ++i) {
      const int64_t c = flat / os[i] % od[i];
      ai += (ad[i] == 1 ? 0 : c) * as[i];
      bi += (bd[i] == 1 ? 0 : c) * bs[i];
    }
    y[size_t(flat)] = float(f(a[size_t(ai)], b[size_t(bi)]));
  }
  return y;
}
inline Floats add(const Floats& a, const Dims& ad, const Floats& b, const Dims& bd, Dims* out_dims = nullptr) {
  return broadcast(a, ad, b, bd, std::plus<double>(), out_dims);
}

// ---- matrix products ----
namespace detail {
// y[r, o] = sum_i x[r, i] * w(i, o) (+ bias[o]), w [n, k] or (w_kn) [k, n].
inline Floats gemm(const Floats& x, int64_t rows, int64_t k, const Floats& w, int64_t n, const Floats* bias, bool w_kn) {
  Floats y(size_t(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < n; ++o) {
      double acc = bias ? (*bias)[size_t(o)] : 0.0;
      for (int64_t i = 0; i < k; ++i)
        acc += double(x[size_t(r * k + i)]) * double(w_kn ? w[size_t(i * n + o)] : w[size_t(o * k + i)]);
      y[size_t(r * n + o)] = float(acc);
    }
  return y;
}
}  // namespace detail

// linear: x [rows, in] @ w [out, in]^T + bias [out] (bias optional); x's
// leading dims fold into rows.
inline Floats linear(const Floats& x, int64_t rows, int64_t in, const Floats& w, int64_t out, const Floats* bias) {
  return detail::gemm(x, rows, in, w, out, bias, false);
}
// matmul with a 2-D b: a [rows, k] @ b [k, n]; a's batch dims fold into rows.
inline Floats matmul(const Floats& a, int64_t rows, int64_t k, const Floats& b, int64_t n) {
  return detail::gemm(a, rows, k, b, n, nullptr, true);
}

// ---- convolution and pooling (NCHW) ----
// conv2d's output dims; stride, padding and dilation of 1 or 2 values.
inline Dims conv2d_dims(const Dims& xd, const Dims& wd, const Dims& stride, const Dims& padding, const Dims& dilation) {
  const Dims s = detail::pair(stride), p = detail::pair(padding), d = detail::pair(dilation);
  Dims yd = {xd[0], wd[0], 0, 0};
  for (size_t i = 0; i < 2; ++i) yd[2 + i] = (xd[2 + i] + 2 * p[i] - d[i] * (wd[2 + i] - 1) - 1) / s[i] + 1;
  return yd;
}

// 2-D cross-correlation of x [N, C, H, W] with w [C_out, C / groups, kH, kW]
// (+ bias [C_out], optional); output channel o reads input group o / (C_out / groups).
inline Floats conv2d(const Floats& x, const Dims& xd, const Floats& w, const Dims& wd, const Floats* bias,
                     const Dims& stride, const Dims& padding, const Dims& dilation, int64_t groups,
                     Dims* out_dims = nullptr) {
  const Dims s = detail::pair(stride), p = detail::pair(padding), d = detail::pair(dilation);
  const Dims yd = conv2d_dims(xd, wd, stride, padding, dilation);
  if (out_dims != nullptr) *out_dims = yd;
  const int64_t C = xd[1], H = xd[2], W = xd[3], O = wd[0], Cg = wd[1], KH = wd[2], KW = wd[3], OH = yd[2], OW = yd[3];
  const int64_t og = O / groups;
  Floats y(size_t(CModel::count(yd)));
  for (int64_t n = 0; n < xd[0]; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = bias ? (*bias)[size_t(o)] : 0.0;
          const int64_t g = o / og;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t ih = oh * s[0] - p[0] + kh * d[0], iw = ow * s[1] - p[1] + kw * d[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += double(x[size_t(((n * C + g * Cg + c) * H + ih) * W + iw)]) *
                       double(w[size_t(((o * Cg + c) * KH + kh) * KW + kw)]);
              }
          y[size_t(((n * O + o) * OH + oh) * OW + ow)] = float(acc);
        }
  return y;
}

// Pooled size of one dim (PyTorch's rule: in ceil mode the last window must
// start inside the input or the left padding).
inline int64_t pool2d_size(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode) {
  const int64_t num = in + 2 * p - k + (ceil_mode ? s - 1 : 0);
  int64_t out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

namespace detail {
// Windows over the padded input, clipped at its right/bottom edge (ceil mode);
// padding never wins a max; an average divides by the window's input elements,
// or with count_include_pad by its elements inside the padded input.
inline Floats pool2d(const Floats& x, const Dims& xd, const Dims& kernel, const Dims& stride, const Dims& padding,
                     bool ceil_mode, bool is_max, bool count_include_pad, Dims* out_dims) {
  const Dims k = pair(kernel), s = pair(stride.empty() ? kernel : stride), p = pair(padding);
  const int64_t planes = xd[0] * xd[1], H = xd[2], W = xd[3];
  const int64_t OH = pool2d_size(H, k[0], s[0], p[0], ceil_mode), OW = pool2d_size(W, k[1], s[1], p[1], ceil_mode);
  if (out_dims != nullptr) *out_dims = {xd[0], xd[1], OH, OW};
  Floats y(size_t(planes * OH * OW));
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t h0 = oh * s[0] - p[0], w0 = ow * s[1] - p[1];
        const int64_t h1 = std::min(h0 + k[0], H + p[0]), w1 = std::min(w0 + k[1], W + p[1]);
        const int64_t padded = (h1 - h0) * (w1 - w0);
        double acc = is_max ? -INFINITY : 0.0;
        int64_t inside = 0;
        for (int64_t h = std::max<int64_t>(h0, 0); h < std::min(h1, H); ++h)
          for (int64_t w = std::max<int64_t>(w0, 0); w < std::min(w1, W); ++w) {
            const double v = x[size_t((pl * H + h) * W + w)];
            acc = is_max ? std::max(acc, v) : acc + v;
            ++inside;
          }
        y[size_t((pl * OH + oh) * OW + ow)] = float(is_max ? acc : acc / double(count_include_pad ? padded : inside));
      }
  return y;
}
}  // namespace detail

// max_pool2d / avg_pool2d of x [N, C, H, W]: kernel, stride (empty: the
// kernel) and padding of 1 or 2 values.
inline Floats max_pool2d(const Floats& x, const Dims& xd, const Dims& kernel, const Dims& stride, const Dims& padding,
                         bool ceil_mode, Dims* out_dims = nullptr) {
  return detail::pool2d(x, xd, kernel, stride, padding, ceil_mode, true, false, out_dims);
}
inline Floats avg_pool2d(const Floats& x, const Dims& xd, const Dims& kernel, const Dims& stride, const Dims& padding,
                         bool ceil_mode, bool count_include_pad, Dims* out_dims = nullptr) {
  return detail::pool2d(x, xd, kernel, stride, padding, ceil_mode, false, count_include_pad, out_dims);
}

// ---- normalization and reductions ----
namespace detail {
inline Floats softmax(const Floats& x, const Dims& d, int64_t dim, bool log) {
  const size_t a = axis(dim, d.size());
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < a; ++i) outer *= d[i];
  for (size_t i = a + 1; i < d.size(); ++i) inner *= d[i];
  const int64_t n = d[a];
  Floats y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t j) { return size_t((o * n + j) * inner + in); };
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, double(x[at(j)]));
      for (int64_t j = 0; j < n; ++j) sum += std::exp(double(x[at(j)]) - mx);
      for (int64_t j = 0; j < n; ++j)
        y[at(j)] = float(log ? double(x[at(j)]) - mx - std::log(sum) : std::exp(double(x[at(j)]) - mx) / sum);
    }
  return y;
}
}  // namespace detail

// exp(x) / sum(exp(x)) along dim.
inline Floats softmax(const Floats& x, const Dims& d, int64_t dim) { return detail::softmax(x, d, dim, false); }
// x - log(sum(exp(x))) along dim.
inline Floats log_softmax(const Floats& x, const Dims& d, int64_t dim) { return detail::softmax(x, d, dim, true); }

// batch_norm with training=false: over dim 1 of x [N, C, ...],
// (x - running_mean) / sqrt(running_var + eps) * weight + bias (weight, bias optional).
inline Floats batch_norm(const Floats& x, const Dims& xd, const Floats* weight, const Floats* bias, const Floats& mean,
                         const Floats& var, double eps) {
  const int64_t C = xd[1], per = CModel::count(xd) / (xd[0] * C);
  Floats y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t c = size_t(int64_t(i) / per % C);
    const double scale = weight ? (*weight)[c] : 1.0, shift = bias ? (*bias)[c] : 0.0;
    y[i] = float((double(x[i]) - mean[c]) / std::sqrt(double(var[c]) + eps) * scale + shift);
  }
  return y;
}

// Arithmetic mean over `dims` (empty: all), the reduced dims kept as 1 with keepdim.
inline Floats mean(const Floats& x, const Dims& d, Dims dims, bool keepdim, Dims* out_dims = nullptr) {
  if (dims.empty())
    for (int64_t i = 0; i < int64_t(d.size()); ++i) dims.push_back(i);
  std::vector<bool> reduced(d.size(), false);
  for (int64_t v : dims) reduced[detail::axis(v, d.size())] = true;
  Dims kept(d), od;
  int64_t per = 1;
  for (size_t i = 0; i < d.size(); ++i)
    if (reduced[i]) per *= d[i], kept[i] = 1;
  for (size_t i = 0; i < d.size(); ++i)
    if (!reduced[i] || keepdim) od.push_back(kept[i]);
  if (out_dims != nullptr) *out_dims = od;
  const Dims xs = detail::strides_of(d), ks = detail::strides_of(kept);
  std::vector<double> acc(size_t(CModel::count(kept)), 0.0);
  for (int64_t flat = 0; flat < int64_t(x.size()); ++flat) {
    int64_t o = 0;
    for (size_t i = 0; i < d.size(); ++i) o += (reduced[i] ? 0 : flat / xs[i] % d[i]) * ks[i];
    acc[size_t(o)] += x[size_t(flat)];
  }
  Floats y(acc.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = float(acc[i] / double(per));
  return y;
}

// ---- data movement ----
// y's dim i is x's dim perm[i] (negative counts from the end).
inline Floats permute(const Floats& x, const Dims& d, const Dims& perm, Dims* out_dims = nullptr) {
  Dims od(perm.size()), from(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) from[i] = int64_t(detail::axis(perm[i], d.size())), od[i] = d[size_t(from[i])];
  if (out_dims != nullptr) *out_dims = od;
  const Dims xs = detail::strides_of(d), os = detail::strides_of(od);
  Floats y(x.size());
  for (int64_t flat = 0; flat < int64_t(y.size()); ++flat) {
    int64_t src = 0;
    for (size_t i = 0; i < od.size(); ++i) src += flat / os[i] % od[i] * xs[size_t(from[i])];
    y[size_t(flat)] = x[size_t(src)];
  }
  return y;
}

// xs[k] (dims ds[k]) joined along dim; 1-D empty tensors are skipped.
inline Floats concat(const std::vector<Floats>& xs, const std::vector<Dims>& ds, int64_t dim, Dims* out_dims = nullptr) {
  std::vector<size_t> parts;
  for (size_t k = 0; k < ds.size(); ++k)
    if (!(ds[k].size() == 1 && ds[k][0] == 0)) parts.push_back(k);
  Dims od = ds[parts.at(0)];
  const size_t a = detail::axis(dim, od.size());
  od[a] = 0;
  for (size_t k : parts) od[a] += ds[k][a];
  if (out_dims != nullptr) *out_dims = od;
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < a; ++i) outer *= od[i];
  for (size_t i = a + 1; i < od.size(); ++i) inner *= od[i];
  Floats y;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t k : parts) {
      const int64_t run = ds[k][a] * inner;
      y.insert(y.end(), xs[k].begin() + o * run, xs[k].begin() + (o + 1) * run);
    }
  return y;
}

}  // namespace ref
}  // namespace oar_test
