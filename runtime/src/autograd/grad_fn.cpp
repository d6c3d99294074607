// GradFn: the public view of autograd nodes (oar/grad_fn.h).
#include "oar/grad_fn.h"

#include "node.h"

namespace oar {

GradFn GradFn::of(const Tensor& t) {
  if (!t.defined()) return {};
  const auto& m = t.impl().autograd;
  return m && m->grad_fn ? GradFn(m->grad_fn) : GradFn();
}

std::string GradFn::name() const { return node_ ? node_->name() : ""; }

std::vector<std::pair<GradFn, uint32_t>> GradFn::next_functions() const {
  std::vector<std::pair<GradFn, uint32_t>> out;
  if (!node_) return out;
  out.reserve(node_->next.size());
  for (const autograd::Edge& e : node_->next) out.emplace_back(GradFn(e.node), e.input_nr);
  return out;
}

void GradFn::register_prehook(autograd::NodePreHook hook) const {
  if (node_) node_->pre_hooks.push_back(std::move(hook));
}

void GradFn::register_hook(autograd::NodeHook hook) const {
  if (node_) node_->post_hooks.push_back(std::move(hook));
}

Tensor GradFn::variable() const {
  auto* acc = dynamic_cast<const autograd::AccumulateGrad*>(node_.get());
  return acc && acc->leaf ? Tensor(acc->leaf) : Tensor();
}

}  // namespace oar
