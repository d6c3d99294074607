// Vector forms of the C math functions for the CPU's elementwise loops. glibc
// ships them (libmvec: _ZGVbN4v_expf, ...; 4 ULP at most) but math.h declares
// them only under -ffast-math, whose other assumptions (no NaN, no infinity)
// oar's ops cannot make. Declaring the same functions here with GCC's simd
// attribute lets the `omp simd` loops of kp/cpu/elementwise.h call them on
// whole vectors while NaN and infinity keep their meaning. The vector width
// is the loop's target: 4 floats on the x86-64 baseline the plugins are built
// for, 8 or 16 in loops compiled per ISA level (kp/cpu/isa_clones.h), which
// call the AVX2 or AVX-512 variants (_ZGVdN8v_expf, _ZGVeN16v_expf).
// Elsewhere (other compilers, other ISAs) this header declares nothing and
// the loops call the scalar functions.
#pragma once

#include <cmath>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__FAST_MATH__) && \
    !defined(__CUDACC__) && !defined(__HIPCC__)
#define OAR_KP_SIMD_MATH __attribute__((__simd__("notinbranch")))
extern "C" {
#define OAR_KP_VECTOR_MATH_1(name)                 \
  double name(double) noexcept OAR_KP_SIMD_MATH; \
  float name##f(float) noexcept OAR_KP_SIMD_MATH;
#define OAR_KP_VECTOR_MATH_2(name)                         \
  double name(double, double) noexcept OAR_KP_SIMD_MATH; \
  float name##f(float, float) noexcept OAR_KP_SIMD_MATH;
OAR_KP_VECTOR_MATH_1(exp)
OAR_KP_VECTOR_MATH_1(exp2)
OAR_KP_VECTOR_MATH_1(expm1)
OAR_KP_VECTOR_MATH_1(log)
OAR_KP_VECTOR_MATH_1(log2)
OAR_KP_VECTOR_MATH_1(log10)
OAR_KP_VECTOR_MATH_1(log1p)
OAR_KP_VECTOR_MATH_1(sin)
OAR_KP_VECTOR_MATH_1(cos)
OAR_KP_VECTOR_MATH_1(tan)
OAR_KP_VECTOR_MATH_1(asin)
OAR_KP_VECTOR_MATH_1(acos)
OAR_KP_VECTOR_MATH_1(atan)
OAR_KP_VECTOR_MATH_1(sinh)
OAR_KP_VECTOR_MATH_1(cosh)
OAR_KP_VECTOR_MATH_1(tanh)
OAR_KP_VECTOR_MATH_1(asinh)
OAR_KP_VECTOR_MATH_1(acosh)
OAR_KP_VECTOR_MATH_1(atanh)
OAR_KP_VECTOR_MATH_1(erf)
OAR_KP_VECTOR_MATH_1(erfc)
OAR_KP_VECTOR_MATH_1(cbrt)
OAR_KP_VECTOR_MATH_2(atan2)
OAR_KP_VECTOR_MATH_2(pow)
OAR_KP_VECTOR_MATH_2(hypot)
#undef OAR_KP_VECTOR_MATH_1
#undef OAR_KP_VECTOR_MATH_2
}
#undef OAR_KP_SIMD_MATH
#endif
