// OpenCL kernels that join, split and pad tensors: concat, stack, split, pad
// and pad_backward, with the CPU plugin's semantics. concat/stack/split are
// strided copies of each piece into (or out of) a sub-view of the big tensor,
// moving bits, so any strides and dtypes work. pad maps each output
// coordinate to its source coordinate (or the fill value) per dimension;
// pad_backward inverts that map: each grad_x element walks the padded
// coordinates that read it, in the CPU's order (leading dimensions outermost,
// ascending), so sums are deterministic and equal to the CPU's.
#include <cstring>
#include <string>
#include <vector>

#include "launch.h"
#include "ops/ops.h"

namespace oar_ocl {

namespace {

using namespace oar;
namespace kcl = oar::kp::opencl;

constexpr int kDims = kp::kMaxDims;

const char* bits_type(oar_dtype_t d) {
  switch (d) {
    case OAR_DTYPE_F64:
    case OAR_DTYPE_I64: return "ulong";
    case OAR_DTYPE_F32:
    case OAR_DTYPE_I32: return "uint";
    case OAR_DTYPE_F16:
    case OAR_DTYPE_BF16: return "ushort";
    default: return "uchar";
  }
}

// A strided copy that moves each element's bits as an unsigned integer of its
// width (so f16 needs no half loads, and dtypes of one width share a program),
// over the coalesced layout of kp::make_layout.
std::string copy_source(const char* bits, int rank, bool fp64) {
  std::string layout = kcl::layout_type(rank, 2);
  return kcl::prelude(fp64) + "typedef " + bits + " E;\n" + kcl::layout_source(rank, 2) +
         "__kernel void oar_shape_copy(__global E* y, long yo, __global const E* x, long xo, const " + layout +
         " L, long n) {\n  long i = get_global_id(0);\n  if (i >= n) return;\n  long off[2];\n  " + layout +
         "_offsets(L, i, off);\n  y[yo + off[0]] = x[xo + off[1]];\n}\n";
}

// Copies src into dst (same logical shape: dst's), any strides.
void strided_copy(OpContext& c, const oar_tensor_view& dst, const oar_tensor_view& src) {
  const int64_t* strides[2] = {dst.strides, src.strides};
  kp::StridedLayout L = kp::make_layout(dst.ndim, dst.shape, 2, strides);
  if (L.numel == 0) return;
  const char* bits = bits_type(dst.dtype);
  int rank = kcl::source_rank(L);
  cl_kernel k = get_kernel(c.dev, std::string("shape_copy:") + bits + "/r" + std::to_string(rank),
                           [&] { return copy_source(bits, rank, c.dev.fp64); }, "oar_shape_copy");
  Launch(k).view(dst).view(src).layout(kcl::pack_layout(L)).scalar<cl_long>(L.numel).run(c.queue, size_t(L.numel));
}

// concat and stack: input i is copied into the slice of y that it fills.
oar_status_t join_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c = op_context(a);
    const auto& y = a.output(0);
    bool stack = std::strcmp(a.context().op_name, "stack") == 0;
    int64_t dim = a.attr_int("dim");
    if (dim < 0) dim += y.ndim;
    int64_t at = 0;
    for (int i = 0; i < a.num_inputs(); ++i) {
      const auto& x = a.input(i);
      if (sdk::numel(x) == 0) continue;  // also skips 1-D empty tensors of another rank
      oar_tensor_view dst = y;
      dst.ndim = x.ndim;
      dst.shape = x.shape;
      std::vector<int64_t> st(y.strides, y.strides + y.ndim);
      if (stack) st.erase(st.begin() + dim);
      dst.strides = st.data();
      dst.offset = y.offset + at * y.strides[dim];
      strided_copy(c, dst, x);
      at += stack ? 1 : x.shape[dim];
    }
  });
}

oar_status_t split_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c = op_context(a);
    const auto& x = a.input(0);
    int64_t dim = a.attr_int("dim");
    if (dim < 0) dim += x.ndim;
    int64_t at = 0;
    for (int i = 0; i < a.context().num_outputs; ++i) {
      const auto& y = a.output(i);
      oar_tensor_view src = x;
      src.shape = y.shape;
      src.offset = x.offset + at * x.strides[dim];
      strided_copy(c, y, src);
      at += y.shape[dim];
    }
  });
}

// ---- pad ----

enum PadMode : int64_t { kConstant = 0, kReflect = 1, kReplicate = 2 };

// The per-dimension geometry both pad kernels take: source sizes `in`,
// padded sizes `out`, leading pad `lo` and the strides of the strided
// operand (x for pad, grad_y for pad_backward); the other one is contiguous.
struct PadGeom {
  int64_t ndim = 0, mode = kConstant, n = 0, pad = 0;
  int64_t in[kDims] = {}, out[kDims] = {}, lo[kDims] = {}, st[kDims] = {};
};

