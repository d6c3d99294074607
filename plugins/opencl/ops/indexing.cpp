// OpenCL kernels for gather, index_select, scatter_add, index_add, embedding
// and embedding_backward, with the CPU plugin's semantics and messages.
// Index values are validated by a scan kernel that reports the FIRST bad
// position (the CPU's message names it, so a plain "some index was bad" flag
// is not enough); the scan also counts valid entries, which the losses use.
// Accumulating ops never use float atomics: every output element sums the
// entries that target it itself, in index order, rounding like the CPU after
// each step, so results are deterministic and equal to the CPU's.
// index_add and embedding_backward share one 1-D index across many output
// elements; its buckets (a stable counting sort, as the CPU builds) are made
// on the host from the index values, which also gives the exact first bad
// position. Inputs arrive contiguous (strided_inputs is off in their
// schemas); view offsets and the strides of gather's operands are honoured.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "launch.h"
#include "ops/index_check.h"
#include "ops/ops.h"

namespace oar_ocl {

using namespace oar;
namespace kcl = oar::kp::opencl;


const char* index_at_source() {
  return "inline long oar_index_at(__global const int* p, long i, int wide) {\n"
         "  return wide ? ((__global const long*)p)[i] : (long)p[i];\n}\n";
}

namespace {

// Element size in bytes of a dtype's storage.
size_t storage_size(oar_dtype_t d) {
  switch (d) {
    case OAR_DTYPE_F64:
    case OAR_DTYPE_I64: return 8;
    case OAR_DTYPE_F32:
    case OAR_DTYPE_I32: return 4;
    case OAR_DTYPE_F16:
    case OAR_DTYPE_BF16: return 2;
    default: return 1;
  }
}

void require_index_dtype(oar_dtype_t d, const char* what) {
  if (d != OAR_DTYPE_I64 && d != OAR_DTYPE_I32)
    sdk::fail(OAR_STATUS_INVALID_ARGUMENT, std::string(what) + " must be i32 or i64");
}

// Each of `slots` work-items walks positions t, t + slots, ... and records the
// first bad one it meets (its smallest) and how many valid ones it saw; the
// host takes the minimum and the sum. No atomics, so any device runs it.
std::string scan_source(bool fp64) {
  return kcl::prelude(fp64) + index_at_source() + R"CLC(
__kernel void oar_index_scan(__global const int* ip, long io, int wide, long n, long bound, int use_ignore,
                             long ignore, long slots, __global long* out) {
  long t = get_global_id(0);
  if (t >= slots) return;
  long first = -1, count = 0;
  for (long p = t; p < n; p += slots) {
    long v = oar_index_at(ip, io + p, wide);
    if (use_ignore && v == ignore) continue;
    if (v < 0 || v >= bound) { first = p; break; }
    ++count;
  }
  out[t] = first;
  out[slots + t] = count;
}
)CLC";
}

}  // namespace

// Reads `n` index values of a contiguous i32/i64 view, from position `from`.
std::vector<int64_t> read_indices(OpContext& c, const oar_tensor_view& idx, int64_t from, int64_t n) {
  std::vector<int64_t> out(static_cast<size_t>(n));
  if (n == 0) return out;
  size_t es = storage_size(idx.dtype);
  std::vector<char> raw(size_t(n) * es);
  check(clEnqueueReadBuffer(c.queue, mem_of(idx), CL_TRUE, size_t(idx.offset + from) * es, raw.size(), raw.data(), 0,
                            nullptr, nullptr),
        "clEnqueueReadBuffer(indices)");
  for (size_t i = 0; i < size_t(n); ++i) {
    if (es == 8) {
      int64_t v;
      std::memcpy(&v, raw.data() + i * 8, 8);
      out[i] = v;
    } else {
      int32_t v;
      std::memcpy(&v, raw.data() + i * 4, 4);
      out[i] = v;
    }
  }
  return out;
}

