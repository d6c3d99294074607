// OpenCL max/avg pool2d and their backward ops over dense NCHW, with the CPU
// plugin's semantics: PyTorch's window clipping, ceil_mode and
// count_include_pad divisor; max takes the first maximum in row-major window
// order and a NaN wins outright. Forward is a work-item per output element.
// Backward gathers instead of scattering: a work-item per input element visits
// the few windows that cover it (recomputing a max window's argmax) in the
// CPU's output order, adding and rounding to the storage type after each
// contribution as the CPU's accumulation into the output does, so results
// match it bit for bit.
#include "launch.h"
#include "oar/kp/opencl/nn.h"
#include "ops/ops.h"

namespace oar_ocl {

namespace {

using namespace oar;
namespace kcl = oar::kp::opencl;

// ROUND(v): v rounded to the storage type and back (the CPU stores each partial sum).
std::string round_defs(oar_dtype_t dt) {
  switch (dt) {
    case OAR_DTYPE_F16:
      return "inline float oar_round_half(float v) {\n"
             "  ushort u;\n  vstore_half_rte(v, 0, (__private half*)&u);\n"
             "  return vload_half(0, (__private const half*)&u);\n}\n"
             "#define ROUND(v) oar_round_half(v)\n";
    case OAR_DTYPE_BF16: return "#define ROUND(v) oar_bf16_to_float(oar_float_to_bf16(v))\n";
    default: return "#define ROUND(v) (v)\n";
  }
}

std::string pool_source(oar_dtype_t dt, bool fp64) {
  std::string s = kcl::prelude(fp64) + kcl::operand_defs("T", dt) + round_defs(dt);
  s += R"CLC(
#define POOL_GEOM long planes, long H, long W, long OH, long OW, long kh, long kw, long sh, long sw, \
  long ph, long pw, int is_max, int include_pad

/* Offset within the plane of the window's first maximum: a NaN ends the scan
   (it wins); an all -inf window keeps its first element. */
inline long pool_argmax(__global const T_t* x, long base, long hb, long he, long wb, long we, long W) {
  T_c best = -INFINITY;
  long at = hb * W + wb;
  bool nan = false;
  for (long h = hb; h < he && !nan; ++h)
    for (long w = wb; w < we && !nan; ++w) {
      const T_c v = T_LOAD(x, base + h * W + w);
      if (!(v <= best)) {
        best = v;
        at = h * W + w;
        nan = v != v;
      }
    }
  return at;
}

/* The avg divisor: the clipped window, or the window within the padded input. */
inline long pool_divisor(long h0, long w0, long hb, long he, long wb, long we, long kh, long kw, long H, long W,
                         long ph, long pw, int include_pad) {
  if (!include_pad) return (he - hb) * (we - wb);
  return (min(h0 + kh, H + ph) - h0) * (min(w0 + kw, W + pw) - w0);
}

__kernel void oar_pool_fwd(__global T_t* y, long y_off, __global const T_t* x, long x_off, POOL_GEOM) {
  const long o = get_global_id(0);
  if (o >= planes * OH * OW) return;
  const long ow = o % OW, oh = (o / OW) % OH, base = x_off + (o / (OH * OW)) * H * W;
  const long h0 = oh * sh - ph, w0 = ow * sw - pw;
  const long hb = max(h0, 0L), he = min(h0 + kh, H), wb = max(w0, 0L), we = min(w0 + kw, W);
  if (is_max) {
    T_STORE(y, y_off + o, T_LOAD(x, base + pool_argmax(x, base, hb, he, wb, we, W)));
    return;
  }
  T_c sum = 0;
  for (long h = hb; h < he; ++h)
    for (long w = wb; w < we; ++w) sum += T_LOAD(x, base + h * W + w);
  T_STORE(y, y_off + o, sum / (T_c)pool_divisor(h0, w0, hb, he, wb, we, kh, kw, H, W, ph, pw, include_pad));
}

/* First window index o along an axis whose window [o*s - p, o*s - p + k) holds i. */
inline long first_window(long i, long k, long s, long p) {
  const long t = i + p - k + 1;
  return t > 0 ? (t + s - 1) / s : 0;
}

__kernel void oar_pool_bwd(__global T_t* gx, long gx_off, __global const T_t* gy, long gy_off,
                           __global const T_t* x, long x_off, POOL_GEOM) {
  const long i = get_global_id(0);
  if (i >= planes * H * W) return;
  const long w = i % W, h = (i / W) % H, plane = i / (H * W);
  const long base = x_off + plane * H * W, gbase = gy_off + plane * OH * OW;
  const long oh_end = min((h + ph) / sh + 1, OH), ow_end = min((w + pw) / sw + 1, OW);
  const long ow_first = first_window(w, kw, sw, pw);
  T_c acc = 0;
  for (long oh = first_window(h, kh, sh, ph); oh < oh_end; ++oh)
    for (long ow = ow_first; ow < ow_end; ++ow) {
      const long h0 = oh * sh - ph, w0 = ow * sw - pw;
      const long hb = max(h0, 0L), he = min(h0 + kh, H), wb = max(w0, 0L), we = min(w0 + kw, W);
      const T_c g = T_LOAD(gy, gbase + oh * OW + ow);
      if (is_max) {
        if (pool_argmax(x, base, hb, he, wb, we, W) == h * W + w) acc = ROUND(acc + g);
      } else {
        acc = ROUND(acc + g / (T_c)pool_divisor(h0, w0, hb, he, wb, we, kh, kw, H, W, ph, pw, include_pad));
      }
    }
  T_STORE(gx, gx_off + i, acc);
}
)CLC";
  return s;
}

template <bool kMax, bool kBackward>
oar_status_t pool_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const oar_tensor_view& out = a.output(0);
    const oar_tensor_view& x = a.input(kBackward ? 1 : 0);
    const oar_tensor_view& y = kBackward ? a.input(0) : out;  // pooled shape
    if (sdk::numel(out) == 0) return;
    if (!kcl::is_dense(out) || !kcl::is_dense(x) || (kBackward && !kcl::is_dense(a.input(0))))
      sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(a.context().op_name) + ": OpenCL kernel expects dense operands");
    auto k = a.attr_ints("kernel_size"), s = a.attr_ints("stride"), p = a.attr_ints("padding");
    if (s.empty()) s = k;
    const bool include_pad = !kMax && a.attr_bool("count_include_pad");
    OpContext c = op_context(a);
    const oar_dtype_t dt = out.dtype;
    // The cache keys kernels, not programs: the key names the kernel too.
    const char* name = kBackward ? "oar_pool_bwd" : "oar_pool_fwd";
    cl_kernel kern = get_kernel(c.dev, "nn/pool:" + std::to_string(dt) + ":" + name,
                                [&] { return pool_source(dt, c.dev.fp64); }, name);
    Launch l(kern);
    l.view(out);
    if (kBackward) l.view(a.input(0));
    l.view(x);
    const cl_long geom[] = {x.shape[0] * x.shape[1], x.shape[2], x.shape[3], y.shape[2], y.shape[3],
                            k.front(), k.back(), s.front(), s.back(), p.front(), p.back()};
    for (cl_long v : geom) l.scalar<cl_long>(v);
    l.scalar<cl_int>(kMax ? 1 : 0).scalar<cl_int>(include_pad ? 1 : 0);
    l.run(c.queue, size_t(sdk::numel(out)));
  });
}

template <bool kMax, bool kBackward>
oar_status_t register_pool(const oar_kernel_registrar* r, const char* op) {
  for (oar_dtype_t d : sdk::kFloatDTypes) {
    oar_status_t st = kBackward ? sdk::register_kernel(r, op, {d, d}, pool_kernel<kMax, kBackward>, "opencl")
                                : sdk::register_kernel(r, op, {d}, pool_kernel<kMax, kBackward>, "opencl");
    if (st) return st;
  }
  return OAR_STATUS_OK;
}

}  // namespace

oar_status_t register_pool_kernels(const oar_kernel_registrar* r) {
  if (auto st = register_pool<true, false>(r, "max_pool2d")) return st;
  if (auto st = register_pool<true, true>(r, "max_pool2d_backward")) return st;
  if (auto st = register_pool<false, false>(r, "avg_pool2d")) return st;
  return register_pool<false, true>(r, "avg_pool2d_backward");
}

}  // namespace oar_ocl
