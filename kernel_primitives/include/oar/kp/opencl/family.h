// OpenCL backend of the kernel primitives: programs of the
// single-source op families. A family's .kp file (kp/family/dialect.h says
// what it may use) is embedded in the plugin at build time
// (kp/family_sources.h, generated) and compiled here as OpenCL C after the
// OpenCL spelling of the dialect: T (data) and I (index) operand definitions,
// the work-group reductions of kp/opencl/nn.h, and KP_LANE_KERNEL /
// KP_GROUP_KERNEL emitting the kernels a plugin launches:
//   <name>_lanes(8 x (__global char* p, long byte_offset), kp_args A, long n)
//       one work-item per lane;
//   <name>_groups(same)  one work-group of kNNGroup items per lane.
#pragma once

#include <string>

#include "oar/kp/opencl/nn.h"
#include "oar/kp/opencl/random.h"
#include "oar/kp/opencl/types.h"

namespace oar::kp::opencl {

inline std::string family_dialect_source() {
  return R"CLC(
#define KP_FN inline
#define KP_GLOBAL __global
typedef long kp_i64;
typedef ulong kp_u64;
typedef oar_real kp_real;
#define kp_philox_uniform(seed, off, i) oar_philox_uniform((seed), (off), (i))
#define kp_philox_normal(seed, off, i) oar_philox_normal((seed), (off), (i))
typedef struct { long i[12]; long f[8]; } kp_args;
#ifdef OAR_HAS_FP64
#define KP_P(k) as_double(A.f[k])
#else
/* A double's bits as float (subnormals flush to zero). */
inline float kp_param_value(long b) {
  const int e = (int)((b >> 52) & 0x7ff);
  const float sign = b < 0 ? -1.0f : 1.0f;
  if (e == 0) return 0.0f * sign;
  if (e == 0x7ff) return (b & 0xfffffffffffffL) ? NAN : sign * INFINITY;
  return sign * ldexp(1.0f + (float)((b >> 29) & 0x7fffff) / 8388608.0f, e - 1023);
}
#define KP_P(k) kp_param_value(A.f[k])
#endif
#define KP_F(k) ((T_acc)KP_P(k))
#define KP_LANE_PARAMS kp_i64 lane, kp_i64 first, kp_i64 step, __local T_acc* kp_scratch, __global char* p0, \
  __global char* p1, __global char* p2, __global char* p3, __global char* p4, __global char* p5, __global char* p6, \
  __global char* p7, const kp_args A
#define KP_PTR(type, k) ((__global type*)(p##k))
#define I_LOAD(p, i) ((kp_i64)(p)[i])
#define KP_INF ((T_acc)INFINITY)
#define KP_MAX(a, b) ((a) < (b) ? (b) : (a))
#define KP_MIN(a, b) ((b) < (a) ? (b) : (a))
#define KP_KAHAN_ADD(sum, lost, v) \
  do { const T_acc kp_term = (v) - (lost), kp_t = (sum) + kp_term; (lost) = (kp_t - (sum)) - kp_term; (sum) = kp_t; } while (0)
#define kp_exp(x) exp(x)
#define kp_log(x) log(x)
#define kp_log1p(x) log1p(x)
#define kp_tanh(x) tanh(x)
#define kp_sqrt(x) sqrt(x)
#define kp_pow(x, y) pow((x), (y))
#define kp_isnan(x) ((x) != (x))
#define KP_COPY(dst, src, n) for (kp_i64 kp_c = 0; kp_c < (n); ++kp_c) T_STORE(dst, kp_c, T_LOAD(src, kp_c))
/* step is a literal after inlining: the branch folds and the barriers of
   the work-group reductions are reached only by group kernels. */
#define KP_GROUP_SUM(v) ((step) == 1 ? (v) : oar_wg_sum((v), kp_scratch))
#define KP_GROUP_MAX(v) ((step) == 1 ? (v) : oar_wg_max((v), kp_scratch))
#define KP_KERNEL_PARAMS __global char* p0, long o0, __global char* p1, long o1, __global char* p2, long o2, \
  __global char* p3, long o3, __global char* p4, long o4, __global char* p5, long o5, __global char* p6, long o6, \
  __global char* p7, long o7, const kp_args A, long n
#define KP_KERNEL_OPERANDS p0 + o0, p1 + o1, p2 + o2, p3 + o3, p4 + o4, p5 + o5, p6 + o6, p7 + o7, A
#define KP_LANE_KERNEL(name)                                                  \
  __kernel void name##_lanes(KP_KERNEL_PARAMS) {                              \
    const long lane = get_global_id(0);                                       \
    if (lane >= n) return;                                                    \
    name(lane, 0, 1, 0, KP_KERNEL_OPERANDS);                                  \
  }
#define KP_GROUP_KERNEL(name)                                                 \
  KP_LANE_KERNEL(name)                                                        \
  __kernel void name##_groups(KP_KERNEL_PARAMS) {                             \
    __local T_acc scratch[OAR_G];                                             \
    name(get_group_id(0), get_local_id(0), OAR_G, scratch, KP_KERNEL_OPERANDS); \
  }
)CLC";
}

// The whole program of one family at data dtype t and index dtype i.
inline std::string family_program_source(const char* family_text, oar_dtype_t t, oar_dtype_t i, bool fp64) {
  std::string s = prelude(fp64) + operand_defs("T", t) + operand_defs("I", i);
  s += "#define T_IS_FLOAT " + std::string(type_info(t).floating ? "1" : "0") + "\n";
  s += t == OAR_DTYPE_BOOL ? "#define KP_FROM_REAL(v) ((v) != 0)\n"
       : type_info(t).floating ? "#define KP_FROM_REAL(v) (v)\n" : "#define KP_FROM_REAL(v) ((long)(v))\n";
  s += philox_source() + group_reduce_source("T_acc") + family_dialect_source() + family_text;
  return s;
}

}  // namespace oar::kp::opencl
