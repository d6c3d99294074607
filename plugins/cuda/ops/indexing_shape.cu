// CUDA/HIP kernels that join, split and pad tensors: concat, stack, split,
// pad and pad_backward, with the CPU plugin's semantics. concat/stack/split
// are strided copies (kp::gpu::elementwise moving element bits) of each piece
// into or out of its slice of the big tensor. pad maps every output
// coordinate to its source coordinate per dimension (or to the fill value);
// pad_backward inverts that map: each grad_x element walks the padded
// coordinates that read it in the CPU's order (leading dimensions outermost,
// ascending), so sums are deterministic and equal to the CPU's.
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "launch.h"
#include "oar/kp/gpu/elementwise.cuh"
#include "ops/ops.h"

namespace oar_gpu {

namespace {

using namespace oar;

constexpr int kDims = kp::kMaxDims;

struct Identity {
  template <class V>
  __host__ __device__ V operator()(V v) const {
    return v;
  }
};

// dst = src over `shape`, each with its own element strides; moves bits, so
// one instantiation per element width serves every dtype.
void strided_copy(const OpContext& c, size_t elem, int ndim, const int64_t* shape, void* dst,
                  const int64_t* dst_strides, const void* src, const int64_t* src_strides) {
  auto copy = [&]<class E>() {
    return gpu::elementwise<E, E>(c.stream, ndim, shape, gpu::Operand<E>{static_cast<E*>(dst), dst_strides}, Identity{},
                                  gpu::Operand<const E>{static_cast<const E*>(src), src_strides});
  };
  gpu::Error err;
  switch (elem) {
    case 1: err = copy.template operator()<uint8_t>(); break;
    case 2: err = copy.template operator()<uint16_t>(); break;
    case 4: err = copy.template operator()<uint32_t>(); break;
    default: err = copy.template operator()<uint64_t>(); break;
  }
  check(err, "strided copy");
}

char* element(const oar_tensor_view& v, size_t es, int64_t offset) {
  return static_cast<char*>(v.data) + (v.offset + offset) * int64_t(es);
}

// concat and stack: input i is copied into the slice of y that it fills.
oar_status_t join_entry(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto& y = a.output(0);
    const bool stack = std::strcmp(a.context().op_name, "stack") == 0;
    int64_t dim = a.attr_int("dim");
    if (dim < 0) dim += y.ndim;
    const size_t es = sdk::dtype_size(y.dtype);
    std::vector<int64_t> st(y.strides, y.strides + y.ndim);
    if (stack) st.erase(st.begin() + dim);  // x has y's shape without dim
    int64_t at = 0;
    for (int i = 0; i < a.num_inputs(); ++i) {
      const auto& x = a.input(i);
      if (sdk::numel(x) == 0) continue;  // also skips 1-D empty tensors of another rank
      strided_copy(c, es, x.ndim, x.shape, element(y, es, at * y.strides[dim]), st.data(), element(x, es, 0),
                   x.strides);
      at += stack ? 1 : x.shape[dim];
    }
  });
}

oar_status_t split_entry(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto& x = a.input(0);
    int64_t dim = a.attr_int("dim");
    if (dim < 0) dim += x.ndim;
    const size_t es = sdk::dtype_size(x.dtype);
    int64_t at = 0;
    for (int i = 0; i < a.context().num_outputs; ++i) {
      const auto& y = a.output(i);
      strided_copy(c, es, y.ndim, y.shape, element(y, es, 0), y.strides, element(x, es, at * x.strides[dim]),
                   x.strides);
      at += y.shape[dim];
    }
  });
}

// ---- pad ----

enum PadMode : int { kConstant = 0, kReflect = 1, kReplicate = 2 };

// Source sizes `in`, padded sizes `out`, leading pads `lo` and the strides of
// the strided operand (x for pad, grad_y for pad_backward); the other operand
// is contiguous and walked by the thread index.
struct PadGeom {
  int ndim = 0, mode = kConstant;
  int64_t n = 0;
  int64_t in[kDims] = {}, out[kDims] = {}, lo[kDims] = {}, st[kDims] = {};
};

