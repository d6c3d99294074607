// CPU kernels that join, split and pad tensors: concat, stack, split, pad and
// pad_backward. Inputs are contiguous and shapes validated by the catalog.
// concat/stack/split are byte copies of row blocks; pad maps every output
// coordinate to its source coordinate per dimension (or to the fill value),
// and pad_backward inverts those maps so each grad_x row is summed by one
// thread (deterministic, no write conflicts). Registered from indexing.cpp.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "oar/kp/cpu/parallel.h"
#include "oar/plugin_sdk/kernel_api.hpp"
#include "ops/ops.h"

namespace oar_cpu {

oar_status_t register_indexing_shape_kernels(const oar_kernel_registrar* r);

namespace {

using namespace oar;
using kp::cpu::kGrainSize;
using kp::cpu::parallel_for;

size_t elem_size(oar_dtype_t d) {
  return sdk::visit_dtype(d, []<class T>() { return sizeof(T); });
}

int64_t prod(const int64_t* shape, int64_t b, int64_t e) {
  int64_t n = 1;
  for (int64_t d = b; d < e; ++d) n *= shape[d];
  return n;
}

// Copies `rows` rows of `len` bytes between row-strided buffers, in parallel
// over the bytes so that a single large row is split too.
void copy_rows(char* dst, int64_t dst_stride, const char* src, int64_t src_stride, int64_t rows,
               int64_t len) {
  if (len == 0 || rows == 0) return;
  parallel_for(rows * len, 4 * kGrainSize, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e;) {
      int64_t r = i / len, c = i % len, n = std::min(len - c, e - i);
      std::memcpy(dst + r * dst_stride + c, src + r * src_stride + c, size_t(n));
      i += n;
    }
  });
}

// concat and stack: input i fills a [outer, size_i * inner] block of the
// output's [outer, total * inner] rows.
oar_status_t join_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& y = a.output(0);
    bool stack = std::strcmp(a.context().op_name, "stack") == 0;
    int64_t dim = a.attr_int("dim");
    if (dim < 0) dim += y.ndim;
    int64_t es = int64_t(elem_size(y.dtype));
    int64_t outer = prod(y.shape, 0, dim), inner = prod(y.shape, dim + 1, y.ndim) * es;
    int64_t out_row = y.shape[dim] * inner, at = 0;
    char* out = static_cast<char*>(y.data) + y.offset * es;
    for (int i = 0; i < a.num_inputs(); ++i) {
      const auto& x = a.input(i);
      int64_t n = sdk::numel(x);
      if (n == 0) continue;  // also skips 1-D empty tensors of another rank
      int64_t len = stack ? inner : x.shape[dim] * inner;
      copy_rows(out + at, out_row, static_cast<const char*>(x.data) + x.offset * es, len, outer, len);
      at += len;
    }
  });
}

oar_status_t split_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto& x = a.input(0);
    int64_t dim = a.attr_int("dim");
    if (dim < 0) dim += x.ndim;
    int64_t es = int64_t(elem_size(x.dtype));
    int64_t outer = prod(x.shape, 0, dim), inner = prod(x.shape, dim + 1, x.ndim) * es;
    int64_t in_row = x.shape[dim] * inner, at = 0;
    const char* in = static_cast<const char*>(x.data) + x.offset * es;
    for (int i = 0; i < a.context().num_outputs; ++i) {
      const auto& y = a.output(i);
      int64_t len = y.shape[dim] * inner;
      copy_rows(static_cast<char*>(y.data) + y.offset * es, len, in + at, in_row, outer, len);
      at += len;
    }
  });
}

// Per-dimension map from padded coordinate to source coordinate (-1: fill).
struct PadMaps {
  std::vector<std::vector<int64_t>> map;  // [ndim][out size]
};

PadMaps pad_maps(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                 const std::vector<int64_t>& pads, const std::string& mode) {
  PadMaps m;
  size_t nd = in.size();
  m.map.resize(nd);
  for (size_t d = 0; d < nd; ++d) {
    size_t k = nd - 1 - d;  // pads list the last dimension first
    int64_t lo = 2 * k < pads.size() ? pads[2 * k] : 0, n = in[d];
    auto& mp = m.map[d];
    mp.resize(size_t(out[d]));
    for (int64_t o = 0; o < out[d]; ++o) {
      int64_t i = o - lo;
      if (i < 0 || i >= n) {
        if (mode == "reflect")
          i = i < 0 ? -i : 2 * (n - 1) - i;
        else if (mode == "replicate")
          i = std::clamp<int64_t>(i, 0, n - 1);
        else
          i = -1;
      }
      mp[size_t(o)] = i;
    }
  }
  return m;
}

template <class T>
T from_double(double v) {
  if constexpr (std::is_same_v<T, bool>)
    return v != 0;
  else if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<int64_t>(v));
  else
    return static_cast<T>(static_cast<kp::compute_t<T>>(v));
}

