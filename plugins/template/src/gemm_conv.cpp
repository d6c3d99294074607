// The kernels the primitives do not give: matmul and the three convolution
// kernels, as plain loops accumulating in double. This is where a vendor's
// library goes: register its kernel for the same op at a higher priority
// (with a `supports` function for the cases it does not take) and keep these
// loops as the reference the library falls back to (docs/vendor-guide.md).
#include <vector>

#include "oar/plugin_sdk/kernel_api.hpp"
#include "oar/plugin_sdk/op_geometry.hpp"
#include "template_plugin.h"

namespace tmpl {

namespace {

using oar::sdk::KernelArgs;

// y[..., M, N] = a[..., M, K] @ b[..., K, N]; a and b may be strided and
// their batch dimensions broadcast (size 1 against y's).
template <class T>
void matmul(const KernelArgs& args) {
  const oar_tensor_view &a = args.input(0), &b = args.input(1), &y = args.output(0);
  const int nd = y.ndim;
  const int64_t M = y.shape[nd - 2], N = y.shape[nd - 1], K = a.shape[a.ndim - 1];
  if (M * N == 0) return;
  const int64_t batches = oar::sdk::numel(y) / (M * N);
  const T *pa = static_cast<const T*>(a.data), *pb = static_cast<const T*>(b.data);
  T* py = oar::sdk::data_of<T>(y);
  const int64_t am = a.strides[a.ndim - 2], ak = a.strides[a.ndim - 1];
  const int64_t bk = b.strides[b.ndim - 2], bn = b.strides[b.ndim - 1];
  for (int64_t batch = 0; batch < batches; ++batch) {
    int64_t rest = batch, oa = a.offset, ob = b.offset;
    for (int d = nd - 3; d >= 0; --d) {
      const int64_t i = rest % y.shape[d];
      rest /= y.shape[d];
      const int da = d - (nd - a.ndim), db = d - (nd - b.ndim);
      if (da >= 0 && a.shape[da] != 1) oa += i * a.strides[da];
      if (db >= 0 && b.shape[db] != 1) ob += i * b.strides[db];
    }
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += double(pa[oa + m * am + k * ak]) * double(pb[ob + k * bk + n * bn]);
        py[(batch * M + m) * N + n] = T(acc);
      }
  }
}

// Every (output, input, weight) element triple a 2-D convolution multiplies,
// as flat indices into dense NCHW tensors; the three kernels differ only in
// which of the three they accumulate into.
struct ConvShape {
  int64_t N, C, H, W, OC, OH, OW, KH, KW;
  oar::sdk::ConvParams p;
};

template <class F>
void for_each_tap(const ConvShape& s, F&& f) {
  const int64_t cpg = s.C / s.p.groups, opg = s.OC / s.p.groups;
  for (int64_t n = 0; n < s.N; ++n)
    for (int64_t oc = 0; oc < s.OC; ++oc)
      for (int64_t ic = 0; ic < cpg; ++ic) {
        const int64_t c = (oc / opg) * cpg + ic;
        for (int64_t kh = 0; kh < s.KH; ++kh)
          for (int64_t kw = 0; kw < s.KW; ++kw)
            for (int64_t oh = 0; oh < s.OH; ++oh) {
              const int64_t ih = oh * s.p.sh - s.p.ph + kh * s.p.dh;
              if (ih < 0 || ih >= s.H) continue;
              for (int64_t ow = 0; ow < s.OW; ++ow) {
                const int64_t iw = ow * s.p.sw - s.p.pw + kw * s.p.dw;
                if (iw < 0 || iw >= s.W) continue;
                f(((n * s.OC + oc) * s.OH + oh) * s.OW + ow, ((n * s.C + c) * s.H + ih) * s.W + iw,
                  ((oc * cpg + ic) * s.KH + kh) * s.KW + kw);
              }
            }
      }
}

ConvShape conv_shape(const KernelArgs& args, const oar_tensor_view& x, const oar_tensor_view& w,
                     const oar_tensor_view& y) {
  return {x.shape[0], x.shape[1], x.shape[2], x.shape[3], w.shape[0], y.shape[2], y.shape[3],
          w.shape[2], w.shape[3], oar::sdk::conv_params(args)};
}

template <class T>
void store(const std::vector<double>& acc, const oar_tensor_view& out) {
  T* p = oar::sdk::data_of<T>(out);
  for (size_t i = 0; i < acc.size(); ++i) p[i] = T(acc[i]);
}

template <class T>
void conv2d(const KernelArgs& args) {  // y = conv(x, w) + bias
  const oar_tensor_view &x = args.input(0), &w = args.input(1), &y = args.output(0);
  const ConvShape s = conv_shape(args, x, w, y);
  const T *px = oar::sdk::data_of<T>(x), *pw = oar::sdk::data_of<T>(w);
  std::vector<double> acc(size_t(oar::sdk::numel(y)), 0.0);
  if (args.has_input(2)) {
    const T* pb = oar::sdk::data_of<T>(args.input(2));
    for (size_t i = 0; i < acc.size(); ++i) acc[i] = double(pb[(int64_t(i) / (s.OH * s.OW)) % s.OC]);
  }
  for_each_tap(s, [&](int64_t o, int64_t i, int64_t k) { acc[size_t(o)] += double(px[i]) * double(pw[k]); });
  store<T>(acc, y);
}

template <class T>
void conv2d_backward_data(const KernelArgs& args) {  // grad_x from grad_y and w
  const oar_tensor_view &gy = args.input(0), &w = args.input(1), &gx = args.output(0);
  const ConvShape s = conv_shape(args, gx, w, gy);
  const T *pg = oar::sdk::data_of<T>(gy), *pw = oar::sdk::data_of<T>(w);
  std::vector<double> acc(size_t(oar::sdk::numel(gx)), 0.0);
  for_each_tap(s, [&](int64_t o, int64_t i, int64_t k) { acc[size_t(i)] += double(pg[o]) * double(pw[k]); });
  store<T>(acc, gx);
}

template <class T>
void conv2d_backward_weight(const KernelArgs& args) {  // grad_w from grad_y and x
  const oar_tensor_view &gy = args.input(0), &x = args.input(1), &gw = args.output(0);
  const ConvShape s = conv_shape(args, x, gw, gy);
  const T *pg = oar::sdk::data_of<T>(gy), *px = oar::sdk::data_of<T>(x);
  std::vector<double> acc(size_t(oar::sdk::numel(gw)), 0.0);
  for_each_tap(s, [&](int64_t o, int64_t i, int64_t k) { acc[size_t(k)] += double(pg[o]) * double(px[i]); });
  store<T>(acc, gw);
}

// The C kernel of each op: the output's dtype picks the instantiation.
template <class Body>
oar_status_t float_kernel(const oar_kernel_context* ctx, Body body) {
  return oar::sdk::run_kernel(ctx, [&](const KernelArgs& a) {
    oar::sdk::visit_float(a.output(0).dtype, [&]<class T>() { body.template operator()<T>(a); });
  });
}
oar_status_t matmul_kernel(const oar_kernel_context* c) {
  return float_kernel(c, []<class T>(const KernelArgs& a) { matmul<T>(a); });
}
oar_status_t conv2d_kernel(const oar_kernel_context* c) {
  return float_kernel(c, []<class T>(const KernelArgs& a) { conv2d<T>(a); });
}
oar_status_t conv2d_backward_data_kernel(const oar_kernel_context* c) {
  return float_kernel(c, []<class T>(const KernelArgs& a) { conv2d_backward_data<T>(a); });
}
oar_status_t conv2d_backward_weight_kernel(const oar_kernel_context* c) {
  return float_kernel(c, []<class T>(const KernelArgs& a) { conv2d_backward_weight<T>(a); });
}

}  // namespace

oar_status_t register_gemm_conv_kernels(const oar_kernel_registrar* r) {
  using oar::sdk::kFloatDTypes;
  using oar::sdk::register_same_dtype;
  if (oar_status_t st = register_same_dtype(r, "matmul", kFloatDTypes, 2, matmul_kernel, "template-loop")) return st;
  if (oar_status_t st = register_same_dtype(r, "conv2d", kFloatDTypes, 2, conv2d_kernel, "template-loop")) return st;
  if (oar_status_t st = register_same_dtype(r, "conv2d_backward_data", kFloatDTypes, 2, conv2d_backward_data_kernel,
                                            "template-loop"))
    return st;
  return register_same_dtype(r, "conv2d_backward_weight", kFloatDTypes, 2, conv2d_backward_weight_kernel,
                             "template-loop");
}

}  // namespace tmpl
