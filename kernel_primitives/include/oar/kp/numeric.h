// Portable 16-bit float storage types (IEEE half and bfloat16) and the
// compute/accumulate type each element type is promoted to inside kernels.
// Plain structs with host/device conversion so the same functor code compiles
// as C++, CUDA and HIP; conversions round to nearest even.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#endif

#if defined(__CUDACC__) || defined(__HIPCC__)
#define OAR_KP_HD __host__ __device__ inline
#else
#define OAR_KP_HD inline
#endif

namespace oar::kp {

// Device code uses the intrinsics: memcpy is host-only under HIP.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
OAR_KP_HD uint32_t float_bits(float f) { return __float_as_uint(f); }
OAR_KP_HD float bits_float(uint32_t u) { return __uint_as_float(u); }
#else
OAR_KP_HD uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
OAR_KP_HD float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}
#endif

struct bfloat16 {
  uint16_t bits = 0;
  bfloat16() = default;
  OAR_KP_HD bfloat16(float f) {
    uint32_t u = float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) {  // NaN: keep it quiet, keep the sign
      bits = static_cast<uint16_t>((u >> 16) | 0x0040u);
    } else {
      u += 0x7fffu + ((u >> 16) & 1u);
      bits = static_cast<uint16_t>(u >> 16);
    }
  }
  OAR_KP_HD operator float() const { return bits_float(static_cast<uint32_t>(bits) << 16); }
};

struct half {
  uint16_t bits = 0;
  half() = default;
  OAR_KP_HD half(float f) {
    uint32_t x = float_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) {  // inf or NaN
      bits = static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
      return;
    }
    if (absx >= 0x477ff000u) {  // rounds to >= 65520: overflow to inf
      bits = static_cast<uint16_t>(sign | 0x7c00u);
      return;
    }
    if (absx < 0x38800000u) {  // subnormal half (or zero)
      // scale so the half subnormal lsb lands on bit 0, rounding to nearest even
      float a = bits_float(absx);
      float scaled = a * 16777216.0f;  // 2^24
      uint32_t q = static_cast<uint32_t>(scaled);
      float rem = scaled - static_cast<float>(q);
      if (rem > 0.5f || (rem == 0.5f && (q & 1u))) ++q;
      bits = static_cast<uint16_t>(sign | q);
      return;
    }
    uint32_t mant = absx & 0x7fffffu;
    uint32_t exp = (absx >> 23) - 127 + 15;
    uint32_t h = (exp << 10) | (mant >> 13);
    uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    bits = static_cast<uint16_t>(sign | h);
  }
  OAR_KP_HD operator float() const {
    uint32_t sign = (static_cast<uint32_t>(bits) & 0x8000u) << 16;
    uint32_t exp = (bits >> 10) & 0x1fu;
    uint32_t mant = bits & 0x3ffu;
    if (exp == 0) {
      float v = static_cast<float>(mant) * (1.0f / 16777216.0f);  // mant * 2^-24
      return sign ? -v : v;
    }
    if (exp == 31) return bits_float(sign | 0x7f800000u | (mant << 13));
    return bits_float(sign | ((exp - 15 + 127) << 23) | (mant << 13));
  }
};

// The type arithmetic is done in: 16-bit floats compute in float.
template <class T> struct compute_type { using type = T; };
template <> struct compute_type<half> { using type = float; };
template <> struct compute_type<bfloat16> { using type = float; };
template <class T> using compute_t = typename compute_type<T>::type;

// The type reductions accumulate in: floats in float/double, integers in int64.
template <class T> struct accumulate_type { using type = int64_t; };
template <> struct accumulate_type<float> { using type = float; };
template <> struct accumulate_type<double> { using type = double; };
template <> struct accumulate_type<half> { using type = float; };
template <> struct accumulate_type<bfloat16> { using type = float; };
template <class T> using accumulate_t = typename accumulate_type<T>::type;

template <class T>
constexpr bool is_floating_v = std::is_floating_point_v<T> || std::is_same_v<T, half> ||
                               std::is_same_v<T, bfloat16>;

}  // namespace oar::kp
