// Tensor's autograd methods (requires_grad, grad, backward, hooks, detach).
#include "node.h"
#include "oar/error.h"

namespace oar {

using namespace autograd;

bool Tensor::requires_grad() const {
  const TensorImpl& i = impl();
  // A view whose memory was written in place since its history was made
  // takes a fresh history from its base first (its values may come from it).
  if (i.view_base && i.storage->version() != i.view_version) [[unlikely]]
    refresh_view_history(const_cast<TensorImpl&>(i));
  const auto& m = i.autograd;
  return m && m->requires_grad;
}

Tensor& Tensor::set_requires_grad(bool flag) {
  auto& m = impl().autograd;
  if (m && m->grad_fn) {
    if (!flag)
      throw ValueError("set_requires_grad(false) on a non-leaf tensor; use detach() to cut it from the graph");
    return *this;
  }
  if (flag && !is_floating(dtype()))
    throw DTypeError(str("only floating-point tensors can require gradients, got ", dtype_name(dtype())));
  if (!m) m = std::make_shared<AutogradMeta>();
  m->requires_grad = flag;
  return *this;
}

Tensor Tensor::grad() const {
  const auto& m = impl().autograd;
  return m ? m->grad : Tensor();
}

void Tensor::set_grad(const Tensor& g) {
  if (g.defined()) {
    if (g.shape() != shape())
      throw ShapeError(str("assigned grad has shape ", shape_str(g.shape()), " but the tensor has shape ",
                           shape_str(shape())));
    if (g.device() != device())
      throw DeviceError(str("assigned grad is on ", g.device().str(), " but the tensor is on ", device().str()));
    if (g.dtype() != dtype())
      throw DTypeError(str("assigned grad has dtype ", dtype_name(g.dtype()), " but the tensor has ",
                           dtype_name(dtype())));
  }
  auto& m = impl().autograd;
  if (!m) m = std::make_shared<AutogradMeta>();
  m->grad = g;
}

bool Tensor::is_leaf() const {
  const auto& m = impl().autograd;
  return !m || !m->grad_fn;
}

Tensor Tensor::detach() const { return alias_without_history(*this); }

Tensor& Tensor::detach_() {
  TensorImpl& i = impl();
  if (i.view_base && requires_grad())
    throw ValueError(str("detach_() of a view (shape ", shape_str(shape()),
                         ") that autograd tracks: its history is its base's; use detach() instead"));
  if (i.autograd) {
    auto leaf = std::make_shared<AutogradMeta>();
    leaf->grad = i.autograd->grad;  // a leaf's .grad survives, as in PyTorch
    i.autograd = std::move(leaf);
  }
  return *this;
}

Tensor& Tensor::set_view_(const Tensor& view) {
  TensorImpl& i = impl();
  const TensorImpl& v = view.impl();
  if (v.storage != i.storage)
    throw ValueError(str("set_view_: the tensor of shape ", shape_str(view.shape()),
                         " is not a view of this tensor's memory"));
  const bool record = is_grad_enabled() && inplace_needs_record(*this, *this) && view.requires_grad();
  i.shape = v.shape;
  i.strides = v.strides;
  i.offset = v.offset;
  if (record) {
    std::shared_ptr<AutogradMeta> old_meta = i.autograd;
    auto meta = std::make_shared<AutogradMeta>();  // not shared with `view`, which may live on
    meta->requires_grad = true;
    meta->grad_fn = v.autograd->grad_fn;
    meta->output_nr = v.autograd->output_nr;
    i.autograd = std::move(meta);
    move_retained_grad(*this, old_meta);
  }
  return *this;
}

void Tensor::set_data(const Tensor& other) {
  TensorImpl& i = impl();
  const TensorImpl& o = other.impl();
  if (requires_grad() && !is_floating(o.dtype))
    throw DTypeError(str("data set to a tensor of dtype ", dtype_name(o.dtype),
                         " on a tensor that requires grad (only floating dtypes can)"));
  i.storage = o.storage;
  i.shape = o.shape;
  i.strides = o.strides;
  i.offset = o.offset;
  i.dtype = o.dtype;
  i.view_base = nullptr;
}

void Tensor::backward(const Tensor& g, bool retain_graph, bool create_graph) const {
  autograd::backward({*this}, {g}, retain_graph, create_graph);
}

void Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) const {
  if (!requires_grad())
    throw ValueError("cannot register a hook on a tensor that does not require grad");
  auto& m = impl().autograd;
  if (m->grad_fn) m->grad_fn->output_hooks.at(m->output_nr).push_back(std::move(hook));
  else m->hooks.push_back(std::move(hook));
}

void Tensor::retain_grad() const {
  if (!requires_grad()) throw ValueError("cannot retain_grad() on a tensor that does not require grad");
  auto& m = impl().autograd;
  if (m->grad_fn) m->grad_fn->retained_outputs.at(m->output_nr) = impl_ptr();
}

std::string Tensor::grad_fn_name() const {
  const auto& m = impl().autograd;
  return m && m->grad_fn ? m->grad_fn->name() : "";
}

}  // namespace oar
