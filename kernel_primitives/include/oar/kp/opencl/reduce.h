// OpenCL backend of the kernel primitives, part 4: the reduce primitive. One
// work-group per output element: work-items stride over the reduced range,
// each folding elements with the reducer's `step`, then a tree in local
// memory merges them with `combine` and item 0 stores `finish`. The reducers
// are the OpenCL spelling of kp/reducers.h (same identities, NaN rules,
// first-index ties, Welford/Chan variance) and are checked against the CPU
// by the op tests. Geometry (kept and reduced dims with their strides) comes
// from kp::cpu::make_reduce_geometry, the CPU's own, packed into one struct.
#pragma once

#include <string>
#include <vector>

#include "oar/kp/reduce_ops.h"

#include "oar/kp/opencl/types.h"
#include "oar/kp/strided.h"

namespace oar::kp::opencl {

using kp::ReduceKind;

inline int reduce_rank(size_t ndim) { return ndim <= 1 ? 1 : (ndim <= 4 ? 4 : kMaxDims); }

// Per-dtype extreme values (the identities of max and min).
inline std::string lowest_of(oar_dtype_t d) {
  switch (d) {
    case OAR_DTYPE_I8: return "((char)-128)";
    case OAR_DTYPE_U8: case OAR_DTYPE_BOOL: return "((uchar)0)";
    case OAR_DTYPE_I32: return "INT_MIN";
    case OAR_DTYPE_I64: return "LONG_MIN";
    default: return "(-INFINITY)";
  }
}
inline std::string highest_of(oar_dtype_t d) {
  switch (d) {
    case OAR_DTYPE_I8: return "((char)127)";
    case OAR_DTYPE_U8: return "((uchar)255)";
    case OAR_DTYPE_BOOL: return "((uchar)1)";
    case OAR_DTYPE_I32: return "INT_MAX";
    case OAR_DTYPE_I64: return "LONG_MAX";
    default: return "INFINITY";
  }
}

// The reducer: type ACC and functions r_init(), r_step(acc, x, index),
// r_combine(a, b), and the macro R_FINISH(acc, n) giving the stored value.
inline std::string reducer_source(ReduceKind kind, oar_dtype_t in) {
  const bool fl = type_info(in).floating;
  std::string nan_a = fl ? "(a != a)" : "(0)", nan_b = fl ? "(b != b)" : "(0)";
  switch (kind) {
    case ReduceKind::kSum:
    case ReduceKind::kMean:
    case ReduceKind::kProd: {
      std::string op = kind == ReduceKind::kProd ? "*" : "+";
      std::string s = "typedef X0_acc ACC;\n";
      s += std::string("inline ACC r_init(void) { return (ACC)") + (kind == ReduceKind::kProd ? "1" : "0") + "; }\n";
      s += "inline ACC r_step(ACC a, X0_c x, long i) { return a " + op + " (ACC)x; }\n";
      s += "inline ACC r_combine(ACC a, ACC b) { return a " + op + " b; }\n";
      s += kind == ReduceKind::kMean ? "#define R_FINISH(a, n) ((n) ? (a) / (ACC)(n) : (ACC)NAN)\n" : "#define R_FINISH(a, n) (a)\n";
      return s;
    }
    case ReduceKind::kVar:
      return R"CLC(
typedef struct { X0_acc mean; X0_acc m2; long n; } ACC;
inline ACC r_init(void) { ACC a; a.mean = 0; a.m2 = 0; a.n = 0; return a; }
inline ACC r_step(ACC a, X0_c x, long i) {
  a.n += 1;
  X0_acc d = (X0_acc)x - a.mean;
  a.mean += d / (X0_acc)a.n;
  a.m2 += d * ((X0_acc)x - a.mean);
  return a;
}
inline ACC r_combine(ACC a, ACC b) {
  if (a.n == 0) return b;
  if (b.n == 0) return a;
  long n = a.n + b.n;
  X0_acc d = b.mean - a.mean;
  ACC r;
  r.n = n;
  r.mean = a.mean + d * (X0_acc)b.n / (X0_acc)n;
  r.m2 = a.m2 + b.m2 + d * d * (X0_acc)a.n * (X0_acc)b.n / (X0_acc)n;
  return r;
}
#define R_FINISH(acc_, count_) ((acc_).n - correction > 0 ? (acc_).m2 / (X0_acc)((acc_).n - correction) : (X0_acc)NAN)
)CLC";
    case ReduceKind::kMax:
    case ReduceKind::kMin: {
      bool mx = kind == ReduceKind::kMax;
      std::string s = "typedef X0_c ACC;\n";
      s += "inline ACC r_init(void) { return " + (mx ? lowest_of(in) : highest_of(in)) + "; }\n";
      s += "inline ACC r_combine(ACC a, ACC b) {\n  if " + nan_a + " return a;\n  if " + nan_b + " return b;\n";
      s += std::string("  return ") + (mx ? "b > a" : "b < a") + " ? b : a;\n}\n";
      s += "inline ACC r_step(ACC a, X0_c x, long i) { return r_combine(a, x); }\n#define R_FINISH(a, n) (a)\n";
      return s;
    }
    case ReduceKind::kArgMax:
    case ReduceKind::kArgMin: {
      bool mx = kind == ReduceKind::kArgMax;
      std::string s = "typedef struct { X0_c value; long index; } ACC;\n";
      s += "inline ACC r_init(void) { ACC a; a.value = 0; a.index = -1; return a; }\n";
      s += "inline ACC r_combine(ACC a, ACC b) {\n  if (a.index < 0) return b;\n  if (b.index < 0) return a;\n";
      s += "  int an = " + std::string(fl ? "a.value != a.value" : "0") + ", bn = " + (fl ? "b.value != b.value" : "0") + ";\n";
      s += "  if (an || bn) {\n    if (an && bn) return a.index < b.index ? a : b;\n    return an ? a : b;\n  }\n";
      s += std::string("  int better = ") + (mx ? "b.value > a.value" : "b.value < a.value") + ";\n";
      s += "  if (better || (b.value == a.value && b.index < a.index)) return b;\n  return a;\n}\n";
      s += "inline ACC r_step(ACC a, X0_c x, long i) { ACC b; b.value = x; b.index = i; return r_combine(a, b); }\n";
      s += "#define R_FINISH(acc_, count_) ((acc_).index)\n";
      return s;
    }
  }
  return "";
}

