// What the CUDA plugin's vendor-library and nn op files (matmul, conv, pool,
// batch norm, softmax) share: dtype mapping to cuBLAS / cuDNN, the dense
// (row-major contiguous) test and strides, strided <-> dense copies through
// the elementwise primitive, dense stand-ins for inputs and outputs that are
// not contiguous, zero fills, and the float-dtype visit. Dispatch hands these
// ops contiguous inputs (matmul aside), but an output passed in by the caller
// may be strided, so every kernel writes through DenseOutput.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "launch.h"
#include "oar/kp/gpu/elementwise.cuh"
#include "oar/kp/numeric.h"
#include "oar/plugin_sdk/kernel_api.hpp"

namespace oar_gpu::nn {

using namespace oar;

// Identity on raw bits: copies of any dtype move 1/2/4/8-byte words.
struct CopyBits {
  template <class X>
  __host__ __device__ X operator()(X x) const {
    return x;
  }
};

struct Zero {
  template <class X>
  __host__ __device__ X operator()(X) const {
    return X(0);
  }
};

inline int64_t elem_size(oar_dtype_t d) { return int64_t(sdk::dtype_size(d)); }

inline std::vector<int64_t> dense_strides(int ndim, const int64_t* shape) {
  std::vector<int64_t> s(size_t(ndim > 0 ? ndim : 0));
  int64_t acc = 1;
  for (int i = ndim; i-- > 0;) {
    s[size_t(i)] = acc;
    acc *= shape[i] > 1 ? shape[i] : 1;
  }
  return s;
}

inline void* byte_ptr(const oar_tensor_view& v) {
  return static_cast<char*>(v.data) + v.offset * elem_size(v.dtype);
}

// dst[i] = src[i] over `shape`, each side with its own element strides.
inline void copy_strided(const OpContext& c, int ndim, const int64_t* shape, int64_t esize, void* dst,
                         const int64_t* dst_strides, const void* src, const int64_t* src_strides) {
  gpu::Error err = OAR_GPU(Success);
  auto run = [&]<class W>() {
    err = kp::gpu::elementwise<W, W>(c.stream, ndim, shape, kp::gpu::Operand<W>{static_cast<W*>(dst), dst_strides},
                                     CopyBits{},
                                     kp::gpu::Operand<const W>{static_cast<const W*>(src), src_strides});
  };
  switch (esize) {
    case 8: run.template operator()<uint64_t>(); break;
    case 4: run.template operator()<uint32_t>(); break;
    case 2: run.template operator()<uint16_t>(); break;
    default: run.template operator()<uint8_t>(); break;
  }
  check(err, "strided copy kernel");
}

// A dense copy of `shape` read through `strides` from `src`, in workspace.
inline void* dense_copy(const OpContext& c, int ndim, const int64_t* shape, const int64_t* strides, const void* src,
                        int64_t esize) {
  int64_t n = 1;
  for (int i = 0; i < ndim; ++i) n *= shape[i];
  void* buf = c.workspace(uint64_t(n * esize));
  if (n == 0) return buf;
  std::vector<int64_t> ds = dense_strides(ndim, shape);
  copy_strided(c, ndim, shape, esize, buf, ds.data(), src, strides);
  return buf;
}

// The view's elements in dense row-major order: the view itself when it is dense.
inline const void* dense_input(const OpContext& c, const oar_tensor_view& v) {
  if (sdk::is_dense(v)) return byte_ptr(v);
  return dense_copy(c, v.ndim, v.shape, v.strides, byte_ptr(v), elem_size(v.dtype));
}

// Dense storage for an output: the output itself, or workspace that finish()
// copies back into the strided view.
class DenseOutput {
 public:
  DenseOutput(const OpContext& c, const oar_tensor_view& v) : c_(c), view_(v) {
    if (sdk::is_dense(v)) {
      data_ = byte_ptr(v);
    } else {
      data_ = c.workspace(uint64_t(sdk::numel(v) * elem_size(v.dtype)));
      copy_back_ = true;
    }
  }
  void* data() const { return data_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  void finish() {
    if (!copy_back_) return;
    copy_back_ = false;
    std::vector<int64_t> ds = dense_strides(view_.ndim, view_.shape);
    copy_strided(c_, view_.ndim, view_.shape, elem_size(view_.dtype), byte_ptr(view_), view_.strides, data_,
                 ds.data());
  }

 private:
  const OpContext& c_;
  const oar_tensor_view& view_;
  void* data_ = nullptr;
  bool copy_back_ = false;
};

// Writes 0 to every element of `v` (all-zero bits are 0 in every float dtype).
inline void zero_fill(const OpContext& c, const oar_tensor_view& v) {
  int64_t n = sdk::numel(v);
  if (n == 0) return;
  if (sdk::is_dense(v)) {
    check(OAR_GPU(MemsetAsync)(byte_ptr(v), 0, size_t(n * elem_size(v.dtype)), c.stream), "cudaMemsetAsync");
    return;
  }
  gpu::Error err = OAR_GPU(Success);
  auto run = [&]<class W>() {
    W* p = static_cast<W*>(byte_ptr(v));
    err = kp::gpu::elementwise<W, W>(c.stream, v.ndim, v.shape, kp::gpu::Operand<W>{p, v.strides}, Zero{},
                                     kp::gpu::Operand<const W>{p, v.strides});
  };
  switch (elem_size(v.dtype)) {
    case 8: run.template operator()<uint64_t>(); break;
    case 4: run.template operator()<uint32_t>(); break;
    default: run.template operator()<uint16_t>(); break;
  }
  check(err, "zero fill kernel");
}

// The rounding a CPU kernel applies when it stores a partial result in T.
template <class T>
__host__ __device__ inline kp::compute_t<T> round_to(kp::compute_t<T> v) {
  return kp::compute_t<T>(T(v));
}

}  // namespace oar_gpu::nn
