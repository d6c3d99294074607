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

}  // namespace oar::kp::math
