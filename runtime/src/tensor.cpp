#include "oar/tensor.h"

#include "pooled.h"

#include <cstring>
#include <sstream>

#include "oar/autograd.h"
#include "oar/dispatch.h"
#include "oar/error.h"
#include "oar/graph/trace.h"
#include "oar/kernel_registry.h"
#include "oar/op_registry.h"
#include "oar/plugin_table.h"
#include "oar/runtime.h"

namespace oar {

void Tensor::throw_undefined() { throw ValueError("operation on an undefined tensor"); }

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) { return empty(Shape(shape), dtype, device); }

Tensor Tensor::empty(Shape&& shape, DType dtype, Device device) {
  check_shape_nonnegative(shape);
  if (!is_valid_dtype(static_cast<int32_t>(dtype)))
    throw DTypeError(str("invalid dtype value ", static_cast<int32_t>(dtype)));
  auto impl = detail::make_pooled<TensorImpl>();
  impl->storage = allocate_storage(device, size_t(numel_of(shape)) * dtype_size(dtype));
  impl->strides = contiguous_strides(shape);
  impl->shape = std::move(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::empty_strided(const Shape& shape, const Shape& strides, DType dtype, Device device) {
  check_shape_nonnegative(shape);
  if (shape.size() != strides.size())
    throw ShapeError(str("empty_strided: shape ", shape_str(shape), " and strides ",
                         shape_str(strides), " differ in length"));
  int64_t extent = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) extent = 0;
    if (strides[i] < 0) throw ShapeError("empty_strided: negative stride");
  }
  if (extent != 0)
    for (size_t i = 0; i < shape.size(); ++i) extent += (shape[i] - 1) * strides[i];
  auto impl = detail::make_pooled<TensorImpl>();
  impl->storage = allocate_storage(device, size_t(extent) * dtype_size(dtype));
  impl->shape = shape;
  impl->strides = strides;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

Tensor Tensor::full(const Shape& shape, double value, DType dtype, Device device) {
  CallOptions opts;
  opts.device = device;
  return call1("fill", {}, {{"shape", shape}, {"value", value}, {"dtype", dtype}}, opts);
}
Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) {
  return full(shape, 0.0, dtype, device);
}
Tensor Tensor::ones(const Shape& shape, DType dtype, Device device) {
  return full(shape, 1.0, dtype, device);
}

Tensor Tensor::from_host(const void* src, int64_t count, const Shape& shape, DType dtype,
                         Device device) {
  check_shape_nonnegative(shape);
  if (count != numel_of(shape))
    throw ShapeError(str("from_host: ", count, " values cannot fill shape ", shape_str(shape),
                         " (", numel_of(shape), " elements)"));
  Tensor t = empty(shape, dtype, device);
  size_t nbytes = size_t(count) * dtype_size(dtype);
  if (nbytes == 0) return t;
  if (src == nullptr) throw ValueError("from_host: null source pointer");
  const LoadedPlugin& p = Runtime::get().plugin_for(device);
  call_plugin(p, &oar_plugin_api::memory_copy_h2d, "memory_copy_h2d", device.index, t.storage_data(),
              uint64_t(0), src, uint64_t(nbytes));
  return t;
}

int64_t Tensor::size(int64_t axis) const { return shape()[normalize_axis(axis, dim())]; }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  const auto& sh = shape();
  const auto& st = strides();
  for (size_t i = sh.size(); i-- > 0;) {
    if (sh[i] == 1) continue;
    if (sh[i] == 0) return true;
    if (st[i] != expected) return false;
    expected *= sh[i];
  }
  return true;
}

void* Tensor::data_ptr() const {
  if (!Runtime::get().host_accessible(device()))
    throw DeviceError(str("data_ptr: memory of ", device().str(),
                          " is not host-accessible; copy the tensor to cpu first"));
  return static_cast<char*>(storage_data()) + offset() * int64_t(itemsize());
}

