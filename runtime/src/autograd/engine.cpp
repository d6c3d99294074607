// The backward engine: walks the graph from the roots in reverse creation
// order once every consumer of a node has delivered its gradient, sums
// gradients that meet at a node, runs tensor hooks, and either accumulates
// into leaves (backward) or captures the requested gradients (grad).
#include <map>
#include <queue>
#include <unordered_map>

#include "node.h"
#include "oar/dispatch.h"
#include "oar/error.h"
#include "oar/graph/trace.h"
#include "oar/op_registry.h"

namespace oar::autograd {

std::vector<Tensor> AccumulateGrad::apply(const std::vector<Tensor>& grads) {
  Tensor g = grads.at(0);
  if (!g.defined()) return {};
  auto& meta = leaf->autograd;
  if (!meta) return {};
  if (meta->grad.defined() && accumulates_in_place(meta->grad, g)) {
    add_into(meta->grad, g);  // only reads g: no need to copy it first
    return {};
  }
  // Keep the leaf's .grad from aliasing a buffer other code may still hold
  // (references autograd or a tracer keep for themselves do not count).
  const Storage& s = g.storage();
  if (!is_grad_enabled() && s.use_count() - s->internal_refs() > 1) g = g.clone();
  if (!meta->grad.defined()) meta->grad = is_grad_enabled() ? g : alias_without_history(g);
  else meta->grad = call1("add", {meta->grad, g});
  return {};
}

// A second backward adds into the existing .grad, as PyTorch does (a `g = p.grad` held before
// sees the sum, and no new buffer is allocated), when that is invisible to everyone else: outside
// grad mode and tracing, into contiguous memory of its own (no view, alias or foreign owner).
bool AccumulateGrad::accumulates_in_place(const Tensor& grad, const Tensor& g) {
  if (is_grad_enabled() || graph::Tracer::active() != nullptr) return false;
  if (grad.shape() != g.shape() || grad.dtype() != g.dtype() || grad.device() != g.device()) return false;
  const Storage& s = grad.storage();
  return grad.is_contiguous() && !grad.impl().view_base && !s->external() &&
         s.use_count() - s->internal_refs() == 1 && s->nbytes() == size_t(grad.numel()) * grad.itemsize();
}

void AccumulateGrad::add_into(Tensor& grad, const Tensor& g) {
  call_out(OpRegistry::instance().get("add"), {grad, g}, {}, {grad});
  grad.storage()->bump_version();
}

namespace {

Tensor run_hooks(const std::vector<TensorHook>& hooks, Tensor g) {
  for (const auto& h : hooks) {
    if (!g.defined()) break;
    Tensor r = h(g);
    if (r.defined()) {
      if (r.shape() != g.shape())
        throw ShapeError(str("a tensor hook returned a gradient of shape ", shape_str(r.shape()),
                             " for a tensor of shape ", shape_str(g.shape())));
      g = r;
    }
  }
  return g;
}

// A node hook's replacement gradients: one per gradient it saw, each shaped like the one it replaces.
void replace_grads(std::vector<Tensor>& grads, std::vector<Tensor> r, const Node& node, const char* what) {
  if (r.empty()) return;
  if (r.size() != grads.size())
    throw ValueError(str("a ", what, " of ", node.name(), " returned ", r.size(), " gradients for ", grads.size()));
  for (size_t i = 0; i < r.size(); ++i)
    if (r[i].defined() && grads[i].defined() && r[i].shape() != grads[i].shape())
      throw ShapeError(str("a ", what, " of ", node.name(), " returned a gradient of shape ", shape_str(r[i].shape()),
                           " for one of shape ", shape_str(grads[i].shape()), " (position ", i, ")"));
  grads = std::move(r);
}

Tensor accumulate(const Tensor& a, const Tensor& b) {
  if (!a.defined()) return b;
  if (!b.defined()) return a;
  return call1("add", {a, b});
}

struct ByNewest {
  bool operator()(const Node* a, const Node* b) const { return a->sequence_nr < b->sequence_nr; }
};

struct Capture {
  Node* node;
  uint32_t output_nr;
  size_t index;
};

class GraphTask {
 public:
  GraphTask(bool keep_graph, bool accumulate_leaves)
      : keep_graph_(keep_graph), accumulate_leaves_(accumulate_leaves) {}