// Source coordinate of padded coordinate o in a dimension of size n (-1: fill).
__device__ __forceinline__ int64_t pad_map(int64_t o, int64_t lo, int64_t n, int mode) {
  int64_t i = o - lo;
  if (i < 0 || i >= n) {
    if (mode == kReflect) i = i < 0 ? -i : 2 * (n - 1) - i;
    else if (mode == kReplicate) i = i < 0 ? 0 : n - 1;
    else i = -1;
  }
  return i;
}

// The padded coordinates that read source coordinate i (pad_map's preimage),
// as at most three ascending, disjoint ranges [a, b] inside [0, out).
__device__ __forceinline__ int pad_ranges(int64_t i, int64_t n, int64_t lo, int64_t out, int mode, int64_t* a,
                                          int64_t* b) {
  int64_t ra[3], rb[3];
  int k = 0;
  if (mode == kReflect) {
    if (i > 0) ra[k] = rb[k] = lo - i, ++k;
    ra[k] = rb[k] = lo + i, ++k;
    if (i < n - 1) ra[k] = rb[k] = lo + 2 * (n - 1) - i, ++k;
  } else if (mode == kReplicate) {
    ra[k] = i == 0 ? 0 : lo + i, rb[k] = lo + i, ++k;
    if (i == n - 1) ra[k] = lo + i + 1, rb[k] = out - 1, ++k;
  } else {
    ra[k] = rb[k] = lo + i, ++k;
  }
  int m = 0;
  for (int j = 0; j < k; ++j) {
    const int64_t s = ra[j] < 0 ? 0 : ra[j], e = rb[j] > out - 1 ? out - 1 : rb[j];
    if (s <= e) a[m] = s, b[m] = e, ++m;
  }
  return m;
}

template <class E>
__global__ void pad_kernel(const E* x, E* y, E fill, PadGeom g) {
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < g.n; r += int64_t(gridDim.x) * blockDim.x) {
    int64_t rem = r, off = 0;
    bool inside = true;
    for (int d = g.ndim - 1; d >= 0 && inside; --d) {
      const int64_t o = rem % g.out[d];
      rem /= g.out[d];
      const int64_t i = pad_map(o, g.lo[d], g.in[d], g.mode);
      inside = i >= 0;
      off += i * g.st[d];
    }
    y[r] = inside ? x[off] : fill;
  }
}

// The CPU's accumulator: the compute type for floating T, 64-bit integers
// (unsigned, so that overflow wraps) otherwise.
template <class T> using pad_acc_t = std::conditional_t<kp::is_floating_v<T>, kp::accumulate_t<T>, uint64_t>;

template <class T>
__global__ void pad_backward_kernel(const T* gy, T* gx, PadGeom g) {
  using Acc = pad_acc_t<T>;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < g.n; r += int64_t(gridDim.x) * blockDim.x) {
    int64_t a[kDims][3], b[kDims][3], o[kDims];
    int cnt[kDims], ri[kDims];
    int64_t rem = r;
    bool any = true;
    for (int d = g.ndim - 1; d >= 0; --d) {
      const int64_t i = rem % g.in[d];
      rem /= g.in[d];
      cnt[d] = pad_ranges(i, g.in[d], g.lo[d], g.out[d], g.mode, a[d], b[d]);
      any = any && cnt[d] > 0;
      ri[d] = 0;
      o[d] = a[d][0];
    }
    Acc acc = 0;
    // An odometer over the ranges, last dimension fastest: the CPU's order.
    while (any) {
      int64_t off = 0;
      for (int d = 0; d < g.ndim; ++d) off += o[d] * g.st[d];
      if constexpr (kp::is_floating_v<T>) acc += static_cast<Acc>(gy[off]);
      else acc += static_cast<uint64_t>(static_cast<int64_t>(gy[off]));
      int d = g.ndim - 1;
      for (; d >= 0; --d) {
        if (o[d] < b[d][ri[d]]) {
          ++o[d];
          break;
        }
        if (ri[d] + 1 < cnt[d]) {
          ++ri[d];
          o[d] = a[d][ri[d]];
          break;
        }
        ri[d] = 0;
        o[d] = a[d][0];
      }
      if (d < 0) break;
    }
    if constexpr (kp::is_floating_v<T>) gx[r] = static_cast<T>(acc);
    else gx[r] = static_cast<T>(static_cast<int64_t>(acc));
  }
}

