// ModelProto -> Graph: initializers, typed inputs with static shapes, the
// nodes in file order through the mapper table, outputs in declared order.
// Errors raised inside a mapping get the node's name, op type and opset in
// front, so a failure always says where in which file it happened.
#include <unordered_map>
#include <unordered_set>

#include "import_context.h"
#include "oar/graph/passes.h"
#include "oar/onnx/onnx.h"
#include "proto_io.h"

namespace oar::onnx {

namespace {

using detail::NodeContext;
using graph::Value;

const char* type_kind(const ::onnx::TypeProto& t) {
  switch (t.value_case()) {
    case ::onnx::TypeProto::kTensorType: return "a tensor";
    case ::onnx::TypeProto::kSequenceType: return "a sequence";
    case ::onnx::TypeProto::kMapType: return "a map";
    case ::onnx::TypeProto::kOptionalType: return "an optional";
    case ::onnx::TypeProto::kSparseTensorType: return "a sparse tensor";
    default: return "an untyped value";
  }
}

Shape declared_shape(const ::onnx::ValueInfoProto& in, const std::string& file) {
  const auto& tt = in.type().tensor_type();
  if (!tt.has_shape())
    throw ValueError(str(file, ": graph input '", in.name(), "' declares no shape; pass its shape in ImportOptions"));
  Shape shape;
  for (const auto& d : tt.shape().dim()) {
    if (!d.has_dim_value())
      throw ValueError(str(file, ": graph input '", in.name(), "' has a symbolic dimension '", d.dim_param(),
                           "'; oar graphs are static: pass the input shapes in ImportOptions"));
    shape.push_back(d.dim_value());
  }
  return shape;
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

std::unique_ptr<graph::Graph> import_proto(const ::onnx::ModelProto& model, const std::string& file,
                                           const ImportOptions& options) {
  const auto& g = model.graph();
  const int64_t opset = detail::default_opset(model);
  auto graph = std::make_unique<graph::Graph>();
  std::unordered_map<std::string, Value*> values;

  if (g.sparse_initializer_size() > 0)
    throw NotImplementedError(str(file, ": sparse initializers are not supported"));
  std::unordered_set<std::string> initializers;
  for (const auto& init : g.initializer()) {
    values[init.name()] = graph->add_constant(
        init.name(), tensor_from_proto(init, str(file, ": initializer '", init.name(), "'")));
    initializers.insert(init.name());
  }

  size_t k = 0;
  size_t runtime_inputs = 0;
  for (const auto& in : g.input()) runtime_inputs += !initializers.count(in.name());
  if (!options.input_shapes.empty() && options.input_shapes.size() != runtime_inputs)
    throw ValueError(str(file, ": ", options.input_shapes.size(), " input shapes given but the model has ",
                         runtime_inputs, " inputs"));
  if (!options.input_values.empty() && options.input_values.size() != runtime_inputs)
    throw ValueError(str(file, ": ", options.input_values.size(), " input values given but the model has ",
                         runtime_inputs, " inputs"));
  std::unordered_map<const Value*, Tensor> bound;
  for (const auto& in : g.input()) {
    if (initializers.count(in.name())) continue;  // IR < 4 lists initializers as inputs too
    if (in.type().value_case() != ::onnx::TypeProto::kTensorType)
      throw NotImplementedError(str(file, ": graph input '", in.name(), "' is ", type_kind(in.type()),
                                    "; unsupported input type (only tensors are imported)"));
    DType dtype = dtype_from_onnx(in.type().tensor_type().elem_type(), str(file, ": graph input '", in.name(), "'"));
    Shape shape;
    if (!options.input_shapes.empty()) {
      shape = options.input_shapes[k];
      const auto& tt = in.type().tensor_type();
      if (tt.has_shape()) {
        bool fits = tt.shape().dim_size() == int(shape.size());
        for (int i = 0; fits && i < tt.shape().dim_size(); ++i)
          fits = !tt.shape().dim(i).has_dim_value() || tt.shape().dim(i).dim_value() == shape[size_t(i)];
        if (!fits) {
          std::string declared;
          for (int i = 0; i < tt.shape().dim_size(); ++i)
            declared += (i ? ", " : "") + (tt.shape().dim(i).has_dim_value() ? std::to_string(tt.shape().dim(i).dim_value())
                                                                               : std::string("?"));
          throw ShapeError(str(file, ": input shape ", shape_str(shape), " given for graph input '", in.name(),
                               "' does not fit its declared shape [", declared, "]"));
        }
      }
    } else {
      shape = declared_shape(in, file);
    }
    Value* v = graph->add_input(in.name(), {shape, dtype});
    if (k < options.input_values.size() && options.input_values[k].defined()) {
      const Tensor& t = options.input_values[k];
      if (t.shape() != shape || t.dtype() != dtype)
        throw ValueError(str(file, ": the value given for graph input '", in.name(), "' is ", dtype_name(t.dtype()),
                             shape_str(t.shape()), " but the input is ", dtype_name(dtype), shape_str(shape)));
      bound[v] = t.to(Device::cpu());
    }
    ++k;
    values[in.name()] = v;
  }

  const detail::MapperTable& table = detail::mapper_table();
  for (const auto& node : g.node()) {
    std::vector<Value*> inputs;
    for (const auto& name : node.input()) {
      if (name.empty()) {
        inputs.push_back(nullptr);
        continue;
      }
      auto it = values.find(name);
      if (it == values.end())
        throw ValueError(str(file, ": node '", node.name(), "' (", node.op_type(), ") reads '", name,
                             "', which no earlier node, initializer or graph input defines (corrupt or "
                             "truncated model?)"));
      inputs.push_back(it->second);
    }
    // The training domain's optimizers (Adagrad, Adam, Momentum) are mapped too.
    bool standard = node.domain().empty() || node.domain() == "ai.onnx";
    int64_t node_opset = standard ? opset : detail::domain_opset(model, node.domain());
    NodeContext ctx(*graph, node, node_opset, std::move(inputs), file, &bound);
    if (!standard && node.domain() != "ai.onnx.preview.training")
      ctx.unsupported(str("operator domain '", node.domain(), "' is not supported (only ai.onnx and ai.onnx.preview.training)"));
    if (node_opset == 0) ctx.invalid(str("the model does not import an opset for domain '", node.domain(), "'"));
    const detail::Mapper* mapper = table.find(node.op_type());
    if (mapper == nullptr) ctx.unsupported(str("op type '", node.op_type(), "' has no oar mapping"));
    std::vector<Value*> outs;
    try {
      outs = (*mapper)(ctx);
    } catch (const Error& e) {
      if (starts_with(e.what(), file + ":")) throw;
      detail::rethrow_with_context(e, ctx.where() + ": ");
    }
    for (int i = 0; i < node.output_size(); ++i) {
      const std::string& name = node.output(i);
      if (name.empty()) continue;
      if (size_t(i) >= outs.size() || outs[size_t(i)] == nullptr)
        ctx.unsupported(str("output ", i, " ('", name, "') is not supported"));
      Value* v = outs[size_t(i)];
      if (v->name.empty()) v->name = name;
      values[name] = v;
    }
  }

  std::vector<Value*> outputs;
  for (const auto& out : g.output()) {
    if (out.type().value_case() != ::onnx::TypeProto::kTensorType &&
        out.type().value_case() != ::onnx::TypeProto::VALUE_NOT_SET)
      throw NotImplementedError(str(file, ": graph output '", out.name(), "' is ", type_kind(out.type()),
                                    "; unsupported output type (only tensors are imported)"));
    auto it = values.find(out.name());
    if (it == values.end())
      throw ValueError(str(file, ": graph output '", out.name(), "' is not defined by any node or input"));
    outputs.push_back(it->second);
  }
  graph->set_outputs(std::move(outputs));
  // Folding leaves constants behind that nothing reads, and some mappings
  // build values only an unused ONNX output would have read.
  graph::eliminate_dead_code(*graph);
  graph->verify();
  return graph;
}

}  // namespace

std::vector<std::string> supported_op_types() { return detail::mapper_table().op_types(); }

std::unique_ptr<graph::Graph> import_model_bytes(const std::string& bytes, const std::string& name,
                                                 const ImportOptions& options) {
  ::onnx::ModelProto model = detail::parse_model(bytes, name);
  return import_proto(model, name, options);
}

std::unique_ptr<graph::Graph> import_model(const std::string& path, const ImportOptions& options) {
  return import_model_bytes(detail::read_file(path), path, options);
}

}  // namespace oar::onnx
