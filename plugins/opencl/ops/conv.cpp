// OpenCL conv2d and its two backward ops, as im2col + the shared tiled GEMM
// (kp/opencl/gemm.h), with the CPU plugin's dtypes and attribute handling.
// Per image and group, with CKK = C/groups * kH * kW rows of columns and
// P = OH * OW output pixels:
//   forward          y[oc, p]    = bias[oc] + W[oc, ckk] @ cols[ckk, p]
//   backward data    dcols       = W^T @ grad_y, then col2im gathers each input
//                                  pixel's taps (a sum per pixel, no atomics)
//   backward weight  grad_w      = sum over images (the GEMM's K blocks) of
//                                  grad_y[oc, p] @ cols[ckk, p]^T
// Images and groups are GEMM batches (strides into one launch). A 1x1 kernel
// with stride 1 and no padding uses x itself as the columns. Columns live in
// a workspace sized by kColsBudget: larger batches run in chunks of images.
// Inputs arrive contiguous (the schema is not strided); a strided output is
// written through a dense workspace and copied.
#include <algorithm>
#include <tuple>
#include <utility>

#include "launch.h"
#include "oar/kp/opencl/gemm.h"
#include "ops/ops.h"

namespace oar_ocl {

namespace {

using namespace oar;
namespace kcl = oar::kp::opencl;

enum ConvKind { kForward, kBackwardData, kBackwardWeight };

constexpr int64_t kColsBudget = int64_t(128) << 20;  // bytes of im2col workspace per chunk of images

int64_t elem_size(oar_dtype_t d) { return d == OAR_DTYPE_F64 ? 8 : (d == OAR_DTYPE_F32 ? 4 : 2); }

// dcols of backward data and chunked grad_w sums are kept in the accumulator type.
oar_dtype_t acc_dtype(oar_dtype_t d) { return d == OAR_DTYPE_F64 ? OAR_DTYPE_F64 : OAR_DTYPE_F32; }

struct Geom {
  int64_t N, C, H, W, OC, Cg, KH, KW, OH, OW, OCg, G;
  int64_t sh, sw, ph, pw, dh, dw;
  oar_dtype_t dtype;
  int64_t KK() const { return KH * KW; }
  int64_t CKK() const { return Cg * KH * KW; }
  int64_t P() const { return OH * OW; }
  // The columns of a 1x1, stride-1, unpadded kernel are x itself.
  bool pointwise() const { return KH == 1 && KW == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0; }
};

// Attribute pairs arrive as 1 or 2 values (validated by the catalog).
std::pair<int64_t, int64_t> pair_of(const sdk::KernelArgs& a, const char* name) {
  auto v = a.attr_ints(name);
  return {v.front(), v.back()};
}

Geom geometry(const sdk::KernelArgs& a, ConvKind kind) {
  const oar_tensor_view *x, *w, *y;
  if (kind == kForward) x = &a.input(0), w = &a.input(1), y = &a.output(0);
  else if (kind == kBackwardData) y = &a.input(0), w = &a.input(1), x = &a.output(0);
  else y = &a.input(0), x = &a.input(1), w = &a.output(0);
  Geom g;
  g.N = x->shape[0], g.C = x->shape[1], g.H = x->shape[2], g.W = x->shape[3];
  g.OC = w->shape[0], g.Cg = w->shape[1], g.KH = w->shape[2], g.KW = w->shape[3];
  g.OH = y->shape[2], g.OW = y->shape[3];
  g.G = a.attr_int("groups");
  g.OCg = g.OC / g.G;
  std::tie(g.sh, g.sw) = pair_of(a, "stride");
  std::tie(g.ph, g.pw) = pair_of(a, "padding");
  std::tie(g.dh, g.dw) = pair_of(a, "dilation");
  g.dtype = a.output(0).dtype;
  return g;
}

std::vector<int64_t> dense_strides(const oar_tensor_view& v) {
  std::vector<int64_t> s(size_t(v.ndim));
  int64_t st = 1;
  for (int i = v.ndim - 1; i >= 0; --i) s[size_t(i)] = st, st *= v.shape[i];
  return s;
}

// dst = src over `v`'s shape, each with its own strides, converting src_dtype
// to dst_dtype (the elementwise emitter; same dtypes move bits untouched).
void strided_copy(OpContext& c, const oar_tensor_view& v, cl_mem dst, int64_t dst_off, const int64_t* dst_st,
                  oar_dtype_t to, cl_mem src, int64_t src_off, const int64_t* src_st, oar_dtype_t from) {
  const int64_t* st[2] = {dst_st, src_st};
  kp::StridedLayout L = kp::make_layout(v.ndim, v.shape, 2, st);
  if (L.numel == 0) return;
  const bool raw = from == to;
  if (raw && to == OAR_DTYPE_F16) from = to = OAR_DTYPE_BF16;  // 16 bits moved as ushort
  const int rank = kcl::source_rank(L);
  std::string key = "conv-copy:" + std::to_string(from) + ">" + std::to_string(to) + (raw ? "raw" : "") + "/r" +
                    std::to_string(rank);
  cl_kernel k = get_kernel(c.dev, key, [&] {
    kcl::ElementwiseSpec s{"oar_ew", to, {from}, {"x"}, {}, "", "x", rank};
    s.raw = raw;
    return kcl::elementwise_source(s, c.dev.fp64);
  }, "oar_ew");
  Launch(k).mem(dst).scalar<cl_long>(dst_off).mem(src).scalar<cl_long>(src_off).layout(kcl::pack_layout(L))
      .scalar<cl_long>(L.numel).run(c.queue, size_t(L.numel));
}

struct Buffer {
  cl_mem mem = nullptr;
  int64_t offset = 0;  // elements
};

// Input i as a dense buffer (a copy only if dispatch ever passes it strided).
Buffer dense_input(OpContext& c, int i) {
  const oar_tensor_view& v = c.args.input(i);
  if (sdk::is_dense(v)) return {mem_of(v), v.offset};
  Buffer b{static_cast<cl_mem>(c.args.workspace(uint64_t(sdk::numel(v) * elem_size(v.dtype)))), 0};
  std::vector<int64_t> dense = dense_strides(v);
  strided_copy(c, v, b.mem, 0, dense.data(), v.dtype, mem_of(v), v.offset, v.strides, v.dtype);
  return b;
}

// Output 0 as a dense buffer of `dtype`: the output itself when it is
// contiguous of that dtype, else a workspace that finish() converts into it.
class DenseOut {
 public:
  DenseOut(OpContext& c, oar_dtype_t dtype, bool force_workspace = false) : c_(c), dtype_(dtype) {
    const oar_tensor_view& v = c.args.output(0);
    if (!force_workspace && dtype == v.dtype && sdk::is_dense(v)) {
      buf_ = {mem_of(v), v.offset};
    } else {
      buf_.mem = static_cast<cl_mem>(c.args.workspace(uint64_t(sdk::numel(v) * elem_size(dtype))));
      copy_back_ = true;
    }
  }
  const Buffer& buf() const { return buf_; }
  oar_dtype_t dtype() const { return dtype_; }
  void finish() {
    if (!copy_back_) return;
    const oar_tensor_view& v = c_.args.output(0);
    std::vector<int64_t> dense = dense_strides(v);
    strided_copy(c_, v, mem_of(v), v.offset, v.strides, v.dtype, buf_.mem, 0, dense.data(), dtype_);
  }