int64_t scan_indices(OpContext& c, const oar_tensor_view& idx, int64_t bound, const int64_t* ignore, int64_t* value,
                     int64_t* count) {
  require_index_dtype(idx.dtype, "index tensors");
  int64_t first = -1;
  *value = 0, *count = 0;
  int64_t n = sdk::numel(idx);
  if (n == 0) return first;
  // ~32 values per slot, at most 8192 slots (128 KiB read back).
  const int64_t slots = std::min<int64_t>(((n + 31) / 32 + 63) / 64 * 64, 8192);
  cl_mem out = static_cast<cl_mem>(c.args.workspace(uint64_t(2 * slots) * sizeof(int64_t)));
  cl_kernel k = get_kernel(c.dev, "index_scan", [&] { return scan_source(c.dev.fp64); }, "oar_index_scan");
  Launch(k)
      .view(idx)
      .scalar<cl_int>(idx.dtype == OAR_DTYPE_I64)
      .scalar<cl_long>(n)
      .scalar<cl_long>(bound)
      .scalar<cl_int>(ignore ? 1 : 0)
      .scalar<cl_long>(ignore ? *ignore : 0)
      .scalar<cl_long>(slots)
      .mem(out)
      .run(c.queue, size_t(slots));
  std::vector<int64_t> h(size_t(2 * slots));
  check(clEnqueueReadBuffer(c.queue, out, CL_TRUE, 0, h.size() * sizeof(int64_t), h.data(), 0, nullptr, nullptr),
        "clEnqueueReadBuffer(index scan)");
  for (int64_t t = 0; t < slots; ++t) {
    int64_t f = h[size_t(t)];
    if (f >= 0 && (first < 0 || f < first)) first = f;
    *count += h[size_t(slots + t)];
  }
  if (first >= 0) *value = read_indices(c, idx, first, 1)[0];
  return first;
}

namespace {

[[noreturn]] void fail_index(const char* op, int64_t value, int64_t pos, const std::string& what, int64_t bound) {
  sdk::fail(OAR_STATUS_OUT_OF_RANGE, std::string(op) + ": index " + std::to_string(value) + " at position " +
                                         std::to_string(pos) + " is out of range for " + what + " (valid range [0, " +
                                         std::to_string(bound) + "))");
}

void check_device_indices(OpContext& c, const char* op, const oar_tensor_view& idx, int64_t bound,
                          const std::string& what) {
  int64_t value = 0, count = 0;
  int64_t first = scan_indices(c, idx, bound, nullptr, &value, &count);
  if (first >= 0) fail_index(op, value, first, what, bound);
}

std::string dim_text(int64_t dim, int64_t size) {
  return "dimension " + std::to_string(dim) + " of size " + std::to_string(size);
}

int64_t dim_of(const sdk::KernelArgs& a, int64_t rank) {
  int64_t d = a.attr_int("dim");
  return d < 0 ? d + rank : d;
}

// A view's shape and strides with a 0-d tensor as [1].
struct Geom {
  std::vector<int64_t> shape, strides;
  explicit Geom(const oar_tensor_view& v) : shape(v.shape, v.shape + v.ndim), strides(v.strides, v.strides + v.ndim) {
    if (shape.empty()) shape = {1}, strides = {1};
  }
  int64_t prod(size_t b, size_t e) const {
    int64_t n = 1;
    for (size_t d = b; d < e; ++d) n *= shape[d];
    return n;
  }
};

// An unsigned OpenCL type of the same width, to move any dtype's bits.
const char* bits_type(oar_dtype_t d) {
  switch (storage_size(d)) {
    case 8: return "ulong";
    case 4: return "uint";
    case 2: return "ushort";
    default: return "uchar";
  }
}

// ---- gather, index_select, embedding: one bit-moving kernel ----
//
// y (contiguous, shape G.shape) takes x at y's coordinates with coordinate
// G.dim replaced by the index value found at y's coordinates in the index
// (strides G.ist: index_select broadcasts its 1-D index with stride 0).

constexpr int kDims = kp::kMaxDims;

std::string gather_source(oar_dtype_t dt, bool fp64) {
  std::string s = kcl::prelude(fp64) + index_at_source() + "typedef " + bits_type(dt) + " E;\n";
  s += "#define OAR_DIMS " + std::to_string(kDims) + "\n";
  s += R"CLC(
typedef struct {
  long ndim, dim, bound, n;
  long shape[OAR_DIMS], xst[OAR_DIMS], ist[OAR_DIMS];
} oar_gather_geom;
__kernel void oar_gather(__global const E* x, long xo, __global const int* ip, long io, int wide, __global E* y,
                         long yo, const oar_gather_geom G) {
  long r = get_global_id(0);
  if (r >= G.n) return;
  long rem = r, xoff = xo, ioff = io;
  for (long d = G.ndim - 1; d >= 0; --d) {
    long q = rem % G.shape[d];
    rem /= G.shape[d];
    ioff += q * G.ist[d];
    if (d != G.dim) xoff += q * G.xst[d];
  }
  long v = oar_index_at(ip, ioff, wide);
  if (v < 0 || v >= G.bound) return;  /* already reported by the scan */
  y[yo + r] = x[xoff + v * G.xst[G.dim]];
}
)CLC";
  return s;
}

