// Header-only C++ conveniences for plugin authors, compiled into the plugin
// (never linked from the core): typed access to a kernel's tensor views and
// attributes, error reporting through the host table, dtype dispatch, and a
// one-line kernel registration. Only the C ABI crosses the boundary.
#pragma once

#include <cstdio>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "oar/abi/oar_plugin.h"
#include "oar/kp/numeric.h"

namespace oar::sdk {

// Thrown inside a kernel body; caught by run_kernel and turned into a status.
struct KernelError {
  oar_status_t code;
  std::string message;
};

[[noreturn]] inline void fail(oar_status_t code, const std::string& message) {
  throw KernelError{code, message};
}

inline int64_t numel(const oar_tensor_view& v) {
  int64_t n = 1;
  for (int32_t i = 0; i < v.ndim; ++i) n *= v.shape[i];
  return n;
}

inline std::vector<int64_t> shape_of(const oar_tensor_view& v) {
  return std::vector<int64_t>(v.shape, v.shape + v.ndim);
}

template <class T>
T* data_of(const oar_tensor_view& v) {
  return static_cast<T*>(v.data) + v.offset;
}

class KernelArgs {
 public:
  explicit KernelArgs(const oar_kernel_context* ctx) : ctx_(ctx) {}
  const oar_kernel_context& context() const { return *ctx_; }
  const oar_tensor_view& input(int i) const {
    if (i >= ctx_->num_inputs) fail(OAR_STATUS_INTERNAL, "kernel reads a missing input");
    return ctx_->inputs[i];
  }
  const oar_tensor_view& output(int i) const {
    if (i >= ctx_->num_outputs) fail(OAR_STATUS_INTERNAL, "kernel reads a missing output");
    return ctx_->outputs[i];
  }
  int num_inputs() const { return ctx_->num_inputs; }
  bool has_input(int i) const { return i < ctx_->num_inputs && ctx_->inputs[i].data != nullptr; }

  const oar_attr& attr(const char* name) const {
    for (int32_t i = 0; i < ctx_->num_attrs; ++i)
      if (std::strcmp(ctx_->attrs[i].name, name) == 0) return ctx_->attrs[i];
    fail(OAR_STATUS_INTERNAL, std::string("kernel reads missing attribute '") + name + "'");
  }
  int64_t attr_int(const char* name) const { return attr(name).i; }
  bool attr_bool(const char* name) const { return attr(name).i != 0; }
  double attr_float(const char* name) const { return attr(name).f; }
  std::string attr_string(const char* name) const { return attr(name).s ? attr(name).s : ""; }
  std::vector<int64_t> attr_ints(const char* name) const {
    const oar_attr& a = attr(name);
    return std::vector<int64_t>(a.ints, a.ints + a.count);
  }
  std::vector<double> attr_floats(const char* name) const {
    const oar_attr& a = attr(name);
    return std::vector<double>(a.floats, a.floats + a.count);
  }
  void* workspace(uint64_t size) const {
    void* p = nullptr;
    if (ctx_->host->workspace_allocate(ctx_->host_context, size, &p) != OAR_STATUS_OK)
      fail(OAR_STATUS_OUT_OF_MEMORY, "workspace allocation of " + std::to_string(size) + " bytes failed");
    return p;
  }