 private:
  OpContext& c_;
  oar_dtype_t dtype_;
  Buffer buf_;
  bool copy_back_ = false;
};

// Images per chunk so the columns (elements of `esize` bytes) fit kColsBudget.
int64_t chunk_images(const Geom& q, int64_t esize) {
  int64_t per_image = std::max<int64_t>(1, q.C * q.KK() * q.P() * esize);
  return std::max<int64_t>(1, std::min(q.N, kColsBudget / per_image));
}

void run_gemm(OpContext& c, const kcl::GemmCall& g, oar_dtype_t in, oar_dtype_t out) {
  kp::StridedLayout L = g.layout();
  kcl::GemmSpec spec;
  spec.a = spec.b = in;
  spec.c = spec.d = out;
  spec.rank = kcl::source_rank(L);
  spec.group = c.dev.max_work_group >= 256 ? 16 : 8;
  cl_kernel k = get_kernel(c.dev, kcl::gemm_key(spec), [&] { return kcl::gemm_source(spec, c.dev.fp64); },
                           kcl::kGemmKernelName);
  size_t global[3], local[3];
  kcl::gemm_ndrange(g, L, spec.group, global, local);
  Launch l(k);
  kcl::push_gemm_args(l, g, L);
  l.run3d(c.queue, global, local);
}

kcl::GemmOperand operand(const Buffer& b, int64_t offset, int64_t rs, int64_t cs) {
  kcl::GemmOperand o;
  o.mem = b.mem;
  o.offset = b.offset + offset;
  o.rs = rs;
  o.cs = cs;
  return o;
}

// Geometry arguments shared by im2col and col2im, in their parameter order.
void push_geometry(Launch& l, const Geom& q) {
  for (int64_t v : {q.C, q.H, q.W, q.KH, q.KW, q.OH, q.OW, q.sh, q.sw, q.ph, q.pw, q.dh, q.dw})
    l.scalar<cl_long>(v);
}

constexpr const char* kGeometryParams =
    "long C, long H, long W, long KH, long KW, long OH, long OW, long sh, long sw, long ph, long pw, long dh, long dw";

// cols[img][c][kh][kw][oh * OW + ow] = x[img][c][ih][iw], 0 in the padding.
// A pure move, so the kernel depends only on the element size.
void im2col(OpContext& c, const Geom& q, const Buffer& x, int64_t first, int64_t images, cl_mem cols) {
  const int64_t es = elem_size(q.dtype);
  const char* type = es == 8 ? "ulong" : (es == 4 ? "uint" : "ushort");
  cl_kernel k = get_kernel(c.dev, "conv-im2col:" + std::to_string(es), [&] {
    return kcl::prelude(c.dev.fp64) + "typedef " + type + " E;\n__kernel void oar_im2col(__global const E* x, long x_off, __global E* cols, " +
           kGeometryParams + R"CLC(, long total) {
  const long i = get_global_id(0);
  if (i >= total) return;
  const long p = i % (OH * OW), oh = p / OW, ow = p % OW;
  long r = i / (OH * OW);
  const long kw = r % KW;
  r /= KW;
  const long kh = r % KH;
  r /= KH; /* image * C + channel */
  const long ih = oh * sh - ph + kh * dh, iw = ow * sw - pw + kw * dw;
  cols[i] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? x[x_off + (r * H + ih) * W + iw] : (E)0;
}
)CLC";
  }, "oar_im2col");
  const int64_t total = images * q.C * q.KK() * q.P();
  Launch l(k);
  l.mem(x.mem).scalar<cl_long>(x.offset + first * q.C * q.H * q.W).mem(cols);
  push_geometry(l, q);
  l.scalar<cl_long>(total).run(c.queue, size_t(total));
}