struct GatherGeom {
  int64_t ndim = 0, dim = 0, bound = 0, n = 0;
  int64_t shape[kDims] = {}, xst[kDims] = {}, ist[kDims] = {};
};

void run_gather(OpContext& c, const oar_tensor_view& x, const oar_tensor_view& idx, const oar_tensor_view& y,
                const GatherGeom& g) {
  if (g.n == 0) return;
  cl_kernel k = get_kernel(c.dev, std::string("gather:") + bits_type(x.dtype),
                           [&] { return gather_source(x.dtype, c.dev.fp64); }, "oar_gather");
  Launch(k)
      .view(x)
      .view(idx)
      .scalar<cl_int>(idx.dtype == OAR_DTYPE_I64)
      .view(y)
      .raw(&g, sizeof(g))
      .run(c.queue, size_t(g.n));
}

oar_status_t gather_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c = op_context(a);
    const auto &xv = a.input(0), &iv = a.input(1), &yv = a.output(0);
    require_index_dtype(iv.dtype, "index tensors");
    Geom X(xv), I(iv);
    int64_t dim = dim_of(a, int64_t(X.shape.size()));
    check_device_indices(c, "gather", iv, X.shape[size_t(dim)], dim_text(dim, X.shape[size_t(dim)]));
    GatherGeom g;
    g.ndim = int64_t(I.shape.size()), g.dim = dim, g.bound = X.shape[size_t(dim)], g.n = sdk::numel(iv);
    for (size_t d = 0; d < I.shape.size(); ++d)
      g.shape[d] = I.shape[d], g.xst[d] = X.strides[d], g.ist[d] = I.strides[d];
    run_gather(c, xv, iv, yv, g);
  });
}

oar_status_t index_select_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c = op_context(a);
    const auto &xv = a.input(0), &iv = a.input(1), &yv = a.output(0);
    require_index_dtype(iv.dtype, "index tensors");
    Geom X(xv);
    int64_t dim = dim_of(a, int64_t(X.shape.size()));
    int64_t N = X.shape[size_t(dim)], K = sdk::numel(iv);
    check_device_indices(c, "index_select", iv, N, dim_text(dim, N));
    GatherGeom g;
    g.ndim = int64_t(X.shape.size()), g.dim = dim, g.bound = N;
    g.n = X.prod(0, size_t(dim)) * K * X.prod(size_t(dim) + 1, X.shape.size());
    for (size_t d = 0; d < X.shape.size(); ++d) g.shape[d] = X.shape[d], g.xst[d] = X.strides[d];
    g.shape[dim] = K;
    g.ist[dim] = iv.ndim == 1 ? iv.strides[0] : 1;
    run_gather(c, xv, iv, yv, g);
  });
}

oar_status_t embedding_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c = op_context(a);
    const auto &wv = a.input(0), &iv = a.input(1), &yv = a.output(0);
    require_index_dtype(iv.dtype, "index tensors");
    int64_t V = wv.shape[0], D = wv.shape[1], M = sdk::numel(iv);
    check_device_indices(c, "embedding", iv, V, "a weight with " + std::to_string(V) + " rows");
    GatherGeom g;  // y [M, D] = w[idx[m], d]; the (contiguous) index seen as [M, D] with stride 0 over D
    g.ndim = 2, g.dim = 0, g.bound = V, g.n = M * D;
    g.shape[0] = M, g.shape[1] = D;
    g.xst[0] = wv.strides[0], g.xst[1] = wv.strides[1];
    g.ist[0] = 1, g.ist[1] = 0;
    run_gather(c, wv, iv, yv, g);
  });
}

// ---- scatter_add, index_add, embedding_backward ----

