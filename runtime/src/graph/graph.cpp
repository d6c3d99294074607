// Graph building, rewriting helpers and shape inference on metas.
#include "oar/graph/graph.h"

#include <algorithm>
#include <unordered_set>

#include "oar/dispatch.h"
#include "oar/error.h"
#include "oar/graph/trace.h"
#include "oar/op_registry.h"

namespace oar::graph {

const char* value_kind_name(ValueKind kind) {
  switch (kind) {
    case ValueKind::kInput: return "input";
    case ValueKind::kCaptured: return "captured";
    case ValueKind::kConstant: return "constant";
    case ValueKind::kNode: return "node";
  }
  return "?";
}

namespace {

// A tensor with a shape and dtype but no memory: what shape inference reads.
Tensor meta_tensor(const TensorMeta& meta, Device device) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::make_shared<StorageImpl>(device, DataPtr{}, 0);
  impl->shape = meta.shape;
  impl->strides = contiguous_strides(meta.shape);
  impl->dtype = meta.dtype;
  return Tensor(std::move(impl));
}

}  // namespace

std::vector<TensorMeta> infer_metas(const OpSchema& op, const std::vector<const TensorMeta*>& inputs,
                                    const Attrs& attrs, Device device) {
  std::optional<DType> common = promoted_dtype(op, inputs.size(), [&](size_t i) -> std::optional<PromotionOperand> {
    if (inputs[i] == nullptr) return std::nullopt;
    return PromotionOperand{inputs[i]->dtype, inputs[i]->shape.empty()};
  });
  std::vector<Tensor> tensors;
  tensors.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i] == nullptr) {
      tensors.emplace_back();
      continue;
    }
    TensorMeta m = *inputs[i];
    if (common && op.inputs[std::min(i, op.inputs.size() - 1)].promoted) m.dtype = *common;
    tensors.push_back(meta_tensor(m, device));
  }
  // View ops infer by applying their Tensor method, which must not be traced.
  TraceSuspend untraced;
  InferContext ctx{op, tensors, attrs, device};
  return op.infer(ctx);
}

Value* Graph::new_value(ValueKind kind, TensorMeta meta, std::string name) {
  auto v = std::make_unique<Value>();
  v->id = int32_t(values_.size());
  v->kind = kind;
  v->meta = std::move(meta);
  v->name = std::move(name);
  values_.push_back(std::move(v));
  return values_.back().get();
}

Value* Graph::add_input(const std::string& name, TensorMeta meta) {
  Value* v = new_value(ValueKind::kInput, std::move(meta), name);
  inputs_.push_back(v);
  return v;
}

Value* Graph::add_captured(const std::string& name, const Tensor& tensor) {
  if (!tensor.defined()) throw ValueError("graph: cannot capture an undefined tensor");
  Value* v = new_value(ValueKind::kCaptured, {tensor.shape(), tensor.dtype()}, name);
  v->tensor = tensor;
  return v;
}

Value* Graph::add_constant(const std::string& name, const Tensor& tensor) {
  if (!tensor.defined()) throw ValueError("graph: a constant must be a defined tensor");
  Value* v = new_value(ValueKind::kConstant, {tensor.shape(), tensor.dtype()}, name);
  v->tensor = tensor;
  return v;
}

std::unique_ptr<Node> Graph::make_node(const OpSchema& op, const std::vector<Value*>& inputs, const Attrs& attrs) {
  auto node = std::make_unique<Node>();
  node->op = &op;
  node->inputs = inputs;
  node->attrs = normalize_attrs(op, attrs);
  std::vector<const TensorMeta*> metas;
  for (Value* v : inputs) metas.push_back(v != nullptr ? &v->meta : nullptr);
  // The device only matters to ops whose inference reads it; a graph is device-free.
  std::vector<TensorMeta> outs = infer_metas(op, metas, node->attrs, Device{0, 0});
  for (size_t i = 0; i < outs.size(); ++i) {
    Value* v = new_value(ValueKind::kNode, std::move(outs[i]), "");
    v->producer = node.get();
    v->output_index = int32_t(i);
    node->outputs.push_back(v);
  }
  return node;
}

