// CUDA rnn_layer / rnn_layer_backward on cuDNN's RNN API (v8: RNN_RELU,
// RNN_TANH, LSTM, GRU; f32 and f64), above the rnn family of
// kernel_primitives/ (families.cu), which serves packed batches (`lengths`)
// and empty ones. PyTorch's parameters map onto cuDNN's weight space as they
// are: each gate's matrix is row-major [H, I] / [H, H], the gate orders agree
// (LSTM i, f, g, o; GRU r, z, n with b_hn inside r * (...)), and two biases
// per gate (CUDNN_RNN_DOUBLE_BIAS); a layer without biases gets zeros. A
// reversed layer runs forward over the time-flipped input (a strided copy
// with a negative time stride). The backward reruns the forward in training
// mode for cuDNN's reserve space, which the op boundary does not carry.
// Registered behind OAR_CUDA_VENDOR_SOLVERS (off by default until these
// kernels have passed the conformance suite on a GPU: docs/gpu_check.md).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "ops/ops.h"
#include "ops/vendor_common.cuh"
#include "vendor_handles.h"

namespace oar_gpu {

namespace {

using namespace nn;

enum { kX, kH0, kWih, kWhh, kC0, kBih, kBhh, kLengths, kGradY, kGradH, kGradC };

struct Geom {
  cudnnRNNMode_t mode;
  bool lstm, reverse;
  int T, N, I, H, G;
  oar_dtype_t dtype;
  int64_t esize;
};

Geom geometry(const sdk::KernelArgs& a) {
  const std::string m = a.attr_string("mode");
  Geom g;
  g.mode = m == "LSTM" ? CUDNN_LSTM : m == "GRU" ? CUDNN_GRU : m == "RNN_RELU" ? CUDNN_RNN_RELU : CUDNN_RNN_TANH;
  g.lstm = g.mode == CUDNN_LSTM;
  g.G = g.lstm ? 4 : g.mode == CUDNN_GRU ? 3 : 1;
  g.reverse = a.attr_bool("reverse");
  const oar_tensor_view& x = a.input(kX);
  g.T = int(x.shape[0]), g.N = int(x.shape[1]), g.I = int(x.shape[2]), g.H = int(a.input(kWhh).shape[1]);
  g.dtype = x.dtype;
  g.esize = elem_size(x.dtype);
  return g;
}

// Only with OAR_CUDA_VENDOR_SOLVERS on; packed batches and empty ones are the
// family's; cuDNN takes int sizes.
int32_t cudnn_rnn_supports(const oar_kernel_context* ctx, char* reason, size_t size) {
  if (!vendor_solvers()) {
    std::snprintf(reason, size, "%s is off", kVendorSolversFlag);
    return 0;
  }
  if (ctx->num_inputs > kLengths && ctx->inputs[kLengths].data != nullptr) {
    std::snprintf(reason, size, "per-sequence lengths are served by the rnn family");
    return 0;
  }
  const oar_tensor_view& x = ctx->inputs[kX];
  const int64_t cells = x.shape[0] * x.shape[1];
  if (cells == 0 || x.shape[2] == 0 || ctx->inputs[kWhh].shape[1] == 0) {
    std::snprintf(reason, size, "empty sequences are served by the rnn family");
    return 0;
  }
  if (cells * std::max(x.shape[2], ctx->inputs[kWhh].shape[0]) > INT32_MAX) {
    std::snprintf(reason, size, "the sequence exceeds cuDNN's 32-bit sizes");
    return 0;
  }
  return 1;
}

cudnnDataType_t dnn_type(oar_dtype_t d) { return d == OAR_DTYPE_F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT; }

// The descriptors of one call, destroyed with it.
struct Descs {
  cudnnDropoutDescriptor_t dropout = nullptr;
  cudnnRNNDescriptor_t rnn = nullptr;
  cudnnRNNDataDescriptor_t x = nullptr, y = nullptr;
  cudnnTensorDescriptor_t h = nullptr, w = nullptr, b = nullptr;

