// OpenCL softmax / log_softmax and their backward ops along any dim, with the
// CPU plugin's semantics (its reference loops: max-shifted exponentials,
// statistics in double where the device has fp64). The dense input is seen
// as [outer, D, inner], reduced over D for each of the outer * inner lanes.
// Two launch shapes over one program per dtype: a work-group per lane (the
// lane's D elements reduced in local memory; rows of a last-dim softmax are
// contiguous) or, when lanes are many and strided (inner > 1), a work-item per
// lane looping over D, so neighbouring items read neighbouring elements.
#include "launch.h"
#include "oar/plugin_sdk/op_geometry.hpp"
#include "oar/kp/opencl/nn.h"
#include "ops/ops.h"

namespace oar_ocl {

namespace {

using namespace oar;
namespace kcl = oar::kp::opencl;

struct SoftmaxGeom {
  int64_t outer = 1, d = 1, inner = 1;
};

SoftmaxGeom geometry(const sdk::KernelArgs& a) {
  SoftmaxGeom g;
  sdk::AxisExtents e = sdk::axis_extents(a.input(0), a.attr_int("dim"));
  g.outer = e.outer, g.d = e.d, g.inner = e.inner;
  return g;
}

// The bodies are written once for both launch shapes: a lane's items start
// at `first` and step by `step`; RMAX / RSUM combine the items' partial
// results (the work-group reductions, or nothing for a single item). Forward
// and backward are separate kernels, not a branch on an argument: PoCL 3.1
// miscompiles barriers inside such a branch (measured: out-of-bounds stores).
std::string softmax_source(oar_dtype_t dt, bool fp64) {
  std::string s = kcl::prelude(fp64) + kcl::operand_defs("T", dt) + kcl::group_reduce_source("T_acc");
  s += R"CLC(
#define LD(p, off, j) ((T_acc)T_LOAD(p, (off) + base + (j) * inner))
#define SM_FORWARD(first, step, RMAX, RSUM)                                         \
  const long base = (lane / inner) * D * inner + lane % inner;                      \
  T_acc mx = -INFINITY, sum = 0;                                                    \
  for (long j = (first); j < D; j += (step)) mx = fmax(mx, LD(a, a_off, j));        \
  mx = RMAX(mx);                                                                    \
  for (long j = (first); j < D; j += (step)) sum += exp(LD(a, a_off, j) - mx);      \
  sum = RSUM(sum);                                                                  \
  const T_acc lsum = log(sum);                                                      \
  for (long j = (first); j < D; j += (step)) {                                      \
    const T_acc v = LD(a, a_off, j) - mx;                                           \
    T_STORE(y, y_off + base + j * inner, log_mode ? v - lsum : exp(v) / sum);       \
  }
/* a = grad_y, b = y */
#define SM_BACKWARD(first, step, RSUM)                                              \
  const long base = (lane / inner) * D * inner + lane % inner;                      \
  T_acc t = 0;                                                                      \
  for (long j = (first); j < D; j += (step))                                        \
    t += log_mode ? LD(a, a_off, j) : LD(a, a_off, j) * LD(b, b_off, j);            \
  t = RSUM(t);                                                                      \
  for (long j = (first); j < D; j += (step)) {                                      \
    const T_acc g = LD(a, a_off, j), yv = LD(b, b_off, j);                          \
    T_STORE(y, y_off + base + j * inner, log_mode ? g - exp(yv) * t : yv * (g - t)); \
  }

#define SM_PARAMS __global T_t* y, long y_off, __global const T_t* a, long a_off, __global const T_t* b, \
  long b_off, long lanes, long D, long inner, int log_mode
#define GMAX(v) oar_wg_max(v, sc)
#define GSUM(v) oar_wg_sum(v, sc)
#define SAME(v) (v)

__kernel void oar_softmax_fwd_group(SM_PARAMS) {
  __local T_acc sc[OAR_G];
  const long lane = get_group_id(0), l = get_local_id(0);
  SM_FORWARD(l, OAR_G, GMAX, GSUM)
}
__kernel void oar_softmax_bwd_group(SM_PARAMS) {
  __local T_acc sc[OAR_G];
  const long lane = get_group_id(0), l = get_local_id(0);
  SM_BACKWARD(l, OAR_G, GSUM)
}
__kernel void oar_softmax_fwd_lane(SM_PARAMS) {
  const long lane = get_global_id(0);
  if (lane >= lanes) return;
  SM_FORWARD(0, 1, SAME, SAME)
}
__kernel void oar_softmax_bwd_lane(SM_PARAMS) {
  const long lane = get_global_id(0);
  if (lane >= lanes) return;
  SM_BACKWARD(0, 1, SAME)
}
)CLC";
  return s;
}

template <bool kLog, bool kBackward>
oar_status_t softmax_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const oar_tensor_view& y = a.output(0);
    if (sdk::numel(y) == 0) return;
    const oar_tensor_view& in0 = a.input(0);
    const oar_tensor_view& in1 = a.input(kBackward ? 1 : 0);
    if (!kcl::is_dense(y) || !kcl::is_dense(in0) || !kcl::is_dense(in1))
      sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(a.context().op_name) + ": OpenCL kernel expects dense operands");
    SoftmaxGeom g = geometry(a);
    OpContext c = op_context(a);
    const oar_dtype_t dt = y.dtype;
    const int64_t lanes = g.outer * g.inner;
    // A group per lane unless lanes are strided and plentiful enough to fill
    // the device one item each (or too short to feed a group).
    const bool per_item = g.inner > 1 && (lanes >= 1024 || g.d <= 16);
    // The cache keys kernels, not programs: the key names the kernel too.
    const char* name = per_item ? (kBackward ? "oar_softmax_bwd_lane" : "oar_softmax_fwd_lane")
                                : (kBackward ? "oar_softmax_bwd_group" : "oar_softmax_fwd_group");
    cl_kernel k = get_kernel(c.dev, "nn/softmax:" + std::to_string(dt) + ":" + name,
                             [&] { return softmax_source(dt, c.dev.fp64); }, name);
    Launch l(k);
    l.view(y).view(in0).view(in1);
    l.scalar<cl_long>(lanes).scalar<cl_long>(g.d).scalar<cl_long>(g.inner);
    l.scalar<cl_int>(kLog ? 1 : 0);
    if (per_item) l.run(c.queue, size_t(lanes));
    else l.run(c.queue, size_t(lanes) * kcl::kNNGroup, kcl::kNNGroup);
  });
}

template <bool kLog, bool kBackward>
oar_status_t register_softmax(const oar_kernel_registrar* r, const char* op) {
  for (oar_dtype_t d : sdk::kFloatDTypes) {
    oar_status_t st = kBackward ? sdk::register_kernel(r, op, {d, d}, softmax_kernel<kLog, kBackward>, "opencl")
                                : sdk::register_kernel(r, op, {d}, softmax_kernel<kLog, kBackward>, "opencl");
    if (st) return st;
  }
  return OAR_STATUS_OK;
}

}  // namespace

oar_status_t register_softmax_kernels(const oar_kernel_registrar* r) {
  if (auto st = register_softmax<false, false>(r, "softmax")) return st;
  if (auto st = register_softmax<false, true>(r, "softmax_backward")) return st;
  if (auto st = register_softmax<true, false>(r, "log_softmax")) return st;
  return register_softmax<true, true>(r, "log_softmax_backward");
}

}  // namespace oar_ocl