  void add_capture(const Edge& e, size_t index) { captures_.push_back({e.node.get(), e.input_nr, index}); }
  std::vector<Tensor>& captured() { return captured_; }

  void run(const std::vector<Edge>& roots, const std::vector<Tensor>& root_grads) {
    captured_.resize(captures_.size());
    count_dependencies(roots);
    for (size_t i = 0; i < roots.size(); ++i) {
      auto& buf = buffer(roots[i].node.get());
      buf[roots[i].input_nr] = accumulate(buf[roots[i].input_nr], root_grads[i]);
    }
    std::priority_queue<Node*, std::vector<Node*>, ByNewest> ready;
    for (const auto& r : roots)
      if (dependencies_[r.node.get()] == 0 && queued_.insert({r.node.get(), true}).second) ready.push(r.node.get());
    while (!ready.empty()) {
      Node* node = ready.top();
      ready.pop();
      process(node, ready);
    }
  }

 private:
  std::vector<Tensor>& buffer(Node* n) {
    auto& b = buffers_[n];
    if (b.empty()) b.resize(std::max<size_t>(n->num_outputs, 1));
    return b;
  }

  void count_dependencies(const std::vector<Edge>& roots) {
    std::vector<Node*> stack;
    for (const auto& r : roots)
      if (seen_.insert({r.node.get(), true}).second) stack.push_back(r.node.get());
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      keep_alive_.push_back(n->shared_from_this());
      for (const auto& e : n->next) {
        if (!e.valid()) continue;
        ++dependencies_[e.node.get()];
        if (seen_.insert({e.node.get(), true}).second) stack.push_back(e.node.get());
      }
    }
  }

  void process(Node* node, std::priority_queue<Node*, std::vector<Node*>, ByNewest>& ready) {
    std::vector<Tensor> grads = std::move(buffer(node));
    buffers_.erase(node);
    auto* acc = dynamic_cast<AccumulateGrad*>(node);
    // Hooks and retain_grad of non-leaf outputs, then captures for grad().
    for (size_t i = 0; i < grads.size(); ++i) {
      if (i < node->output_hooks.size()) grads[i] = run_hooks(node->output_hooks[i], grads[i]);
      if (acc && acc->leaf->autograd) grads[i] = run_hooks(acc->leaf->autograd->hooks, grads[i]);
      if (i < node->retained_outputs.size())
        if (auto t = node->retained_outputs[i].lock(); t && t->autograd && grads[i].defined()) {
          Tensor g = is_grad_enabled() ? grads[i] : alias_without_history(grads[i]);
          t->autograd->grad = accumulate(t->autograd->grad, g);
        }
      for (const auto& c : captures_)
        if (c.node == node && c.output_nr == i) captured_[c.index] = accumulate(captured_[c.index], grads[i]);
    }
    if (acc) {  // the leaf's hooks ran above; grad() does not run AccumulateGrad, so nor its node hooks
      if (!accumulate_leaves_) return;
      for (const auto& h : node->pre_hooks) replace_grads(grads, h(grads), *node, "pre-hook");
      acc->apply(grads);
      for (const auto& h : node->post_hooks) h({}, grads);
      return;
    }
    for (const auto& h : node->pre_hooks) replace_grads(grads, h(grads), *node, "pre-hook");
    if (node->released)
      throw ValueError(str("trying to backward through the graph a second time (node ", node->name(),
                           "); its saved tensors were freed. Pass retain_graph=true to the first backward"));
    bool any = false;
    for (const auto& g : grads) any |= g.defined();
    std::vector<Tensor> input_grads;
    if (any) input_grads = node->apply(grads);
    input_grads.resize(node->next.size());
    for (const auto& h : node->post_hooks) replace_grads(input_grads, h(input_grads, grads), *node, "hook");
    if (!keep_graph_) {
      node->release_saved();
      node->released = true;
    }
    for (size_t j = 0; j < node->next.size(); ++j) {
      const Edge& e = node->next[j];
      if (!e.valid()) continue;
      Tensor g = input_grads[j];
      if (g.defined()) {
        g = sum_to(g, node->input_shapes[j]);
        if (g.dtype() != node->input_dtypes[j]) g = g.to(node->input_dtypes[j]);
        if (g.device() != node->input_devices[j]) g = g.to(node->input_devices[j]);
        auto& buf = buffer(e.node.get());
        buf[e.input_nr] = accumulate(buf[e.input_nr], g);
      }
      if (--dependencies_[e.node.get()] == 0 && queued_.insert({e.node.get(), true}).second) ready.push(e.node.get());
    }
  }