// OpenCL C that rounds a compute value to dtype `d`'s storage precision, so a
// running sum is rounded after every step exactly as the CPU's T(C(a) + C(b)).
std::string round_def(oar_dtype_t d) {
  if (d == OAR_DTYPE_F16)
    return "inline float X_ROUND(float v) { ushort u; vstore_half_rte(v, 0, (__private half*)&u);"
           " return vload_half(0, (__private const half*)&u); }\n";
  if (d == OAR_DTYPE_BF16) return "#define X_ROUND(v) oar_bf16_to_float(oar_float_to_bf16(v))\n";
  return "#define X_ROUND(v) (v)\n";
}

// ACC/ACC_LOAD/ACC_ADD/ACC_STORE: a + alpha * b in the CPU's add_scaled
// arithmetic: floating dtypes in their compute type, rounded to storage each
// step; integers modular in 64 bits (wrapping to the dtype once at the end is
// the same as at every step).
std::string accumulate_defs(oar_dtype_t d) {
  if (kcl::type_info(d).floating)
    return round_def(d) +
           "typedef X_c ACC;\n#define ACC_LOAD(p, i) X_LOAD(p, i)\n"
           "#define ACC_ADD(a, b, al) X_ROUND((a) + (al) * (b))\n#define ACC_STORE(p, i, v) X_STORE(p, i, v)\n";
  return "typedef ulong ACC;\n#define ACC_LOAD(p, i) ((ulong)(long)(p)[i])\n"
         "#define ACC_ADD(a, b, al) ((a) + (al) * (ulong)(long)(b))\n"
         "#define ACC_STORE(p, i, v) ((p)[i] = (X_t)(long)(v))\n";
}

std::string accumulate_source(oar_dtype_t dt, bool fp64) {
  std::string s = kcl::prelude(fp64) + "#pragma OPENCL FP_CONTRACT OFF\n" + kcl::operand_defs("X", dt) +
                  index_at_source() + accumulate_defs(dt);
  s += "#define OAR_DIMS " + std::to_string(kDims) + "\n";
  s += R"CLC(
typedef struct {
  long ndim, dim, n, pad;
  long xshape[OAR_DIMS], ishape[OAR_DIMS], sshape[OAR_DIMS];
} oar_scatter_geom;

/* y[p] = x[p] + the src entries whose index targets p, in index order (all
   operands contiguous). A y element outside the index's extent gets none. */
__kernel void oar_scatter_add(__global const X_t* x, long xo, __global const int* ip, long io, int wide,
                              __global const X_t* s, long so, __global X_t* y, long yo, const ACC alpha,
                              const oar_scatter_geom G) {
  long p = get_global_id(0);
  if (p >= G.n) return;
  long rem = p, ioff = io, soff = so, istr = 1, sstr = 1, idim = 0, sdim = 0, target = 0;
  int inside = 1;
  for (long d = G.ndim - 1; d >= 0; --d) {
    long q = rem % G.xshape[d];
    rem /= G.xshape[d];
    if (d == G.dim) {
      target = q, idim = istr, sdim = sstr;
    } else {
      inside &= q < G.ishape[d];
      ioff += q * istr;
      soff += q * sstr;
    }
    istr *= G.ishape[d];
    sstr *= G.sshape[d];
  }
  ACC acc = ACC_LOAD(x, xo + p);
  if (inside)
    for (long k = 0; k < G.ishape[G.dim]; ++k)
      if (oar_index_at(ip, ioff + k * idim, wide) == target) acc = ACC_ADD(acc, X_LOAD(s, soff + k * sdim), alpha);
  ACC_STORE(y, yo + p, acc);
}

/* y [outer, N, inner] = x + alpha * the src [outer, K, inner] slices whose
   index is n; csr holds the bucket starts [N + 1] then the index positions
   in bucket order (ascending within a bucket). */
__kernel void oar_index_add(__global const X_t* x, long xo, __global const X_t* s, long so, __global X_t* y, long yo,
                            __global const long* csr, long outer, long N, long inner, long K, const ACC alpha) {
  long p = get_global_id(0);
  if (p >= outer * N * inner) return;
  long j = p % inner, t = p / inner, n = t % N, o = t / N;
  ACC acc = ACC_LOAD(x, xo + p);
  for (long e = csr[n]; e < csr[n + 1]; ++e)
    acc = ACC_ADD(acc, X_LOAD(s, so + (o * K + csr[N + 1 + e]) * inner + j), alpha);
  ACC_STORE(y, yo + p, acc);
}

/* grad_weight [V, D]: row v sums the grad rows [M, D] whose index is v, in
   the compute type (the CPU's accumulate type for floating dtypes). */
__kernel void oar_embedding_backward(__global const X_t* g, long go, __global X_t* y, long yo, __global const long* csr,
                                     long V, long D, long pad) {
  long p = get_global_id(0);
  if (p >= V * D) return;
  long v = p / D, d = p % D;
  X_c acc = 0;
  if (v != pad)
    for (long e = csr[v]; e < csr[v + 1]; ++e) acc += X_LOAD(g, go + csr[V + 1 + e] * D + d);
  X_STORE(y, yo + p, acc);
}
)CLC";
  return s;
}