const char* pad_common_source() {
  return R"CLC(
typedef struct {
  long ndim, mode, n, pad;
  long in[OAR_DIMS], out[OAR_DIMS], lo[OAR_DIMS], st[OAR_DIMS];
} oar_pad_geom;

/* Source coordinate of padded coordinate o in a dimension of size n (-1: fill). */
inline long oar_pad_map(long o, long lo, long n, long mode) {
  long i = o - lo;
  if (i < 0 || i >= n) {
    if (mode == 1) i = i < 0 ? -i : 2 * (n - 1) - i;
    else if (mode == 2) i = i < 0 ? 0 : n - 1;
    else i = -1;
  }
  return i;
}

/* The padded coordinates that read source coordinate i, as at most three
   ascending, disjoint ranges [a, b] inside [0, out). */
inline int oar_pad_ranges(long i, long n, long lo, long out, long mode, long* a, long* b) {
  long ra[3], rb[3];
  int k = 0;
  if (mode == 1) {
    if (i > 0) { ra[k] = rb[k] = lo - i; ++k; }
    ra[k] = rb[k] = lo + i; ++k;
    if (i < n - 1) { ra[k] = rb[k] = lo + 2 * (n - 1) - i; ++k; }
  } else if (mode == 2) {
    ra[k] = i == 0 ? 0 : lo + i; rb[k] = lo + i; ++k;
    if (i == n - 1) { ra[k] = lo + i + 1; rb[k] = out - 1; ++k; }
  } else {
    ra[k] = rb[k] = lo + i; ++k;
  }
  int m = 0;
  for (int j = 0; j < k; ++j) {
    long s = ra[j] < 0 ? 0 : ra[j], e = rb[j] > out - 1 ? out - 1 : rb[j];
    if (s <= e) { a[m] = s; b[m] = e; ++m; }
  }
  return m;
}
)CLC";
}

std::string pad_source(oar_dtype_t dt, bool fp64) {
  std::string s = kcl::prelude(fp64) + "typedef " + bits_type(dt) + " E;\n#define OAR_DIMS " + std::to_string(kDims) +
                  "\n" + pad_common_source();
  s += R"CLC(
/* y (contiguous, padded) from x; `fill` holds the fill value's bits. */
__kernel void oar_pad(__global const E* x, long xo, __global E* y, long yo, const ulong fill, const oar_pad_geom G) {
  long r = get_global_id(0);
  if (r >= G.n) return;
  long rem = r, off = xo;
  for (long d = G.ndim - 1; d >= 0; --d) {
    long o = rem % G.out[d];
    rem /= G.out[d];
    long i = oar_pad_map(o, G.lo[d], G.in[d], G.mode);
    if (i < 0) {
      y[yo + r] = (E)fill;
      return;
    }
    off += i * G.st[d];
  }
  y[yo + r] = x[off];
}
)CLC";
  return s;
}

// ACC: the CPU's accumulate type (compute type for floating dtypes, 64-bit
// integers, here unsigned so that overflow wraps as defined behaviour).
std::string pad_backward_source(oar_dtype_t dt, bool fp64) {
  std::string s = kcl::prelude(fp64) + "#pragma OPENCL FP_CONTRACT OFF\n" + kcl::operand_defs("X", dt) +
                  "#define OAR_DIMS " + std::to_string(kDims) + "\n" + pad_common_source();
  if (kcl::type_info(dt).floating)
    s += "typedef X_c ACC;\n#define ACC_OF(v) (v)\n#define ACC_STORE(p, i, v) X_STORE(p, i, v)\n";
  else
    s += "typedef ulong ACC;\n#define ACC_OF(v) ((ulong)(long)(v))\n"
         "#define ACC_STORE(p, i, v) ((p)[i] = (X_t)(long)(v))\n";
  s += R"CLC(
/* grad_x (contiguous, source shape) sums grad_y over every padded position
   that copies it: an odometer over the per-dimension ranges, last dim fastest. */
__kernel void oar_pad_backward(__global const X_t* g, long go, __global X_t* gx, long xo, const oar_pad_geom G) {
  long r = get_global_id(0);
  if (r >= G.n) return;
  long a[OAR_DIMS][3], b[OAR_DIMS][3], o[OAR_DIMS];
  int cnt[OAR_DIMS], ri[OAR_DIMS];
  long rem = r;
  int any = 1;
  for (long d = G.ndim - 1; d >= 0; --d) {
    long i = rem % G.in[d];
    rem /= G.in[d];
    cnt[d] = oar_pad_ranges(i, G.in[d], G.lo[d], G.out[d], G.mode, a[d], b[d]);
    any &= cnt[d] > 0;
    ri[d] = 0;
    o[d] = a[d][0];
  }
  ACC acc = 0;
  while (any) {
    long off = go;
    for (long d = 0; d < G.ndim; ++d) off += o[d] * G.st[d];
    acc += ACC_OF(X_LOAD(g, off));
    long d = G.ndim - 1;
    for (; d >= 0; --d) {
      if (o[d] < b[d][ri[d]]) { ++o[d]; break; }
      if (ri[d] + 1 < cnt[d]) { ++ri[d]; o[d] = a[d][ri[d]]; break; }
      ri[d] = 0;
      o[d] = a[d][0];
    }
    if (d < 0) break;
  }
  ACC_STORE(gx, xo + r, acc);
}
)CLC";
  return s;
}

