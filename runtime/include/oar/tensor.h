// Tensor: a typed, strided view (shape, strides in elements, element offset)
// into a refcounted Storage on some device. View operations (reshape/view,
// transpose/permute, slice, expand, squeeze/unsqueeze) share storage and copy
// nothing; contiguous(), clone() and to() run kernels through eager dispatch.
// A default-constructed Tensor is "undefined" and most calls on it throw.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "oar/device.h"
#include "oar/dtype.h"
#include "oar/shape.h"
#include "oar/storage.h"

namespace oar {

struct AutogradMeta;  // defined by the autograd layer

struct TensorImpl {
  Storage storage;
  Shape shape;
  Shape strides;
  int64_t offset = 0;  // elements
  DType dtype = DType::f32;
  std::shared_ptr<AutogradMeta> autograd;
  // The tensor that owns the memory when this is a view of it (never itself a
  // view): an in-place write through a view rewrites the base's history.
  std::shared_ptr<TensorImpl> view_base;
  uint32_t view_version = 0;  // the memory's version when this view's history was last made
  bool view_in_no_grad = false;  // made under no_grad: never takes a history from its base
};

class Scalar;

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // ---- factories ----
  static Tensor empty(const Shape& shape, DType dtype = DType::f32, Device device = Device::default_device());
  static Tensor empty(Shape&& shape, DType dtype, Device device);  // takes the shape's buffer
  static Tensor empty_strided(const Shape& shape, const Shape& strides, DType dtype, Device device);
  static Tensor zeros(const Shape& shape, DType dtype = DType::f32, Device device = Device::default_device());
  static Tensor ones(const Shape& shape, DType dtype = DType::f32, Device device = Device::default_device());
  static Tensor full(const Shape& shape, double value, DType dtype = DType::f32,
                     Device device = Device::default_device());
  // Copies host values of type T (matching `dtype`'s element size) into a new tensor.
  // `count` is the number of elements at src; it must equal the shape's numel.
  static Tensor from_host(const void* src, int64_t count, const Shape& shape, DType dtype,
                          Device device = Device::default_device());
  template <class T>
  static Tensor from_vector(const std::vector<T>& values, const Shape& shape,
                            Device device = Device::default_device());

  // ---- properties ----
  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const { return impl().shape; }
  const Shape& strides() const { return impl().strides; }
  int64_t dim() const { return static_cast<int64_t>(impl().shape.size()); }
  int64_t size(int64_t axis) const;
  int64_t numel() const { return numel_of(impl().shape); }
  int64_t offset() const { return impl().offset; }
  DType dtype() const { return impl().dtype; }
  Device device() const { return impl().storage->device(); }
  size_t itemsize() const { return dtype_size(dtype()); }
  bool is_contiguous() const;
  const Storage& storage() const { return impl().storage; }
  // Raw device handle of the storage (not offset); see data_ptr for host access.
  void* storage_data() const { return impl().storage->data(); }
  // Host pointer to the first element. Throws DeviceError if the device's memory
  // is not host-accessible (copy with to(Device::cpu()) first).
  void* data_ptr() const;
  template <class T> T* data() const { return static_cast<T*>(data_ptr()); }

  // ---- zero-copy views ----
  Tensor view(const Shape& shape) const;     // requires compatible strides
  Tensor reshape(const Shape& shape) const;  // view when possible, else copy
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;  // 2-D transpose
  Tensor permute(const std::vector<int64_t>& dims) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor expand(const Shape& shape) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor as_strided(const Shape& shape, const Shape& strides, int64_t offset) const;

