// The exporter's building state, shared by exporter.cpp (graph walk, model
// assembly) and export_ops.cpp (one emitter per oar op): ONNX names for graph
// values, fresh names for temporaries, initializers for constants, and the
// NodeProtos written so far.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "oar/graph/graph.h"
#include "onnx/onnx_pb.h"

namespace oar::onnx::detail {

class ExportBuilder {
 public:
  ExportBuilder(::onnx::GraphProto& graph, int opset) : graph_(graph), opset_(opset) {}

  int opset() const { return opset_; }
  // The ONNX name of a graph value (its own name when it has a unique one).
  std::string name_of(const graph::Value* v);
  std::string fresh(const std::string& hint);
  // Keeps `name` for the caller: fresh() never hands it out. Returns false
  // when it is already taken.
  bool reserve(const std::string& name) { return used_.insert(name).second; }
  // Gives v a reserved name (before anything asks for v's name).
  void name_value(const graph::Value* v, const std::string& name) { names_[v] = name; }
  // Appends a node; returns it so the caller can add attributes.
  ::onnx::NodeProto& node(const std::string& op_type, const std::vector<std::string>& inputs,
                          const std::vector<std::string>& outputs);
  // A single-output node whose output gets a fresh name, returned.
  std::string op(const std::string& op_type, const std::vector<std::string>& inputs);

  std::string initializer(const Tensor& t, const std::string& hint = "const");
  std::string ints(const std::vector<int64_t>& values);        // 1-D INT64
  std::string scalar(double value, DType dtype);                // 0-d
  std::string cast(const std::string& name, DType from, DType to);

 private:
  ::onnx::GraphProto& graph_;
  int opset_;
  std::unordered_map<const graph::Value*, std::string> names_;
  std::unordered_set<std::string> used_;
  std::unordered_map<std::string, int> counters_;  // next suffix to try per hint
  int node_count_ = 0;
};

void set_attr(::onnx::NodeProto& n, const std::string& name, int64_t v);
void set_attr(::onnx::NodeProto& n, const std::string& name, double v);
void set_attr(::onnx::NodeProto& n, const std::string& name, const std::string& v);
void set_attr(::onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);

// An emitter writes the ONNX nodes for one oar node. `in` are the ONNX names
// of the node's inputs, already cast to the dtype oar's promotion gives
// them ("" for an absent optional input); `out` the names its outputs must get.
struct ExportContext {
  ExportBuilder& b;
  const graph::Node& node;
  std::vector<std::string> in;
  std::vector<std::string> out;
  DType in_dtype(size_t i) const;  // after promotion
  const Shape& in_shape(size_t i) const { return node.inputs[i]->meta.shape; }
  const TensorMeta& out_meta(size_t i) const { return node.outputs[i]->meta; }
  bool output_used(size_t i) const;
  std::vector<DType> promoted;  // per input
  const std::vector<int32_t>* uses = nullptr;
};

using Emitter = std::function<void(ExportContext&)>;
// Emitters kept in files of their own (export_rnn.cpp, export_attention.cpp).
void add_rnn_emitters(std::unordered_map<std::string, Emitter>& e);
void add_attention_emitters(std::unordered_map<std::string, Emitter>& e);

// ONNX ReduceX over `dims` (axes an input from opset 18, ReduceSum from 13;
// an attribute before); no dims reduces everything. Returns the output name
// (`out`, or a fresh one).
std::string reduce(ExportContext& c, const char* onnx_op, const std::string& x, const std::vector<int64_t>& dims,
                   bool keepdim, const std::string& out = "");
// The emitter for an oar op, or nullptr when it has no ONNX form.
const Emitter* find_emitter(const std::string& op);

}  // namespace oar::onnx::detail
