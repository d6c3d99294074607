// The simulated NPU's compute: host loops over NHWC activations and
// row-per-output-channel weights, in f32 or with int8 operands and integer
// accumulation. Shapes are trusted (verify_program checked them).
#pragma once

#include <cstdint>

namespace fake_npu {

struct ConvShape {
  int64_t n, h, w, c;    // input, NHWC
  int64_t oh, ow, cout;  // output, NHWC
  int64_t kh, kw, sh, sw, ph, pw, groups;
};

// y = act(conv(x, w) + bias); w is [cout, kh, kw, c / groups]; bias may be NULL.
void conv_f32(const float* x, const float* w, const float* bias, bool relu, const ConvShape& s, float* y);
// The same on integers: x holds q - zero_point, real = acc * x_scale * w_scale[oc] + bias.
void conv_i8(const int32_t* x, float x_scale, const int8_t* w, const float* w_scales, const float* bias, bool relu,
             const ConvShape& s, float* y);

// y[m, o] = act(sum_k x[m, k] * w[o, k] + bias[o]).
void gemm_f32(const float* x, const float* w, const float* bias, bool relu, int64_t m, int64_t k, int64_t n, float* y);
void gemm_i8(const int32_t* x, float x_scale, const int8_t* w, const float* w_scales, const float* bias, bool relu,
             int64_t m, int64_t k, int64_t n, float* y);

// y[i] = a[i % na] + b[i % nb] for i < n (same dims, a scalar, or the innermost extent).
void add(const float* a, int64_t na, const float* b, int64_t nb, float* y, int64_t n);
void relu(const float* x, float* y, int64_t n);
// NHWC pooling; PyTorch's window clipping and count_include_pad divisor.
void pool(bool max, bool count_include_pad, const float* x, const ConvShape& s, float* y);
void softmax_rows(const float* x, int64_t rows, int64_t cols, float* y);

void nchw_to_nhwc(const float* src, int64_t n, int64_t c, int64_t h, int64_t w, float* dst);
void nhwc_to_nchw(const float* src, int64_t n, int64_t c, int64_t h, int64_t w, float* dst);
// [rows, cols] -> [cols, rows]
void transpose(const float* src, int64_t rows, int64_t cols, float* dst);

}  // namespace fake_npu
