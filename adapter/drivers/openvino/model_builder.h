// oar adapter model -> ov::Model. model_builder.cpp walks the operations in
// topological order and wires operands; the per-op node recipes live in
// ops_*.cpp behind find_op_builder(). Quantized integer operands enter as
// Convert -> Subtract(zero point) -> Multiply(scale), the dequantization
// pattern OpenVINO's low-precision transformations fold into int8 kernels.
#pragma once

#include <openvino/core/model.hpp>
#include <openvino/core/node_output.hpp>

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "driver_types.h"

namespace oar_openvino {

using Value = ov::Output<ov::Node>;

// What an op recipe gets: the operation, and its inputs as ov values.
struct OpCall {
  const oar_adapter_model* model = nullptr;
  const oar_adapter_operation* op = nullptr;
  std::vector<Value> sources;  // per input; no node for an absent optional input (-1)

  bool has(size_t i) const { return i < sources.size() && sources[i].get_node() != nullptr; }
  // Input i converted to the compute type.
  Value in(size_t i) const;
  // The compute type: the element type of output 0 (oar promotes inputs to it).
  ov::element::Type type() const;
  const oar_adapter_operand& input_operand(size_t i) const { return *model->operands[op->inputs[i]]; }
  const oar_adapter_operand& output_operand(size_t i) const { return *model->operands[op->outputs[i]]; }
  std::vector<int64_t> input_dims(size_t i) const;
};

// Returns one value per operation output; an output nothing may read (the
// save_mean / save_var of an inference batch_norm) may have no node.
using OpBuilder = std::function<std::vector<Value>(const OpCall&)>;

// The recipe for an op type, or nullptr.
const OpBuilder* find_op_builder(const std::string& type);

struct BuiltModel {
  std::shared_ptr<ov::Model> model;
  std::vector<TensorSignature> inputs, outputs;
};

// The whole model: Parameters in model input order, Results in model output
// order. `order` is validate_model's topological order. A node OpenVINO
// rejects, or whose shape differs from the model's, throws UNSUPPORTED naming
// the operation.
BuiltModel build_model(const oar_adapter_model* model, const std::vector<uint32_t>& order);

// Operation `index` alone: a trial that throws what build_model would throw
// for it. Constant inputs become Parameters too unless `with_constants` (no
// weight bytes are copied for a trial); the one-op model is returned for
// asking a device plugin whether it runs it.
std::shared_ptr<ov::Model> build_single_operation(const oar_adapter_model* model, uint32_t index,
                                                  bool with_constants = false);

// The signatures execute() checks (model inputs or outputs).
std::vector<TensorSignature> signatures(const oar_adapter_model* model, bool inputs);

// Small helpers shared by the recipes.
Value constant_i64(const std::vector<int64_t>& values);
Value scalar(ov::element::Type type, double value);
// A spatial attribute of one or two values (one value means both dims), as
// oar's catalog reads it; `fallback` when absent (or empty, if empty_is_fallback).
std::array<int64_t, 2> pair_attr(const oar_adapter_operation* op, const char* name, std::array<int64_t, 2> fallback,
                                 bool empty_is_fallback = false);
// An axis in [-rank, rank) made non-negative; throws UNSUPPORTED outside it.
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what);
// Applies a conv2d_act / linear_act activation (relu, sigmoid, tanh).
Value apply_activation(const Value& x, const std::string& activation);

// The recipe tables of ops_elementwise.cpp, ops_nn.cpp and ops_shape.cpp.
using OpTable = std::map<std::string, OpBuilder>;
void add_elementwise_ops(OpTable& table);
void add_nn_ops(OpTable& table);
void add_shape_ops(OpTable& table);

}  // namespace oar_openvino
