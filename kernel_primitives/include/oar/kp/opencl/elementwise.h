// OpenCL backend of the kernel primitives, part 3: the elementwise
// primitive. `elementwise_source` emits a kernel that evaluates one
// expression per element over strided, broadcast operands;
// `functor_spec` feeds it an op functor's own expression text (the
// `source` member generated from unary_ops.def / binary_ops.def), which is
// how the OpenCL plugin gets every functor without writing its semantics again.
//
// Kernel signature (what a plugin passes, in order):
//   __global Y_t* y, long y_off, then per input __global const Xk_t* xk, long xk_off,
//   then `params` (scalars), then the by-value layout struct (kp::opencl::pack_layout
//   of [Y, X0, ...]), then long n (elements).
#pragma once

#include <string>
#include <vector>

#include "oar/kp/family_sources.h"
#include "oar/kp/opencl/strided.h"
#include "oar/kp/opencl/types.h"

namespace oar::kp::opencl {

struct ElementwiseSpec {
  std::string name;                 // kernel name
  oar_dtype_t out = OAR_DTYPE_F32;  // Y's dtype
  std::vector<oar_dtype_t> ins;     // X0, X1, ... dtypes
  std::vector<std::string> vars;    // the expression's name for each input's compute value
  std::vector<std::string> params;  // extra scalar kernel parameters, e.g. "X0_c p0"
  std::string defs;                 // source placed before the kernel (helpers, #defines)
  std::string expr;                 // the value stored into Y
  int rank = 1;                     // coalesced rank (kp::opencl::source_rank)
  bool raw = false;                 // move storage values untouched (copy): no load/store conversion
};

inline std::string elementwise_source(const ElementwiseSpec& s, bool fp64) {
  const int nops = 1 + int(s.ins.size());
  std::string src = prelude(fp64) + operand_defs("Y", s.out);
  for (size_t k = 0; k < s.ins.size(); ++k) src += operand_defs(std::string("X").append(std::to_string(k)), s.ins[k]);
  src += layout_source(s.rank, nops) + s.defs + "\n";
  const std::string layout = layout_type(s.rank, nops);
  src += "__kernel void " + s.name + "(__global Y_t* y, long y_off";
  for (size_t k = 0; k < s.ins.size(); ++k) {
    std::string K = std::to_string(k);
    src += ", __global const X" + K + "_t* x" + K + "p, long x" + K + "_off";
  }
  for (const auto& p : s.params) src += ", " + p;
  src += ", const " + layout + " L, long n) {\n";
  src += "  long i = get_global_id(0);\n  if (i >= n) return;\n";
  src += "  long off[" + std::to_string(nops) + "];\n  " + layout + "_offsets(L, i, off);\n";
  for (size_t k = 0; k < s.ins.size(); ++k) {
    std::string K = std::to_string(k);
    std::string at = "x" + K + "_off + off[" + std::to_string(k + 1) + "]";
    if (s.raw) src += "  X" + K + "_t " + s.vars[k] + " = x" + K + "p[" + at + "];\n";
    else src += "  X" + K + "_c " + s.vars[k] + " = X" + K + "_LOAD(x" + K + "p, " + at + ");\n";
  }
  if (s.raw) src += "  y[y_off + off[0]] = (" + s.expr + ");\n}\n";
  else src += "  Y_STORE(y, y_off + off[0], (" + s.expr + "));\n}\n";
  return src;
}

// `T(v)` in a functor expression casts to the compute type of the first
// input; integer compute types get the integer pow of kp::math, floating ones
// the special functions (oar_digamma, ...) that OpenCL C lacks when the
// expression calls one.
inline std::string functor_defs(oar_dtype_t compute_of, const std::string& expr = "") {
  std::string d = "#define T(v) ((X0_c)(v))\n";
  if (!type_info(compute_of).floating) d += "#define pow(a, b) ((X0_c)oar_ipow((long)(a), (long)(b)))\n";
  else if (expr.find("oar_") != std::string::npos) d += std::string("#define KP_S X0_c\n#define KP_SPECIAL_FN inline\n") + family::family_source("special_math") + "\n";
  return d;
}

// The kernel of functor Op (kp/functors.h) at one dtype: arity 1 reads `x`,
// arity 2 `a` and `b`; the output has the input dtype, or bool for a
// comparison. p0/p1 are the functor's float parameters, passed in the compute type.
template <class Op>
ElementwiseSpec functor_spec(const std::string& kernel_name, oar_dtype_t dtype, int rank) {
  const int arity = Op::arity;
  const bool is_compare = Op::is_compare;
  const char* functor_expr = Op::source;
  ElementwiseSpec s;
  s.name = kernel_name;
  s.out = is_compare ? OAR_DTYPE_BOOL : dtype;
  s.ins.assign(size_t(arity), dtype);
  s.vars = arity == 1 ? std::vector<std::string>{"x"} : std::vector<std::string>{"a", "b"};
  s.params = {"const X0_c p0", "const X0_c p1"};
  s.defs = functor_defs(dtype, functor_expr);
  s.expr = is_compare ? "(" + std::string(functor_expr) + ") ? 1 : 0" : std::string(functor_expr);
  s.rank = rank;
  return s;
}

}  // namespace oar::kp::opencl
