// The graph IR: a static program over tensors in SSA form. A Value is defined
// once, by a graph input, a captured tensor or one output of a Node, and
// carries its shape and dtype. A Node applies one catalog op (with its typed
// attributes) to values. Nodes are kept in a valid execution order, so a
// graph runs front to back. Tracing (trace.h) builds graphs from eager code,
// passes (passes.h) rewrite them, the Executor (executor.h) runs them on any
// device, and serialize.h saves them.
//
// In-place writes of eager code (an optimizer's `p.copy_(...)`) are kept out
// of SSA: the write is a new value, and the graph records an *update*: "after
// a run, store value V into the tensor behind value P". That is all the state
// a training graph needs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "oar/op_schema.h"
#include "oar/tensor.h"

namespace oar::graph {

struct Node;

enum class ValueKind {
  kInput,     // supplied on each run, in the order of Graph::inputs()
  kCaptured,  // a tensor outside the graph, read by reference on each run (a parameter, a buffer)
  kConstant,  // a tensor the graph owns and nobody else writes (folded results, frozen weights)
  kNode,      // an output of a node
};
const char* value_kind_name(ValueKind kind);

struct Value {
  int32_t id = -1;
  ValueKind kind = ValueKind::kNode;
  TensorMeta meta;
  std::string name;       // optional; inputs and captured values are named for dumps and files
  Node* producer = nullptr;  // kNode only
  int32_t output_index = 0;  // kNode only
  Tensor tensor;             // kCaptured / kConstant: the data
};

struct Node {
  int32_t id = -1;
  const OpSchema* op = nullptr;
  std::vector<Value*> inputs;  // nullptr: an absent optional input
  std::vector<Value*> outputs;
  Attrs attrs;
};

// "After a run, the tensor behind `target` (an input or captured value) holds `source`."
struct Update {
  Value* target = nullptr;
  Value* source = nullptr;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // ---- building ----
  Value* add_input(const std::string& name, TensorMeta meta);
  Value* add_captured(const std::string& name, const Tensor& tensor);
  Value* add_constant(const std::string& name, const Tensor& tensor);
  // Appends a node; output metas come from the op's shape inference on the
  // input metas, so a node cannot be added with inconsistent shapes.
  Node* add_node(const OpSchema& op, const std::vector<Value*>& inputs, const Attrs& attrs);
  Node* add_node(const std::string& op, const std::vector<Value*>& inputs, const Attrs& attrs);
  void set_outputs(std::vector<Value*> outputs) { outputs_ = std::move(outputs); }
  void add_update(Value* target, Value* source);

  // ---- reading ----
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  const std::vector<Update>& updates() const { return updates_; }
  // Captured and constant values, in creation order.
  std::vector<Value*> tensors() const;
  // Nodes in execution order.
  const std::vector<std::unique_ptr<Node>>& nodes() const { return nodes_; }
  size_t node_count() const { return nodes_.size(); }
  // Number of node inputs, outputs and updates reading each value (index: Value::id).
  std::vector<int32_t> use_counts() const;

  // ---- rewriting (passes) ----
  // Every use of `from` (node inputs, outputs, update sources) reads `to` instead.
  void replace_uses(Value* from, Value* to);
  // Removes the nodes for which `dead` is true (their outputs must be unused), then renumbers.
  template <class Pred>
  void remove_nodes_if(Pred dead);
  // Inserts a node before position `pos` of nodes() (inference as add_node).
  Node* insert_node(size_t pos, const OpSchema& op, const std::vector<Value*>& inputs, const Attrs& attrs);
  Node* insert_node(size_t pos, const std::string& op, const std::vector<Value*>& inputs, const Attrs& attrs);
  // Drops inputs-less values nobody reads (captured or constant) from tensors().
  void remove_unused_tensors();
  // Renumbers nodes and values densely in execution order.
  void renumber();

  // Throws GraphError naming the node and the problem: a value used before its
  // definition or from another graph, input counts or attribute types that do
  // not match the op's schema, output metas that disagree with inference,
  // updates that target anything but an input or captured value.
  void verify() const;
  // Human-readable text: one line per input, tensor, node, update and output.
  std::string dump() const;

 private:
  Value* new_value(ValueKind kind, TensorMeta meta, std::string name);
  std::unique_ptr<Node> make_node(const OpSchema& op, const std::vector<Value*>& inputs, const Attrs& attrs);

  std::vector<std::unique_ptr<Value>> values_;
  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  std::vector<Update> updates_;
};

template <class Pred>
void Graph::remove_nodes_if(Pred dead) {
  std::vector<std::unique_ptr<Node>> kept;
  kept.reserve(nodes_.size());
  for (auto& n : nodes_)
    if (!dead(*n)) kept.push_back(std::move(n));
  nodes_ = std::move(kept);
  renumber();
}

// Output metas of `op` applied to inputs with these metas (nullopt: absent
// optional input) on `device`: the op's own shape inference, run on
// storage-less tensors. Throws what the op's inference throws.
std::vector<TensorMeta> infer_metas(const OpSchema& op, const std::vector<const TensorMeta*>& inputs,
                                    const Attrs& attrs, Device device);

// One attribute value in the text form dumps use ("[1, 2]", "f32", "0.5").
std::string attr_value_str(const AttrValue& value);

}  // namespace oar::graph
