// The functors of the ops that are not arithmetic on one dtype: copy, cast,
// where and logical_not. Like functors.h they are the single definition of
// these ops' element semantics, instantiated by the CPU loop and the GPU
// primitives (the OpenCL emitter spells the same rules in its cast source).
#pragma once

#include <cstdint>
#include <type_traits>

#include "oar/kp/numeric.h"

namespace oar::kp {

struct Identity {
  template <class T> OAR_KP_HD T operator()(T x) const { return x; }
};

// Float to bool is x != 0; float to integer truncates toward zero, and NaN,
// inf or a value outside int64 gives 0 (a defined result, not C++'s UB).
template <class Out>
struct CastTo {
  template <class T> OAR_KP_HD Out operator()(T x) const {
    if constexpr (std::is_same_v<Out, bool>) {
      return x != T(0);
    } else if constexpr (std::is_integral_v<Out> && std::is_floating_point_v<T>) {
      if (!(x == x) || x >= T(9.2e18) || x <= T(-9.2e18)) return Out(0);
      return static_cast<Out>(static_cast<int64_t>(x));
    } else {
      return static_cast<Out>(x);
    }
  }
};

struct Select {
  template <class T> OAR_KP_HD T operator()(bool c, T a, T b) const { return c ? a : b; }
};

struct LogicalNot {
  template <class T> OAR_KP_HD bool operator()(T x) const { return !(x != T(0)); }
};

}  // namespace oar::kp
