// What an ONNX op mapping works with: NodeContext gives one node's inputs (as
// graph values), its attributes with ONNX defaults, its opset, and a builder
// whose ops fold to constants when all their inputs are constants. Mappings
// are plain functions in a table keyed by op type; each map_*.cpp file adds
// one family (elementwise, shape, reduce, nn, conv_pool, loss, resize,
// scatter, quant, signal, training, einsum, rnn, grid_sample, col2im).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "oar/error.h"
#include "oar/graph/graph.h"
#include "oar/onnx/onnx.h"
#include "onnx/onnx_pb.h"

namespace oar::onnx::detail {

using graph::Value;

// Builds graph nodes for one ONNX node. Every op() call whose inputs are all
// constants runs eagerly at import time and yields a constant instead of a
// node, which is how shape arithmetic (Shape -> Gather -> Concat -> Reshape)
// collapses into the static attributes oar's ops take.
class NodeContext {
 public:
  // `bound`: values given for graph inputs (ImportOptions::input_values).
  NodeContext(graph::Graph& graph, const ::onnx::NodeProto& node, int64_t opset, std::vector<Value*> inputs,
              std::string file, const std::unordered_map<const Value*, Tensor>* bound = nullptr);

  const ::onnx::NodeProto& node() const { return node_; }
  const std::string& op_type() const { return node_.op_type(); }
  int64_t opset() const { return opset_; }
  // "model.onnx: node 'conv1' (Conv, opset 11)" for messages.
  std::string where() const;

  // ---- inputs ----
  size_t input_count() const { return inputs_.size(); }
  bool has_input(size_t i) const { return i < inputs_.size() && inputs_[i] != nullptr; }
  Value* input(size_t i) const { return has_input(i) ? inputs_[i] : nullptr; }
  Value* required_input(size_t i) const;  // ValueError when absent
  const std::vector<Value*>& inputs() const { return inputs_; }
  size_t output_count() const { return size_t(node_.output_size()); }
  bool output_used(size_t i) const { return int(i) < node_.output_size() && !node_.output(int(i)).empty(); }
  // The tensor behind input i, which must be a constant (possibly folded) or
  // a graph input with a bound value (which then replaces it in this node);
  // NotImplementedError otherwise, since oar graphs take these as attributes.
  const Tensor& constant_input(size_t i, const char* what);
  std::vector<int64_t> constant_ints(size_t i, const char* what);
  std::vector<double> constant_doubles(size_t i, const char* what);
  // A list ONNX moved from an attribute to an input at opset `input_since`
  // (axes, split, pads...): nullopt when neither is given.
  std::optional<std::vector<int64_t>> ints_input_or_attr(size_t i, const char* name, int64_t input_since);

  // The value of `v` if it can be computed at import time: a constant, a
  // bound graph input, or a node whose inputs can (evaluated eagerly, the
  // graph left as it is); nullopt otherwise.
  std::optional<Tensor> evaluate(const Value* v) const;

  // ---- attributes (ONNX defaults given by the caller) ----
  const ::onnx::AttributeProto* find_attr(const std::string& name) const;
  bool has_attr(const std::string& name) const { return find_attr(name) != nullptr; }
  int64_t attr_int(const std::string& name, int64_t def) const;
  int64_t attr_int(const std::string& name) const;  // required
  double attr_float(const std::string& name, double def) const;
  std::string attr_string(const std::string& name, const std::string& def) const;
  std::vector<int64_t> attr_ints(const std::string& name, std::vector<int64_t> def = {}) const;
  std::vector<double> attr_floats(const std::string& name, std::vector<double> def = {}) const;
  Tensor attr_tensor(const std::string& name) const;

  // ---- errors, named after the node ----
  [[noreturn]] void unsupported(const std::string& what) const;  // NotImplementedError
  [[noreturn]] void invalid(const std::string& what) const;      // ValueError

  // ---- building ----
  Value* op(const std::string& name, const std::vector<Value*>& in, const Attrs& attrs = {});
  std::vector<Value*> ops(const std::string& name, const std::vector<Value*>& in, const Attrs& attrs = {});
  Value* constant(const Tensor& t);
  Value* scalar(double v, DType dtype);  // 0-d constant
  Value* ints(const std::vector<int64_t>& values);  // 1-D i64 constant