// gx[img][c][ih][iw] = sum of the dcols entries of every tap that reads (ih, iw).
void col2im(OpContext& c, const Geom& q, cl_mem cols, oar_dtype_t cols_dtype, const Buffer& gx, int64_t first,
            int64_t images) {
  cl_kernel k = get_kernel(c.dev, "conv-col2im:" + std::to_string(cols_dtype) + ">" + std::to_string(q.dtype), [&] {
    return kcl::prelude(c.dev.fp64) + kcl::operand_defs("S", cols_dtype) + kcl::operand_defs("Y", q.dtype) +
           "__kernel void oar_col2im(__global const S_t* cols, __global Y_t* gx, long gx_off, " + kGeometryParams +
           R"CLC(, long total) {
  const long i = get_global_id(0);
  if (i >= total) return;
  const long iw = i % W;
  long r = i / W;
  const long ih = r % H;
  r /= H; /* image * C + channel */
  S_c acc = 0;
  for (long kh = 0; kh < KH; ++kh) {
    const long th = ih + ph - kh * dh;
    if (th < 0 || th % sh != 0 || th / sh >= OH) continue;
    for (long kw = 0; kw < KW; ++kw) {
      const long tw = iw + pw - kw * dw;
      if (tw < 0 || tw % sw != 0 || tw / sw >= OW) continue;
      acc += S_LOAD(cols, ((r * KH + kh) * KW + kw) * (OH * OW) + (th / sh) * OW + tw / sw);
    }
  }
  Y_STORE(gx, gx_off + i, acc);
}
)CLC";
  }, "oar_col2im");
  const int64_t total = images * q.C * q.H * q.W;
  Launch l(k);
  l.mem(cols).mem(gx.mem).scalar<cl_long>(gx.offset + first * q.C * q.H * q.W);
  push_geometry(l, q);
  l.scalar<cl_long>(total).run(c.queue, size_t(total));
}

