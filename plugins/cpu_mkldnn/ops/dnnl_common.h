// Shared plumbing of the CPU plugin's nn kernels (matmul, conv, pool, norm,
// softmax): the oneDNN engine and per-thread stream, dtype and memory-desc
// mapping from oar_tensor_view, a small primitive cache (creating a oneDNN
// primitive costs far more than running a small one, so every kernel looks
// its primitive up by shapes/strides/attributes), the `supports` answer that
// lets dispatch fall through to the reference loops with a reason, and the
// helpers those reference loops share (float dtype visit, double conversion,
// strided <-> dense copies for inputs and outputs that are not contiguous).
#pragma once

#include <dnnl.hpp>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "oar/kp/cpu/parallel.h"
#include "oar/plugin_sdk/kernel_api.hpp"

namespace oar_cpu::nn {

using namespace oar;
using Dims = dnnl::memory::dims;

inline dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}
// oneDNN streams are not meant to be shared between threads; one per thread.
inline dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

inline dnnl::memory::data_type dnnl_dtype(oar_dtype_t d) {
  switch (d) {
    case OAR_DTYPE_F32: return dnnl::memory::data_type::f32;
    case OAR_DTYPE_BF16: return dnnl::memory::data_type::bf16;
    case OAR_DTYPE_F16: return dnnl::memory::data_type::f16;
    default: return dnnl::memory::data_type::undef;
  }
}

inline size_t elem_size(oar_dtype_t d) {
  switch (d) {
    case OAR_DTYPE_F64: case OAR_DTYPE_I64: return 8;
    case OAR_DTYPE_F32: case OAR_DTYPE_I32: return 4;
    case OAR_DTYPE_F16: case OAR_DTYPE_BF16: return 2;
    default: return 1;
  }
}

inline Dims dims_of(const oar_tensor_view& v) { return Dims(v.shape, v.shape + v.ndim); }

inline Dims dense_strides(const Dims& dims) {
  Dims s(dims.size());
  int64_t acc = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    s[i] = acc;
    acc *= std::max<int64_t>(dims[i], 1);
  }
  return s;
}

inline dnnl::memory::desc dense_md(const Dims& dims, oar_dtype_t d) {
  return dnnl::memory::desc(dims, dnnl_dtype(d), dense_strides(dims));
}

inline void* byte_ptr(const oar_tensor_view& v) {
  return static_cast<char*>(v.data) + v.offset * int64_t(elem_size(v.dtype));
}

inline dnnl::memory make_memory(const dnnl::memory::desc& md, const void* p) {
  return dnnl::memory(md, engine(), const_cast<void*>(p));
}

inline void execute(const dnnl::primitive& p, const std::unordered_map<int, dnnl::memory>& args) {
  p.execute(stream(), args);
  stream().wait();
}

// ---- operands in a primitive's preferred layout ----

// A primitive created with format_tag::any picks its own layout for an operand
// (nChw16c activations, OIhw16i16o weights on AVX-512); oar hands over plain
// dense memory. A Staged operand records both and the reorder between them, so
// the kernel reorders through a workspace only where they differ.
struct Staged {
  dnnl::memory::desc plain, inner;
  dnnl::primitive reorder;  // plain -> inner for inputs, inner -> plain for outputs
  bool staged = false;
};

inline Staged stage(const dnnl::memory::desc& plain, const dnnl::memory::desc& inner, bool input) {
  Staged s{plain, inner, {}, inner != plain};
  if (s.staged)
    s.reorder = input ? dnnl::reorder(dnnl::reorder::primitive_desc(engine(), plain, engine(), inner))
                      : dnnl::reorder(dnnl::reorder::primitive_desc(engine(), inner, engine(), plain));
  return s;
}

