// fake_npu's number formats: IEEE half conversion (round to nearest even,
// written here so fp16 results are exact and reproducible) and the int8
// quantization helpers of the int8 precision.
#pragma once

#include <cstdint>
#include <vector>

namespace fake_npu {

uint16_t f32_to_f16_bits(float value);
float f16_bits_to_f32(uint16_t bits);
inline float round_to_half(float value) { return f16_bits_to_f32(f32_to_f16_bits(value)); }
void round_to_half(float* data, int64_t count);

// Per-tensor affine quantization: real = scale * (q - zero_point), q in [qmin, qmax].
struct Quant {
  bool on = false;
  float scale = 1.0f;
  int32_t zero_point = 0;
  int32_t qmin = -128, qmax = 127;
};

int32_t quantize_value(float value, const Quant& q);
// What an i8/u8 tensor can hold: value rounded through q.
float fake_quantize(float value, const Quant& q);

// Activations for an int8 product: q is the operand's own scale when it has
// one, else a dynamic symmetric one (max|x| / 127). Writes q - zero_point
// (so padding contributes 0) and returns the scale.
float quantize_activation(const float* x, int64_t count, const Quant& given, std::vector<int32_t>& centered);

// Symmetric per-row (output channel) quantization: scale = max|row| / 127.
void quantize_rows(const float* w, int64_t rows, int64_t inner, std::vector<int8_t>& q, std::vector<float>& scales);

}  // namespace fake_npu
