// CUDA softmax / log_softmax and their backward ops along any dim through
// cuDNN's softmax (CUDNN_SOFTMAX_ACCURATE / CUDNN_SOFTMAX_LOG over the channel
// dim) for f32, f64 and f16, above the softmax family of kernel_primitives/
// (families.cu), which serves bf16 and what cuDNN's 32-bit descriptors cannot
// hold. The dense input [outer, D, inner] is NCHW (outer, D, inner, 1) to cuDNN.
#include <climits>
#include <cmath>
#include <cstdio>

#include "oar/plugin_sdk/op_geometry.hpp"
#include "ops/ops.h"
#include "ops/vendor_common.cuh"
#include "vendor_handles.h"

namespace oar_gpu {

namespace {

using namespace nn;

struct Geom {
  int64_t outer = 1, d = 1, inner = 1;
};

Geom geometry(const sdk::KernelArgs& a) {
  sdk::AxisExtents e = sdk::axis_extents(a.input(0), a.attr_int("dim"));
  return {e.outer, e.d, e.inner};
}

// ---- cuDNN ----

cudnnDataType_t dnn_dtype(oar_dtype_t d) {
  return d == OAR_DTYPE_F64 ? CUDNN_DATA_DOUBLE : d == OAR_DTYPE_F16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
}

// cuDNN's descriptors hold int sizes and strides: the whole tensor must fit.
int32_t cudnn_supports(const oar_kernel_context* ctx, char* reason, size_t size) {
  const oar_tensor_view& x = ctx->inputs[0];
  int64_t n = sdk::numel(x);
  if (n <= INT_MAX) return 1;
  std::snprintf(reason, size, "%lld elements exceed cuDNN's 32-bit tensor descriptors", (long long)n);
  return 0;
}

struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc(oar_dtype_t dtype, const Geom& g) {
    check_cudnn(cudnn().CreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor");
    const int D = int(g.d), I = int(g.inner);
    check_cudnn(cudnn().SetTensor4dDescriptorEx(d, dnn_dtype(dtype), int(g.outer), D, I, 1, D * I, I, 1, 1),
                "cudnnSetTensor4dDescriptorEx");
  }
  ~TensorDesc() { cudnn().DestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};

template <bool kLog, bool kBackward>
oar_status_t cudnn_softmax(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    if (sdk::numel(a.output(0)) == 0) return;
    OpContext c(a);
    Geom g = geometry(a);
    const oar_dtype_t dtype = a.output(0).dtype;
    DenseOutput out(c, a.output(0));
    const void* in0 = dense_input(c, a.input(0));
    const void* in1 = kBackward ? dense_input(c, a.input(1)) : nullptr;
    TensorDesc desc(dtype, g);
    cudnnHandle_t h = cudnn_handle(c.device, c.stream);
    const float one = 1.0f, zero = 0.0f;
    const double one_d = 1.0, zero_d = 0.0;
    const bool f64 = dtype == OAR_DTYPE_F64;
    const void* alpha = f64 ? static_cast<const void*>(&one_d) : &one;
    const void* beta = f64 ? static_cast<const void*>(&zero_d) : &zero;
    const cudnnSoftmaxAlgorithm_t algo = kLog ? CUDNN_SOFTMAX_LOG : CUDNN_SOFTMAX_ACCURATE;
    if (kBackward)  // in0 = grad_y, in1 = y
      check_cudnn(cudnn().SoftmaxBackward(h, algo, CUDNN_SOFTMAX_MODE_CHANNEL, alpha, desc.d, in1, desc.d, in0, beta,
                                       desc.d, out.data()),
                  kLog ? "log_softmax_backward: cudnnSoftmaxBackward" : "softmax_backward: cudnnSoftmaxBackward");
    else
      check_cudnn(cudnn().SoftmaxForward(h, algo, CUDNN_SOFTMAX_MODE_CHANNEL, alpha, desc.d, in0, beta, desc.d,
                                      out.data()),
                  kLog ? "log_softmax: cudnnSoftmaxForward" : "softmax: cudnnSoftmaxForward");
    out.finish();
  });
}

template <bool kLog, bool kBackward>
oar_status_t register_softmax(const oar_kernel_registrar* r, const char* op) {
  // cuDNN's softmax has no bf16: the softmax family (families.cu) serves it.
  static constexpr oar_dtype_t kCudnnDTypes[] = {OAR_DTYPE_F32, OAR_DTYPE_F64, OAR_DTYPE_F16};
  return oar::sdk::register_same_dtype(r, op, kCudnnDTypes, kBackward ? 2 : 1, cudnn_softmax<kLog, kBackward>, "cudnn",
                                       10, cudnn_supports);
}

}  // namespace

oar_status_t register_softmax_kernels(const oar_kernel_registrar* r) {
  if (auto st = register_softmax<false, false>(r, "softmax")) return st;
  if (auto st = register_softmax<false, true>(r, "softmax_backward")) return st;
  if (auto st = register_softmax<true, false>(r, "log_softmax")) return st;
  return register_softmax<true, true>(r, "log_softmax_backward");
}

}  // namespace oar_gpu
