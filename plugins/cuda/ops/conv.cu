// CUDA conv2d and its two backward ops through cuDNN 9's legacy convolution
// API, for the CPU plugin's dtypes (the four float dtypes; f16 / bf16 compute
// in f32, f64 in f64) and attributes (stride, padding, dilation, groups; an
// optional bias on the forward op). Operands are dense NCHW / OIHW, which is
// what dispatch hands over; the descriptors carry the views' strides, and an
// output that is not dense goes through a workspace.
//
// Algorithms: cuDNN's heuristics (cudnnGet*Algorithm_v7) by default, or,
// with OAR_CUDA_CUDNN_EXHAUSTIVE_SEARCH=1, timing every candidate
// (cudnnFind*AlgorithmEx). Either way the choice is cached per problem
// (algo_cache.h: op kind, shapes, strides, dtype, conv parameters, device and
// the flags that change the answer), so the search runs once, and each search
// is logged at INFO with what it picked. Algorithms needing more workspace
// than OAR_CUDA_CUDNN_WORKSPACE_LIMIT_MB are skipped. f32 runs on TF32 tensor
// cores only when OAR_CUDA_ALLOW_TF32=1 (CUDNN_FMA_MATH otherwise, as PyTorch).
// The bias is added after the convolution by an elementwise kernel.
#include <climits>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "oar/plugin_sdk/op_geometry.hpp"
#include "algo_cache.h"
#include "ops/ops.h"
#include "ops/vendor_common.cuh"
#include "vendor_handles.h"

namespace oar_gpu {

AlgoCache& conv_algo_cache() {
  static AlgoCache cache;
  return cache;
}

namespace {

using namespace nn;

enum ConvKind : int64_t { kForward, kBackwardData, kBackwardWeight };

const char* kind_name(ConvKind k) {
  return k == kForward ? "conv2d" : k == kBackwardData ? "conv2d_backward_data" : "conv2d_backward_weight";
}

struct ConvGeom : sdk::ConvParams {
  ConvKind kind;
  oar_dtype_t dtype;
  int64_t x[4], w[4], y[4];  // [N, C, H, W], [OC, C / groups, KH, KW], [N, OC, OH, OW]
  bool bias = false;
};


void copy4(int64_t (&dst)[4], const oar_tensor_view& v) {
  for (int i = 0; i < 4; ++i) dst[i] = v.shape[i];
}

ConvGeom geometry(const sdk::KernelArgs& a, ConvKind kind) {
  ConvGeom g;
  g.kind = kind;
  g.dtype = a.output(0).dtype;
  static_cast<sdk::ConvParams&>(g) = sdk::conv_params(a);
  if (kind == kForward) {
    copy4(g.x, a.input(0)), copy4(g.w, a.input(1)), copy4(g.y, a.output(0));
    g.bias = a.has_input(2);
  } else if (kind == kBackwardData) {
    copy4(g.y, a.input(0)), copy4(g.w, a.input(1)), copy4(g.x, a.output(0));
  } else {
    copy4(g.y, a.input(0)), copy4(g.x, a.input(1)), copy4(g.w, a.output(0));
  }
  return g;
}

// ---- descriptors (RAII) ----

cudnnDataType_t dnn_dtype(oar_dtype_t d) {
  switch (d) {
    case OAR_DTYPE_F32: return CUDNN_DATA_FLOAT;
    case OAR_DTYPE_F64: return CUDNN_DATA_DOUBLE;
    case OAR_DTYPE_F16: return CUDNN_DATA_HALF;
    default: return CUDNN_DATA_BFLOAT16;
  }
}

// Dense strides of an NCHW shape; every value must fit cuDNN's int.
void dense4(const int64_t (&shape)[4], int (&dims)[4], int (&strides)[4]) {
  int64_t acc = 1;
  for (int i = 3; i >= 0; --i) {
    dims[i] = int(shape[i]);
    strides[i] = int(acc);
    acc *= shape[i] > 1 ? shape[i] : 1;
  }
}

struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  TensorDesc(oar_dtype_t dtype, const int64_t (&shape)[4]) {
    check_cudnn(cudnn().CreateTensorDescriptor(&d), "cudnnCreateTensorDescriptor");
    int dims[4], st[4];
    dense4(shape, dims, st);
    check_cudnn(cudnn().SetTensor4dDescriptorEx(d, dnn_dtype(dtype), dims[0], dims[1], dims[2], dims[3], st[0], st[1],
                                             st[2], st[3]),
                "cudnnSetTensor4dDescriptorEx");
  }
  ~TensorDesc() { cudnn().DestroyTensorDescriptor(d); }
  TensorDesc(const TensorDesc&) = delete;
  TensorDesc& operator=(const TensorDesc&) = delete;
};

struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  FilterDesc(oar_dtype_t dtype, const int64_t (&w)[4]) {
    check_cudnn(cudnn().CreateFilterDescriptor(&d), "cudnnCreateFilterDescriptor");
    check_cudnn(cudnn().SetFilter4dDescriptor(d, dnn_dtype(dtype), CUDNN_TENSOR_NCHW, int(w[0]), int(w[1]), int(w[2]),
                                           int(w[3])),
                "cudnnSetFilter4dDescriptor");
  }
  ~FilterDesc() { cudnn().DestroyFilterDescriptor(d); }
  FilterDesc(const FilterDesc&) = delete;
  FilterDesc& operator=(const FilterDesc&) = delete;
};

struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  explicit ConvDesc(const ConvGeom& g) {
    check_cudnn(cudnn().CreateConvolutionDescriptor(&d), "cudnnCreateConvolutionDescriptor");
    cudnnDataType_t compute = g.dtype == OAR_DTYPE_F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    check_cudnn(cudnn().SetConvolution2dDescriptor(d, int(g.ph), int(g.pw), int(g.sh), int(g.sw), int(g.dh), int(g.dw),
                                                CUDNN_CROSS_CORRELATION, compute),
                "cudnnSetConvolution2dDescriptor");
    check_cudnn(cudnn().SetConvolutionGroupCount(d, int(g.groups)), "cudnnSetConvolutionGroupCount");
  }
  void set_math(cudnnMathType_t m) { check_cudnn(cudnn().SetConvolutionMathType(d, m), "cudnnSetConvolutionMathType"); }
  ~ConvDesc() { cudnn().DestroyConvolutionDescriptor(d); }
  ConvDesc(const ConvDesc&) = delete;
  ConvDesc& operator=(const ConvDesc&) = delete;
};

struct Descs {
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;
  explicit Descs(const ConvGeom& g) : x(g.dtype, g.x), y(g.dtype, g.y), w(g.dtype, g.w), conv(g) {}
};

// Device pointers of one call: inputs and the output the op writes.
struct Ptrs {
  const void* x = nullptr;
  const void* w = nullptr;
  const void* dy = nullptr;
  void* out = nullptr;
};

// ---- the three kinds through one interface ----

template <ConvKind K> struct Kind;

template <> struct Kind<kForward> {
  using Perf = cudnnConvolutionFwdAlgoPerf_t;
  using Algo = cudnnConvolutionFwdAlgo_t;
  static constexpr int kCount = CUDNN_CONVOLUTION_FWD_ALGO_COUNT;
  static const char* name(int a) {
    static const char* n[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT",
                              "FFT",           "FFT_TILING",            "WINOGRAD", "WINOGRAD_NONFUSED"};
    return a >= 0 && a < kCount ? n[a] : "?";
  }
  static cudnnStatus_t max_count(cudnnHandle_t h, int* n) { return cudnn().GetConvolutionForwardAlgorithmMaxCount(h, n); }
  static cudnnStatus_t heuristics(cudnnHandle_t h, const Descs& d, int n, int* got, Perf* p) {
    return cudnn().GetConvolutionForwardAlgorithm_v7(h, d.x.d, d.w.d, d.conv.d, d.y.d, n, got, p);
  }
  static cudnnStatus_t find(cudnnHandle_t h, const Descs& d, const Ptrs& q, int n, int* got, Perf* p, void* ws,
                            size_t bytes) {
    return cudnn().FindConvolutionForwardAlgorithmEx(h, d.x.d, q.x, d.w.d, q.w, d.conv.d, d.y.d, q.out, n, got, p, ws,
                                                  bytes);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const Descs& d, int algo, size_t* bytes) {
    return cudnn().GetConvolutionForwardWorkspaceSize(h, d.x.d, d.w.d, d.conv.d, d.y.d, Algo(algo), bytes);
  }
  static cudnnStatus_t run(cudnnHandle_t h, const void* alpha, const Descs& d, const Ptrs& q, int algo, void* ws,
                           size_t bytes, const void* beta) {
    return cudnn().ConvolutionForward(h, alpha, d.x.d, q.x, d.w.d, q.w, d.conv.d, Algo(algo), ws, bytes, beta, d.y.d,
                                   q.out);
  }
};

