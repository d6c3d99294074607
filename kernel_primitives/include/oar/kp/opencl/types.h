// OpenCL backend of the kernel primitives, part 1: how each oar dtype is
// stored and computed in OpenCL C. Every emitted kernel names its operands
// (Y, X0, X1, ...) and gets, per operand, a storage type `P_t`, a compute type
// `P_c` and `P_LOAD(ptr, i)` / `P_STORE(ptr, i, v)` macros. f16 is stored as
// `half` and moved with vload_half/vstore_half (core OpenCL, no cl_khr_fp16
// needed), bf16 as ushort; both compute in float, as on the CPU
// (kp::compute_t). These are C++ functions returning source text, so a plugin
// needs no OpenCL headers to use them and the text is testable on its own.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include "oar/abi/oar_abi_types.h"

namespace oar::kp::opencl {

struct TypeInfo {
  const char* storage;  // element type in a __global buffer
  const char* compute;  // type arithmetic happens in (kp::compute_t)
  const char* accumulate;  // reductions (kp::accumulate_t, with fp64 when present)
  bool floating;
};

inline const TypeInfo& type_info(oar_dtype_t dtype) {
  static const TypeInfo table[OAR_DTYPE_COUNT] = {
      {"float", "float", "double", true},      // F32
      {"double", "double", "double", true},    // F64
      {"half", "float", "double", true},       // F16
      {"ushort", "float", "double", true},     // BF16
      {"char", "char", "long", false},         // I8
      {"uchar", "uchar", "long", false},       // U8
      {"int", "int", "long", false},           // I32
      {"long", "long", "long", false},         // I64
      {"uchar", "uchar", "long", false},       // BOOL
  };
  if (dtype < 0 || dtype >= OAR_DTYPE_COUNT) throw std::invalid_argument("invalid dtype " + std::to_string(dtype));
  return table[dtype];
}

// Source that must open every program: fp64 when the device has it, and the
// bf16 conversions (round to nearest even, NaN kept quiet, as kp::bfloat16).
inline std::string prelude(bool fp64) {
  std::string s;
  if (fp64) s += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#define OAR_HAS_FP64 1\n";
  s += R"CLC(
inline float oar_bf16_to_float(ushort b) { return as_float(((uint)b) << 16); }
inline ushort oar_float_to_bf16(float f) {
  uint u = as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return (ushort)(u >> 16);
}
/* Integer power by squaring; negative exponents truncate like kp::math::pow. */
inline long oar_ipow(long a, long b) {
  if (b < 0) return a == 1 ? 1 : (a == -1 ? ((b & 1) ? -1 : 1) : 0);
  long r = 1;
  while (b) { if (b & 1) r *= a; a *= a; b >>= 1; }
  return r;
}
)CLC";
  return s;
}

// The typedefs and load/store macros of operand `p` (see the file comment).
inline std::string operand_defs(const std::string& p, oar_dtype_t dtype) {
  const TypeInfo& t = type_info(dtype);
  std::string s = "typedef " + std::string(t.storage) + " " + p + "_t;\n";
  s += "typedef " + std::string(t.compute) + " " + p + "_c;\n";
  if (!t.floating) s += "typedef long " + p + "_acc;\n";
  else s += "#ifdef OAR_HAS_FP64\ntypedef double " + p + "_acc;\n#else\ntypedef float " + p + "_acc;\n#endif\n";
  switch (dtype) {
    case OAR_DTYPE_F16:
      s += "#define " + p + "_LOAD(ptr, i) vload_half((i), (ptr))\n";
      s += "#define " + p + "_STORE(ptr, i, v) vstore_half_rte((float)(v), (i), (ptr))\n";
      break;
    case OAR_DTYPE_BF16:
      s += "#define " + p + "_LOAD(ptr, i) oar_bf16_to_float((ptr)[i])\n";
      s += "#define " + p + "_STORE(ptr, i, v) ((ptr)[i] = oar_float_to_bf16((float)(v)))\n";
      break;
    case OAR_DTYPE_BOOL:
      s += "#define " + p + "_LOAD(ptr, i) ((ptr)[i])\n";
      s += "#define " + p + "_STORE(ptr, i, v) ((ptr)[i] = (uchar)((v) != 0))\n";
      break;
    default:
      s += "#define " + p + "_LOAD(ptr, i) ((ptr)[i])\n";
      s += "#define " + p + "_STORE(ptr, i, v) ((ptr)[i] = (" + p + "_t)(v))\n";
  }
  return s;
}

// OpenCL C for "convert compute value v of a float type to integer type I"
// with the CPU's cast rule: truncation toward zero, NaN and |v| >= 9.2e18 give 0.
inline std::string float_to_int_expr(const std::string& v, const std::string& int_type) {
  return "((" + v + ") != (" + v + ") || (" + v + ") >= 9.2e18f || (" + v + ") <= -9.2e18f ? (" + int_type +
         ")0 : (" + int_type + ")(long)(" + v + "))";
}

}  // namespace oar::kp::opencl