// The memory a primitive reads: the plain input itself, or its reordered copy.
inline dnnl::memory staged_input(const Staged& s, const void* plain, const sdk::KernelArgs& a) {
  dnnl::memory src = make_memory(s.plain, plain);
  if (!s.staged) return src;
  dnnl::memory dst(s.inner, engine(), a.workspace(s.inner.get_size()));
  execute(s.reorder, {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
  return dst;
}

// The memory a primitive writes: the plain output, or a workspace that
// staged_output_done() reorders into it.
inline dnnl::memory staged_output(const Staged& s, void* plain, const sdk::KernelArgs& a) {
  return s.staged ? dnnl::memory(s.inner, engine(), a.workspace(s.inner.get_size())) : make_memory(s.plain, plain);
}

inline void staged_output_done(const Staged& s, const dnnl::memory& written, void* plain) {
  if (s.staged) execute(s.reorder, {{DNNL_ARG_FROM, written}, {DNNL_ARG_TO, make_memory(s.plain, plain)}});
}

// ---- primitive cache ----

// Everything that determines a primitive, flattened: dtype, shapes, strides, attrs.
struct Key {
  std::vector<int64_t> v;
  Key& add(int64_t x) { v.push_back(x); return *this; }
  Key& add(const Dims& d) {
    v.push_back(int64_t(d.size()));
    v.insert(v.end(), d.begin(), d.end());
    return *this;
  }
  Key& add_view(const oar_tensor_view& t) {
    add(t.dtype).add(dims_of(t));
    return *this;
  }
  bool operator==(const Key& o) const { return v == o.v; }
};
struct KeyHash {
  size_t operator()(const Key& k) const {
    uint64_t h = 1469598103934665603ULL;
    for (int64_t x : k.v) h = (h ^ uint64_t(x)) * 1099511628211ULL;
    return size_t(h);
  }
};

// A created primitive (or why it could not be created), plus the extras some
// kernels need: a forward primitive to recompute (max-pool workspace), its
// workspace desc, and plan choices (which operands a matmul copies).
struct Cached {
  std::string error;  // non-empty: oneDNN refused these arguments
  dnnl::primitive prim;
  dnnl::primitive fwd;
  dnnl::memory::desc workspace_md;
  std::vector<dnnl::memory::desc> mds;
  std::vector<Staged> staged;  // operands in the primitive's own layouts, where it chose them
  int64_t flags = 0;
};
using CachedPtr = std::shared_ptr<const Cached>;

// One cache per kernel family; failures are cached too, so a declined shape
// costs one lookup. Bounded by clearing (shapes in a model are few).
class PrimitiveCache {
 public:
  CachedPtr get(const Key& key, const std::function<void(Cached&)>& create) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = map_.find(key);
      if (it != map_.end()) return it->second;
    }
    auto entry = std::make_shared<Cached>();
    try {
      create(*entry);
    } catch (const dnnl::error& e) {
      entry->error = e.what();
    } catch (const sdk::KernelError& e) {
      entry->error = e.message;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (map_.size() >= 4096) map_.clear();
    return map_.emplace(key, std::move(entry)).first->second;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<Key, CachedPtr, KeyHash> map_;
};

// Body of a `supports` callback: `check` returns "" to accept, else the reason.
template <class F>
int32_t answer_supports(const oar_kernel_context* ctx, char* reason, size_t size, F&& check) {
  std::string why;
  try {
    why = check(sdk::KernelArgs(ctx));
  } catch (const sdk::KernelError& e) {
    why = e.message;
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (why.empty()) return 1;
  if (reason && size) std::snprintf(reason, size, "%s", why.c_str());
  return 0;
}

// A kernel that found its primitive declined despite `supports` (cannot
// normally happen) reports it rather than crashing.
inline const Cached& require_ok(const CachedPtr& c, const char* op) {
  if (!c->error.empty()) sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(op) + ": oneDNN: " + c->error);
  return *c;
}

// ---- layout helpers ----

// Copies between a strided view and a dense buffer of the same shape.
template <class W>
void strided_copy_impl(const oar_tensor_view& v, void* dense, bool to_dense) {
  int64_t n = sdk::numel(v);
  if (n == 0) return;
  W* base = static_cast<W*>(v.data) + v.offset;
  W* buf = static_cast<W*>(dense);
  int32_t nd = v.ndim;
  int64_t inner = nd ? v.shape[nd - 1] : 1, istride = nd ? v.strides[nd - 1] : 0;
  kp::cpu::parallel_for(n / inner, std::max<int64_t>(1, kp::cpu::kGrainSize / std::max<int64_t>(inner, 1)), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      int64_t off = 0, r = row;
      for (int32_t d = nd - 2; d >= 0; --d) {
        off += (r % v.shape[d]) * v.strides[d];
        r /= v.shape[d];
      }
      for (int64_t j = 0; j < inner; ++j) {
        if (to_dense) buf[row * inner + j] = base[off + j * istride];
        else base[off + j * istride] = buf[row * inner + j];
      }
    }
  });
}