  // ---- copies ----
  Tensor contiguous() const;
  Tensor clone() const;
  Tensor to(Device device) const;
  Tensor to(DType dtype) const;
  // Copies src (broadcastable, any dtype, any device) into this tensor's memory.
  // Under grad mode the write is recorded: the tensor (or, for a view, its
  // base) takes a new history; a leaf that requires grad refuses.
  Tensor& copy_(const Tensor& src);
  // The in-place form of an op: `result` (computed out of place from this
  // tensor; broadcast like copy_) becomes this tensor's value, recorded like copy_.
  // When no one else can observe this tensor's memory (no views, no aliases
  // outside autograd), the memory is swapped instead of copied, which also
  // keeps values saved for backward intact.
  Tensor& update_(Tensor result);
  // Whether no one but this tensor (and autograd's or a tracer's own
  // references) can see its memory: no view, alias, array or foreign owner.
  // update_ then takes a result's memory instead of copying into this one.
  bool memory_private() const;
  // What the in-place form of an op on this tensor should compute from: this
  // tensor, or a clone() when autograd records the op (this tensor, its base
  // or one of `others` requires grad) and the memory is not private — the op
  // may save its input for backward, and the write would overwrite it.
  Tensor inplace_source(const std::vector<Tensor>& others = {}) const;
  // Times the memory under this tensor was written in place.
  uint32_t version() const { return impl().storage->version(); }
  // Contiguous host copy of the elements as T (converting from dtype()).
  template <class T> std::vector<T> to_vector() const;
  // Writes numel() elements, converted to `as`, contiguously to host memory.
  void copy_to_host(void* dst, DType as) const;
  double item() const;  // one element, as double
  std::string to_string() const;

  // ---- autograd (see oar/autograd.h) ----
  bool requires_grad() const;
  // Leaves only; only floating tensors can require grad (DTypeError otherwise).
  Tensor& set_requires_grad(bool requires_grad = true);
  Tensor grad() const;  // undefined until a backward reaches this leaf
  void set_grad(const Tensor& grad);
  bool is_leaf() const;
  Tensor detach() const;  // same storage, no history
  // Cuts this tensor from autograd in place (PyTorch's detach_): it becomes a
  // leaf that does not require grad. A view that autograd tracks refuses
  // (ValueError): its history is tied to its base's; use detach().
  Tensor& detach_();
  // The in-place form of a view op (unsqueeze_, t_, as_strided_, ...): this
  // tensor now shows `view`, which must be a view of its memory, with view's
  // shape, strides and offset and, under grad mode, view's history (which
  // leads back to this tensor's old one). Refuses (ValueError), as any
  // in-place op, a leaf that requires grad or a view of one.
  Tensor& set_view_(const Tensor& view);
  // PyTorch's `t.data = other`: this tensor (its autograd state kept) now
  // shows other's memory, shape and dtype. Outside autograd; no copy.
  void set_data(const Tensor& other);
  void backward(const Tensor& grad = Tensor(), bool retain_graph = false, bool create_graph = false) const;
  // hook(grad) runs when this tensor's gradient is computed; a defined result replaces it.
  void register_hook(std::function<Tensor(const Tensor&)> hook) const;
  void retain_grad() const;  // keep .grad on a non-leaf
  std::string grad_fn_name() const;  // "" for leaves

  // ---- identity ----
  TensorImpl& impl() const {  // inline: every property goes through it
    if (!impl_) [[unlikely]] throw_undefined();
    return *impl_;
  }
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

 private:
  [[noreturn]] static void throw_undefined();
  Tensor copy_to_device(Device target) const;
  // copy_ once the write's autograd recording is decided (update_ decides it too).
  Tensor& write_from(const Tensor& src, bool record);
  Tensor make_view(Shape shape, Shape strides, int64_t offset) const;
  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// Maps C++ element types to DType.
template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<int8_t>() { return DType::i8; }
template <> constexpr DType dtype_of<uint8_t>() { return DType::u8; }
template <> constexpr DType dtype_of<int32_t>() { return DType::i32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::i64; }
template <> constexpr DType dtype_of<bool>() { return DType::boolean; }

template <class T>
Tensor Tensor::from_vector(const std::vector<T>& values, const Shape& shape, Device device) {
  static_assert(!std::is_same_v<T, bool>, "use std::vector<uint8_t> with DType::boolean");
  return from_host(values.data(), static_cast<int64_t>(values.size()), shape, dtype_of<T>(),
                   device);
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  std::vector<T> out(static_cast<size_t>(numel()));
  copy_to_host(out.data(), dtype_of<T>());
  return out;
}

}  // namespace oar