oar_status_t pad_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto &xv = a.input(0), &yv = a.output(0);
    auto in = sdk::shape_of(xv), out = sdk::shape_of(yv);
    if (in.empty()) in = out = {1};
    PadMaps m = pad_maps(in, out, a.attr_ints("pads"), a.attr_string("mode"));
    int64_t nd = int64_t(in.size()), W = out.back(), rows = prod(out.data(), 0, nd - 1);
    std::vector<int64_t> xs(size_t(nd), 1);
    for (int64_t d = nd - 1; d-- > 0;) xs[size_t(d)] = xs[size_t(d) + 1] * in[size_t(d) + 1];
    const auto& last = m.map.back();
    double value = a.attr_float("value");
    sdk::visit_dtype(xv.dtype, [&]<class T>() {
      const T* x = sdk::data_of<T>(xv);
      T* y = sdk::data_of<T>(yv);
      T fill = from_double<T>(value);
      parallel_for(rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(W, 1)),
                   [&](int64_t b, int64_t e) {
                     for (int64_t r = b; r < e; ++r) {
                       T* yr = y + r * W;
                       int64_t src = 0;
                       for (int64_t d = nd - 2, rem = r; d >= 0 && src >= 0; --d) {
                         int64_t i = m.map[size_t(d)][size_t(rem % out[size_t(d)])];
                         rem /= out[size_t(d)];
                         src = i < 0 ? -1 : src + i * xs[size_t(d)];
                       }
                       if (src < 0) {
                         std::fill(yr, yr + W, fill);
                         continue;
                       }
                       const T* xr = x + src;
                       for (int64_t c = 0; c < W; ++c)
                         yr[c] = last[size_t(c)] < 0 ? fill : xr[last[size_t(c)]];
                     }
                   });
    });
  });
}

oar_status_t pad_backward_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const auto &gv = a.input(0), &xv = a.output(0);
    auto in = sdk::shape_of(xv), out = sdk::shape_of(gv);
    if (in.empty()) in = out = {1};
    PadMaps m = pad_maps(in, out, a.attr_ints("pads"), a.attr_string("mode"));
    int64_t nd = int64_t(in.size()), W = out.back(), Wx = in.back(), rows = prod(in.data(), 0, nd - 1);
    // inverse maps of the leading dims: the padded coordinates reading each source coordinate
    std::vector<std::vector<std::vector<int64_t>>> inv(static_cast<size_t>(nd));
    for (int64_t d = 0; d < nd - 1; ++d) {
      inv[size_t(d)].resize(size_t(in[size_t(d)]));
      for (int64_t o = 0; o < out[size_t(d)]; ++o)
        if (int64_t i = m.map[size_t(d)][size_t(o)]; i >= 0) inv[size_t(d)][size_t(i)].push_back(o);
    }
    std::vector<int64_t> gs(size_t(nd), 1);
    for (int64_t d = nd - 1; d-- > 0;) gs[size_t(d)] = gs[size_t(d) + 1] * out[size_t(d) + 1];
    const auto& last = m.map.back();
    sdk::visit_dtype(gv.dtype, [&]<class T>() {
      if constexpr (std::is_same_v<T, bool>) {
        sdk::fail(OAR_STATUS_UNSUPPORTED, "pad_backward: bool is not supported");
      } else {
        using Acc = kp::accumulate_t<T>;
        const T* g = sdk::data_of<T>(gv);
        T* gx = sdk::data_of<T>(xv);
        parallel_for(rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(W, 1)),
                     [&](int64_t b, int64_t e) {
                       std::vector<Acc> acc(static_cast<size_t>(Wx));
                       std::vector<int64_t> idx(size_t(nd), 0), pos(size_t(nd), 0);
                       std::vector<const std::vector<int64_t>*> lists(static_cast<size_t>(nd));
                       for (int64_t r = b; r < e; ++r) {
                         std::fill(acc.begin(), acc.end(), Acc(0));
                         bool any = true;
                         for (int64_t d = nd - 2, rem = r; d >= 0; --d) {
                           lists[size_t(d)] = &inv[size_t(d)][size_t(rem % in[size_t(d)])];
                           rem /= in[size_t(d)];
                           any = any && !lists[size_t(d)]->empty();
                           pos[size_t(d)] = 0;
                         }
                         // every combination of padded leading coordinates that reads this row
                         while (any) {
                           int64_t off = 0;
                           for (int64_t d = 0; d < nd - 1; ++d)
                             off += (*lists[size_t(d)])[size_t(pos[size_t(d)])] * gs[size_t(d)];
                           const T* gr = g + off;
                           for (int64_t c = 0; c < W; ++c)
                             if (last[size_t(c)] >= 0) acc[size_t(last[size_t(c)])] += Acc(gr[c]);
                           int64_t d = nd - 2;
                           for (; d >= 0; --d) {
                             if (++pos[size_t(d)] < int64_t(lists[size_t(d)]->size())) break;
                             pos[size_t(d)] = 0;
                           }
                           if (d < 0) break;
                         }
                         for (int64_t c = 0; c < Wx; ++c) gx[r * Wx + c] = T(acc[size_t(c)]);
                       }
                     });
      }
    });
  });
}

}  // namespace

oar_status_t register_indexing_shape_kernels(const oar_kernel_registrar* r) {
  const char* impl = "kp-cpu";
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

}  // namespace oar_cpu
