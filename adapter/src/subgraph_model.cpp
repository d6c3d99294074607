// Graph nodes as an oar_adapter_model (see subgraph_model.h).
#include "subgraph_model.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "oar/dispatch.h"
#include "oar/error.h"
#include "sha1_hex.h"

namespace oar::adapter {

using graph::Graph;
using graph::Node;
using graph::Value;
using graph::ValueKind;

std::string node_name(const Graph& graph, size_t index) {
  return str(graph.nodes()[index]->op->name, "_", index);
}

double node_macs(const Node& node) {
  if (node.outputs.empty()) return 0;
  const std::string& op = node.op->name;
  double out = double(numel_of(node.outputs[0]->meta.shape));
  auto in_dim = [&](size_t input, int64_t from_end) -> double {
    if (input >= node.inputs.size() || node.inputs[input] == nullptr) return 1;
    const Shape& s = node.inputs[input]->meta.shape;
    return s.size() >= size_t(from_end) ? double(s[s.size() - size_t(from_end)]) : 1;
  };
  if (op == "conv2d" || op == "conv2d_act") {
    // out * (C_in / groups) * kh * kw: the weight's last three dims.
    return out * in_dim(1, 3) * in_dim(1, 2) * in_dim(1, 1);
  }
  if (op == "linear" || op == "linear_act") return out * in_dim(1, 1);
  if (op == "matmul") return out * in_dim(0, 1);
  return out;
}

namespace {

bool image_op(const std::string& op) {
  return op == "conv2d" || op == "conv2d_act" || op == "max_pool2d" || op == "avg_pool2d" || op == "batch_norm";
}

}  // namespace

SubgraphModel::SubgraphModel(const Graph& graph, const std::vector<int32_t>& nodes, bool outputs_all) {
  int32_t max_id = -1;
  for (Value* v : graph.inputs()) max_id = std::max(max_id, v->id);
  for (Value* v : graph.tensors()) max_id = std::max(max_id, v->id);
  for (const auto& n : graph.nodes())
    for (Value* v : n->outputs) max_id = std::max(max_id, v->id);
  operand_of_value_.assign(size_t(max_id + 1), -1);

  std::vector<char> inside(graph.node_count(), 0);
  for (int32_t i : nodes) inside[size_t(i)] = 1;
  // Values read outside the node set (by other nodes or as graph outputs).
  std::vector<char> read_outside(size_t(max_id + 1), 0);
  for (size_t i = 0; i < graph.node_count(); ++i)
    if (!inside[i])
      for (const Value* v : graph.nodes()[i]->inputs)
        if (v != nullptr) read_outside[size_t(v->id)] = 1;
  for (const Value* v : graph.outputs()) read_outside[size_t(v->id)] = 1;

  for (int32_t index : nodes) {
    const Node& node = *graph.nodes()[size_t(index)];
    auto op = std::make_unique<oar_adapter_operation>();
    std::memset(op.get(), 0, sizeof(*op));
    op->struct_size = sizeof(*op);
    op->type = node.op->name.c_str();
    op->name = strings_.emplace_back(node_name(graph, size_t(index))).c_str();
    auto& in = index_lists_.emplace_back();
    for (const Value* v : node.inputs) {
      if (v == nullptr) {
        in.push_back(-1);
        continue;
      }
      int32_t o = operand_of_value_[size_t(v->id)];
      if (o < 0) {
        bool constant = v->kind == ValueKind::kConstant || v->kind == ValueKind::kCaptured;
        o = operand_for(v, constant ? OAR_ADAPTER_LIFETIME_CONSTANT : OAR_ADAPTER_LIFETIME_INPUT);
        if (!constant) {
          inputs_.push_back(o);
          input_values_.push_back(v);
        }
      }
      in.push_back(o);
    }
    auto& out = index_lists_.emplace_back();
    for (const Value* v : node.outputs) {
      bool exported = outputs_all || read_outside[size_t(v->id)];
      int32_t o = operand_for(v, exported ? OAR_ADAPTER_LIFETIME_OUTPUT : OAR_ADAPTER_LIFETIME_TEMPORARY);
      if (exported) {
        outputs_.push_back(o);
        output_values_.push_back(v);
      }
      out.push_back(o);
    }
    op->input_count = uint32_t(in.size());
    op->inputs = in.data();
    op->output_count = uint32_t(out.size());
    op->outputs = out.data();
    Attrs& attrs = attrs_.emplace_back(normalize_attrs(*node.op, node.attrs));
    auto& abi = abi_attrs_.emplace_back(abi_attrs(attrs));
    auto& pointers = attr_pointers_.emplace_back();
    for (const oar_attr& a : abi) pointers.push_back(&a);
    op->attr_count = uint32_t(pointers.size());
    op->attrs = pointers.data();
    // Axis meaning for image ops: their activations are NCHW, conv weights OIHW.
    if (image_op(node.op->name)) {
      auto mark = [&](int32_t operand, oar_adapter_layout_t layout) {
        if (operand >= 0 && operands_[size_t(operand)]->rank == 4) operands_[size_t(operand)]->layout = layout;
      };
      if (!in.empty()) mark(in[0], OAR_ADAPTER_LAYOUT_NCHW);
      mark(out[0], OAR_ADAPTER_LAYOUT_NCHW);
      if (node.op->name.rfind("conv2d", 0) == 0 && in.size() > 1) mark(in[1], OAR_ADAPTER_LAYOUT_OIHW);
    }
    operations_.push_back(std::move(op));
  }
  for (auto& o : operands_) operand_pointers_.push_back(o.get());
  for (auto& o : operations_) operation_pointers_.push_back(o.get());
  model_.struct_size = sizeof(model_);
  model_.operand_count = uint32_t(operand_pointers_.size());
  model_.operands = operand_pointers_.data();
  model_.operation_count = uint32_t(operation_pointers_.size());
  model_.operations = operation_pointers_.data();
  model_.input_count = uint32_t(inputs_.size());
  model_.inputs = inputs_.data();
  model_.output_count = uint32_t(outputs_.size());
  model_.outputs = outputs_.data();
  build_canonical();
}

int32_t SubgraphModel::operand_for(const Value* v, oar_adapter_lifetime_t lifetime) {
  auto o = std::make_unique<oar_adapter_operand>();
  std::memset(o.get(), 0, sizeof(*o));
  o->struct_size = sizeof(*o);
  o->name = strings_.emplace_back(v->name.empty() ? str("%", v->id) : v->name).c_str();
  o->dtype = static_cast<oar_dtype_t>(v->meta.dtype);
  o->layout = OAR_ADAPTER_LAYOUT_PLAIN;
  o->lifetime = lifetime;
  auto& dims = dims_.emplace_back();
  for (int64_t d : v->meta.shape) dims.push_back({d, d, d, nullptr});
  o->rank = uint32_t(dims.size());
  o->dims = dims.data();
  if (lifetime == OAR_ADAPTER_LIFETIME_CONSTANT) {
    Tensor host = v->tensor.to(Device::cpu()).contiguous();
    o->data = host.numel() > 0 ? host.data_ptr() : nullptr;
    o->data_size = uint64_t(host.numel()) * host.itemsize();
    host_constants_.push_back(std::move(host));
  }
  operands_.push_back(std::move(o));
  int32_t index = int32_t(operands_.size()) - 1;
  operand_of_value_[size_t(v->id)] = index;
  return index;
}

void SubgraphModel::build_canonical() {
  std::ostringstream os;
  os << "oar-adapter-model/1\n";
  for (const oar_adapter_operand* o : operand_pointers_) {
    os << "operand " << o->dtype << " " << o->layout << " " << o->lifetime << " [";
    for (uint32_t d = 0; d < o->rank; ++d) os << (d ? "," : "") << o->dims[d].size;
    os << "]";
    if (o->lifetime == OAR_ADAPTER_LIFETIME_CONSTANT) os << " data " << Sha1().add(o->data, o->data_size).hex();
    os << "\n";
  }
  for (const oar_adapter_operation* op : operation_pointers_) {
    os << "operation " << op->type << " in";
    for (uint32_t i = 0; i < op->input_count; ++i) os << " " << op->inputs[i];
    os << " out";
    for (uint32_t i = 0; i < op->output_count; ++i) os << " " << op->outputs[i];
    for (uint32_t i = 0; i < op->attr_count; ++i) {
      const oar_attr& a = *op->attrs[i];
      os << " " << a.name << ":" << a.kind << "=";
      switch (a.kind) {
        case OAR_ATTR_FLOAT: os << std::hexfloat << a.f << std::defaultfloat; break;
        case OAR_ATTR_STRING: os << '"' << (a.s ? a.s : "") << '"'; break;
        case OAR_ATTR_INTS:
          for (int64_t k = 0; k < a.count; ++k) os << (k ? "," : "") << a.ints[k];
          break;
        case OAR_ATTR_FLOATS:
          for (int64_t k = 0; k < a.count; ++k) os << (k ? "," : "") << std::hexfloat << a.floats[k] << std::defaultfloat;
          break;
        default: os << a.i;
      }
    }
    os << "\n";
  }
  os << "inputs";
  for (int32_t i : inputs_) os << " " << i;
  os << "\noutputs";
  for (int32_t i : outputs_) os << " " << i;
  os << "\n";
  canonical_ = os.str();
}

}  // namespace oar::adapter