namespace {
// Connects a view (or copy) to the autograd graph when its source requires
// grad, and to a graph being traced as the catalog's view op `graph_op`
// (attributes built only while tracing).
template <class AttrsFn>
Tensor recorded(const char* name, const Tensor& input, Tensor out, std::function<Tensor(const Tensor&)> backward,
                const char* graph_op, AttrsFn graph_attrs) {
  autograd::record_function(name, input, out, std::move(backward));
  if (graph::Tracer* tracer = graph::Tracer::active())
    tracer->record_op(OpRegistry::instance().get(graph_op), {input}, graph_attrs(), {out});
  return out;
}

std::function<Tensor(const Tensor&)> reshape_back(const Shape& in_shape) {
  return [in_shape](const Tensor& g) { return g.reshape(in_shape); };
}

// Gradient of taking `len` entries start, start+step, ... of dimension d:
// scatter the gradient into zeros shaped like the input (differentiable).
std::function<Tensor(const Tensor&)> slice_back(const Shape& in_shape, int64_t d, int64_t start, int64_t step,
                                                int64_t len, bool squeezed) {
  return [=](const Tensor& grad) {
    Tensor g = squeezed ? grad.unsqueeze(d) : grad;
    CallOptions on;
    on.device = g.device();
    Tensor index = call1("arange", {},
                         {{"start", double(start)}, {"end", double(start + len * step)}, {"step", double(step)},
                          {"dtype", DType::i64}},
                         on);
    Tensor zeros = Tensor::zeros(in_shape, g.dtype(), g.device());
    return call1("index_add", {zeros, index, g}, {{"dim", d}});
  };
}
}  // namespace

Tensor Tensor::make_view(Shape shape, Shape strides, int64_t offset) const {
  auto impl = detail::make_pooled<TensorImpl>();
  impl->storage = storage();
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = dtype();
  impl->view_base = impl_->view_base ? impl_->view_base : impl_;
  impl->view_version = impl->storage->version();
  impl->view_in_no_grad = !autograd::is_grad_enabled();
  return Tensor(std::move(impl));
}

Tensor Tensor::as_strided(const Shape& shape, const Shape& strides, int64_t offset) const {
  check_shape_nonnegative(shape);
  if (shape.size() != strides.size())
    throw ShapeError(str("as_strided: size ", shape_str(shape), " and stride ", shape_str(strides),
                         " differ in length"));
  int64_t lo = offset, hi = offset;
  bool empty = numel_of(shape) == 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) continue;
    int64_t span = (shape[i] - 1) * strides[i];
    (span < 0 ? lo : hi) += span;
  }
  int64_t capacity = int64_t(storage()->nbytes() / itemsize());
  if (!empty && (lo < 0 || hi >= capacity))
    throw IndexError(str("as_strided: view ", shape_str(shape), " with strides ",
                         shape_str(strides), " and offset ", offset,
                         " exceeds the storage of ", capacity, " elements"));
  const bool tracked = requires_grad() && autograd::is_grad_enabled();
  return recorded("AsStrided", *this, make_view(shape, strides, offset),
                  tracked ? autograd::as_strided_backward(*this, shape, strides, offset) : nullptr, "as_strided",
                  [&] { return Attrs{{"size", shape}, {"stride", strides}, {"storage_offset", offset}}; });
}

namespace {
Shape infer_view_shape(const Shape& requested, int64_t numel) {
  Shape shape = requested;
  int64_t known = 1;
  int infer_at = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer_at >= 0) throw ShapeError("only one dimension can be inferred (-1)");
      infer_at = int(i);
    } else if (shape[i] < 0) {
      throw ShapeError(str("invalid shape ", shape_str(requested), ": negative dimension"));
    } else {
      known *= shape[i];
    }
  }
  if (infer_at >= 0) {
    if (known == 0 || numel % known != 0)
      throw ShapeError(str("shape ", shape_str(requested), " is invalid for input of size ", numel));
    shape[infer_at] = numel / known;
  } else if (known != numel) {
    throw ShapeError(str("shape ", shape_str(requested), " is invalid for input of size ", numel));
  }
  return shape;
}

