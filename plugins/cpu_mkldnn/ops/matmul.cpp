// CPU matmul: oneDNN's matmul primitive for f32 (and bf16 where the CPU has
// it), plus a plain-loop reference for every float dtype that also serves
// whatever oneDNN declines. The schema passes operands strided, so a
// transposed operand (a.t(), b.transpose(-1, -2)) reaches oneDNN as a strided
// memory desc without a copy; broadcast batch dims (stride 0) become size-1
// dims, which oneDNN broadcasts itself. Only layouts oneDNN cannot describe
// (no unit stride in the last two dims, negative strides) are copied to a
// dense workspace. Primitives are cached by dtype, dims and strides, since
// creating one costs far more than the dispatch around it.
#include <cstdio>
#include <algorithm>

#include "ops/dnnl_common.h"
#include "ops/ops.h"

namespace oar_cpu {

namespace {

using namespace nn;

constexpr int kMaxDnnlDims = 12;  // DNNL_MAX_NDIMS

// How one operand reaches oneDNN: dims and strides padded to the output rank.
struct Operand {
  Dims dims, strides;   // as oneDNN reads it in place
  Dims own_dims;        // its own dims, padded (layout of a dense copy)
  bool direct = true;   // false: oneDNN cannot read it in place; copy first
};

int64_t span_of(const Operand& o, size_t from) {
  int64_t span = 1;
  for (size_t i = from; i < o.dims.size(); ++i) span = std::max(span, (o.dims[i] - 1) * o.strides[i] + 1);
  return span;
}

// Left-pads v to rank nd, gives size-1 dims harmless strides and collapses
// broadcast (stride 0) batch dims to size 1.
Operand describe(const oar_tensor_view& v, int nd) {
  Operand o;
  int pad = nd - v.ndim;
  o.dims.assign(size_t(nd), 1);
  o.strides.assign(size_t(nd), 1);
  for (int i = 0; i < v.ndim; ++i) {
    o.dims[size_t(pad + i)] = v.shape[i];
    o.strides[size_t(pad + i)] = v.strides[i];
  }
  o.own_dims = o.dims;
  size_t r = size_t(nd - 2), c = size_t(nd - 1);
  int64_t R = o.dims[r], C = o.dims[c], sr = o.strides[r], sc = o.strides[c];
  if ((C == 1 || sc == 1) && (R == 1 || sr >= C)) {  // row-major, leading dimension sr
    o.strides[c] = 1;
    o.strides[r] = R == 1 ? C : sr;
  } else if ((R == 1 || sr == 1) && (C == 1 || sc >= R)) {  // column-major (a transpose)
    o.strides[r] = 1;
    o.strides[c] = C == 1 ? R : sc;
  } else {
    o.direct = false;
  }
  for (size_t i = r; i-- > 0;) {
    if (o.dims[i] == 1 || o.strides[i] == 0) {
      o.dims[i] = 1;
      o.strides[i] = span_of(o, i + 1);
    } else if (o.strides[i] < 0) {
      o.direct = false;
    }
  }
  return o;
}

struct Plan {
  Operand a, b;
  Dims c_dims;
  int nd = 0;
  int64_t k = 0;
  oar_dtype_t dtype = OAR_DTYPE_F32;
};

Plan make_plan(const sdk::KernelArgs& args) {
  const auto &va = args.input(0), &vb = args.input(1), &vc = args.output(0);
  Plan p;
  p.nd = vc.ndim;
  p.dtype = vc.dtype;
  p.k = va.shape[va.ndim - 1];
  p.a = describe(va, p.nd);
  p.b = describe(vb, p.nd);
  p.c_dims = dims_of(vc);
  // A batch dim both operands broadcast (both expanded) must be materialised in one.
  for (int i = 0; i < p.nd - 2; ++i) {
    if (p.c_dims[size_t(i)] == 1 || p.a.dims[size_t(i)] > 1 || p.b.dims[size_t(i)] > 1) continue;
    (p.a.own_dims[size_t(i)] > 1 ? p.a : p.b).direct = false;
  }
  return p;
}

PrimitiveCache& cache() {
  static PrimitiveCache c;
  return c;
}

// flags bit 0 / bit 1: operand a / b is copied to a dense buffer before the call.
CachedPtr lookup(const Plan& p) {
  Key key;
  key.add(p.dtype).add(p.a.dims).add(p.a.strides).add(p.a.own_dims).add(p.a.direct);
  key.add(p.b.dims).add(p.b.strides).add(p.b.own_dims).add(p.b.direct).add(p.c_dims);
  return cache().get(key, [&](Cached& e) {
    auto md = [&](const Operand& o, bool copy) {
      return copy ? dense_md(o.own_dims, p.dtype) : dnnl::memory::desc(o.dims, dnnl_dtype(p.dtype), o.strides);
    };
    dnnl::memory::desc c_md = dense_md(p.c_dims, p.dtype);
    std::string last_error;
    bool found = false, found_fast = false;
    dnnl::matmul::primitive_desc best;
    // In place first; if oneDNN only offers its slow reference there, try dense copies.
    for (int attempt = 0; attempt < 2 && !found_fast; ++attempt) {
      bool ca = attempt == 1 || !p.a.direct, cb = attempt == 1 || !p.b.direct;
      if (attempt == 1 && !p.a.direct && !p.b.direct) break;
      try {
        dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(md(p.a, ca), md(p.b, cb), c_md), engine());
        bool fast = std::string(pd.impl_info_str()).rfind("ref", 0) != 0;
        if (!found || fast) {
          best = pd;
          e.flags = (ca ? 1 : 0) | (cb ? 2 : 0);
          e.mds = {md(p.a, ca), md(p.b, cb), c_md};
        }
        found = true;
        found_fast = fast;
      } catch (const dnnl::error& err) {
        last_error = err.what();
      }
    }
    if (!found)
      throw sdk::KernelError{OAR_STATUS_UNSUPPORTED, std::string("oneDNN cannot create a ") + sdk::dtype_name(p.dtype) +
                                                         " matmul primitive on this CPU (" + last_error + ")"};
    e.prim = dnnl::matmul(best);
  });
}

std::string check_dnnl(const sdk::KernelArgs& a) {
  if (a.output(0).ndim > kMaxDnnlDims) return "oneDNN matmul takes at most 12 dims";
  Plan p = make_plan(a);
  if (p.k == 0) return "";
  return lookup(p)->error;
}

int32_t dnnl_supports(const oar_kernel_context* ctx, char* reason, size_t size) {
  return answer_supports(ctx, reason, size, check_dnnl);
}

oar_status_t dnnl_matmul_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    Plan p = make_plan(a);
    DenseOutput out(a, 0);
    if (p.k == 0) {  // empty sum
      std::memset(out.data(), 0, size_t(sdk::numel(a.output(0))) * elem_size(p.dtype));
      return out.finish();
    }
    const Cached& c = require_ok(lookup(p), "matmul");
    const void* pa = (c.flags & 1) ? dense_input(a, 0) : byte_ptr(a.input(0));
    const void* pb = (c.flags & 2) ? dense_input(a, 1) : byte_ptr(a.input(1));
    execute(c.prim, {{DNNL_ARG_SRC, make_memory(c.mds[0], pa)},
                     {DNNL_ARG_WEIGHTS, make_memory(c.mds[1], pb)},
                     {DNNL_ARG_DST, make_memory(c.mds[2], out.data())}});
    out.finish();
  });
}