void forward(OpContext& c, const Geom& q) {
  const sdk::KernelArgs& a = c.args;
  const int64_t CKK = q.CKK(), P = q.P();
  Buffer x = dense_input(c, 0), w = dense_input(c, 1);
  const bool bias = a.has_input(2);
  Buffer b = bias ? dense_input(c, 2) : Buffer{};
  DenseOut y(c, q.dtype);
  const int64_t chunk = q.pointwise() ? q.N : chunk_images(q, elem_size(q.dtype));
  Buffer cols;
  if (!q.pointwise()) cols.mem = static_cast<cl_mem>(a.workspace(uint64_t(chunk * q.C * q.KK() * P * elem_size(q.dtype))));
  for (int64_t n0 = 0; n0 < q.N; n0 += chunk) {
    const int64_t nb = std::min(chunk, q.N - n0);
    if (!q.pointwise()) im2col(c, q, x, n0, nb, cols.mem);
    kcl::GemmCall g;
    g.M = q.OCg, g.N = P, g.K = CKK;
    g.batch_ndim = 2, g.batch_shape[0] = nb, g.batch_shape[1] = q.G;  // images, groups
    g.a = operand(w, 0, CKK, 1);
    g.a.batch[1] = q.OCg * CKK;
    // The columns of image n, group g start at row g * CKK of that image's C * KK rows.
    g.b = q.pointwise() ? operand(x, n0 * q.C * P, P, 1) : operand(cols, 0, P, 1);
    g.b.batch[0] = q.C * q.KK() * P, g.b.batch[1] = CKK * P;
    g.c = operand(y.buf(), n0 * q.OC * P, P, 1);
    g.c.batch[0] = q.OC * P, g.c.batch[1] = q.OCg * P;
    g.has_bias = bias;
    g.d = bias ? operand(b, 0, 1, 0) : operand(y.buf(), 0, 0, 0);
    g.d.batch[1] = bias ? q.OCg : 0;
    run_gemm(c, g, q.dtype, q.dtype);
  }
  y.finish();
}

void backward_data(OpContext& c, const Geom& q) {
  const int64_t CKK = q.CKK(), P = q.P();
  Buffer gy = dense_input(c, 0), w = dense_input(c, 1);
  // W^T @ grad_y: row ckk of group g is column ckk of W's rows g * OCg ...
  auto gemm = [&](int64_t n0, int64_t nb) {
    kcl::GemmCall g;
    g.M = CKK, g.N = P, g.K = q.OCg;
    g.batch_ndim = 2, g.batch_shape[0] = nb, g.batch_shape[1] = q.G;
    g.a = operand(w, 0, 1, CKK);
    g.a.batch[1] = q.OCg * CKK;
    g.b = operand(gy, n0 * q.OC * P, P, 1);
    g.b.batch[0] = q.OC * P, g.b.batch[1] = q.OCg * P;
    return g;
  };
  if (q.pointwise()) {  // dcols are grad_x
    DenseOut gx(c, q.dtype);
    kcl::GemmCall g = gemm(0, q.N);
    g.c = operand(gx.buf(), 0, P, 1);
    g.c.batch[0] = q.C * P, g.c.batch[1] = CKK * P;
    g.d = g.c;
    run_gemm(c, g, q.dtype, q.dtype);
    gx.finish();
    return;
  }
  const oar_dtype_t cols_dtype = acc_dtype(q.dtype);
  DenseOut gx(c, q.dtype);
  const int64_t chunk = chunk_images(q, elem_size(cols_dtype));
  Buffer cols{static_cast<cl_mem>(c.args.workspace(uint64_t(chunk * q.C * q.KK() * P * elem_size(cols_dtype)))), 0};
  for (int64_t n0 = 0; n0 < q.N; n0 += chunk) {
    const int64_t nb = std::min(chunk, q.N - n0);
    kcl::GemmCall g = gemm(n0, nb);
    g.c = operand(cols, 0, P, 1);
    g.c.batch[0] = q.C * q.KK() * P, g.c.batch[1] = CKK * P;
    g.d = g.c;
    run_gemm(c, g, q.dtype, cols_dtype);
    col2im(c, q, cols.mem, cols_dtype, gx.buf(), n0, nb);
  }
  gx.finish();
}