  // Shorthands for the ops most mappings need.
  static const Shape& shape(const Value* v) { return v->meta.shape; }
  static DType dtype(const Value* v) { return v->meta.dtype; }
  static int64_t rank(const Value* v) { return int64_t(v->meta.shape.size()); }
  static bool is_constant(const Value* v) { return v != nullptr && v->kind == graph::ValueKind::kConstant; }
  Value* cast(Value* v, DType d);
  Value* reshape(Value* v, const Shape& shape);
  Value* permute(Value* v, const std::vector<int64_t>& dims);
  Value* unsqueeze(Value* v, int64_t axis);
  Value* expand(Value* v, const Shape& shape);
  Value* slice(Value* v, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
  Value* add(Value* a, Value* b) { return op("add", {a, b}); }
  Value* sub(Value* a, Value* b) { return op("sub", {a, b}); }
  Value* mul(Value* a, Value* b) { return op("mul", {a, b}); }
  Value* div(Value* a, Value* b) { return op("div", {a, b}); }
  Value* where(Value* c, Value* a, Value* b) { return op("where", {c, a, b}); }
  // x along `axis` reversed (index_select with a constant index list).
  Value* flip(Value* v, int64_t axis);
  // Sum over dims keeping the input's integer dtype (oar's sum widens to i64).
  Value* sum(Value* v, const std::vector<int64_t>& dims, bool keepdim);
  // Normalizes an ONNX axis (negative counts from the end) against `rank`.
  int64_t axis(int64_t a, int64_t rank, const char* what = "axis") const;

 private:
  graph::Graph& graph_;
  const ::onnx::NodeProto& node_;
  int64_t opset_;
  std::vector<Value*> inputs_;
  std::string file_;
  const std::unordered_map<const Value*, Tensor>* bound_;
};

// One mapping: returns the node's outputs in ONNX order (fewer is allowed
// when the rest are unused; the importer checks).
using Mapper = std::function<std::vector<Value*>(NodeContext&)>;

class MapperTable {
 public:
  void add(const std::string& op_type, Mapper mapper) { mappers_[op_type] = std::move(mapper); }
  const Mapper* find(const std::string& op_type) const {
    auto it = mappers_.find(op_type);
    return it == mappers_.end() ? nullptr : &it->second;
  }
  std::vector<std::string> op_types() const;

 private:
  std::unordered_map<std::string, Mapper> mappers_;
};

// The table with every family registered (built once).
const MapperTable& mapper_table();

void register_elementwise_mappers(MapperTable& t);
void register_shape_mappers(MapperTable& t);
void register_reduction_mappers(MapperTable& t);
void register_nn_mappers(MapperTable& t);
void register_pool_conv_mappers(MapperTable& t);
void register_loss_mappers(MapperTable& t);
void register_resize_mappers(MapperTable& t);
void register_scatter_mappers(MapperTable& t);
void register_quantization_mappers(MapperTable& t);
void register_signal_mappers(MapperTable& t);
void register_training_mappers(MapperTable& t);
void register_einsum_mappers(MapperTable& t);
void register_rnn_mappers(MapperTable& t);
void register_grid_sample_mappers(MapperTable& t);
void register_col2im_mappers(MapperTable& t);

// Compositions more than one family uses (defined with their family).
// ONNX Conv of x with weight (and optional bias), attributes read from c.
Value* conv_mapping(NodeContext& c, Value* x, Value* weight, Value* bias);
// ONNX MatMul: 1-D operands, integer dtypes (computed in f64).
Value* matmul_mapping(NodeContext& c, Value* a, Value* b);
// x / (1 + |x|): ONNX's Softsign.
Value* x_over_one_plus_abs(NodeContext& c, Value* x);
// Indices with negative entries wrapped by `n` (at import time when constant).
Value* wrap_indices(NodeContext& c, Value* idx, int64_t n);
// The permutation that moves dimension `axis` of a rank-`rank` tensor last, and its inverse
// (matmul-based mappings act on the last dimension).
struct AxisLast {
  std::vector<int64_t> perm, inverse;
};
AxisLast axis_last(int64_t rank, int64_t axis);

// Rethrows `e` as the same kind of oar error with `prefix` in front.
[[noreturn]] void rethrow_with_context(const Error& e, const std::string& prefix);

}  // namespace oar::onnx::detail