inline void strided_copy(const oar_tensor_view& v, void* dense, bool to_dense) {
  switch (elem_size(v.dtype)) {
    case 8: return strided_copy_impl<uint64_t>(v, dense, to_dense);
    case 4: return strided_copy_impl<uint32_t>(v, dense, to_dense);
    case 2: return strided_copy_impl<uint16_t>(v, dense, to_dense);
    default: return strided_copy_impl<uint8_t>(v, dense, to_dense);
  }
}

// Pointer to the input's elements in dense row-major order (a workspace copy if needed).
inline const void* dense_input(const sdk::KernelArgs& a, int i) {
  const oar_tensor_view& v = a.input(i);
  if (sdk::is_dense(v)) return byte_ptr(v);
  void* buf = a.workspace(uint64_t(sdk::numel(v)) * elem_size(v.dtype));
  strided_copy(v, buf, true);
  return buf;
}

// Dense output storage: the output itself, or a workspace copied back by finish().
class DenseOutput {
 public:
  DenseOutput(const sdk::KernelArgs& a, int i) : view_(a.output(i)) {
    if (sdk::is_dense(view_)) {
      data_ = byte_ptr(view_);
    } else {
      data_ = a.workspace(uint64_t(sdk::numel(view_)) * elem_size(view_.dtype));
      copy_back_ = true;
    }
  }
  void* data() const { return data_; }
  template <class T> T* as() const { return static_cast<T*>(data_); }
  void finish() {
    if (copy_back_) strided_copy(view_, data_, false);
    copy_back_ = false;
  }

 private:
  const oar_tensor_view& view_;
  void* data_ = nullptr;
  bool copy_back_ = false;
};

// ---- reference-kernel helpers ----

template <class T> inline double to_d(T v) { return double(static_cast<kp::compute_t<T>>(v)); }
template <class T> inline T from_d(double v) { return T(static_cast<kp::compute_t<T>>(v)); }

// Reference loops serve every float dtype; oneDNN serves f32 (and bf16 where the CPU can).
inline const std::vector<oar_dtype_t> kRefDTypes = {OAR_DTYPE_F32, OAR_DTYPE_F64, OAR_DTYPE_F16,
                                                    OAR_DTYPE_BF16};
inline const std::vector<oar_dtype_t> kDnnlDTypes = {OAR_DTYPE_F32, OAR_DTYPE_BF16};

// ---- fused activations (conv2d_act, linear_act) ----

enum Activation : int64_t { kNoActivation, kRelu, kSigmoid, kTanh };

// The activation a kernel applies: none unless the op is `fused_op`, else its attribute.
inline Activation activation_of(const sdk::KernelArgs& a, const char* fused_op) {
  if (std::strcmp(a.context().op_name, fused_op) != 0) return kNoActivation;
  std::string name = a.attr_string("activation");
  if (name == "relu") return kRelu;
  if (name == "sigmoid") return kSigmoid;
  if (name == "tanh") return kTanh;
  sdk::fail(OAR_STATUS_INVALID_ARGUMENT, std::string(fused_op) + ": unknown activation '" + name + "'");
}

// The activation as a oneDNN eltwise post-op (none for kNoActivation).
inline dnnl::primitive_attr activation_attr(Activation act) {
  dnnl::primitive_attr attr;
  if (act == kNoActivation) return attr;
  dnnl::post_ops ops;
  dnnl::algorithm alg = act == kRelu      ? dnnl::algorithm::eltwise_relu
                        : act == kSigmoid ? dnnl::algorithm::eltwise_logistic
                                          : dnnl::algorithm::eltwise_tanh;
  ops.append_eltwise(1.f, alg, 0.f, 0.f);
  attr.set_post_ops(ops);
  return attr;
}

// The activation on the reference paths, in double.
inline double activate(Activation act, double v) {
  switch (act) {
    case kRelu: return v > 0 ? v : 0.0;
    case kSigmoid: return 1.0 / (1.0 + std::exp(-v));
    case kTanh: return std::tanh(v);
    default: return v;
  }
}

}  // namespace oar_cpu::nn
