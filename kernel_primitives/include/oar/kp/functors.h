// Op functors generated from unary_ops.def and binary_ops.def. Each functor
// has a templated call operator (CPU, CUDA, HIP) and a `source` string with
// the same expression (the OpenCL emitter), so an op's semantics exist once.
// Functors take the op's float parameters (p0, p1) at construction; `p0_attr`
// and `p1_attr` name the op attributes they come from. for_each_functor()
// visits every entry, which is how a plugin registers them all without
// listing them. (The gradient column of unary_ops.def is the core's, read by
// runtime/src/autograd/rules_functor.cpp; functors ignore it.)
#pragma once

#include <type_traits>

#include "oar/kp/math.h"

namespace oar::kp {

// Which dtypes a functor is registered for (see unary_ops.def). INTEGRAL
// functors (bitwise ops) are integer-only: for other types their call
// operator is never run and returns 0, so a backend that instantiates every
// functor for every dtype still compiles.
enum FunctorKind { FLOATING = 0, NUMERIC = 1, VARIANT = 2, COMPARE = 3, INTEGRAL = 4 };

template <FunctorKind kind, class T>
inline constexpr bool functor_applies_v = kind != INTEGRAL || (std::is_integral_v<T> && !std::is_same_v<T, bool>);

#define OAR_KP_FUNCTOR_COMMON(name, kind_, p0a, p1a, expr, arity_)   \
  double p0 = 0, p1 = 0;                                            \
  static constexpr const char* op_name = #name;                     \
  static constexpr const char* source = #expr;                      \
  static constexpr const char* p0_attr = p0a;                       \
  static constexpr const char* p1_attr = p1a;                       \
  static constexpr FunctorKind kind = kind_;                        \
  static constexpr int arity = arity_;

#define OAR_KP_UNARY(name, kind_, p0a, p1a, expr, ...)              \
  struct name##_op {                                                \
    OAR_KP_FUNCTOR_COMMON(name, kind_, p0a, p1a, expr, 1)           \
    static constexpr bool is_compare = false;                       \
    template <class T>                                              \
    OAR_KP_HD T operator()(T x) const {                             \
      using namespace ::oar::kp::math;                              \
      (void)p0;                                                     \
      (void)p1;                                                     \
      if constexpr (functor_applies_v<kind_, T>)                    \
        return static_cast<T>(expr);                                \
      else                                                          \
        return T(0);                                                \
    }                                                               \
  };
#include "oar/kp/unary_ops.def"
#undef OAR_KP_UNARY

#define OAR_KP_BINARY(name, kind_, p0a, p1a, expr)                  \
  struct name##_op {                                                \
    OAR_KP_FUNCTOR_COMMON(name, kind_, p0a, p1a, expr, 2)           \
    static constexpr bool is_compare = false;                       \
    template <class T>                                              \
    OAR_KP_HD T operator()(T a, T b) const {                        \
      using namespace ::oar::kp::math;                              \
      (void)p0;                                                     \
      (void)p1;                                                     \
      if constexpr (functor_applies_v<kind_, T>)                    \
        return static_cast<T>(expr);                                \
      else                                                          \
        return T(0);                                                \
    }                                                               \
  };
#define OAR_KP_COMPARE(name, expr)                                  \
  struct name##_op {                                                \
    OAR_KP_FUNCTOR_COMMON(name, COMPARE, "", "", expr, 2)           \
    static constexpr bool is_compare = true;                        \
    template <class T>                                              \
    OAR_KP_HD bool operator()(T a, T b) const {                     \
      using namespace ::oar::kp::math;                              \
      return static_cast<bool>(expr);                               \
    }                                                               \
  };
#include "oar/kp/binary_ops.def"
#undef OAR_KP_BINARY
#undef OAR_KP_COMPARE
#undef OAR_KP_FUNCTOR_COMMON

// Calls f.template operator()<Op>() for every functor, unary then binary.
template <class F>
void for_each_functor(F&& f) {
#define OAR_KP_UNARY(name, ...) f.template operator()<name##_op>();
#define OAR_KP_BINARY(name, ...) f.template operator()<name##_op>();
#define OAR_KP_COMPARE(name, ...) f.template operator()<name##_op>();
#include "oar/kp/unary_ops.def"
#include "oar/kp/binary_ops.def"
#undef OAR_KP_UNARY
#undef OAR_KP_BINARY
#undef OAR_KP_COMPARE
}

}  // namespace oar::kp
