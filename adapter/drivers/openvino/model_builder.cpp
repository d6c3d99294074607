// oar adapter model -> ov::Model: operands become Parameters, Constants and
// dequantization chains; operations become nodes through their recipes
// (ops_*.cpp), each checked against the shapes the model declares.
#include "model_builder.h"

#include <openvino/op/constant.hpp>
#include <openvino/op/convert.hpp>
#include <openvino/op/multiply.hpp>
#include <openvino/op/parameter.hpp>
#include <openvino/op/result.hpp>
#include <openvino/op/subtract.hpp>

namespace oar_openvino {

using oar_adapter_sdk::operand_label;
using oar_adapter_sdk::operation_label;
using oar_adapter_sdk::unsupported;

namespace {

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

ov::Shape shape_of(const oar_adapter_model* m, int32_t index) {
  std::vector<int64_t> dims = oar_adapter_sdk::static_dims(m, index);
  return ov::Shape(dims.begin(), dims.end());
}

bool is_quantized(const oar_adapter_operand& o) {
  return o.quant != nullptr && o.quant->scheme != OAR_ADAPTER_QUANT_NONE;
}

// real = scale * (q - zero_point), as f32 (quantized integers hold no other float type).
Value dequantize(const Value& q, const oar_adapter_operand& o) {
  const oar_adapter_quant& quant = *o.quant;
  ov::Shape param_shape;  // per tensor: a scalar; per channel: 1s but the channel axis
  if (quant.scheme == OAR_ADAPTER_QUANT_PER_CHANNEL) {
    param_shape.assign(o.rank, 1);
    param_shape[size_t(quant.channel_axis)] = quant.scale_count;
  }
  Value x = std::make_shared<ov::op::v0::Convert>(q, ov::element::f32);
  bool any_zero_point = false;
  std::vector<float> zero_points(quant.scale_count, 0.0f);
  for (uint32_t i = 0; quant.zero_points != nullptr && i < quant.scale_count; ++i) {
    zero_points[i] = float(quant.zero_points[i]);
    any_zero_point = any_zero_point || quant.zero_points[i] != 0;
  }
  if (any_zero_point)
    x = std::make_shared<ov::op::v1::Subtract>(
        x, std::make_shared<ov::op::v0::Constant>(ov::element::f32, param_shape, zero_points));
  std::vector<float> scales(quant.scales, quant.scales + quant.scale_count);
  return std::make_shared<ov::op::v1::Multiply>(x,
                                                std::make_shared<ov::op::v0::Constant>(ov::element::f32, param_shape, scales));
}

// Builds one operation from its sources and checks what comes out against
// the model's operands (shape must match; a differing element type is
// converted to the operand's, as oar's promotion would).
std::vector<Value> build_operation(const oar_adapter_model* m, uint32_t index, std::vector<Value> sources) {
  const oar_adapter_operation* op = m->operations[index];
  const std::string label = operation_label(m, index);
  const OpBuilder* recipe = find_op_builder(op->type);
  if (recipe == nullptr) throw unsupported(label + ": " + op->type + " is not mapped to OpenVINO ops yet");
  OpCall call;
  call.model = m;
  call.op = op;
  call.sources = std::move(sources);
  std::vector<Value> outputs =
      with_openvino(OAR_STATUS_UNSUPPORTED, label + ": OpenVINO rejects it", [&] { return (*recipe)(call); });
  if (outputs.size() != op->output_count)
    throw unsupported(label + ": made " + std::to_string(outputs.size()) + " outputs, the model has " +
                      std::to_string(op->output_count));
  for (uint32_t j = 0; j < op->output_count; ++j) {
    if (outputs[j].get_node() == nullptr) continue;
    const oar_adapter_operand& o = *m->operands[op->outputs[j]];
    const ov::PartialShape& got = outputs[j].get_partial_shape();
    std::vector<int64_t> want = oar_adapter_sdk::static_dims(m, op->outputs[j]);
    if (!got.is_static() || got.to_shape() != ov::Shape(want.begin(), want.end()))
      throw unsupported(label + ": OpenVINO computes shape " + got.to_string() + " for output " + std::to_string(j) +
                        " but " + operand_label(m, op->outputs[j]) + " has " + dims_text(want));
    if (outputs[j].get_element_type() != element_type(o.dtype))
      outputs[j] = std::make_shared<ov::op::v0::Convert>(outputs[j], element_type(o.dtype));
  }
  return outputs;
}

}  // namespace

Value OpCall::in(size_t i) const {
  if (!has(i)) throw unsupported(std::string(op->type) + ": input " + std::to_string(i) + " is absent");
  const Value& v = sources[i];
  if (v.get_element_type() == type()) return v;
  return std::make_shared<ov::op::v0::Convert>(v, type());
}

ov::element::Type OpCall::type() const { return element_type(output_operand(0).dtype); }

std::vector<int64_t> OpCall::input_dims(size_t i) const { return oar_adapter_sdk::static_dims(model, op->inputs[i]); }

BuiltModel build_model(const oar_adapter_model* m, const std::vector<uint32_t>& order) {
  BuiltModel built;
  std::vector<Value> values(m->operand_count);
  ov::ParameterVector parameters;
  for (uint32_t i = 0; i < m->input_count; ++i) {
    const int32_t index = m->inputs[i];
    const oar_adapter_operand& o = *m->operands[index];
    auto p = std::make_shared<ov::op::v0::Parameter>(element_type(o.dtype), shape_of(m, index));
    p->set_friendly_name("input_" + std::to_string(i));
    parameters.push_back(p);
    values[size_t(index)] = is_quantized(o) ? dequantize(p, o) : Value(p);
  }
  auto source = [&](int32_t index, uint32_t op_index) -> Value {
    if (index < 0) return {};
    Value& v = values[size_t(index)];
    const oar_adapter_operand& o = *m->operands[index];
    if (v.get_node() == nullptr && o.lifetime == OAR_ADAPTER_LIFETIME_CONSTANT) {
      // Constant copies the bytes: the program keeps no pointer into the model.
      Value c = std::make_shared<ov::op::v0::Constant>(element_type(o.dtype), shape_of(m, index), o.data);
      v = is_quantized(o) ? dequantize(c, o) : c;
    }
    if (v.get_node() == nullptr)
      throw unsupported(operation_label(m, op_index) + " reads " + operand_label(m, index) +
                        ", which OpenVINO's mapping does not produce");
    return v;
  };
  for (uint32_t k : order) {
    const oar_adapter_operation* op = m->operations[k];
    std::vector<Value> sources;
    for (uint32_t i = 0; i < op->input_count; ++i) sources.push_back(source(op->inputs[i], k));
    std::vector<Value> outputs = build_operation(m, k, std::move(sources));
    for (uint32_t j = 0; j < op->output_count; ++j) values[size_t(op->outputs[j])] = outputs[j];
  }
  ov::ResultVector results;
  for (uint32_t i = 0; i < m->output_count; ++i) {
    const int32_t index = m->outputs[i];
    if (values[size_t(index)].get_node() == nullptr)
      throw unsupported("model output " + std::to_string(i) + " (" + operand_label(m, index) +
                        ") is not produced by OpenVINO's mapping");
    auto r = std::make_shared<ov::op::v0::Result>(values[size_t(index)]);
    r->set_friendly_name("output_" + std::to_string(i));
    results.push_back(r);
  }
  built.model = std::make_shared<ov::Model>(results, parameters, "oar_subgraph");
  built.inputs = signatures(m, true);
  built.outputs = signatures(m, false);
  return built;
}

std::shared_ptr<ov::Model> build_single_operation(const oar_adapter_model* m, uint32_t index, bool with_constants) {
  const oar_adapter_operation* op = m->operations[index];
  std::vector<Value> sources;
  ov::ParameterVector parameters;
  for (uint32_t i = 0; i < op->input_count; ++i) {
    const int32_t operand = op->inputs[i];
    if (operand < 0) {
      sources.emplace_back();
      continue;
    }
    const oar_adapter_operand& o = *m->operands[operand];
    Value v;
    if (with_constants && o.lifetime == OAR_ADAPTER_LIFETIME_CONSTANT) {
      v = std::make_shared<ov::op::v0::Constant>(element_type(o.dtype), shape_of(m, operand), o.data);
    } else {
      auto p = std::make_shared<ov::op::v0::Parameter>(element_type(o.dtype), shape_of(m, operand));
      parameters.push_back(p);
      v = p;
    }
    sources.push_back(is_quantized(o) ? dequantize(v, o) : v);
  }
  ov::ResultVector results;
  for (const Value& v : build_operation(m, index, std::move(sources)))
    if (v.get_node() != nullptr) results.push_back(std::make_shared<ov::op::v0::Result>(v));
  return std::make_shared<ov::Model>(results, parameters, "oar_operation");
}

std::vector<TensorSignature> signatures(const oar_adapter_model* m, bool inputs) {
  std::vector<TensorSignature> out;
  const uint32_t count = inputs ? m->input_count : m->output_count;
  for (uint32_t i = 0; i < count; ++i) {
    const int32_t index = inputs ? m->inputs[i] : m->outputs[i];
    TensorSignature s;
    s.dtype = m->operands[index]->dtype;
    s.dims = oar_adapter_sdk::static_dims(m, index);
    s.label = std::string(inputs ? "input " : "output ") + std::to_string(i) + " (" + operand_label(m, index) + ")";
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace oar_openvino
