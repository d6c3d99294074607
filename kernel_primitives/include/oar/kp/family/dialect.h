// The kernel dialect of the single-source op families (softmax, losses,
// normalisation, pooling, indexing, shape ops), C++/CUDA/HIP side. A family's
// device code lives in one `<family>.kp` file written in a small common
// subset of C that compiles three ways:
//   - as C++ inside a class template (kp/family/kernels.h), for the CPU loop
//     and, with nvcc/hipcc, for CUDA/HIP device code;
//   - as OpenCL C, where the same text is embedded and prefixed with
//     kp/opencl/family.h's definitions of the same macros.
// Each kernel is a *lane* function: the work of one independent lane (a
// softmax row, a loss position, a pooled output element). A lane is run by
// one thread (first = 0, step = 1), or cooperatively by a group of threads
// (first = thread in group, step = group size) that combine partial results
// with KP_GROUP_SUM / KP_GROUP_MAX: a block reduction on GPUs, a work-group
// reduction in OpenCL, nothing on the CPU.
//
// Vocabulary a .kp file may use (and nothing else):
//   types    T_t (storage of the floating/data operand), T_c (its compute type),
//            T_acc (its accumulator), I_t (index storage), kp_i64, kp_u64,
//            kp_real (double, float on OpenCL devices without fp64), kp_args;
//   macros   KP_FN, KP_GLOBAL, KP_LANE_PARAMS, KP_PTR(type, k), T_LOAD/T_STORE,
//            I_LOAD, T_IS_FLOAT, KP_GROUP_SUM/MAX, KP_MAX/KP_MIN, kp_exp/log/
//            log1p/tanh/sqrt/pow/isnan, KP_INF, KP_LANE_KERNEL(name), KP_GROUP_KERNEL(name),
//            KP_P(k) (a kp_real parameter), KP_FROM_REAL(v) (v as T stores it),
//            kp_philox_uniform/normal(seed, offset, i) (kp/philox.h),
//            KP_COPY(dst, src, n) (n T_t elements, no overlap),
//            KP_KAHAN_ADD(sum, lost, v) (compensated sum += v in T_acc);
//   operands p0..p7 (raw byte pointers, already offset), scalars A.i[12], KP_F(0..7).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "oar/kp/numeric.h"
#include "oar/kp/philox.h"

namespace oar::kp::family {

// Scalar arguments of every family kernel, passed by value (a lane function
// then knows no store through its operands changes them, so reads hoist out
// of loops). The same layout
// is declared in OpenCL C (kp/opencl/family.h): 12 integers, then 8 doubles
// as their bit patterns (a device without fp64 decodes them to float), read
// in a kernel with KP_F(k).
struct kp_args {
  int64_t i[12];
  int64_t f[8];
};
static_assert(sizeof(kp_args) == 160, "kp_args layout is shared with OpenCL C");

inline int64_t param_bits(double v) {
  int64_t b;
  std::memcpy(&b, &v, sizeof(b));
  return b;
}

OAR_KP_HD double param_value(int64_t bits) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __longlong_as_double(bits);
#else
  double v;
  std::memcpy(&v, &bits, sizeof(v));
  return v;
#endif
}

inline constexpr int kOperands = 8;

// (HIP-CPU runs a block's threads as fibers with a real __syncthreads.)
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__) || defined(OAR_GPU_HIP_CPU)
#define OAR_KP_GROUP_DEVICE 1
#endif

// Group reductions: on a GPU all threads of the block run the lane together
// (step == blockDim.x); elsewhere one thread runs it and they are identities.
template <class A, class Op>
OAR_KP_HD A group_reduce(A v, [[maybe_unused]] A* scratch, [[maybe_unused]] int64_t step, [[maybe_unused]] Op op) {
#ifdef OAR_KP_GROUP_DEVICE
  if (step == 1) return v;
  const unsigned t = threadIdx.x;
  scratch[t] = v;
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (t < s) scratch[t] = op(scratch[t], scratch[t + s]);
    __syncthreads();
  }
  A r = scratch[0];
  __syncthreads();  // scratch is reused by the next reduction
  return r;
#else
  return v;
#endif
}

// A double parameter as the value a T element stores: bool is v != 0,
// integers truncate through int64 (wrapping like the CPU's casts).
template <class T>
OAR_KP_HD compute_t<T> from_real(double v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<int64_t>(v));
  else return static_cast<compute_t<T>>(v);
}