// Geometry from the source shape, the padded shape, the pads attribute (last
// dimension first) and the strided operand's view; a 0-d tensor is [1].
PadGeom pad_geom(const sdk::KernelArgs& a, std::vector<int64_t> in, std::vector<int64_t> out,
                 const oar_tensor_view& strided) {
  PadGeom g;
  std::vector<int64_t> st(strided.strides, strided.strides + strided.ndim);
  if (in.empty()) in = out = st = {1};
  const auto pads = a.attr_ints("pads");
  const std::string mode = a.attr_string("mode");
  g.mode = mode == "reflect" ? kReflect : mode == "replicate" ? kReplicate : kConstant;
  g.ndim = int(in.size());
  for (size_t d = 0; d < in.size(); ++d) {
    const size_t k = in.size() - 1 - d;
    g.in[d] = in[d], g.out[d] = out[d], g.st[d] = st[d];
    g.lo[d] = 2 * k < pads.size() ? pads[2 * k] : 0;
  }
  return g;
}

// The CPU's conversion of the fill value.
template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, bool>) return v != 0;
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<int64_t>(v));
  else return static_cast<T>(static_cast<kp::compute_t<T>>(v));
}

oar_status_t pad_entry(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto &xv = a.input(0), &yv = a.output(0);
    PadGeom g = pad_geom(a, sdk::shape_of(xv), sdk::shape_of(yv), xv);
    g.n = sdk::numel(yv);
    if (g.n == 0) return;
    const double value = a.attr_float("value");
    sdk::visit_dtype(xv.dtype, [&]<class T>() {
      using E = std::conditional_t<sizeof(T) == 1, uint8_t,
                                   std::conditional_t<sizeof(T) == 2, uint16_t,
                                                      std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
      const T f = from_double<T>(value);
      E fill;
      std::memcpy(&fill, &f, sizeof(E));
      pad_kernel<E><<<gpu::grid_for(g.n), gpu::kBlock, 0, c.stream>>>(ptr<const E>(xv), ptr<E>(yv), fill, g);
    });
    c.check_launch("pad");
  });
}

oar_status_t pad_backward_entry(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    const auto &gv = a.input(0), &xv = a.output(0);
    sdk::visit_dtype(gv.dtype, [&]<class T>() {
      if constexpr (std::is_same_v<T, bool>) {
        sdk::fail(OAR_STATUS_UNSUPPORTED, "pad_backward: bool is not supported");
      } else {
        PadGeom g = pad_geom(a, sdk::shape_of(xv), sdk::shape_of(gv), gv);
        g.n = sdk::numel(xv);
        if (g.n == 0) return;
        pad_backward_kernel<T><<<gpu::grid_for(g.n), gpu::kBlock, 0, c.stream>>>(ptr<const T>(gv), ptr<T>(xv), g);
        c.check_launch("pad_backward");
      }
    });
  });
}

}  // namespace

oar_status_t register_shape_kernels(const oar_kernel_registrar* r) {
  const char* impl = "kp-" OAR_GPU_BACKEND_NAME;
  for (oar_dtype_t d : sdk::kAllDTypes) {
    if (oar_status_t st = sdk::register_kernel(r, "concat", {d}, join_entry, impl)) return st;
    if (oar_status_t st = sdk::register_kernel(r, "stack", {d}, join_entry, impl)) return st;
    if (oar_status_t st = sdk::register_kernel(r, "split", {d}, split_entry, impl)) return st;
    if (oar_status_t st = sdk::register_kernel(r, "pad", {d}, pad_entry, impl)) return st;
  }
  for (oar_dtype_t d : sdk::kNumericDTypes)
    if (oar_status_t st = sdk::register_kernel(r, "pad_backward", {d}, pad_backward_entry, impl)) return st;
  return OAR_STATUS_OK;
}

}  // namespace oar_gpu