  Descs(cudnnHandle_t handle, const Geom& g) {
    try {
      init(handle, g);
    } catch (...) {
      release();
      throw;
    }
  }
  ~Descs() { release(); }
  Descs(const Descs&) = delete;
  Descs& operator=(const Descs&) = delete;

 private:
  void init(cudnnHandle_t handle, const Geom& g) {
    const cudnnDataType_t t = dnn_type(g.dtype);
    check_cudnn(cudnn().CreateDropoutDescriptor(&dropout), "cudnnCreateDropoutDescriptor");
    // One layer: no dropout is applied, and with p = 0 cuDNN needs no RNG states.
    check_cudnn(cudnn().SetDropoutDescriptor(dropout, handle, 0.0f, nullptr, 0, 0), "cudnnSetDropoutDescriptor");
    check_cudnn(cudnn().CreateRNNDescriptor(&rnn), "cudnnCreateRNNDescriptor");
    // f32 keeps full precision (FMA only) unless OAR_CUDA_ALLOW_TF32 allows tensor cores, as matmul.
    const cudnnMathType_t math = g.dtype == OAR_DTYPE_F64 ? CUDNN_DEFAULT_MATH
                                 : allow_tf32()           ? CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION
                                                          : CUDNN_FMA_MATH;
    check_cudnn(cudnn().SetRNNDescriptor_v8(rnn, CUDNN_RNN_ALGO_STANDARD, g.mode, CUDNN_RNN_DOUBLE_BIAS,
                                            CUDNN_UNIDIRECTIONAL, CUDNN_LINEAR_INPUT, t, t, math, g.I, g.H, g.H, 1,
                                            dropout, CUDNN_RNN_PADDED_IO_ENABLED),
                "rnn_layer: cudnnSetRNNDescriptor_v8");
    const std::vector<int> lengths(size_t(g.N), g.T);
    double zero_d = 0;
    float zero_f = 0;
    void* fill = g.dtype == OAR_DTYPE_F64 ? static_cast<void*>(&zero_d) : &zero_f;
    check_cudnn(cudnn().CreateRNNDataDescriptor(&x), "cudnnCreateRNNDataDescriptor");
    check_cudnn(cudnn().SetRNNDataDescriptor(x, t, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, g.T, g.N, g.I,
                                             lengths.data(), fill),
                "rnn_layer: cudnnSetRNNDataDescriptor");
    check_cudnn(cudnn().CreateRNNDataDescriptor(&y), "cudnnCreateRNNDataDescriptor");
    check_cudnn(cudnn().SetRNNDataDescriptor(y, t, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED, g.T, g.N, g.H,
                                             lengths.data(), fill),
                "rnn_layer: cudnnSetRNNDataDescriptor");
    const int dims[3] = {1, g.N, g.H}, strides[3] = {g.N * g.H, g.H, 1};
    check_cudnn(cudnn().CreateTensorDescriptor(&h), "cudnnCreateTensorDescriptor");
    check_cudnn(cudnn().SetTensorNdDescriptor(h, t, 3, dims, strides), "rnn_layer: cudnnSetTensorNdDescriptor");
    check_cudnn(cudnn().CreateTensorDescriptor(&w), "cudnnCreateTensorDescriptor");
    check_cudnn(cudnn().CreateTensorDescriptor(&b), "cudnnCreateTensorDescriptor");
  }
  void release() {
    if (b) cudnn().DestroyTensorDescriptor(b);
    if (w) cudnn().DestroyTensorDescriptor(w);
    if (h) cudnn().DestroyTensorDescriptor(h);
    if (y) cudnn().DestroyRNNDataDescriptor(y);
    if (x) cudnn().DestroyRNNDataDescriptor(x);
    if (rnn) cudnn().DestroyRNNDescriptor(rnn);
    if (dropout) cudnn().DestroyDropoutDescriptor(dropout);
    b = w = h = nullptr, x = y = nullptr, rnn = nullptr, dropout = nullptr;
  }
};

// Where gate k's matrix and bias of the input (k < G) or recurrent (k >= G) side live in a weight space.
struct Slot {
  void* matrix;
  void* bias;
};
Slot weight_slot(cudnnHandle_t handle, Descs& d, size_t bytes, const void* space, int k) {
  Slot s{};
  check_cudnn(cudnn().GetRNNWeightParams(handle, d.rnn, 0, bytes, space, k, d.w, &s.matrix, d.b, &s.bias),
              "rnn_layer: cudnnGetRNNWeightParams");
  return s;
}

void copy_async(const OpContext& c, void* dst, const void* src, int64_t bytes) {
  check(OAR_GPU(MemcpyAsync)(dst, src, size_t(bytes), cudaMemcpyDeviceToDevice, c.stream), "cudaMemcpyAsync");
}

// A weight space holding the op's w_ih, w_hh and biases (zeros where the layer has none).
struct WeightSpace {
  size_t bytes = 0;
  void* data = nullptr;
};
WeightSpace pack_weights(const OpContext& c, cudnnHandle_t handle, Descs& d, const Geom& g) {
  const sdk::KernelArgs& a = c.args;
  WeightSpace ws;
  check_cudnn(cudnn().GetRNNWeightSpaceSize(handle, d.rnn, &ws.bytes), "rnn_layer: cudnnGetRNNWeightSpaceSize");
  ws.data = c.workspace(ws.bytes);
  check(OAR_GPU(MemsetAsync)(ws.data, 0, ws.bytes, c.stream), "cudaMemsetAsync");
  const char* wih = static_cast<const char*>(dense_input(c, a.input(kWih)));
  const char* whh = static_cast<const char*>(dense_input(c, a.input(kWhh)));
  const char* bih = a.has_input(kBih) ? static_cast<const char*>(dense_input(c, a.input(kBih))) : nullptr;
  const char* bhh = a.has_input(kBhh) ? static_cast<const char*>(dense_input(c, a.input(kBhh))) : nullptr;
  const int64_t mi = int64_t(g.H) * g.I * g.esize, mh = int64_t(g.H) * g.H * g.esize, vb = int64_t(g.H) * g.esize;
  for (int k = 0; k < g.G; ++k) {
    Slot in = weight_slot(handle, d, ws.bytes, ws.data, k), rec = weight_slot(handle, d, ws.bytes, ws.data, g.G + k);
    copy_async(c, in.matrix, wih + k * mi, mi);
    copy_async(c, rec.matrix, whh + k * mh, mh);
    if (bih) copy_async(c, in.bias, bih + k * vb, vb);
    if (bhh) copy_async(c, rec.bias, bhh + k * vb, vb);
  }
  return ws;
}

// dst = src with its time axis reversed ([T, N, F], dense).
void flip_time(const OpContext& c, const Geom& g, int64_t F, const void* src, void* dst) {
  const int64_t shape[3] = {g.T, g.N, F};
  const int64_t dense[3] = {int64_t(g.N) * F, F, 1}, back[3] = {-int64_t(g.N) * F, F, 1};
  const char* last = static_cast<const char*>(src) + (int64_t(g.T) - 1) * g.N * F * g.esize;
  copy_strided(c, 3, shape, g.esize, dst, dense, last, back);
}

// The input sequence in the order cuDNN runs it (time-flipped for a reversed layer).
const void* sequence_in(const OpContext& c, const Geom& g, int slot, int64_t F) {
  const void* x = dense_input(c, c.args.input(slot));
  if (!g.reverse) return x;
  void* flipped = c.workspace(uint64_t(g.T) * g.N * F * g.esize);
  flip_time(c, g, F, x, flipped);
  return flipped;
}

const int32_t* device_lengths(const OpContext& c, const Geom& g) {
  const std::vector<int32_t> host(size_t(g.N), g.T);
  void* dev = c.workspace(host.size() * sizeof(int32_t));
  // From pageable memory the copy has read `host` when it returns.
  check(OAR_GPU(MemcpyAsync)(dev, host.data(), host.size() * sizeof(int32_t), cudaMemcpyHostToDevice, c.stream),
        "cudaMemcpyAsync");
  return static_cast<const int32_t*>(dev);
}

const void* optional_in(const OpContext& c, int slot) {
  return c.args.has_input(slot) ? dense_input(c, c.args.input(slot)) : nullptr;  // null: zeros to cuDNN
}

// What both kernels set up: the geometry, this thread's handle bound to the
// call's stream, the descriptors, the packed weights and cuDNN's scratch sizes.
struct Call {
  Geom g;
  cudnnHandle_t handle;
  Descs d;
  WeightSpace w;
  size_t work_bytes = 0, reserve_bytes = 0;