  bool keep_graph_;
  bool accumulate_leaves_;
  std::unordered_map<Node*, int> dependencies_;
  std::unordered_map<Node*, bool> seen_, queued_;
  std::unordered_map<Node*, std::vector<Tensor>> buffers_;
  std::vector<std::shared_ptr<Node>> keep_alive_;
  std::vector<Capture> captures_;
  std::vector<Tensor> captured_;
};

// Validates roots and builds their starting gradients.
void prepare_roots(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots,
                   std::vector<Edge>& edges, std::vector<Tensor>& grads) {
  if (roots.empty()) throw ValueError("backward: no tensors given");
  if (!grad_roots.empty() && grad_roots.size() != roots.size())
    throw ValueError(str("backward: got ", grad_roots.size(), " gradients for ", roots.size(), " tensors"));
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& r = roots[i];
    if (!r.defined()) throw ValueError(str("backward: tensor ", i, " is undefined"));
    if (!r.requires_grad())
      throw ValueError(str("element ", i, " of tensors does not require grad and does not have a grad_fn"));
    Tensor g = grad_roots.empty() ? Tensor() : grad_roots[i];
    if (!g.defined()) {
      if (r.numel() != 1)
        throw ValueError(str("grad can be implicitly created only for outputs with one element; tensor ", i,
                             " has shape ", shape_str(r.shape()), " (pass a gradient)"));
      g = Tensor::ones(r.shape(), r.dtype(), r.device());
    } else {
      if (g.shape() != r.shape())
        throw ShapeError(str("backward: gradient ", i, " has shape ", shape_str(g.shape()),
                             " but the tensor has shape ", shape_str(r.shape())));
      if (g.device() != r.device())
        throw DeviceError(str("backward: gradient ", i, " is on ", g.device().str(), " but the tensor is on ",
                              r.device().str()));
      if (g.dtype() != r.dtype()) g = g.to(r.dtype());
    }
    edges.push_back(edge_of(r));
    grads.push_back(g);
  }
}

}  // namespace

void backward(const std::vector<Tensor>& roots, const std::vector<Tensor>& grad_roots, bool retain_graph,
              bool create_graph) {
  std::vector<Edge> edges;
  std::vector<Tensor> grads;
  prepare_roots(roots, grad_roots, edges, grads);
  GradModeGuard mode(create_graph);
  GraphTask task(retain_graph || create_graph, /*accumulate_leaves=*/true);
  task.run(edges, grads);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, bool retain_graph, bool create_graph,
                         bool allow_unused) {
  std::vector<Edge> edges;
  std::vector<Tensor> grads;
  prepare_roots(outputs, grad_outputs, edges, grads);
  GradModeGuard mode(create_graph);
  GraphTask task(retain_graph || create_graph, /*accumulate_leaves=*/false);
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].defined() || !inputs[i].requires_grad())
      throw ValueError(str("grad: input ", i, " does not require grad"));
    task.add_capture(edge_of(inputs[i]), i);
  }
  task.run(edges, grads);
  std::vector<Tensor> result = task.captured();
  for (size_t i = 0; i < result.size(); ++i) {
    if (!result[i].defined() && !allow_unused)
      throw ValueError(str("grad: input ", i, " was not used to compute the outputs (pass allow_unused=true)"));
    if (result[i].defined() && !create_graph) result[i] = alias_without_history(result[i]);
  }
  return result;
}

}  // namespace oar::autograd