Node* Graph::add_node(const OpSchema& op, const std::vector<Value*>& inputs, const Attrs& attrs) {
  nodes_.push_back(make_node(op, inputs, attrs));
  nodes_.back()->id = int32_t(nodes_.size() - 1);
  return nodes_.back().get();
}

Node* Graph::add_node(const std::string& op, const std::vector<Value*>& inputs, const Attrs& attrs) {
  return add_node(OpRegistry::instance().get(op), inputs, attrs);
}

Node* Graph::insert_node(size_t pos, const OpSchema& op, const std::vector<Value*>& inputs, const Attrs& attrs) {
  if (pos > nodes_.size()) throw ValueError(str("graph: insert position ", pos, " past the end"));
  auto it = nodes_.insert(nodes_.begin() + std::ptrdiff_t(pos), make_node(op, inputs, attrs));
  return it->get();
}

Node* Graph::insert_node(size_t pos, const std::string& op, const std::vector<Value*>& inputs, const Attrs& attrs) {
  return insert_node(pos, OpRegistry::instance().get(op), inputs, attrs);
}

void Graph::add_update(Value* target, Value* source) {
  if (target == nullptr || source == nullptr) throw ValueError("graph: an update needs a target and a source");
  for (auto& u : updates_)
    if (u.target == target) {
      u.source = source;  // the last write wins, as in eager code
      return;
    }
  updates_.push_back({target, source});
}

std::vector<Value*> Graph::tensors() const {
  std::vector<Value*> out;
  for (const auto& v : values_)
    if (v->kind == ValueKind::kCaptured || v->kind == ValueKind::kConstant) out.push_back(v.get());
  return out;
}

std::vector<int32_t> Graph::use_counts() const {
  std::vector<int32_t> uses(values_.size(), 0);
  for (const auto& n : nodes_)
    for (Value* v : n->inputs)
      if (v != nullptr) ++uses[size_t(v->id)];
  for (Value* v : outputs_) ++uses[size_t(v->id)];
  for (const auto& u : updates_) ++uses[size_t(u.source->id)], ++uses[size_t(u.target->id)];
  return uses;
}

void Graph::replace_uses(Value* from, Value* to) {
  for (auto& n : nodes_)
    for (Value*& v : n->inputs)
      if (v == from) v = to;
  for (Value*& v : outputs_)
    if (v == from) v = to;
  for (auto& u : updates_)
    if (u.source == from) u.source = to;
}

void Graph::remove_unused_tensors() {
  std::vector<int32_t> uses = use_counts();
  std::vector<std::unique_ptr<Value>> kept;
  for (auto& v : values_) {
    bool tensor = v->kind == ValueKind::kCaptured || v->kind == ValueKind::kConstant;
    if (tensor && uses[size_t(v->id)] == 0) continue;
    kept.push_back(std::move(v));
  }
  // Node outputs that nothing reads stay: they belong to their node.
  values_ = std::move(kept);
  renumber();
}

void Graph::renumber() {
  // Values keep their creation order; a node's outputs are never removed alone.
  std::unordered_set<const Value*> live;
  for (const auto& n : nodes_)
    for (Value* v : n->outputs) live.insert(v);
  std::vector<std::unique_ptr<Value>> kept;
  for (auto& v : values_)
    if (v->kind != ValueKind::kNode || live.count(v.get())) kept.push_back(std::move(v));
  values_ = std::move(kept);
  for (size_t i = 0; i < values_.size(); ++i) values_[i]->id = int32_t(i);
  for (size_t i = 0; i < nodes_.size(); ++i) nodes_[i]->id = int32_t(i);
}

}  // namespace oar::graph