  Call(const OpContext& c, cudnnForwardMode_t mode)
      : g(geometry(c.args)), handle(cudnn_handle(c.device, c.stream)), d(handle, g), w(pack_weights(c, handle, d, g)) {
    check_cudnn(cudnn().GetRNNTempSpaceSizes(handle, d.rnn, mode, d.x, &work_bytes, &reserve_bytes),
                "rnn_layer: cudnnGetRNNTempSpaceSizes");
  }
};

oar_status_t forward_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    Call call(c, CUDNN_FWD_MODE_INFERENCE);
    const Geom& g = call.g;
    Descs& d = call.d;
    const cudnnHandle_t handle = call.handle;
    const WeightSpace& w = call.w;
    const size_t work_bytes = call.work_bytes;
    DenseOutput y(c, a.output(0)), hn(c, a.output(1)), cn(c, a.output(2));
    const int64_t y_bytes = int64_t(g.T) * g.N * g.H * g.esize;
    void* y_run = g.reverse ? c.workspace(uint64_t(y_bytes)) : y.data();
    check_cudnn(cudnn().RNNForward(handle, d.rnn, CUDNN_FWD_MODE_INFERENCE, device_lengths(c, g), d.x,
                                   sequence_in(c, g, kX, g.I), d.y, y_run, d.h, dense_input(c, a.input(kH0)),
                                   hn.data(), d.h, g.lstm ? optional_in(c, kC0) : nullptr,
                                   g.lstm ? cn.data() : nullptr, w.bytes, w.data, work_bytes,
                                   c.workspace(work_bytes), 0, nullptr),
                "rnn_layer: cudnnRNNForward");
    if (g.reverse) flip_time(c, g, g.H, y_run, y.data());
    if (!g.lstm) zero_fill(c, a.output(2));
    y.finish(), hn.finish();
    if (g.lstm) cn.finish();
  });
}