// Strides for viewing (old_shape, old_strides) as new_shape without a copy, or
// nothing if the memory layout does not allow it (PyTorch's computeStride).
std::optional<Shape> view_strides(const Shape& old_shape, const Shape& old_strides,
                                  const Shape& new_shape) {
  if (old_shape.empty()) return Shape(new_shape.size(), 1);
  if (numel_of(old_shape) == 0) return contiguous_strides(new_shape);
  Shape new_strides(new_shape.size());
  int64_t view_d = int64_t(new_shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = int64_t(old_shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_shape[d];
    if (d == 0 || (old_shape[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}
}  // namespace

Tensor Tensor::view(const Shape& requested) const {
  Shape shape = infer_view_shape(requested, numel());
  auto strides = view_strides(this->shape(), this->strides(), shape);
  if (!strides)
    throw ShapeError(str("view ", shape_str(shape), " is not compatible with the strides ",
                         shape_str(this->strides()), " of a tensor of shape ",
                         shape_str(this->shape()), "; use reshape() (which copies)"));
  return recorded("View", *this, make_view(shape, *strides, offset()), reshape_back(this->shape()), "reshape",
                  [&] { return Attrs{{"shape", shape}}; });
}

Tensor Tensor::reshape(const Shape& requested) const {
  Shape shape = infer_view_shape(requested, numel());
  if (auto strides = view_strides(this->shape(), this->strides(), shape))
    return recorded("Reshape", *this, make_view(shape, *strides, offset()), reshape_back(this->shape()), "reshape",
                    [&] { return Attrs{{"shape", shape}}; });
  return contiguous().view(shape);
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  if (dim() == 0) return reshape({1});
  int64_t s = normalize_axis(start_dim, dim()), e = normalize_axis(end_dim, dim());
  if (s > e) throw IndexError(str("flatten: start_dim ", start_dim, " is after end_dim ", end_dim));
  Shape shape(this->shape().begin(), this->shape().begin() + s);
  int64_t n = 1;
  for (int64_t i = s; i <= e; ++i) n *= this->shape()[i];
  shape.push_back(n);
  shape.insert(shape.end(), this->shape().begin() + e + 1, this->shape().end());
  return reshape(shape);
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  if (dim() == 0) return *this;
  int64_t a = normalize_axis(dim0, dim()), b = normalize_axis(dim1, dim());
  Shape sh = shape(), st = strides();
  std::swap(sh[a], sh[b]);
  std::swap(st[a], st[b]);
  return recorded("Transpose", *this, make_view(sh, st, offset()),
                  [a, b](const Tensor& g) { return g.transpose(a, b); }, "permute", [&] {
                    std::vector<int64_t> dims(static_cast<size_t>(this->dim()));
                    for (size_t i = 0; i < dims.size(); ++i) dims[i] = int64_t(i);
                    std::swap(dims[size_t(a)], dims[size_t(b)]);
                    return Attrs{{"dims", dims}};
                  });
}

Tensor Tensor::t() const {
  if (dim() > 2) throw ShapeError(str("t() expects a tensor with <= 2 dimensions, got ", dim()));
  return dim() < 2 ? *this : transpose(0, 1);
}

Tensor Tensor::permute(const std::vector<int64_t>& dims) const {
  if (int64_t(dims.size()) != dim())
    throw ShapeError(str("permute: got ", dims.size(), " dims for a tensor with ", dim(),
                         " dimensions"));
  Shape sh(dims.size()), st(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = normalize_axis(dims[i], dim());
    if (seen[d]) throw ValueError(str("permute: dimension ", d, " repeated"));
    seen[d] = true;
    sh[i] = shape()[d];
    st[i] = strides()[d];
  }
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[normalize_axis(dims[i], dim())] = int64_t(i);
  return recorded("Permute", *this, make_view(sh, st, offset()),
                  [inverse](const Tensor& g) { return g.permute(inverse); }, "permute",
                  [&] { return Attrs{{"dims", dims}}; });
}

Tensor Tensor::slice(int64_t d, int64_t start, int64_t end, int64_t step) const {
  d = normalize_axis(d, dim());
  if (dim() == 0) throw IndexError("slice: cannot slice a 0-d tensor");
  if (step <= 0) throw ValueError(str("slice: step must be positive, got ", step));
  int64_t n = shape()[d];
  auto clampi = [n](int64_t v) { return v < 0 ? std::max<int64_t>(v + n, 0) : std::min(v, n); };
  start = clampi(start);
  end = clampi(end);
  int64_t len = end > start ? (end - start + step - 1) / step : 0;
  Shape sh = shape(), st = strides();
  sh[d] = len;
  st[d] *= step;
  return recorded("Slice", *this, make_view(sh, st, offset() + start * strides()[d]),
                  slice_back(shape(), d, start, step, len, false), "slice",
                  [&] { return Attrs{{"dim", d}, {"start", start}, {"end", end}, {"step", step}}; });
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  d = normalize_axis(d, dim());
  if (start < 0) start += shape()[d];
  if (start < 0 || length < 0 || start + length > shape()[d])
    throw IndexError(str("narrow: range [", start, ", ", start + length, ") out of bounds for dimension ",
                         d, " of size ", shape()[d]));
  return slice(d, start, start + length);
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  d = normalize_axis(d, dim());
  if (dim() == 0) throw IndexError("select: cannot index a 0-d tensor");
  int64_t n = shape()[d];
  if (index < -n || index >= n)
    throw IndexError(str("index ", index, " is out of bounds for dimension ", d, " with size ", n));
  if (index < 0) index += n;
  Shape sh = shape(), st = strides();
  sh.erase(sh.begin() + d);
  st.erase(st.begin() + d);
  return recorded("Select", *this, make_view(sh, st, offset() + index * strides()[d]),
                  slice_back(shape(), d, index, 1, 1, true), "select",
                  [&] { return Attrs{{"dim", d}, {"index", index}}; });
}

Tensor Tensor::expand(const Shape& target) const {
  if (target.size() < shape().size())
    throw ShapeError(str("expand: target ", shape_str(target), " has fewer dimensions than ",
                         shape_str(shape())));
  size_t lead = target.size() - shape().size();
  Shape sh(target.size()), st(target.size());
  for (size_t i = 0; i < target.size(); ++i) {
    if (i < lead) {
      if (target[i] < 0) throw ShapeError("expand: -1 not allowed in a new leading dimension");
      sh[i] = target[i];
      st[i] = 0;
      continue;
    }
    int64_t cur = shape()[i - lead];
    int64_t want = target[i] == -1 ? cur : target[i];
    if (cur == want) {
      sh[i] = cur;
      st[i] = strides()[i - lead];
    } else if (cur == 1) {
      sh[i] = want;
      st[i] = 0;
    } else {
      throw ShapeError(str("expand: cannot expand shape ", shape_str(shape()), " to ",
                           shape_str(target), " (dimension ", i, ": ", cur, " vs ", want, ")"));
    }
  }
  Shape in_shape = shape();
  return recorded("Expand", *this, make_view(sh, st, offset()),
                  [in_shape](const Tensor& g) { return autograd::sum_to(g, in_shape); }, "expand",
                  [&] { return Attrs{{"shape", sh}}; });
}

Tensor Tensor::squeeze() const {
  Shape sh, st;
  for (size_t i = 0; i < shape().size(); ++i)
    if (shape()[i] != 1) sh.push_back(shape()[i]), st.push_back(strides()[i]);
  return recorded("Squeeze", *this, make_view(sh, st, offset()), reshape_back(shape()), "reshape",
                  [&] { return Attrs{{"shape", sh}}; });
}

Tensor Tensor::squeeze(int64_t d) const {
  if (dim() == 0) return *this;
  d = normalize_axis(d, dim());
  if (shape()[d] != 1) return *this;
  Shape sh = shape(), st = strides();
  sh.erase(sh.begin() + d);
  st.erase(st.begin() + d);
  return recorded("Squeeze", *this, make_view(sh, st, offset()), reshape_back(shape()), "reshape",
                  [&] { return Attrs{{"shape", sh}}; });
}

Tensor Tensor::unsqueeze(int64_t d) const {
  d = normalize_axis(d, dim() + 1);
  Shape sh = shape(), st = strides();
  int64_t stride = d < dim() ? sh[d] * st[d] : 1;
  sh.insert(sh.begin() + d, 1);
  st.insert(st.begin() + d, stride);
  return recorded("Unsqueeze", *this, make_view(sh, st, offset()), reshape_back(shape()), "reshape",
                  [&] { return Attrs{{"shape", sh}}; });
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return call1("copy", {*this});
}

Tensor Tensor::clone() const { return call1("copy", {*this}); }

Tensor Tensor::to(DType dt) const {
  if (dt == dtype()) return *this;
  return call1("cast", {*this}, {{"dtype", dt}});
}

Tensor Tensor::to(Device target) const {
  if (target == device()) return *this;
  Device source = device();
  Tensor moved;
  {
    autograd::NoGradGuard no_grad;  // the copy itself is one recorded step below
    graph::TraceSuspend one_node;   // and one graph node
    moved = copy_to_device(target);
  }
  return recorded("ToDevice", *this, moved, [source](const Tensor& g) { return g.to(source); }, "to_device",
                  [&] { return Attrs{{"device", target.str()}}; });
}

Tensor Tensor::copy_to_device(Device target) const {
  if (!is_contiguous() && numel() > 0) {
    // Gathering a strided view needs the source device's copy kernel. A plugin
    // without one (the CPU fallback moves its inputs through here) sends the
    // storage span the view covers as raw bytes and the target gathers instead.
    const OpSchema& copy = OpRegistry::instance().get("copy");
    DType dt = dtype();
    if (KernelRegistry::instance().lookup(copy.id, device().type, &dt, 1) == nullptr) {
      int64_t lo = offset(), hi = offset();
      for (size_t i = 0; i < shape().size(); ++i) {
        int64_t span = (shape()[i] - 1) * strides()[i];
        (span < 0 ? lo : hi) += span;
      }
      Tensor moved = as_strided({hi - lo + 1}, {1}, lo).copy_to_device(target);
      return moved.as_strided(shape(), strides(), offset() - lo).contiguous();
    }
  }
  Tensor src = contiguous();
  Tensor dst = empty(shape(), dtype(), target);
  size_t nbytes = size_t(numel()) * itemsize();
  if (nbytes == 0) return dst;
  Runtime& rt = Runtime::get();
  const LoadedPlugin& sp = rt.plugin_for(src.device());
  const LoadedPlugin& dp = rt.plugin_for(target);
  uint64_t src_off = uint64_t(src.offset()) * itemsize();
  // Two devices of one plugin that can copy between them directly (ABI 1.1):
  // no round trip through host memory.
  auto peer_capable = [&rt](Device d) { return (rt.capabilities(d).flags & OAR_CAPABILITY_PEER_COPY) != 0; };
  const uint64_t size = nbytes;
  if (&sp == &dp && has_entry(sp, &oar_plugin_api::memory_copy_peer) && peer_capable(src.device()) &&
      peer_capable(target)) {
    call_plugin(sp, &oar_plugin_api::memory_copy_peer, "memory_copy_peer", target.index, dst.storage_data(),
                uint64_t(0), src.device().index, static_cast<const void*>(src.storage_data()), src_off, size);
  } else if (rt.host_accessible(src.device())) {
    call_plugin(dp, &oar_plugin_api::memory_copy_h2d, "memory_copy_h2d", target.index, dst.storage_data(),
                uint64_t(0), static_cast<const void*>(src.data_ptr()), size);
  } else if (rt.host_accessible(target)) {
    call_plugin(sp, &oar_plugin_api::memory_copy_d2h, "memory_copy_d2h", src.device().index, dst.data_ptr(),
                static_cast<const void*>(src.storage_data()), src_off, size);
  } else {
    std::vector<char> staging(nbytes);
    call_plugin(sp, &oar_plugin_api::memory_copy_d2h, "memory_copy_d2h", src.device().index,
                static_cast<void*>(staging.data()), static_cast<const void*>(src.storage_data()), src_off, size);
    call_plugin(dp, &oar_plugin_api::memory_copy_h2d, "memory_copy_h2d", target.index, dst.storage_data(),
                uint64_t(0), static_cast<const void*>(staging.data()), size);
  }
  return dst;
}

Tensor& Tensor::copy_(const Tensor& src) {
  return write_from(src, autograd::is_grad_enabled() && autograd::inplace_needs_record(*this, src));
}

Tensor& Tensor::write_from(const Tensor& src, bool record) {
  Tensor s = src.to(device()).to(dtype());
  if (s.shape() != shape()) s = s.expand(shape());
  // Source and destination in one memory may overlap (a[1:] = a[:-1]): read
  // from a copy, as NumPy does, so no element is overwritten before it is read.
  if (s.storage() == storage()) s = s.clone();
  {
    autograd::NoGradGuard no_grad;  // the write is recorded below, as one step
    call_out(OpRegistry::instance().get("copy"), {s}, {}, {*this});
  }
  storage()->bump_version();
  if (record) autograd::rebase_history(*this, s);
  return *this;
}

bool Tensor::memory_private() const {
  const TensorImpl& i = impl();
  const Storage& mine = i.storage;
  if (i.view_base || mine->external() || mine.use_count() - mine->internal_refs() != 1) return false;
  // A trace keys tensors by their memory, so it follows a swap of a tensor it
  // computed; an input or captured tensor must be written (a graph update).
  graph::Tracer* tracer = graph::Tracer::active();
  return tracer == nullptr || tracer->created(*this);
}

Tensor Tensor::inplace_source(const std::vector<Tensor>& others) const {
  if (!autograd::is_grad_enabled() || memory_private()) return *this;
  bool record = requires_grad() || autograd::any_requires_grad(others) ||
                (impl().view_base && Tensor(impl().view_base).requires_grad());
  return record ? clone() : *this;
}

Tensor& Tensor::update_(Tensor result) {
  if (result.shape() != shape()) return copy_(result);  // broadcasts, or names the shapes that do not
  bool record = autograd::is_grad_enabled() && autograd::inplace_needs_record(*this, result);
  TensorImpl& self = impl();
  const Storage& theirs = result.impl().storage;
  // Swapping memory is what keeps values saved for backward intact, so it is
  // done only for a recorded update, and only where invisible: this tensor's
  // memory is private and nobody but `result` (about to die) sees the new one.
  bool swap = record && result.requires_grad() && result.impl_ptr().use_count() == 1 &&
              result.dtype() == dtype() && result.device() == device() && result.strides() == strides() &&
              theirs.use_count() - theirs->internal_refs() == 1 && memory_private();
  if (!swap) return write_from(result, record);
  self.storage = theirs;
  self.offset = result.offset();
  std::shared_ptr<AutogradMeta> old = std::move(self.autograd);
  self.autograd = result.impl().autograd;  // the op that made `result` made this value
  autograd::move_retained_grad(*this, old);
  return *this;
}

void Tensor::copy_to_host(void* dst, DType as) const {
  if (graph::Tracer* tracer = graph::Tracer::active()) tracer->check_host_read(*this, "copying a tensor to the host");
  Tensor t = to(as).contiguous();
  size_t nbytes = size_t(t.numel()) * t.itemsize();
  if (nbytes == 0) return;
  const LoadedPlugin& p = Runtime::get().plugin_for(t.device());
  call_plugin(p, &oar_plugin_api::memory_copy_d2h, "memory_copy_d2h", t.device().index, dst,
              static_cast<const void*>(t.storage_data()), uint64_t(t.offset()) * t.itemsize(), uint64_t(nbytes));
}

double Tensor::item() const {
  if (numel() != 1)
    throw ValueError(str("item() needs a tensor with one element, got shape ", shape_str(shape())));
  double v;
  copy_to_host(&v, DType::f64);
  return v;
}

std::string Tensor::to_string() const {
  if (!defined()) return "Tensor(undefined)";
  std::ostringstream os;
  os << "Tensor(shape=" << shape_str(shape()) << ", dtype=" << dtype() << ", device=" << device()
     << ", values=[";
  auto values = to_vector<double>();
  for (size_t i = 0; i < values.size() && i < 64; ++i) os << (i ? ", " : "") << values[i];
  if (values.size() > 64) os << ", ...";
  os << "])";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.to_string(); }

}  // namespace oar