template <> struct Kind<kBackwardData> {
  using Perf = cudnnConvolutionBwdDataAlgoPerf_t;
  using Algo = cudnnConvolutionBwdDataAlgo_t;
  static constexpr int kCount = CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT;
  static const char* name(int a) {
    static const char* n[] = {"ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
    return a >= 0 && a < kCount ? n[a] : "?";
  }
  static cudnnStatus_t max_count(cudnnHandle_t h, int* n) {
    return cudnn().GetConvolutionBackwardDataAlgorithmMaxCount(h, n);
  }
  static cudnnStatus_t heuristics(cudnnHandle_t h, const Descs& d, int n, int* got, Perf* p) {
    return cudnn().GetConvolutionBackwardDataAlgorithm_v7(h, d.w.d, d.y.d, d.conv.d, d.x.d, n, got, p);
  }
  static cudnnStatus_t find(cudnnHandle_t h, const Descs& d, const Ptrs& q, int n, int* got, Perf* p, void* ws,
                            size_t bytes) {
    return cudnn().FindConvolutionBackwardDataAlgorithmEx(h, d.w.d, q.w, d.y.d, q.dy, d.conv.d, d.x.d, q.out, n, got,
                                                       p, ws, bytes);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const Descs& d, int algo, size_t* bytes) {
    return cudnn().GetConvolutionBackwardDataWorkspaceSize(h, d.w.d, d.y.d, d.conv.d, d.x.d, Algo(algo), bytes);
  }
  static cudnnStatus_t run(cudnnHandle_t h, const void* alpha, const Descs& d, const Ptrs& q, int algo, void* ws,
                           size_t bytes, const void* beta) {
    return cudnn().ConvolutionBackwardData(h, alpha, d.w.d, q.w, d.y.d, q.dy, d.conv.d, Algo(algo), ws, bytes, beta,
                                        d.x.d, q.out);
  }
};

template <> struct Kind<kBackwardWeight> {
  using Perf = cudnnConvolutionBwdFilterAlgoPerf_t;
  using Algo = cudnnConvolutionBwdFilterAlgo_t;
  static constexpr int kCount = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT;
  static const char* name(int a) {
    static const char* n[] = {"ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};
    return a >= 0 && a < kCount ? n[a] : "?";
  }
  static cudnnStatus_t max_count(cudnnHandle_t h, int* n) {
    return cudnn().GetConvolutionBackwardFilterAlgorithmMaxCount(h, n);
  }
  static cudnnStatus_t heuristics(cudnnHandle_t h, const Descs& d, int n, int* got, Perf* p) {
    return cudnn().GetConvolutionBackwardFilterAlgorithm_v7(h, d.x.d, d.y.d, d.conv.d, d.w.d, n, got, p);
  }
  static cudnnStatus_t find(cudnnHandle_t h, const Descs& d, const Ptrs& q, int n, int* got, Perf* p, void* ws,
                            size_t bytes) {
    return cudnn().FindConvolutionBackwardFilterAlgorithmEx(h, d.x.d, q.x, d.y.d, q.dy, d.conv.d, d.w.d, q.out, n, got,
                                                         p, ws, bytes);
  }
  static cudnnStatus_t workspace(cudnnHandle_t h, const Descs& d, int algo, size_t* bytes) {
    return cudnn().GetConvolutionBackwardFilterWorkspaceSize(h, d.x.d, d.y.d, d.conv.d, d.w.d, Algo(algo), bytes);
  }
  static cudnnStatus_t run(cudnnHandle_t h, const void* alpha, const Descs& d, const Ptrs& q, int algo, void* ws,
                           size_t bytes, const void* beta) {
    return cudnn().ConvolutionBackwardFilter(h, alpha, d.x.d, q.x, d.y.d, q.dy, d.conv.d, Algo(algo), ws, bytes, beta,
                                          d.w.d, q.out);
  }
};

// ---- algorithm choice ----

struct Settings {
  bool tf32, exhaustive;
  uint64_t limit_bytes;
};

Settings read_settings() {
  Settings s;
  s.tf32 = allow_tf32();
  s.exhaustive = cudnn_exhaustive_search();
  int64_t mb = cudnn_workspace_limit_mb();
  s.limit_bytes = mb < 0 ? 0 : uint64_t(mb) << 20;
  return s;
}

// The math type the descriptor starts from: tensor cores for f16 / bf16,
// TF32 for f32 only when allowed.
cudnnMathType_t base_math(oar_dtype_t d, bool tf32) {
  if (d == OAR_DTYPE_F16 || d == OAR_DTYPE_BF16) return CUDNN_TENSOR_OP_MATH;
  if (d == OAR_DTYPE_F32 && !tf32) return CUDNN_FMA_MATH;
  return CUDNN_DEFAULT_MATH;
}

// f32 without TF32 must not take a tensor-core algorithm, whatever math type
// a search reports for it; the others run in the math type reported.
bool acceptable_math(oar_dtype_t d, bool tf32, cudnnMathType_t m) {
  if (d == OAR_DTYPE_F32 && !tf32) return m != CUDNN_TENSOR_OP_MATH && m != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION;
  return true;
}

cudnnMathType_t run_math(oar_dtype_t d, bool tf32, cudnnMathType_t reported) {
  return d == OAR_DTYPE_F32 && !tf32 ? CUDNN_FMA_MATH : reported;
}

AlgoKey key_of(const ConvGeom& g, int32_t device, const Settings& s) {
  AlgoKey k;
  k.note(kind_name(g.kind)).note(sdk::dtype_name(g.dtype));
  int xd[4], xs[4], yd[4], ys[4];
  dense4(g.x, xd, xs);
  dense4(g.y, yd, ys);
  std::vector<int64_t> x_strides(xs, xs + 4), y_strides(ys, ys + 4);
  k.add("kind", g.kind).add("dtype", g.dtype).add("device", device);
  k.add("x", g.x, 4).add("x_strides", x_strides).add("w", g.w, 4).add("y", g.y, 4).add("y_strides", y_strides);
  k.add("layout", 0);  // NCHW
  k.add("stride", {g.sh, g.sw}).add("padding", {g.ph, g.pw}).add("dilation", {g.dh, g.dw}).add("groups", g.groups);
  k.add("tf32", s.tf32).add("exhaustive", s.exhaustive).add("workspace_limit", int64_t(s.limit_bytes));
  return k;
}

template <ConvKind K>
AlgoChoice search(const OpContext& c, cudnnHandle_t h, const ConvGeom& g, Descs& d, const Ptrs& q,
                  const Settings& s) {
  using Ops = Kind<K>;
  using Perf = typename Ops::Perf;
  const cudnnMathType_t start = base_math(g.dtype, s.tf32);
  d.conv.set_math(start);
  int max_count = 0;
  check_cudnn(Ops::max_count(h, &max_count), "cudnnGetConvolution*AlgorithmMaxCount");
  if (max_count < Ops::kCount) max_count = Ops::kCount;
  std::vector<Perf> perf(static_cast<size_t>(max_count));
  int got = 0;
  if (s.exhaustive) {
    // Time every algorithm that fits: give the search the largest workspace any of them needs, within the limit.
    size_t ws_bytes = 0;
    for (int algo = 0; algo < Ops::kCount; ++algo) {
      size_t need = 0;
      if (Ops::workspace(h, d, algo, &need) == CUDNN_STATUS_SUCCESS && need <= s.limit_bytes && need > ws_bytes)
        ws_bytes = need;
    }
    void* ws = c.workspace(ws_bytes);
    check_cudnn(Ops::find(h, d, q, max_count, &got, perf.data(), ws, ws_bytes), "cudnnFind*AlgorithmEx");
  } else {
    check_cudnn(Ops::heuristics(h, d, max_count, &got, perf.data()), "cudnnGet*Algorithm_v7");
  }
  std::string skipped;
  for (int i = 0; i < got; ++i) {
    const Perf& p = perf[size_t(i)];
    if (p.status != CUDNN_STATUS_SUCCESS || !acceptable_math(g.dtype, s.tf32, p.mathType)) continue;
    cudnnMathType_t math = run_math(g.dtype, s.tf32, p.mathType);
    d.conv.set_math(math);
    size_t need = 0;
    if (Ops::workspace(h, d, int(p.algo), &need) != CUDNN_STATUS_SUCCESS) continue;
    if (need > s.limit_bytes) {
      skipped += std::string(skipped.empty() ? "" : ", ") + Ops::name(int(p.algo)) + " needs " +
                 std::to_string(need) + " bytes";
      continue;
    }
    AlgoChoice choice;
    choice.algo = int64_t(p.algo);
    choice.math_type = int64_t(math);
    choice.workspace_bytes = need;
    choice.time_ms = s.exhaustive ? p.time : -1.0f;
    return choice;
  }
  sdk::fail(OAR_STATUS_UNSUPPORTED,
            std::string(kind_name(g.kind)) + ": cuDNN offers no " + sdk::dtype_name(g.dtype) +
                " algorithm for this problem within OAR_CUDA_CUDNN_WORKSPACE_LIMIT_MB=" +
                std::to_string(s.limit_bytes >> 20) + (skipped.empty() ? "" : " (" + skipped + ")"));
}

template <ConvKind K>
void log_choice(const AlgoKey& key, const AlgoChoice& choice) {
  char time[32];
  if (choice.time_ms >= 0) std::snprintf(time, sizeof(time), "%.3f ms", double(choice.time_ms));
  else std::snprintf(time, sizeof(time), "heuristic");
  std::string msg = "cudnn conv algorithm search for " + key.text() + ": picked " + Kind<K>::name(int(choice.algo)) +
                    " (" + time + ", workspace " + std::to_string(choice.workspace_bytes) + " bytes)";
  log_message(OAR_LOG_INFO, msg.c_str());
}

// ---- bias ----

struct Add {
  template <class X>
  __host__ __device__ X operator()(X a, X b) const {
    return a + b;
  }
};

// y[n, oc, h, w] += bias[oc] on dense y.
void add_bias(const OpContext& c, const ConvGeom& g, void* y, const void* bias) {
  const int64_t ys[4] = {g.y[1] * g.y[2] * g.y[3], g.y[2] * g.y[3], g.y[3], 1};
  const int64_t bs[4] = {0, 1, 0, 0};
  gpu::Error err = OAR_GPU(Success);
  sdk::visit_float(g.dtype, [&]<class T>() {
    T* yp = static_cast<T*>(y);
    err = kp::gpu::elementwise<T, T, T>(c.stream, 4, g.y, kp::gpu::Operand<T>{yp, ys}, Add{},
                                        kp::gpu::Operand<const T>{yp, ys},
                                        kp::gpu::Operand<const T>{static_cast<const T*>(bias), bs});
  });
  check(err, "conv2d: bias kernel");
}

// Broadcasts bias[oc] over dense y (a convolution over nothing is just its bias).
void fill_bias(const OpContext& c, const ConvGeom& g, void* y, const void* bias) {
  const int64_t ys[4] = {g.y[1] * g.y[2] * g.y[3], g.y[2] * g.y[3], g.y[3], 1};
  const int64_t bs[4] = {0, 1, 0, 0};
  copy_strided(c, 4, g.y, elem_size(g.dtype), y, ys, bias, bs);
}

// ---- kernels ----

int64_t numel4(const int64_t (&s)[4]) { return s[0] * s[1] * s[2] * s[3]; }

// cuDNN's legacy descriptors hold int sizes and strides.
void require_int_sizes(const ConvGeom& g) {
  for (const int64_t* s : {g.x, g.w, g.y})
    if (s[0] * s[1] * s[2] * s[3] > INT_MAX)
      sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(kind_name(g.kind)) + ": a tensor of " +
                                            std::to_string(s[0] * s[1] * s[2] * s[3]) +
                                            " elements exceeds cuDNN's 32-bit descriptors");
  for (int64_t v : {g.sh, g.sw, g.ph, g.pw, g.dh, g.dw, g.groups})
    if (v > INT_MAX) sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(kind_name(g.kind)) + ": attribute exceeds int");
}