cl_kernel accumulate_kernel(OpContext& c, oar_dtype_t dt, const char* name) {
  // The kernel name is part of the key: the program cache maps a key to one kernel.
  return get_kernel(c.dev, "accumulate:" + std::to_string(dt) + ":" + name,
                    [&] { return accumulate_source(dt, c.dev.fp64); }, name);
}

// alpha in the kernels' ACC type: the compute type, or 64-bit modular for integers.
Scalar accumulate_alpha(oar_dtype_t dt, double alpha) {
  if (kcl::type_info(dt).floating) return compute_scalar(dt, alpha);
  Scalar s;
  cl_ulong v = cl_ulong(int64_t(alpha));
  std::memcpy(s.bytes, &v, sizeof(v));
  s.size = sizeof(v);
  return s;
}

oar_status_t scatter_add_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c = op_context(a);
    const auto &xv = a.input(0), &iv = a.input(1), &sv = a.input(2), &yv = a.output(0);
    require_index_dtype(iv.dtype, "index tensors");
    Geom X(xv), I(iv), S(sv);
    int64_t dim = dim_of(a, int64_t(X.shape.size()));
    check_device_indices(c, "scatter_add", iv, X.shape[size_t(dim)], dim_text(dim, X.shape[size_t(dim)]));
    if (xv.dtype == OAR_DTYPE_BOOL) sdk::fail(OAR_STATUS_UNSUPPORTED, "scatter_add: bool is not supported");
    struct {
      int64_t ndim, dim, n, pad;
      int64_t xshape[kDims], ishape[kDims], sshape[kDims];
    } g{};
    g.ndim = int64_t(X.shape.size()), g.dim = dim, g.n = sdk::numel(xv);
    for (size_t d = 0; d < X.shape.size(); ++d)
      g.xshape[d] = X.shape[d], g.ishape[d] = I.shape[d], g.sshape[d] = S.shape[d];
    if (g.n == 0) return;
    Scalar alpha = accumulate_alpha(xv.dtype, 1.0);
    cl_kernel k = accumulate_kernel(c, xv.dtype, "oar_scatter_add");
    Launch(k)
        .view(xv)
        .view(iv)
        .scalar<cl_int>(iv.dtype == OAR_DTYPE_I64)
        .view(sv)
        .view(yv)
        .raw(alpha.bytes, alpha.size)
        .raw(&g, sizeof(g))
        .run(c.queue, size_t(g.n));
  });
}

// Validates a 1-D index on the host (the CPU's message, first bad position)
// and uploads its buckets over [0, bound): starts [bound + 1], then positions.
cl_mem upload_buckets(OpContext& c, const char* op, const oar_tensor_view& iv, int64_t bound, const std::string& what) {
  int64_t M = sdk::numel(iv);
  std::vector<int64_t> idx = read_indices(c, iv, 0, M);
  for (int64_t m = 0; m < M; ++m)
    if (idx[size_t(m)] < 0 || idx[size_t(m)] >= bound) fail_index(op, idx[size_t(m)], m, what, bound);
  std::vector<int64_t> csr(size_t(bound + 1 + M), 0);
  for (int64_t m = 0; m < M; ++m) ++csr[size_t(idx[size_t(m)] + 1)];
  for (int64_t v = 0; v < bound; ++v) csr[size_t(v + 1)] += csr[size_t(v)];
  std::vector<int64_t> fill(csr.begin(), csr.begin() + bound);
  for (int64_t m = 0; m < M; ++m) csr[size_t(bound + 1 + fill[size_t(idx[size_t(m)])]++)] = m;
  cl_mem buf = static_cast<cl_mem>(c.args.workspace(csr.size() * sizeof(int64_t)));
  check(clEnqueueWriteBuffer(c.queue, buf, CL_TRUE, 0, csr.size() * sizeof(int64_t), csr.data(), 0, nullptr, nullptr),
        "clEnqueueWriteBuffer(index buckets)");
  return buf;
}