void backward_weight(OpContext& c, const Geom& q) {
  const int64_t CKK = q.CKK(), P = q.P();
  Buffer gy = dense_input(c, 0), x = dense_input(c, 1);
  const int64_t chunk = q.pointwise() ? std::max<int64_t>(q.N, 1) : chunk_images(q, elem_size(q.dtype));
  const int64_t steps = q.N == 0 ? 1 : (q.N + chunk - 1) / chunk;
  // Several chunks add into an accumulator-typed buffer, converted at the end.
  DenseOut gw(c, steps > 1 ? acc_dtype(q.dtype) : q.dtype, steps > 1);
  Buffer cols;
  if (!q.pointwise() && q.N > 0)
    cols.mem = static_cast<cl_mem>(c.args.workspace(uint64_t(chunk * q.C * q.KK() * P * elem_size(q.dtype))));
  for (int64_t s = 0; s < steps; ++s) {
    const int64_t n0 = s * chunk, nb = std::min(chunk, q.N - n0);
    if (!q.pointwise() && nb > 0) im2col(c, q, x, n0, nb, cols.mem);
    kcl::GemmCall g;
    g.M = q.OCg, g.N = CKK, g.K = P;
    g.KB = nb;  // images: summed inside the kernel
    g.batch_ndim = 1, g.batch_shape[0] = q.G;
    g.c = operand(gw.buf(), 0, CKK, 1);
    g.c.batch[0] = q.OCg * CKK;
    if (nb == 0) {  // empty batch: the GEMM writes zeros and reads nothing
      g.a = g.b = g.d = g.c;
    } else {
      g.a = operand(gy, n0 * q.OC * P, P, 1);
      g.a.batch[0] = q.OCg * P;
      g.a_kb = q.OC * P;
      g.b = q.pointwise() ? operand(x, n0 * q.C * P, 1, P) : operand(cols, 0, 1, P);  // cols^T
      g.b.batch[0] = CKK * P;
      g.b_kb = q.C * q.KK() * P;
      g.d = g.c;
    }
    g.beta = s > 0;
    run_gemm(c, g, q.dtype, gw.dtype());
  }
  gw.finish();
}

template <ConvKind kind>
oar_status_t conv_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c = op_context(a);
    Geom q = geometry(a, kind);
    if (kind == kForward) forward(c, q);
    else if (kind == kBackwardData) backward_data(c, q);
    else backward_weight(c, q);
  });
}

template <ConvKind kind>
oar_status_t register_conv(const oar_kernel_registrar* r, const char* op) {
  for (oar_dtype_t d : sdk::kFloatDTypes)
    if (oar_status_t st = sdk::register_kernel(r, op, {d, d}, conv_kernel<kind>, "kp-opencl-im2col-gemm")) return st;
  return OAR_STATUS_OK;
}

}  // namespace

oar_status_t register_conv_kernels(const oar_kernel_registrar* r) {
  if (auto st = register_conv<kForward>(r, "conv2d")) return st;
  if (auto st = register_conv<kBackwardData>(r, "conv2d_backward_data")) return st;
  return register_conv<kBackwardWeight>(r, "conv2d_backward_weight");
}

}  // namespace oar_ocl
