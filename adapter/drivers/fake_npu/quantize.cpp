// Half-precision conversion and int8 helpers (see quantize.h).
#include "quantize.h"

#include <cmath>
#include <cstring>

namespace fake_npu {

uint16_t f32_to_f16_bits(float value) {
  uint32_t x;
  std::memcpy(&x, &value, sizeof(x));
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t a = x & 0x7fffffffu;
  if (a >= 0x7f800000u)  // inf, or NaN (kept quiet, top payload bits kept)
    return uint16_t(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u | ((a >> 13) & 0x3ffu) : 0u));
  if (a >= 0x477ff000u) return uint16_t(sign | 0x7c00u);  // >= 65520 rounds to inf
  const uint32_t e = a >> 23;
  if (e < 113) {  // below 2^-14: a half subnormal, k * 2^-24
    if (e < 102) return uint16_t(sign);  // under 2^-25: rounds to zero
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - e;  // 14..24
    uint32_t k = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (k & 1u))) ++k;  // may carry into the smallest normal
    return uint16_t(sign | k);
  }
  uint32_t h = ((e - 112) << 10) | ((a >> 13) & 0x3ffu);
  const uint32_t rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;  // a carry moves into the exponent
  return uint16_t(sign | h);
}

float f16_bits_to_f32(uint16_t bits) {
  const uint32_t sign = uint32_t(bits & 0x8000u) << 16;
  const uint32_t e = (bits >> 10) & 0x1fu, m = bits & 0x3ffu;
  uint32_t x;
  if (e == 0) {
    const float v = std::ldexp(float(m), -24);
    return sign ? -v : v;
  }
  if (e == 31) x = sign | 0x7f800000u | (m << 13);
  else x = sign | ((e + 112) << 23) | (m << 13);
  float out;
  std::memcpy(&out, &x, sizeof(out));
  return out;
}

void round_to_half(float* data, int64_t count) {
  for (int64_t i = 0; i < count; ++i) data[i] = round_to_half(data[i]);
}

int32_t quantize_value(float value, const Quant& q) {
  if (value != value) return q.zero_point;  // NaN has no integer: map it to zero
  const double r = std::nearbyint(double(value) / double(q.scale)) + double(q.zero_point);
  if (r < q.qmin) return q.qmin;
  if (r > q.qmax) return q.qmax;
  return int32_t(r);
}

float fake_quantize(float value, const Quant& q) {
  return q.on ? q.scale * float(quantize_value(value, q) - q.zero_point) : value;
}

float quantize_activation(const float* x, int64_t count, const Quant& given, std::vector<int32_t>& centered) {
  Quant q = given;
  if (!q.on) {
    float amax = 0.0f;
    for (int64_t i = 0; i < count; ++i) amax = std::fmax(amax, std::fabs(x[i]));
    q.scale = amax > 0.0f && std::isfinite(amax) ? amax / 127.0f : 1.0f;
    q.zero_point = 0;
    q.qmin = -127;
    q.qmax = 127;
  }
  centered.resize(size_t(count));
  for (int64_t i = 0; i < count; ++i) centered[size_t(i)] = quantize_value(x[i], q) - q.zero_point;
  return q.scale;
}

void quantize_rows(const float* w, int64_t rows, int64_t inner, std::vector<int8_t>& q, std::vector<float>& scales) {
  q.resize(size_t(rows * inner));
  scales.resize(size_t(rows));
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = w + r * inner;
    float amax = 0.0f;
    for (int64_t i = 0; i < inner; ++i) amax = std::fmax(amax, std::fabs(row[i]));
    Quant rq;
    rq.on = true;
    rq.scale = amax > 0.0f && std::isfinite(amax) ? amax / 127.0f : 1.0f;
    rq.qmin = -127;
    rq.qmax = 127;
    scales[size_t(r)] = rq.scale;
    for (int64_t i = 0; i < inner; ++i) q[size_t(r * inner + i)] = int8_t(quantize_value(row[i], rq));
  }
}

}  // namespace fake_npu