template <ConvKind K>
oar_status_t conv_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    ConvGeom g = geometry(a, K);
    const oar_tensor_view& out_view = a.output(0);
    if (sdk::numel(out_view) == 0) return;
    DenseOutput out(c, out_view);
    Ptrs q;
    q.out = out.data();
    bool empty_sum;  // the output sums over nothing
    if (K == kForward) {
      q.x = dense_input(c, a.input(0)), q.w = dense_input(c, a.input(1));
      empty_sum = numel4(g.x) == 0 || numel4(g.w) == 0;
    } else if (K == kBackwardData) {
      q.dy = dense_input(c, a.input(0)), q.w = dense_input(c, a.input(1));
      empty_sum = numel4(g.y) == 0 || numel4(g.w) == 0;
    } else {
      q.dy = dense_input(c, a.input(0)), q.x = dense_input(c, a.input(1));
      empty_sum = numel4(g.y) == 0 || numel4(g.x) == 0;
    }
    const void* bias = K == kForward && g.bias ? dense_input(c, a.input(2)) : nullptr;
    if (empty_sum) {
      if (bias) fill_bias(c, g, q.out, bias);
      else check(cudaMemsetAsync(q.out, 0, size_t(sdk::numel(out_view) * elem_size(g.dtype)), c.stream),
                 "cudaMemsetAsync");
      out.finish();
      return;
    }
    require_int_sizes(g);

    cudnnHandle_t h = cudnn_handle(c.device, c.stream);
    Descs d(g);
    Settings s = read_settings();
    AlgoKey key = key_of(g, c.device, s);
    AlgoChoice choice = conv_algo_cache().get(key, [&] {
      AlgoChoice picked = search<K>(c, h, g, d, q, s);
      log_choice<K>(key, picked);
      return picked;
    });
    d.conv.set_math(cudnnMathType_t(choice.math_type));
    void* ws = c.workspace(choice.workspace_bytes);
    const float one = 1.0f, zero = 0.0f;
    const double one_d = 1.0, zero_d = 0.0;
    const bool f64 = g.dtype == OAR_DTYPE_F64;
    check_cudnn(Kind<K>::run(h, f64 ? static_cast<const void*>(&one_d) : &one, d, q, int(choice.algo), ws,
                             choice.workspace_bytes, f64 ? static_cast<const void*>(&zero_d) : &zero),
                K == kForward        ? "conv2d: cudnnConvolutionForward"
                : K == kBackwardData ? "conv2d_backward_data: cudnnConvolutionBackwardData"
                                     : "conv2d_backward_weight: cudnnConvolutionBackwardFilter");
    if (bias) add_bias(c, g, q.out, bias);
    out.finish();
  });
}

}  // namespace

oar_status_t register_conv_kernels(const oar_kernel_registrar* r) {
  auto reg = [r](const char* op, oar_kernel_fn fn) {
    return oar::sdk::register_same_dtype(r, op, oar::sdk::kFloatDTypes, 2, fn, "cudnn", 10);
  };
  if (auto st = reg("conv2d", conv_kernel<kForward>)) return st;
  if (auto st = reg("conv2d_backward_data", conv_kernel<kBackwardData>)) return st;
  return reg("conv2d_backward_weight", conv_kernel<kBackwardWeight>);
}

}  // namespace oar_gpu
