// Counter-based Philox4x32-10 (Salmon et al., SC'11): value i of a random op
// depends only on (seed, offset + i), so every device, thread layout and
// backend produces the same stream for the same seed.
//
// The algorithm is written once, as macro bodies in the common subset of C++
// and OpenCL C (C casts, uint32_t/uint64_t, which OpenCL sources typedef);
// the C++ functions below expand them and kp/opencl/random.h stringifies the
// very same text, so CPU and OpenCL draw bit-identical streams.
#pragma once

#include <cstdint>

#include "oar/kp/math.h"

// In: counter, seed (uint64_t). Out: out[0..3] (uint32_t).
#define OAR_KP_PHILOX4X32_BODY                                              \
  {                                                                         \
    uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32);        \
    uint32_t c2 = 0, c3 = 0;                                                \
    uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);              \
    for (int r = 0; r < 10; ++r) {                                          \
      uint64_t p0 = (uint64_t)0xD2511F53u * c0;                             \
      uint64_t p1 = (uint64_t)0xCD9E8D57u * c2;                             \
      uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;                         \
      uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;                         \
      c1 = (uint32_t)p1;                                                    \
      c3 = (uint32_t)p0;                                                    \
      c0 = n0;                                                              \
      c2 = n2;                                                              \
      k0 += 0x9E3779B9u;                                                    \
      k1 += 0xBB67AE85u;                                                    \
    }                                                                       \
    out[0] = c0;                                                            \
    out[1] = c1;                                                            \
    out[2] = c2;                                                            \
    out[3] = c3;                                                            \
  }

// In: hi, lo (uint32_t). Value: uniform double in [0, 1) with 53 random bits.
#define OAR_KP_UNIFORM_DOUBLE_EXPR \
  ((double)((((uint64_t)hi << 21) ^ ((uint64_t)lo >> 11)) & (((uint64_t)1 << 53) - 1)) * (1.0 / 9007199254740992.0))

// In: u1 in (0, 1], u2 in [0, 1). Value: a standard normal (Box-Muller).
#define OAR_KP_BOX_MULLER_EXPR (sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2))

namespace oar::kp {

struct Philox4 {
  uint32_t v[4];
};

OAR_KP_HD Philox4 philox4x32(uint64_t counter, uint64_t seed) {
  Philox4 result;
  uint32_t* out = result.v;
  OAR_KP_PHILOX4X32_BODY
  return result;
}

// Uniform in [0, 1) with 24 random bits (float) or 53 (double).
OAR_KP_HD float uniform_float(uint32_t x) { return float(x >> 8) * (1.0f / 16777216.0f); }
OAR_KP_HD double uniform_double(uint32_t hi, uint32_t lo) { return OAR_KP_UNIFORM_DOUBLE_EXPR; }

// Element i of a random op: uniform in [0,1) and a standard normal (Box-Muller).
OAR_KP_HD double philox_uniform(uint64_t seed, uint64_t offset, int64_t i) {
  Philox4 r = philox4x32(offset + uint64_t(i), seed);
  return uniform_double(r.v[0], r.v[1]);
}
OAR_KP_HD double philox_normal(uint64_t seed, uint64_t offset, int64_t i) {
  Philox4 r = philox4x32(offset + uint64_t(i), seed);
  double u1 = 1.0 - uniform_double(r.v[0], r.v[1]);  // (0, 1]
  double u2 = uniform_double(r.v[2], r.v[3]);
  using namespace math;
  return OAR_KP_BOX_MULLER_EXPR;
}

}  // namespace oar::kp
