// Dead code, common subexpressions, constant folding, batch-norm folding and
// freezing (see passes.h). Folding evaluates with eager ops on the constants'
// device, so it computes exactly what a run would.
#include "oar/graph/passes.h"

#include <cmath>
#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "oar/autograd.h"
#include "oar/dispatch.h"
#include "oar/error.h"
#include "oar/graph/trace.h"
#include "oar/kernel_registry.h"
#include "oar/op_registry.h"
#include "oar/plugin_sdk/fused_program.hpp"

namespace oar::graph {

namespace {

bool random_unseeded(const Node& n) {
  return n.op->needs_generator && n.attrs.has("seed") && n.attrs.get_int("seed") < 0;
}

bool is_constant(const Value* v) { return v != nullptr && v->kind == ValueKind::kConstant; }

// Eager ops for folding: no tape, no tracer.
struct FoldScope {
  autograd::NoGradGuard no_grad;
  TraceSuspend untraced;
};

}  // namespace

size_t eliminate_dead_code(Graph& g) {
  size_t removed = 0;
  for (;;) {
    std::vector<int32_t> uses = g.use_counts();
    std::unordered_set<const Node*> dead;
    // Back to front: a node whose readers all die dies in the same sweep.
    for (auto it = g.nodes().rbegin(); it != g.nodes().rend(); ++it) {
      const Node& n = **it;
      bool used = false;
      for (const Value* v : n.outputs) used |= uses[size_t(v->id)] > 0;
      if (used) continue;
      dead.insert(&n);
      for (const Value* v : n.inputs)
        if (v != nullptr) --uses[size_t(v->id)];
    }
    if (dead.empty()) break;
    removed += dead.size();
    g.remove_nodes_if([&](const Node& n) { return dead.count(&n) > 0; });
  }
  g.remove_unused_tensors();
  return removed;
}

size_t eliminate_common_subexpressions(Graph& g) {
  std::map<std::string, Node*> seen;
  std::unordered_set<const Node*> merged;
  for (const auto& n : g.nodes()) {
    if (random_unseeded(*n)) continue;
    std::string key = n->op->name + "(";
    for (const Value* v : n->inputs) key += (v != nullptr ? std::to_string(v->id) : "_") + ",";
    key += ")";
    for (const auto& [name, value] : n->attrs.items()) key += name + "=" + attr_value_str(value) + ";";
    auto [it, inserted] = seen.emplace(key, n.get());
    if (inserted) continue;
    for (size_t i = 0; i < n->outputs.size(); ++i) g.replace_uses(n->outputs[i], it->second->outputs[i]);
    merged.insert(n.get());
  }
  if (merged.empty()) return 0;
  g.remove_nodes_if([&](const Node& n) { return merged.count(&n) > 0; });
  return merged.size();
}

size_t fold_constants(Graph& g) {
  FoldScope scope;
  std::unordered_set<const Node*> folded;
  for (const auto& n : g.nodes()) {
    if (random_unseeded(*n) || n->op->name == "expand") continue;
    bool all_constant = true;
    std::vector<Tensor> inputs;
    Device device = Device::cpu();
    bool have_device = false;
    for (const Value* v : n->inputs) {
      if (v == nullptr) {
        inputs.emplace_back();
        continue;
      }
      all_constant &= is_constant(v);
      if (!all_constant) break;
      inputs.push_back(v->tensor);
      if (!have_device) device = v->tensor.device(), have_device = true;
    }
    if (!all_constant) continue;
    CallOptions options;
    options.device = device;
    std::vector<Tensor> outs = call(*n->op, inputs, n->attrs, options);
    for (size_t i = 0; i < n->outputs.size(); ++i) {
      // Views of constants would share their storage: folded values own theirs.
      Value* c = g.add_constant(str("folded", n->id, "_", i), outs[i].contiguous().clone());
      g.replace_uses(n->outputs[i], c);
    }
    folded.insert(n.get());
  }
  if (folded.empty()) return 0;
  g.remove_nodes_if([&](const Node& n) { return folded.count(&n) > 0; });
  g.remove_unused_tensors();
  return folded.size();
}

size_t fold_batch_norm_into_conv(Graph& g) {
  FoldScope scope;
  std::vector<int32_t> uses = g.use_counts();
  size_t folded = 0;
  for (size_t pos = 0; pos < g.nodes().size(); ++pos) {
    Node* bn = g.nodes()[pos].get();
    if (bn->op->name != "batch_norm" || bn->attrs.get_bool("training")) continue;
    Value* y = bn->inputs[0];
    Node* conv = y->producer;
    if (conv == nullptr || conv->op->name != "conv2d" || uses[size_t(y->id)] != 1) continue;
    if (uses[size_t(bn->outputs[1]->id)] != 0 || uses[size_t(bn->outputs[2]->id)] != 0) continue;
    Value *w = conv->inputs[1], *b = conv->inputs[2];
    Value *gamma = bn->inputs[1], *beta = bn->inputs[2], *mean = bn->inputs[3], *var = bn->inputs[4];
    if (!is_constant(w) || (b != nullptr && !is_constant(b)) || !is_constant(mean) || !is_constant(var) ||
        (gamma != nullptr && !is_constant(gamma)) || (beta != nullptr && !is_constant(beta)))
      continue;
    const Tensor& W = w->tensor;
    DType dt = W.dtype();
    Device dev = W.device();
    int64_t c_out = W.shape()[0];
    auto channel = [&](const Value* v, double fill) {
      return v != nullptr ? v->tensor.to(dev).to(dt) : Tensor::full({c_out}, fill, dt, dev);
    };
    double eps = bn->attrs.get_float("eps");
    Tensor scale = call1("div", {channel(gamma, 1.0), call1("sqrt", {call1("add", {channel(var, 0.0), Tensor::full({}, eps, dt, dev)})})});
    Tensor new_w = call1("mul", {W, scale.reshape({c_out, 1, 1, 1})});
    Tensor shifted = call1("sub", {channel(b, 0.0), channel(mean, 0.0)});
    Tensor new_b = call1("add", {call1("mul", {shifted, scale}), channel(beta, 0.0)});
    Value* wv = g.add_constant(w->name + ".bn_folded", new_w.contiguous());
    Value* bv = g.add_constant((b != nullptr ? b->name : w->name + ".bias") + ".bn_folded", new_b.contiguous());
    Node* fused = g.insert_node(pos, *conv->op, {conv->inputs[0], wv, bv}, conv->attrs);
    g.replace_uses(bn->outputs[0], fused->outputs[0]);
    ++pos;  // past the inserted node, onto the batch norm (now dead)
    ++folded;
    uses = g.use_counts();
  }
  if (folded > 0) {
    g.renumber();
    eliminate_dead_code(g);
  }
  return folded;
}

size_t fuse_bias(Graph& g) {
  size_t fused = 0;
  std::vector<int32_t> uses = g.use_counts();
  for (size_t pos = 0; pos < g.nodes().size(); ++pos) {
    Node* add = g.nodes()[pos].get();
    if (add->op->name != "add") continue;
    for (int side = 0; side < 2; ++side) {
      Value* y = add->inputs[size_t(side)];
      Value* bias = add->inputs[size_t(1 - side)];
      Node* producer = y->producer;
      if (producer == nullptr || uses[size_t(y->id)] != 1 || bias->meta.dtype != y->meta.dtype) continue;
      if (add->outputs[0]->meta.shape != y->meta.shape) continue;  // the bias must not broadcast y
      const Shape& ys = y->meta.shape;
      Node* replacement = nullptr;
      if (producer->op->name == "matmul") {
        // x @ W^T with W [out, in] (permuted by dims [1, 0]) and a bias over the last dimension.
        Value* wt = producer->inputs[1];
        Node* perm = wt->producer;
        if (perm == nullptr || perm->op->name != "permute" || perm->attrs.get_ints("dims") != std::vector<int64_t>{1, 0})
          continue;
        if (producer->inputs[0]->meta.shape.size() < 2) continue;
        int64_t out = ys.back();
        if (numel_of(bias->meta.shape) != out || bias->meta.shape.empty() || bias->meta.shape.back() != out) continue;
        Value* b = bias;
        if (bias->meta.shape.size() != 1) b = g.insert_node(pos++, "reshape", {bias}, {{"shape", Shape{out}}})->outputs[0];
        replacement = g.insert_node(pos++, OpRegistry::instance().get("linear"), {producer->inputs[0], perm->inputs[0], b}, {});
      } else if (producer->op->name == "conv2d" && producer->inputs[2] == nullptr) {
        int64_t c = ys[1];
        const Shape& bs = bias->meta.shape;
        bool per_channel = (bs == Shape{1, c, 1, 1}) || (bs == Shape{c, 1, 1});
        if (!per_channel) continue;
        Value* b = g.insert_node(pos++, "reshape", {bias}, {{"shape", Shape{c}}})->outputs[0];
        replacement = g.insert_node(pos++, *producer->op, {producer->inputs[0], producer->inputs[1], b}, producer->attrs);
      }
      if (replacement == nullptr) continue;
      g.replace_uses(add->outputs[0], replacement->outputs[0]);
      ++fused;
      uses = g.use_counts();
      break;
    }
  }
  if (fused > 0) {
    g.renumber();
    eliminate_dead_code(g);
  }
  return fused;
}

size_t fuse_activation(Graph& g, int32_t device_type) {
  std::vector<int32_t> uses = g.use_counts();
  size_t fused = 0;
  for (size_t pos = 0; pos < g.nodes().size(); ++pos) {
    Node* act = g.nodes()[pos].get();
    const std::string& name = act->op->name;
    if (name != "relu" && name != "sigmoid" && name != "tanh") continue;
    Value* y = act->inputs[0];
    Node* producer = y->producer;
    if (producer == nullptr || uses[size_t(y->id)] != 1) continue;
    const OpSchema* fused_op = producer->op->name == "conv2d"   ? OpRegistry::instance().find("conv2d_act")
                               : producer->op->name == "linear" ? OpRegistry::instance().find("linear_act")
                                                                : nullptr;
    if (fused_op == nullptr) continue;
    DType sig[2] = {producer->inputs[0]->meta.dtype, producer->inputs[1]->meta.dtype};
    if (sig[0] != sig[1] || KernelRegistry::instance().lookup(fused_op->id, device_type, sig, 2) == nullptr) continue;
    Attrs attrs = producer->attrs;
    attrs.set("activation", name);
    Node* node = g.insert_node(pos++, *fused_op, producer->inputs, attrs);
    g.replace_uses(act->outputs[0], node->outputs[0]);
    ++fused;
    uses = g.use_counts();
  }
  if (fused > 0) {
    g.renumber();
    eliminate_dead_code(g);
  }
  return fused;
}

size_t fuse_elementwise(Graph& g, int32_t device_type) {
  const OpSchema& fused_op = OpRegistry::instance().get("fused_elementwise");
  const auto& functors = fusable_functors();
  auto fusable = [&](const Node& n) {
    if (n.outputs.size() != 1 || !functors.count(n.op->name)) return false;
    DType dt = n.outputs[0]->meta.dtype;
    if (!is_floating(dt)) return false;
    for (const Value* v : n.inputs)
      if (v == nullptr || v->meta.dtype != dt) return false;  // a promotion would hide a cast
    return KernelRegistry::instance().lookup(fused_op.id, device_type, &dt, 1) != nullptr;
  };
  std::vector<int32_t> uses = g.use_counts();
  // Chains: group id per node; a node joins the chain of an input whose only reader it is.
  std::unordered_map<const Node*, size_t> group_of;
  std::vector<std::vector<Node*>> groups;
  for (const auto& n : g.nodes()) {
    if (!fusable(*n)) continue;
    size_t group = groups.size();
    for (const Value* v : n->inputs) {
      const Node* p = v->producer;
      auto it = p != nullptr ? group_of.find(p) : group_of.end();
      if (it == group_of.end() || uses[size_t(v->id)] != 1 || groups[it->second].back() != p) continue;
      if (p->outputs[0]->meta.shape != n->outputs[0]->meta.shape) continue;
      group = it->second;
      break;
    }
    if (group == groups.size()) groups.emplace_back();
    groups[group].push_back(n.get());
    group_of[n.get()] = group;
  }
  size_t fused = 0;
  for (const auto& chain : groups) {
    if (chain.size() < 2) continue;
    std::unordered_map<const Value*, int> reg;
    std::vector<Value*> inputs;
    for (const Node* n : chain)
      for (Value* v : n->inputs)
        if (!reg.count(v) && (v->producer == nullptr || !group_of.count(v->producer) ||
                              std::find(chain.begin(), chain.end(), v->producer) == chain.end())) {
          reg[v] = int(inputs.size());
          inputs.push_back(v);
        }
    std::vector<sdk::FusedInstruction> program;
    for (const Node* n : chain) {
      const FusableFunctor& f = functors.at(n->op->name);
      sdk::FusedInstruction ins;
      ins.op = n->op->name;
      if (*f.p0_attr) ins.p0 = n->attrs.get_float(f.p0_attr);
      if (*f.p1_attr) ins.p1 = n->attrs.get_float(f.p1_attr);
      ins.a = reg.at(n->inputs[0]);
      if (n->inputs.size() > 1) ins.b = reg.at(n->inputs[1]);
      reg[n->outputs[0]] = int(inputs.size() + program.size());
      program.push_back(ins);
    }
    const Node* last = chain.back();
    size_t pos = 0;
    while (g.nodes()[pos].get() != last) ++pos;
    Node* node = g.insert_node(pos, fused_op, inputs, {{"program", sdk::format_fused_program(program)}});
    g.replace_uses(last->outputs[0], node->outputs[0]);
    fused += chain.size() - 1;
  }
  if (fused > 0) {
    g.renumber();
    eliminate_dead_code(g);
  }
  return fused;
}

size_t unfuse(Graph& g) {
  const auto& functors = fusable_functors();
  size_t expanded = 0;
  for (size_t pos = 0; pos < g.nodes().size(); ++pos) {
    Node* n = g.nodes()[pos].get();
    const std::string& name = n->op->name;
    Value* result = nullptr;
    if (name == "conv2d_act" || name == "linear_act") {
      Attrs attrs;
      for (const auto& [k, v] : n->attrs.items())
        if (k != "activation") attrs.set(k, v);
      std::string act = n->attrs.has("activation") ? n->attrs.get_string("activation") : "relu";
      Node* base = g.insert_node(pos++, name == "conv2d_act" ? "conv2d" : "linear", n->inputs, attrs);
      result = g.insert_node(pos++, act, {base->outputs[0]}, {})->outputs[0];
    } else if (name == "fused_elementwise") {
      std::vector<Value*> regs = n->inputs;
      for (const sdk::FusedInstruction& ins :
           sdk::parse_fused_program(n->attrs.get_string("program"), int(n->inputs.size()))) {
        const FusableFunctor& f = functors.at(ins.op);
        Attrs attrs;
        if (*f.p0_attr) attrs.set(f.p0_attr, ins.p0);
        if (*f.p1_attr) attrs.set(f.p1_attr, ins.p1);
        std::vector<Value*> in = {regs.at(size_t(ins.a))};
        if (ins.b >= 0) in.push_back(regs.at(size_t(ins.b)));
        regs.push_back(g.insert_node(pos++, ins.op, in, attrs)->outputs[0]);
      }
      result = regs.back();
    } else {
      continue;
    }
    g.replace_uses(n->outputs[0], result);
    ++expanded;
  }
  if (expanded > 0) {
    g.renumber();
    eliminate_dead_code(g);
  }
  return expanded;
}

size_t eliminate_identity_views(Graph& g) {
  std::unordered_set<const Node*> removed;
  for (const auto& n : g.nodes()) {
    if (!n->op->view || n->op->name == "to_device") continue;
    const Value* in = n->inputs[0];
    const Value* out = n->outputs[0];
    if (in->meta.shape != out->meta.shape) continue;
    const std::string& op = n->op->name;
    bool identity = op == "reshape" || op == "expand";
    if (op == "permute") {
      const auto& dims = n->attrs.get_ints("dims");
      identity = true;
      for (size_t i = 0; i < dims.size(); ++i) identity &= dims[i] == int64_t(i) || in->meta.shape[i] == 1;
    }
    if (op == "slice") identity = n->attrs.get_int("step") == 1 || in->meta.shape[size_t(n->attrs.get_int("dim"))] <= 1;
    if (!identity) continue;
    g.replace_uses(n->outputs[0], n->inputs[0]);
    removed.insert(n.get());
  }
  if (removed.empty()) return 0;
  g.remove_nodes_if([&](const Node& n) { return removed.count(&n) > 0; });
  return removed.size();
}

size_t freeze(Graph& g) {
  for (const auto& u : g.updates())
    if (u.target->kind == ValueKind::kCaptured)
      throw GraphError(str("freeze: the graph writes into captured tensor '", u.target->name,
                           "' (e.g. train-mode batch norm); trace it in eval mode to deploy it"));
  FoldScope scope;
  size_t frozen = 0;
  for (Value* v : g.tensors()) {
    if (v->kind != ValueKind::kCaptured) continue;
    v->kind = ValueKind::kConstant;
    v->tensor = v->tensor.detach().clone();
    ++frozen;
  }
  return frozen;
}

void optimize(Graph& g, Device device, bool device_fusion) {
  fold_constants(g);
  eliminate_identity_views(g);
  fuse_bias(g);
  eliminate_common_subexpressions(g);
  eliminate_dead_code(g);
  if (device_fusion) {
    fuse_activation(g, device.type);
    fuse_elementwise(g, device.type);
  }
  g.verify();
}

void optimize_for_inference(Graph& g, Device device, bool device_fusion) {
  freeze(g);
  fold_batch_norm_into_conv(g);
  optimize(g, device, device_fusion);
}

}  // namespace oar::graph