oar_status_t backward_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    OpContext c(a);
    Call call(c, CUDNN_FWD_MODE_TRAINING);
    const Geom& g = call.g;
    Descs& d = call.d;
    const cudnnHandle_t handle = call.handle;
    const WeightSpace& w = call.w;
    const size_t work_bytes = call.work_bytes, reserve_bytes = call.reserve_bytes;
    void* work = c.workspace(work_bytes);
    void* reserve = c.workspace(reserve_bytes);
    const int32_t* lengths = device_lengths(c, g);
    const void* x = sequence_in(c, g, kX, g.I);
    const void* hx = dense_input(c, a.input(kH0));
    const void* cx = g.lstm ? optional_in(c, kC0) : nullptr;
    const int64_t y_bytes = int64_t(g.T) * g.N * g.H * g.esize;
    void* y = c.workspace(uint64_t(y_bytes));
    // The forward again, in training mode: y and the reserve space the backward reads.
    check_cudnn(cudnn().RNNForward(handle, d.rnn, CUDNN_FWD_MODE_TRAINING, lengths, d.x, x, d.y, y, d.h, hx, nullptr,
                                   d.h, cx, nullptr, w.bytes, w.data, work_bytes, work, reserve_bytes, reserve),
                "rnn_layer_backward: cudnnRNNForward");
    const void* dy;
    if (a.has_input(kGradY)) {
      dy = sequence_in(c, g, kGradY, g.H);
    } else {
      void* zeros = c.workspace(uint64_t(y_bytes));
      check(OAR_GPU(MemsetAsync)(zeros, 0, size_t(y_bytes), c.stream), "cudaMemsetAsync");
      dy = zeros;
    }
    DenseOutput gx(c, a.output(0)), gh0(c, a.output(1)), gc0(c, a.output(2));
    const int64_t x_bytes = int64_t(g.T) * g.N * g.I * g.esize;
    void* dx = g.reverse ? c.workspace(uint64_t(x_bytes)) : gx.data();
    check_cudnn(cudnn().RNNBackwardData_v8(handle, d.rnn, lengths, d.y, y, dy, d.x, dx, d.h, hx, optional_in(c, kGradH),
                                           gh0.data(), d.h, cx, g.lstm ? optional_in(c, kGradC) : nullptr,
                                           g.lstm ? gc0.data() : nullptr, w.bytes, w.data, work_bytes, work,
                                           reserve_bytes, reserve),
                "rnn_layer_backward: cudnnRNNBackwardData_v8");
    // Weight gradients accumulate (the only mode cuDNN has): into a zeroed space.
    void* dw = c.workspace(w.bytes);
    check(OAR_GPU(MemsetAsync)(dw, 0, w.bytes, c.stream), "cudaMemsetAsync");
    check_cudnn(cudnn().RNNBackwardWeights_v8(handle, d.rnn, CUDNN_WGRAD_MODE_ADD, lengths, d.x, x, d.h, hx, d.y, y,
                                              w.bytes, dw, work_bytes, work, reserve_bytes, reserve),
                "rnn_layer_backward: cudnnRNNBackwardWeights_v8");
    if (g.reverse) flip_time(c, g, g.I, dx, gx.data());
    if (!g.lstm) zero_fill(c, a.output(2));
    DenseOutput gwih(c, a.output(3)), gwhh(c, a.output(4)), gbih(c, a.output(5)), gbhh(c, a.output(6));
    const int64_t mi = int64_t(g.H) * g.I * g.esize, mh = int64_t(g.H) * g.H * g.esize, vb = int64_t(g.H) * g.esize;
    for (int k = 0; k < g.G; ++k) {
      Slot in = weight_slot(handle, d, w.bytes, dw, k), rec = weight_slot(handle, d, w.bytes, dw, g.G + k);
      copy_async(c, gwih.as<char>() + k * mi, in.matrix, mi);
      copy_async(c, gwhh.as<char>() + k * mh, rec.matrix, mh);
      copy_async(c, gbih.as<char>() + k * vb, in.bias, vb);
      copy_async(c, gbhh.as<char>() + k * vb, rec.bias, vb);
    }
    gx.finish(), gh0.finish();
    if (g.lstm) gc0.finish();
    gwih.finish(), gwhh.finish(), gbih.finish(), gbhh.finish();
  });
}

}  // namespace

oar_status_t register_rnn_kernels(const oar_kernel_registrar* r) {
  static constexpr oar_dtype_t kTypes[] = {OAR_DTYPE_F32, OAR_DTYPE_F64};
  // Signatures hold the required inputs only (x, hx, w_ih, w_hh).
  if (auto st = sdk::register_same_dtype(r, "rnn_layer", kTypes, 4, forward_kernel, "cudnn", 10, cudnn_rnn_supports))
    return st;
  return sdk::register_same_dtype(r, "rnn_layer_backward", kTypes, 4, backward_kernel, "cudnn", 10,
                                  cudnn_rnn_supports);
}

}  // namespace oar_gpu