// Direct loops: any strides, batch broadcast by index, accumulation in Acc
// (double for the reference; the compute type for the small-problem path).
template <class T, class Acc = double>
void ref_matmul(const oar_tensor_view& va, const oar_tensor_view& vb, const oar_tensor_view& vc) {
  int nd = vc.ndim;
  int64_t M = vc.shape[nd - 2], N = vc.shape[nd - 1], K = va.shape[va.ndim - 1];
  int64_t batch = 1;
  for (int i = 0; i < nd - 2; ++i) batch *= vc.shape[i];
  const T* A = sdk::data_of<T>(va);
  const T* B = sdk::data_of<T>(vb);
  T* Cp = sdk::data_of<T>(vc);
  int64_t sar = va.strides[va.ndim - 2], sac = va.strides[va.ndim - 1];
  int64_t sbr = vb.strides[vb.ndim - 2], sbc = vb.strides[vb.ndim - 1];
  int64_t scr = vc.strides[nd - 2], scc = vc.strides[nd - 1];
  // Offset of batch index `bi` in operand v (dims aligned from the right, size 1 broadcast).
  auto batch_offset = [&](const oar_tensor_view& v, int64_t bi) {
    int64_t off = 0;
    for (int i = nd - 3; i >= 0; --i) {
      int64_t idx = bi % vc.shape[i];
      bi /= vc.shape[i];
      int vi = i - (nd - v.ndim);
      if (vi >= 0 && v.shape[vi] != 1) off += idx * v.strides[vi];
    }
    return off;
  };
  kp::cpu::parallel_for(batch * M, kp::cpu::grain_for_work(N * K), [&](int64_t lo, int64_t hi) {
    std::vector<Acc> row(static_cast<size_t>(N));
    for (int64_t r = lo; r < hi; ++r) {
      int64_t bi = r / M, m = r % M;
      const T* a = A + batch_offset(va, bi) + m * sar;
      const T* b = B + batch_offset(vb, bi);
      std::fill(row.begin(), row.end(), Acc(0));
      Acc* __restrict acc = row.data();
      for (int64_t k = 0; k < K; ++k) {
        const Acc av = Acc(kp::compute_t<T>(a[k * sac]));
        const T* brow = b + k * sbr;
        if (sbc == 1) {  // the common case: a vectorisable row update
          for (int64_t n = 0; n < N; ++n) acc[n] += av * Acc(kp::compute_t<T>(brow[n]));
        } else {
          for (int64_t n = 0; n < N; ++n) acc[n] += av * Acc(kp::compute_t<T>(brow[n * sbc]));
        }
      }
      T* c = Cp + batch_offset(vc, bi) + m * scr;
      for (int64_t n = 0; n < N; ++n) c[n * scc] = T(kp::compute_t<T>(acc[n]));
    }
  });
}