// n elements from src to dst (not overlapping): memcpy on the host and in
// CUDA/HIP device code, which both provide it.
template <class T>
OAR_KP_HD void copy_n(T* dst, const T* src, int64_t n) {
  if (n > 0) memcpy(static_cast<void*>(dst), static_cast<const void*>(src), size_t(n) * sizeof(T));
}

struct SumOp {
  template <class A> OAR_KP_HD A operator()(A a, A b) const { return a + b; }
};
// The CPU's std::max(running, v): a NaN never becomes the running maximum.
struct MaxOp {
  template <class A> OAR_KP_HD A operator()(A a, A b) const { return a < b ? b : a; }
};

}  // namespace oar::kp::family

#define KP_FN static OAR_KP_HD
#define KP_GLOBAL
#define KP_INF (T_acc(INFINITY))
#define KP_LANE_PARAMS                                                                                    \
  [[maybe_unused]] kp_i64 lane, [[maybe_unused]] kp_i64 first, [[maybe_unused]] kp_i64 step, [[maybe_unused]] T_acc *kp_scratch, \
      [[maybe_unused]] char *p0, [[maybe_unused]] char *p1, [[maybe_unused]] char *p2,                    \
      [[maybe_unused]] char *p3, [[maybe_unused]] char *p4, [[maybe_unused]] char *p5,                    \
      [[maybe_unused]] char *p6, [[maybe_unused]] char *p7, [[maybe_unused]] const kp_args A
#define KP_LANE_NAMES lane, first, step, kp_scratch, p0, p1, p2, p3, p4, p5, p6, p7, A
#define KP_PTR(type, k) (reinterpret_cast<type*>(p##k))
#define T_LOAD(p, i) (static_cast<T_c>((p)[i]))
#define T_STORE(p, i, v) ((p)[i] = static_cast<T_t>(static_cast<T_c>(v)))
#define I_LOAD(p, i) (static_cast<kp_i64>((p)[i]))
#define KP_P(k) (::oar::kp::family::param_value(A.f[k]))
#define KP_F(k) (static_cast<T_acc>(KP_P(k)))
#define KP_FROM_REAL(v) (::oar::kp::family::from_real<T_t>(v))
#define kp_philox_uniform(seed, off, i) (::oar::kp::philox_uniform((seed), (off), (i)))
#define kp_philox_normal(seed, off, i) (::oar::kp::philox_normal((seed), (off), (i)))
#define T_IS_FLOAT (::oar::kp::is_floating_v<T_t>)
#define KP_GROUP_SUM(v) (::oar::kp::family::group_reduce<T_acc>((v), kp_scratch, step, ::oar::kp::family::SumOp{}))
#define KP_GROUP_MAX(v) (::oar::kp::family::group_reduce<T_acc>((v), kp_scratch, step, ::oar::kp::family::MaxOp{}))
#define KP_MAX(a, b) ((a) < (b) ? (b) : (a))
#define KP_MIN(a, b) ((b) < (a) ? (b) : (a))
#define KP_KAHAN_ADD(sum, lost, v) \
  do { const T_acc kp_term = (v) - (lost), kp_t = (sum) + kp_term; (lost) = (kp_t - (sum)) - kp_term; (sum) = kp_t; } while (0)
#define kp_exp(x) (::std::exp(x))
#define kp_log(x) (::std::log(x))
#define kp_log1p(x) (::std::log1p(x))
#define kp_tanh(x) (::std::tanh(x))
#define kp_sqrt(x) (::std::sqrt(x))
#define kp_pow(x, y) (::std::pow((x), (y)))
#define kp_isnan(x) ((x) != (x))
#define KP_COPY(dst, src, n) (::oar::kp::family::copy_n((dst), (src), (n)))

// A lane kernel: a functor the CPU loop and the GPU launch templates call,
// named like the OpenCL kernel the same macro emits there.
#define KP_LANE_KERNEL(name)                                          \
  struct name##_k {                                                   \
    using acc_type = T_acc;                                           \
    static constexpr const char* kName = #name;                       \
    OAR_KP_HD void operator()(KP_LANE_PARAMS) const { name(KP_LANE_NAMES); } \
  };
#define KP_GROUP_KERNEL(name) KP_LANE_KERNEL(name)

// Opens a family's kernel class: the types a .kp file is written against.
#define OAR_KP_FAMILY_TYPES(TT, IT, ACC)                    \
  using T_t = TT;                                           \
  using T_c = ::oar::kp::compute_t<TT>;                     \
  using T_acc = ACC;                                        \
  using I_t = IT;                                           \
  using kp_i64 = int64_t;                                   \
  using kp_u64 = uint64_t;                                  \
  using kp_real = double;                                   \
  using kp_args = ::oar::kp::family::kp_args;