oar_status_t index_add_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c = op_context(a);
    const auto &xv = a.input(0), &iv = a.input(1), &sv = a.input(2), &yv = a.output(0);
    require_index_dtype(iv.dtype, "index tensors");
    Geom X(xv);
    int64_t dim = dim_of(a, int64_t(X.shape.size()));
    int64_t outer = X.prod(0, size_t(dim)), N = X.shape[size_t(dim)], inner = X.prod(size_t(dim) + 1, X.shape.size());
    int64_t K = sdk::numel(iv);
    cl_mem csr = upload_buckets(c, "index_add", iv, N, dim_text(dim, N));
    if (xv.dtype == OAR_DTYPE_BOOL) sdk::fail(OAR_STATUS_UNSUPPORTED, "index_add: bool is not supported");
    int64_t n = outer * N * inner;
    if (n == 0) return;
    Scalar alpha = accumulate_alpha(xv.dtype, a.attr_float("alpha"));
    cl_kernel k = accumulate_kernel(c, xv.dtype, "oar_index_add");
    Launch(k)
        .view(xv)
        .view(sv)
        .view(yv)
        .mem(csr)
        .scalar<cl_long>(outer)
        .scalar<cl_long>(N)
        .scalar<cl_long>(inner)
        .scalar<cl_long>(K)
        .raw(alpha.bytes, alpha.size)
        .run(c.queue, size_t(n));
  });
}

oar_status_t embedding_backward_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c = op_context(a);
    const auto &gv = a.input(0), &iv = a.input(1), &yv = a.output(0);
    require_index_dtype(iv.dtype, "index tensors");
    int64_t V = yv.shape[0], D = yv.shape[1];
    int64_t pad = a.attr_int("padding_idx");
    cl_mem csr = upload_buckets(c, "embedding_backward", iv, V, "num_weights " + std::to_string(V));
    if (!kcl::type_info(gv.dtype).floating)
      sdk::fail(OAR_STATUS_UNSUPPORTED, "embedding_backward: floating dtypes only");
    if (V * D == 0) return;
    cl_kernel k = accumulate_kernel(c, gv.dtype, "oar_embedding_backward");
    Launch(k)
        .view(gv)
        .view(yv)
        .mem(csr)
        .scalar<cl_long>(V)
        .scalar<cl_long>(D)
        .scalar<cl_long>(pad)
        .run(c.queue, size_t(V * D));
  });
}

}  // namespace

oar_status_t register_indexing_kernels(const oar_kernel_registrar* r) {
  const char* impl = "kp-opencl";
  for (oar_dtype_t ix : {OAR_DTYPE_I64, OAR_DTYPE_I32}) {
    for (oar_dtype_t d : sdk::kAllDTypes) {
      if (oar_status_t st = sdk::register_kernel(r, "gather", {d, ix}, gather_kernel, impl)) return st;
      if (oar_status_t st = sdk::register_kernel(r, "index_select", {d, ix}, index_select_kernel, impl)) return st;
    }
    for (oar_dtype_t d : sdk::kNumericDTypes) {
      if (oar_status_t st = sdk::register_kernel(r, "scatter_add", {d, ix, d}, scatter_add_kernel, impl)) return st;
      if (oar_status_t st = sdk::register_kernel(r, "index_add", {d, ix, d}, index_add_kernel, impl)) return st;
    }
    for (oar_dtype_t d : sdk::kFloatDTypes) {
      if (oar_status_t st = sdk::register_kernel(r, "embedding", {d, ix}, embedding_kernel, impl)) return st;
      if (oar_status_t st = sdk::register_kernel(r, "embedding_backward", {d, ix}, embedding_backward_kernel, impl))
        return st;
    }
  }
  return OAR_STATUS_OK;
}

}  // namespace oar_ocl