// Geometry from the source shape, the padded shape, the pads attribute (last
// dimension first) and the strided operand's view; 0-d tensors are [1].
PadGeom pad_geom(const sdk::KernelArgs& a, std::vector<int64_t> in, std::vector<int64_t> out,
                 const oar_tensor_view& strided) {
  PadGeom g;
  std::vector<int64_t> st(strided.strides, strided.strides + strided.ndim);
  if (in.empty()) in = out = st = {1};
  auto pads = a.attr_ints("pads");
  std::string mode = a.attr_string("mode");
  g.mode = mode == "reflect" ? kReflect : mode == "replicate" ? kReplicate : kConstant;
  g.ndim = int64_t(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    size_t k = in.size() - 1 - d;
    g.in[d] = in[d], g.out[d] = out[d], g.st[d] = st[d];
    g.lo[d] = 2 * k < pads.size() ? pads[2 * k] : 0;
  }
  return g;
}

// The fill value's storage bits, converted as the CPU converts it.
cl_ulong fill_bits(oar_dtype_t dt, double v) {
  cl_ulong bits = 0;
  sdk::visit_dtype(dt, [&]<class T>() {
    T f;
    if constexpr (std::is_same_v<T, bool>)
      f = v != 0;
    else if constexpr (std::is_integral_v<T>)
      f = static_cast<T>(static_cast<int64_t>(v));
    else
      f = static_cast<T>(static_cast<kp::compute_t<T>>(v));
    std::memcpy(&bits, &f, sizeof(T));
  });
  return bits;
}

oar_status_t pad_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c = op_context(a);
    const auto &xv = a.input(0), &yv = a.output(0);
    PadGeom g = pad_geom(a, sdk::shape_of(xv), sdk::shape_of(yv), xv);
    g.n = sdk::numel(yv);
    if (g.n == 0) return;
    cl_ulong fill = fill_bits(xv.dtype, a.attr_float("value"));
    cl_kernel k = get_kernel(c.dev, std::string("pad:") + bits_type(xv.dtype),
                             [&] { return pad_source(xv.dtype, c.dev.fp64); }, "oar_pad");
    Launch(k).view(xv).view(yv).scalar<cl_ulong>(fill).raw(&g, sizeof(g)).run(c.queue, size_t(g.n));
  });
}

oar_status_t pad_backward_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c = op_context(a);
    const auto &gv = a.input(0), &xv = a.output(0);
    if (gv.dtype == OAR_DTYPE_BOOL) sdk::fail(OAR_STATUS_UNSUPPORTED, "pad_backward: bool is not supported");
    PadGeom g = pad_geom(a, sdk::shape_of(xv), sdk::shape_of(gv), gv);
    g.n = sdk::numel(xv);
    if (g.n == 0) return;
    cl_kernel k = get_kernel(c.dev, "pad_backward:" + std::to_string(gv.dtype),
                             [&] { return pad_backward_source(gv.dtype, c.dev.fp64); }, "oar_pad_backward");
    Launch(k).view(gv).view(xv).raw(&g, sizeof(g)).run(c.queue, size_t(g.n));
  });
}

}  // namespace

oar_status_t register_indexing_shape_kernels(const oar_kernel_registrar* r) {
  const char* impl = "kp-opencl";
  for (oar_dtype_t d : sdk::kAllDTypes) {
    if (oar_status_t st = sdk::register_kernel(r, "concat", {d}, join_kernel, impl)) return st;
    if (oar_status_t st = sdk::register_kernel(r, "stack", {d}, join_kernel, impl)) return st;
    if (oar_status_t st = sdk::register_kernel(r, "split", {d}, split_kernel, impl)) return st;
    if (oar_status_t st = sdk::register_kernel(r, "pad", {d}, pad_kernel, impl)) return st;
  }
  for (oar_dtype_t d : sdk::kNumericDTypes)
    if (oar_status_t st = sdk::register_kernel(r, "pad_backward", {d}, pad_backward_kernel, impl)) return st;
  return OAR_STATUS_OK;
}

}  // namespace oar_ocl
