// Host kernels of the simulated NPU (see kernels.h). Float products
// accumulate in f32, as the NPU's MAC array does; int8 ones in integers
// (int64 on the host, which equals int32 wherever int32 does not overflow).
#include "kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace fake_npu {

namespace {

inline float activate(float v, bool relu) { return relu && v < 0.0f ? 0.0f : v; }

template <class X, class W, class Acc, class Epilogue>
void conv_loop(const X* x, const W* w, const ConvShape& s, Epilogue epilogue, float* y) {
  const int64_t cg = s.c / s.groups, og = s.cout / s.groups;
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t oh = 0; oh < s.oh; ++oh)
      for (int64_t ow = 0; ow < s.ow; ++ow) {
        float* yp = y + ((n * s.oh + oh) * s.ow + ow) * s.cout;
        for (int64_t oc = 0; oc < s.cout; ++oc) {
          const int64_t group = oc / og;
          const W* wp = w + oc * s.kh * s.kw * cg;
          Acc acc = 0;
          for (int64_t i = 0; i < s.kh; ++i) {
            const int64_t ih = oh * s.sh - s.ph + i;
            if (ih < 0 || ih >= s.h) continue;
            for (int64_t j = 0; j < s.kw; ++j) {
              const int64_t iw = ow * s.sw - s.pw + j;
              if (iw < 0 || iw >= s.w) continue;
              const X* xp = x + ((n * s.h + ih) * s.w + iw) * s.c + group * cg;
              const W* wk = wp + (i * s.kw + j) * cg;
              for (int64_t c = 0; c < cg; ++c) acc += Acc(xp[c]) * Acc(wk[c]);
            }
          }
          yp[oc] = epilogue(oc, acc);
        }
      }
}

template <class X, class W, class Acc, class Epilogue>
void gemm_loop(const X* x, const W* w, int64_t m, int64_t k, int64_t n, Epilogue epilogue, float* y) {
  for (int64_t r = 0; r < m; ++r)
    for (int64_t o = 0; o < n; ++o) {
      const X* xp = x + r * k;
      const W* wp = w + o * k;
      Acc acc = 0;
      for (int64_t i = 0; i < k; ++i) acc += Acc(xp[i]) * Acc(wp[i]);
      y[r * n + o] = epilogue(o, acc);
    }
}

auto float_epilogue(const float* bias, bool relu) {
  return [=](int64_t oc, float acc) { return activate(acc + (bias ? bias[oc] : 0.0f), relu); };
}

auto int_epilogue(float x_scale, const float* w_scales, const float* bias, bool relu) {
  return [=](int64_t oc, int64_t acc) {
    return activate(float(acc) * x_scale * w_scales[oc] + (bias ? bias[oc] : 0.0f), relu);
  };
}

}  // namespace

void conv_f32(const float* x, const float* w, const float* bias, bool relu, const ConvShape& s, float* y) {
  conv_loop<float, float, float>(x, w, s, float_epilogue(bias, relu), y);
}

void conv_i8(const int32_t* x, float x_scale, const int8_t* w, const float* w_scales, const float* bias, bool relu,
             const ConvShape& s, float* y) {
  conv_loop<int32_t, int8_t, int64_t>(x, w, s, int_epilogue(x_scale, w_scales, bias, relu), y);
}

void gemm_f32(const float* x, const float* w, const float* bias, bool relu, int64_t m, int64_t k, int64_t n, float* y) {
  gemm_loop<float, float, float>(x, w, m, k, n, float_epilogue(bias, relu), y);
}

void gemm_i8(const int32_t* x, float x_scale, const int8_t* w, const float* w_scales, const float* bias, bool relu,
             int64_t m, int64_t k, int64_t n, float* y) {
  gemm_loop<int32_t, int8_t, int64_t>(x, w, m, k, n, int_epilogue(x_scale, w_scales, bias, relu), y);
}

void add(const float* a, int64_t na, const float* b, int64_t nb, float* y, int64_t n) {
  if (na == n && nb == n) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = a[i % na] + b[i % nb];
}

void relu(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] < 0.0f ? 0.0f : x[i];  // NaN stays NaN
}

void pool(bool max, bool count_include_pad, const float* x, const ConvShape& s, float* y) {
  std::vector<float> acc(size_t(s.c));
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t oh = 0; oh < s.oh; ++oh)
      for (int64_t ow = 0; ow < s.ow; ++ow) {
        // The window in the padded input, then clipped to the real one.
        const int64_t h_lo = oh * s.sh - s.ph, h_hi = std::min(h_lo + s.kh, s.h + s.ph);
        const int64_t w_lo = ow * s.sw - s.pw, w_hi = std::min(w_lo + s.kw, s.w + s.pw);
        const int64_t h0 = std::max<int64_t>(h_lo, 0), h1 = std::min(h_hi, s.h);
        const int64_t w0 = std::max<int64_t>(w_lo, 0), w1 = std::min(w_hi, s.w);
        std::fill(acc.begin(), acc.end(), max ? -std::numeric_limits<float>::infinity() : 0.0f);
        for (int64_t h = h0; h < h1; ++h)
          for (int64_t w = w0; w < w1; ++w) {
            const float* xp = x + ((n * s.h + h) * s.w + w) * s.c;
            for (int64_t c = 0; c < s.c; ++c) {
              float& a = acc[size_t(c)];
              if (!max) a += xp[c];
              else if (a == a && !(xp[c] <= a)) a = xp[c];  // the first NaN wins, as in PyTorch
            }
          }
        float* yp = y + ((n * s.oh + oh) * s.ow + ow) * s.c;
        const float divisor = float(count_include_pad ? (h_hi - h_lo) * (w_hi - w_lo) : (h1 - h0) * (w1 - w0));
        for (int64_t c = 0; c < s.c; ++c) yp[c] = max ? acc[size_t(c)] : acc[size_t(c)] / divisor;
      }
}

void softmax_rows(const float* x, int64_t rows, int64_t cols, float* y) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xp = x + r * cols;
    float* yp = y + r * cols;
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < cols; ++i) m = std::max(m, xp[i]);
    float sum = 0.0f;
    for (int64_t i = 0; i < cols; ++i) sum += (yp[i] = std::exp(xp[i] - m));
    for (int64_t i = 0; i < cols; ++i) yp[i] /= sum;
  }
}

void nchw_to_nhwc(const float* src, int64_t n, int64_t c, int64_t h, int64_t w, float* dst) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j) dst[((b * h + i) * w + j) * c + k] = src[((b * c + k) * h + i) * w + j];
}

void nhwc_to_nchw(const float* src, int64_t n, int64_t c, int64_t h, int64_t w, float* dst) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t i = 0; i < h; ++i)
        for (int64_t j = 0; j < w; ++j) dst[((b * c + k) * h + i) * w + j] = src[((b * h + i) * w + j) * c + k];
}

void transpose(const float* src, int64_t rows, int64_t cols, float* dst) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) dst[c * rows + r] = src[r * cols + c];
}

}  // namespace fake_npu