 private:
  const oar_kernel_context* ctx_;
};

// Runs a kernel body, converting exceptions into status + message: nothing
// thrown may cross the C ABI.
template <class Body>
oar_status_t run_kernel(const oar_kernel_context* ctx, Body&& body) {
  try {
    body(KernelArgs(ctx));
    return OAR_STATUS_OK;
  } catch (const KernelError& e) {
    ctx->host->set_error(e.code, e.message.c_str());
    return e.code;
  } catch (const std::bad_alloc&) {
    ctx->host->set_error(OAR_STATUS_OUT_OF_MEMORY, "host memory exhausted inside the kernel");
    return OAR_STATUS_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    ctx->host->set_error(OAR_STATUS_INTERNAL, e.what());
    return OAR_STATUS_INTERNAL;
  }
}

// Calls f.template operator()<T>() with the C++ type for `dtype`.
template <class F>
decltype(auto) visit_dtype(oar_dtype_t dtype, F&& f) {
  switch (dtype) {
    case OAR_DTYPE_F32: return f.template operator()<float>();
    case OAR_DTYPE_F64: return f.template operator()<double>();
    case OAR_DTYPE_F16: return f.template operator()<kp::half>();
    case OAR_DTYPE_BF16: return f.template operator()<kp::bfloat16>();
    case OAR_DTYPE_I8: return f.template operator()<int8_t>();
    case OAR_DTYPE_U8: return f.template operator()<uint8_t>();
    case OAR_DTYPE_I32: return f.template operator()<int32_t>();
    case OAR_DTYPE_I64: return f.template operator()<int64_t>();
    case OAR_DTYPE_BOOL: return f.template operator()<bool>();
  }
  fail(OAR_STATUS_INVALID_ARGUMENT, "invalid dtype " + std::to_string(dtype));
}

// Calls f.template operator()<T>() for a floating dtype; other dtypes fail
// with UNSUPPORTED naming the dtype.
template <class F>
decltype(auto) visit_float(oar_dtype_t dtype, F&& f) {
  switch (dtype) {
    case OAR_DTYPE_F32: return f.template operator()<float>();
    case OAR_DTYPE_F64: return f.template operator()<double>();
    case OAR_DTYPE_F16: return f.template operator()<kp::half>();
    case OAR_DTYPE_BF16: return f.template operator()<kp::bfloat16>();
    default: break;
  }
  fail(OAR_STATUS_UNSUPPORTED, "expected a floating dtype, got dtype " + std::to_string(dtype));
}

// The dtype's short name, as the core prints it ("f32", "i64", ...).
inline const char* dtype_name(oar_dtype_t dtype) {
  static const char* const names[] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i32", "i64", "bool"};
  return dtype >= 0 && dtype < OAR_DTYPE_COUNT ? names[dtype] : "invalid dtype";
}

// Whether element k of the view is at offset + k: row-major contiguous, the
// strides of size-1 dims ignored (as Tensor::is_contiguous). Kernels that
// index their operands densely check this, once, here.
inline bool is_dense(const oar_tensor_view& v) {
  int64_t expected = 1;
  for (int32_t d = v.ndim; d-- > 0;) {
    if (v.shape[d] == 0) return true;
    if (v.shape[d] == 1) continue;
    if (v.strides[d] != expected) return false;
    expected *= v.shape[d];
  }
  return true;
}

inline size_t dtype_size(oar_dtype_t dtype) {
  return visit_dtype(dtype, []<class T>() { return sizeof(T); });
}

template <class T> constexpr oar_dtype_t dtype_code();
template <> constexpr oar_dtype_t dtype_code<float>() { return OAR_DTYPE_F32; }
template <> constexpr oar_dtype_t dtype_code<double>() { return OAR_DTYPE_F64; }
template <> constexpr oar_dtype_t dtype_code<kp::half>() { return OAR_DTYPE_F16; }
template <> constexpr oar_dtype_t dtype_code<kp::bfloat16>() { return OAR_DTYPE_BF16; }
template <> constexpr oar_dtype_t dtype_code<int8_t>() { return OAR_DTYPE_I8; }
template <> constexpr oar_dtype_t dtype_code<uint8_t>() { return OAR_DTYPE_U8; }
template <> constexpr oar_dtype_t dtype_code<int32_t>() { return OAR_DTYPE_I32; }
template <> constexpr oar_dtype_t dtype_code<int64_t>() { return OAR_DTYPE_I64; }
template <> constexpr oar_dtype_t dtype_code<bool>() { return OAR_DTYPE_BOOL; }

// Registers `fn` for `op` with the dtype signature `dtypes`.
inline oar_status_t register_kernel(const oar_kernel_registrar* reg, const char* op,
                                    std::initializer_list<oar_dtype_t> dtypes, oar_kernel_fn fn,
                                    const char* impl_name, int32_t priority = 0,
                                    oar_kernel_supports_fn supports = nullptr) {
  std::vector<oar_dtype_t> sig(dtypes);
  oar_kernel_def def{};
  def.struct_size = sizeof(def);
  def.op_name = op;
  def.dtypes = sig.data();
  def.num_dtypes = static_cast<int32_t>(sig.size());
  def.priority = priority;
  def.impl_name = impl_name;
  def.fn = fn;
  def.supports = supports;
  return reg->register_kernel(reg->registry, &def);
}

// Registers `fn` for `op` once per dtype in `dtypes`, its signature that dtype
// repeated `arity` times (the inputs of most ops share one dtype).
inline oar_status_t register_same_dtype(const oar_kernel_registrar* reg, const char* op,
                                        std::span<const oar_dtype_t> dtypes, int arity, oar_kernel_fn fn,
                                        const char* impl_name, int32_t priority = 0,
                                        oar_kernel_supports_fn supports = nullptr) {
  for (oar_dtype_t d : dtypes) {
    std::vector<oar_dtype_t> sig(size_t(arity), d);
    oar_kernel_def def{};
    def.struct_size = sizeof(def);
    def.op_name = op;
    def.dtypes = sig.data();
    def.num_dtypes = arity;
    def.priority = priority;
    def.impl_name = impl_name;
    def.fn = fn;
    def.supports = supports;
    if (oar_status_t st = reg->register_kernel(reg->registry, &def)) return st;
  }
  return OAR_STATUS_OK;
}

inline constexpr oar_dtype_t kFloatDTypes[] = {OAR_DTYPE_F32, OAR_DTYPE_F64, OAR_DTYPE_F16, OAR_DTYPE_BF16};
inline constexpr oar_dtype_t kAllDTypes[] = {OAR_DTYPE_F32, OAR_DTYPE_F64, OAR_DTYPE_F16,
                                             OAR_DTYPE_BF16, OAR_DTYPE_I8, OAR_DTYPE_U8,
                                             OAR_DTYPE_I32, OAR_DTYPE_I64, OAR_DTYPE_BOOL};
inline constexpr oar_dtype_t kNumericDTypes[] = {OAR_DTYPE_F32, OAR_DTYPE_F64, OAR_DTYPE_F16,
                                                 OAR_DTYPE_BF16, OAR_DTYPE_I8, OAR_DTYPE_U8,
                                                 OAR_DTYPE_I32, OAR_DTYPE_I64};
inline constexpr oar_dtype_t kIntegralDTypes[] = {OAR_DTYPE_I8, OAR_DTYPE_U8, OAR_DTYPE_I32, OAR_DTYPE_I64};

}  // namespace oar::sdk