// Kernel `oar_reduce(y, y_off, x, x_off, geometry, n_out, n_red, correction)`,
// launched with global = n_out * group and local = group.
inline std::string reduce_source(ReduceKind kind, oar_dtype_t in, oar_dtype_t out, int kept_rank, int red_rank,
                                 int group, bool fp64) {
  std::string K = std::to_string(kept_rank), R = std::to_string(red_rank), G = std::to_string(group);
  std::string s = prelude(fp64) + operand_defs("Y", out) + operand_defs("X0", in) + reducer_source(kind, in);
  s += "typedef struct { long kshape[" + K + "]; long kin[" + K + "]; long kout[" + K + "]; long rshape[" + R +
       "]; long rin[" + R + "]; } oar_rgeom;\n";
  s += "__kernel __attribute__((reqd_work_group_size(" + G + ", 1, 1)))\n";
  s += "void oar_reduce(__global Y_t* y, long y_off, __global const X0_t* x, long x_off, const oar_rgeom g,\n"
       "                long n_out, long n_red, long correction) {\n";
  s += "  __local ACC part[" + G + "];\n";
  s += "  long o = get_group_id(0);\n  int lid = get_local_id(0);\n";
  s += "  long in_base = x_off, out_off = y_off, q = o;\n";
  s += "  for (int d = " + K + " - 1; d >= 0; --d) { long i = q % g.kshape[d]; q /= g.kshape[d];"
       " in_base += i * g.kin[d]; out_off += i * g.kout[d]; }\n";
  s += "  ACC acc = r_init();\n";
  s += "  for (long r = lid; r < n_red; r += " + G + ") {\n";
  s += "    long off = in_base, t = r;\n";
  s += "    for (int d = " + R + " - 1; d >= 0; --d) { off += (t % g.rshape[d]) * g.rin[d]; t /= g.rshape[d]; }\n";
  s += "    acc = r_step(acc, X0_LOAD(x, off), r);\n  }\n";
  s += "  part[lid] = acc;\n  barrier(CLK_LOCAL_MEM_FENCE);\n";
  s += "  for (int w = " + G + " / 2; w > 0; w >>= 1) {\n";
  s += "    if (lid < w) part[lid] = r_combine(part[lid], part[lid + w]);\n    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n";
  s += "  if (lid == 0) Y_STORE(y, out_off, R_FINISH(part[0], n_red));\n}\n";
  return s;
}

// The geometry struct's values, in the order reduce_source declares them
// (kept and reduced dims right-aligned, pad dims of size 1).
inline std::vector<int64_t> pack_reduce_geometry(const std::vector<int64_t>& kshape, const std::vector<int64_t>& kin,
                                                 const std::vector<int64_t>& kout, const std::vector<int64_t>& rshape,
                                                 const std::vector<int64_t>& rin) {
  const int K = reduce_rank(kshape.size()), R = reduce_rank(rshape.size());
  std::vector<int64_t> v;
  auto put = [&](const std::vector<int64_t>& src, int rank, int64_t fill) {
    for (int d = 0; d < rank - int(src.size()); ++d) v.push_back(fill);
    v.insert(v.end(), src.begin(), src.end());
  };
  put(kshape, K, 1);
  put(kin, K, 0);
  put(kout, K, 0);
  put(rshape, R, 1);
  put(rin, R, 0);
  return v;
}

}  // namespace oar::kp::opencl
