// The math vocabulary op functors are written in: exp, log, erf, ... and
// select/compare helpers, resolved per backend (std:: on the host, CUDA/HIP
// intrinsics on the device). OpenCL C has builtins with the same names, which
// is what lets the OpenCL emitter paste a functor's expression text verbatim.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "oar/kp/numeric.h"

namespace oar::kp::math {

using std::abs;
using std::acos;
using std::acosh;
using std::asin;
using std::asinh;
using std::atan;
using std::atanh;
using std::ceil;
using std::atan2;
using std::copysign;
using std::erfc;
using std::exp2;
using std::expm1;
using std::hypot;
using std::lgamma;
using std::log10;
using std::log1p;
using std::log2;
using std::trunc;
using std::cos;
using std::cosh;
using std::erf;
using std::exp;
using std::floor;
using std::fmod;
using std::log;
using std::rint;
using std::sin;
using std::sinh;
using std::sqrt;
using std::tan;
using std::tanh;

template <class T>
OAR_KP_HD T pow(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::pow(a, b);
  } else if constexpr (std::is_same_v<T, bool>) {
    return a || !b;
  } else {
    // Integer power by squaring; negative exponents follow C truncation
    // (0 unless |a| == 1), as PyTorch does for integer tensors.
    if (b < 0) return a == 1 ? T(1) : (a == T(-1) ? ((b & 1) ? T(-1) : T(1)) : T(0));
    T result = 1;
    while (b) {
      if (b & 1) result = T(result * a);
      a = T(a * a);
      b = T(b >> 1);
    }
    return result;
  }
}

template <class T>
OAR_KP_HD bool isnan_(T x) {
  if constexpr (std::is_floating_point_v<T>) return x != x;
  else return false;
}

// digamma, trigamma, polygamma and erfinv, which no backend's math library has: written
// once in family/special_math.kp (also pasted into OpenCL kernels), compiled
// here for float and double. 16-bit floats compute in float.
namespace special_f32 {
#define KP_S float
#define KP_SPECIAL_FN OAR_KP_HD
#include "oar/kp/family/special_math.kp"
#undef KP_S
}  // namespace special_f32
namespace special_f64 {
#define KP_S double
#include "oar/kp/family/special_math.kp"
#undef KP_S
#undef KP_SPECIAL_FN
}  // namespace special_f64

#define OAR_KP_SPECIAL(name)                                                 \
  template <class T>                                                        \
  OAR_KP_HD T name(T x) {                                                   \
    if constexpr (std::is_same_v<T, double>) return special_f64::name(x);   \
    else return static_cast<T>(special_f32::name(static_cast<float>(x)));   \
  }
OAR_KP_SPECIAL(oar_digamma)
OAR_KP_SPECIAL(oar_trigamma)
OAR_KP_SPECIAL(oar_erfinv)
#undef OAR_KP_SPECIAL
template <class T>
OAR_KP_HD T oar_polygamma(T n, T x) {
  if constexpr (std::is_same_v<T, double>) return special_f64::oar_polygamma(n, x);
  else return static_cast<T>(special_f32::oar_polygamma(static_cast<float>(n), static_cast<float>(x)));
}

}  // namespace oar::kp::math