oar_status_t ref_matmul_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    sdk::visit_float(a.output(0).dtype, [&]<class T>() { ref_matmul<T>(a.input(0), a.input(1), a.output(0)); });
  });
}

// Tiny products (a Linear on one sample, say) finish before oneDNN has looked
// up and launched its primitive: measured 1x64x64 f32 ~10 us through oneDNN.
constexpr int64_t kSmallMatmulFlops = 64 * 64 * 64;

int32_t small_supports(const oar_kernel_context* ctx, char* reason, size_t size) {
  const oar_tensor_view& c = ctx->outputs[0];
  int64_t work = ctx->inputs[0].shape[ctx->inputs[0].ndim - 1];
  for (int i = 0; i < c.ndim; ++i) work *= c.shape[i];
  if (work <= kSmallMatmulFlops) return 1;
  std::snprintf(reason, size, "%lld multiply-adds exceed the small-problem limit %lld", (long long)work,
                (long long)kSmallMatmulFlops);
  return 0;
}

oar_status_t small_matmul_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    sdk::visit_float(a.output(0).dtype, [&]<class T>() {
      ref_matmul<T, kp::compute_t<T>>(a.input(0), a.input(1), a.output(0));
    });
  });
}

}  // namespace

oar_status_t register_matmul_kernels(const oar_kernel_registrar* r) {
  if (auto st = sdk::register_same_dtype(r, "matmul", kRefDTypes, 2, small_matmul_kernel, "small", 20, small_supports))
    return st;
  if (auto st = sdk::register_same_dtype(r, "matmul", kDnnlDTypes, 2, dnnl_matmul_kernel, "onednn", 10, dnnl_supports))
    return st;
  return sdk::register_same_dtype(r, "matmul", kRefDTypes, 2, ref_matmul_kernel, "reference", 0);
}

}  // namespace oar_cpu
