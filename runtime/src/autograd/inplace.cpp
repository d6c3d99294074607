// Autograd of in-place writes. A write replaces values in memory that views
// share, so the history that changes is the one of the tensor owning the
// memory (the base): it becomes "old base with a region overwritten by src".
// Views then take their history from the base again, lazily, when the
// memory's version tells them it changed (as PyTorch's CopySlices and view
// regeneration do). Gradients are moved through storage space, so any view
// geometry works: grad of a region = the same as_strided window of the base's
// gradient laid out over the whole storage.
#include "node.h"
#include "oar/dispatch.h"
#include "oar/error.h"

namespace oar::autograd {

namespace {

struct Geometry {
  Shape shape, strides;
  int64_t offset = 0;
  static Geometry of(const TensorImpl& t) { return {t.shape, t.strides, t.offset}; }
};

// A zero buffer spanning the whole storage, in which geometries are windows.
Tensor storage_space_zeros(const Tensor& like, int64_t storage_elems) {
  return Tensor::zeros({storage_elems}, like.dtype(), like.device());
}

Tensor window(const Tensor& space, const Geometry& g) { return space.as_strided(g.shape, g.strides, g.offset); }

void refuse_double_backward(const Tensor& g) {
  if (is_grad_enabled() && g.requires_grad())
    throw NotImplementedError("double backward through an in-place write into a view is not supported");
}

// The base after `src` was written into the window `view` of it.
struct CopySlicesNode : Node {
  Geometry base, view;
  int64_t storage_elems = 0;
  bool whole = false;  // the write covered the tensor itself, not a view of it
  std::string name() const override { return "CopySlicesBackward"; }
  std::vector<Tensor> apply(const std::vector<Tensor>& grads) override {
    const Tensor& g = grads[0];
    if (!g.defined()) return {Tensor(), Tensor()};
    if (whole) return {Tensor(), g};  // the old values were overwritten entirely
    refuse_double_backward(g);
    NoGradGuard no_grad;
    Tensor space = storage_space_zeros(g, storage_elems);
    window(space, base).copy_(g);
    Tensor to_src = window(space, view).clone();
    window(space, view).copy_(Tensor::zeros({}, g.dtype(), g.device()));
    return {window(space, base).clone(), to_src};
  }
};

// A view read from its base's current history.
struct ViewOfBaseNode : Node {
  Geometry base, view;
  int64_t storage_elems = 0;
  std::string name() const override { return "AsStridedBackward"; }
  std::vector<Tensor> apply(const std::vector<Tensor>& grads) override {
    const Tensor& g = grads[0];
    if (!g.defined()) return {Tensor()};
    refuse_double_backward(g);
    NoGradGuard no_grad;
    Tensor space = storage_space_zeros(g, storage_elems);
    window(space, view).copy_(g);
    return {window(space, base).clone()};
  }
};

int64_t storage_elems(const TensorImpl& t) { return int64_t(t.storage->nbytes() / dtype_size(t.dtype)); }

void finish(Node& node, size_t num_outputs) {
  node.num_outputs = num_outputs;
  node.output_hooks.resize(num_outputs);
  node.retained_outputs.resize(num_outputs);
}

void view_from_base(TensorImpl& view_impl, const Tensor& base) {
  auto node = std::make_shared<ViewOfBaseNode>();
  node->base = Geometry::of(base.impl());
  node->view = Geometry::of(view_impl);
  node->storage_elems = storage_elems(base.impl());
  finish(*node, 1);
  collect_inputs(*node, {base});
  Tensor view(std::shared_ptr<TensorImpl>(std::shared_ptr<TensorImpl>(), &view_impl));  // non-owning handle
  set_history(view, node, 0);
}

}  // namespace

bool inplace_needs_record(const Tensor& self, const Tensor& src) {
  const TensorImpl& i = self.impl();
  if (self.requires_grad() && self.is_leaf())
    throw ValueError(str("a leaf tensor that requires grad (shape ", shape_str(self.shape()),
                         ") is being used in an in-place operation; do it under oar.no_grad() or on a clone()"));
  bool base_grad = false;
  if (i.view_base) {
    Tensor base(i.view_base);
    base_grad = base.requires_grad();
    if (base_grad && i.view_in_no_grad)
      throw ValueError(str("a view made in no_grad mode is being modified in place with grad mode enabled, and its "
                           "base (shape ", shape_str(base.shape()), ") requires grad: autograd cannot track it. "
                           "Make the view with grad mode enabled, or do the write under no_grad"));
    if (base_grad && base.is_leaf())
      throw ValueError(str("a view of a leaf tensor that requires grad (base shape ", shape_str(base.shape()),
                           ") is being used in an in-place operation; do it under oar.no_grad()"));
  }
  return self.requires_grad() || base_grad || src.requires_grad();
}

void move_retained_grad(const Tensor& t, const std::shared_ptr<AutogradMeta>& old_meta) {
  if (!old_meta || !old_meta->grad_fn) return;
  auto& slots = old_meta->grad_fn->retained_outputs;
  if (old_meta->output_nr >= slots.size() || slots[old_meta->output_nr].lock() != t.impl_ptr()) return;
  slots[old_meta->output_nr].reset();
  const auto& now = t.impl().autograd;
  if (now && now->grad_fn && now->output_nr < now->grad_fn->retained_outputs.size())
    now->grad_fn->retained_outputs[now->output_nr] = t.impl_ptr();
}

void rebase_history(Tensor& self, const Tensor& src) {
  TensorImpl& i = self.impl();
  Tensor base = i.view_base ? Tensor(i.view_base) : self;
  std::shared_ptr<AutogradMeta> old_meta = base.impl().autograd;
  auto node = std::make_shared<CopySlicesNode>();
  node->whole = !i.view_base;
  node->base = Geometry::of(base.impl());
  node->view = Geometry::of(i);
  node->storage_elems = storage_elems(i);
  finish(*node, 1);
  collect_inputs(*node, {base, src});
  set_history(base, node, 0);
  move_retained_grad(base, old_meta);
  base.impl().view_version = base.version();
  if (i.view_base) {
    view_from_base(i, base);
    i.view_version = self.version();
  }
}

void refresh_view_history(TensorImpl& view) {
  view.view_version = view.storage->version();
  if (view.view_in_no_grad) return;  // made outside autograd: stays outside
  Tensor base(view.view_base);
  if (base.requires_grad()) view_from_base(view, base);
}

}  // namespace oar::autograd
