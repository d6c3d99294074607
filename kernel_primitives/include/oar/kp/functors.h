// Op functors generated from unary_ops.def and binary_ops.def. Each functor
// has a templated call operator (CPU, CUDA, HIP) and a `source` string with
// the same expression (the OpenCL emitter), so an op's semantics exist once.
// Functors take the op's float parameters (p0, p1) at construction.
#pragma once

#include "oar/kp/math.h"

namespace oar::kp {

struct OpParams {
  double p0 = 0, p1 = 0;
};

#define OAR_KP_UNARY(name, expr)                                    \
  struct name##_op {                                                \
    double p0 = 0, p1 = 0;                                          \
    static constexpr const char* op_name = #name;                   \
    static constexpr const char* source = #expr;                    \
    static constexpr int arity = 1;                                 \
    template <class T>                                              \
    OAR_KP_HD T operator()(T x) const {                             \
      using namespace ::oar::kp::math;                              \
      (void)p0;                                                     \
      (void)p1;                                                     \
      return static_cast<T>(expr);                                  \
    }                                                               \
  };
#include "oar/kp/unary_ops.def"
#undef OAR_KP_UNARY

#define OAR_KP_BINARY(name, expr)                                   \
  struct name##_op {                                                \
    double p0 = 0, p1 = 0;                                          \
    static constexpr const char* op_name = #name;                   \
    static constexpr const char* source = #expr;                    \
    static constexpr int arity = 2;                                 \
    static constexpr bool is_compare = false;                       \
    template <class T>                                              \
    OAR_KP_HD T operator()(T a, T b) const {                        \
      using namespace ::oar::kp::math;                              \
      (void)p0;                                                     \
      (void)p1;                                                     \
      return static_cast<T>(expr);                                  \
    }                                                               \
  };
#define OAR_KP_COMPARE(name, expr)                                  \
  struct name##_op {                                                \
    double p0 = 0, p1 = 0;                                          \
    static constexpr const char* op_name = #name;                   \
    static constexpr const char* source = #expr;                    \
    static constexpr int arity = 2;                                 \
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

}  // namespace oar::kp
