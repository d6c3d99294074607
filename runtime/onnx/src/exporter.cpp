// Graph -> ONNX model. Inputs keep their names, shapes and dtypes; constants
// and captured tensors become initializers; each node goes through its op's
// emitter (export_ops.cpp) after the casts that oar's implicit dtype
// promotion performs, since ONNX ops expect their inputs to agree already.
#include "exporter.h"

#include <algorithm>
#include <optional>

#include "oar/dispatch.h"
#include "oar/error.h"
#include "oar/onnx/onnx.h"
#include "proto_io.h"

namespace oar::onnx {

namespace detail {

std::string ExportBuilder::fresh(const std::string& hint) {
  std::string base = hint.empty() ? "v" : hint;
  int& next = counters_[base];
  std::string name = next == 0 ? base : str(base, "_", next);
  while (used_.count(name)) name = str(base, "_", ++next);
  ++next;
  used_.insert(name);
  return name;
}

std::string ExportBuilder::name_of(const graph::Value* v) {
  auto it = names_.find(v);
  if (it != names_.end()) return it->second;
  std::string name = fresh(v->name.empty() ? str("v", v->id) : v->name);
  names_[v] = name;
  return name;
}

::onnx::NodeProto& ExportBuilder::node(const std::string& op_type, const std::vector<std::string>& inputs,
                                       const std::vector<std::string>& outputs) {
  ::onnx::NodeProto* n = graph_.add_node();
  n->set_op_type(op_type);
  n->set_name(str(op_type, "_", node_count_++));
  for (const auto& i : inputs) n->add_input(i);
  for (const auto& o : outputs) n->add_output(o);
  return *n;
}

std::string ExportBuilder::op(const std::string& op_type, const std::vector<std::string>& inputs) {
  std::string out = fresh(op_type);
  node(op_type, inputs, {out});
  return out;
}

std::string ExportBuilder::initializer(const Tensor& t, const std::string& hint) {
  std::string name = fresh(hint);
  ::onnx::TensorProto* p = graph_.add_initializer();
  tensor_to_proto(t, *p);
  p->set_name(name);
  return name;
}

std::string ExportBuilder::ints(const std::vector<int64_t>& values) {
  return initializer(Tensor::from_vector(values, {int64_t(values.size())}, Device::cpu()), "ints");
}

std::string ExportBuilder::scalar(double value, DType dtype) {
  return initializer(Tensor::full({}, value, dtype, Device::cpu()), "scalar");
}

std::string ExportBuilder::cast(const std::string& name, DType from, DType to) {
  if (from == to || name.empty()) return name;
  std::string out = fresh("cast");
  set_attr(node("Cast", {name}, {out}), "to", int64_t(dtype_to_onnx(to)));
  return out;
}

void set_attr(::onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}

void set_attr(::onnx::NodeProto& n, const std::string& name, double v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(float(v));
}

void set_attr(::onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(v);
}

void set_attr(::onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

DType ExportContext::in_dtype(size_t i) const { return promoted.at(i); }

bool ExportContext::output_used(size_t i) const {
  return uses == nullptr || (*uses)[size_t(node.outputs[i]->id)] > 0;
}

namespace {

void set_value_info(::onnx::ValueInfoProto& info, const std::string& name, const TensorMeta& meta) {
  info.set_name(name);
  auto* tt = info.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(dtype_to_onnx(meta.dtype));
  auto* shape = tt->mutable_shape();
  for (int64_t d : meta.shape) shape->add_dim()->set_dim_value(d);
}

// The oldest IR version that carries `opset` (ONNX 1.13: 18 -> IR 8, 1.14: 19
// -> 9, 1.16: 21 -> 10), so a model is no newer than its opset needs and
// runtimes that predate IR 10 still read the older opsets.
int64_t ir_version_for(int opset) {
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  return kMaxIrVersion;
}

}  // namespace

namespace {

// Reserves the names asked for (distinct, non-empty, no more than there are
// values to name), so no temporary takes them.
void reserve_names(ExportBuilder& b, const std::vector<std::string>& names, size_t available, const char* what) {
  if (names.size() > available)
    throw ValueError(str("export_model: ", names.size(), " ", what, " names given, but the graph has ", available, " ",
                         what, "s"));
  for (const std::string& name : names) {
    if (name.empty()) throw ValueError(str("export_model: an empty ", what, " name"));
    if (!b.reserve(name)) throw ValueError(str("export_model: the name '", name, "' is given twice"));
  }
}

}  // namespace

::onnx::ModelProto export_proto(const graph::Graph& g, const ExportOptions& options) {
  const int opset = options.opset;
  if (opset < 13 || opset > kMaxOpset)
    throw ValueError(str("export_model: opset ", opset, " is outside the supported range [13, ", kMaxOpset, "]"));
  if (!g.updates().empty())
    throw NotImplementedError("export_model: the graph updates tensors in place (a training graph); ONNX has no such form");
  g.verify();
  ::onnx::ModelProto model;
  model.set_ir_version(ir_version_for(opset));
  model.set_producer_name("oar");
  model.set_producer_version("0.1.0");
  auto* os = model.add_opset_import();
  os->set_domain("");
  os->set_version(opset);
  ::onnx::GraphProto& gp = *model.mutable_graph();
  gp.set_name("oar_graph");
  ExportBuilder b(gp, opset);
  reserve_names(b, options.input_names, g.inputs().size(), "input");
  reserve_names(b, options.output_names, g.outputs().size(), "output");
  for (size_t i = 0; i < options.input_names.size(); ++i) b.name_value(g.inputs()[i], options.input_names[i]);

  for (const graph::Value* v : g.inputs()) set_value_info(*gp.add_input(), b.name_of(v), v->meta);
  for (const graph::Value* v : g.tensors()) {
    ::onnx::TensorProto* p = gp.add_initializer();
    tensor_to_proto(v->tensor, *p);
    p->set_name(b.name_of(v));
  }
  std::vector<int32_t> uses = g.use_counts();
  for (const auto& n : g.nodes()) {
    const Emitter* emit = find_emitter(n->op->name);
    if (emit == nullptr)
      throw NotImplementedError(str("export_model: node #", n->id, ": oar op '", n->op->name,
                                    "' has no ONNX mapping"));
    ExportContext ctx{b, *n, {}, {}, {}, &uses};
    std::optional<DType> common = promoted_dtype(*n->op, n->inputs.size(), [&](size_t i) -> std::optional<PromotionOperand> {
      if (n->inputs[i] == nullptr) return std::nullopt;
      return PromotionOperand{n->inputs[i]->meta.dtype, n->inputs[i]->meta.shape.empty()};
    });
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      const graph::Value* v = n->inputs[i];
      if (v == nullptr) {
        ctx.in.emplace_back();
        ctx.promoted.push_back(DType::f32);
        continue;
      }
      const InputSpec& spec = n->op->inputs[std::min(i, n->op->inputs.size() - 1)];
      DType to = common && spec.promoted ? *common : v->meta.dtype;
      ctx.in.push_back(b.cast(b.name_of(v), v->meta.dtype, to));
      ctx.promoted.push_back(to);
    }
    for (const graph::Value* v : n->outputs) ctx.out.push_back(b.name_of(v));
    try {
      (*emit)(ctx);
    } catch (const NotImplementedError& e) {
      throw NotImplementedError(str("export_model: node #", n->id, " (", n->op->name, "): ", e.what()));
    }
  }
  std::vector<std::string> taken;
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const graph::Value* v = g.outputs()[i];
    std::string name = b.name_of(v);
    if (i < options.output_names.size()) {  // the name asked for, through an Identity unless v has it
      if (name != options.output_names[i]) b.node("Identity", {name}, {options.output_names[i]});
      name = options.output_names[i];
    } else if (std::find(taken.begin(), taken.end(), name) != taken.end()) {
      // ONNX output names are unique: a value returned twice goes through an Identity.
      name = b.op("Identity", {name});
    }
    taken.push_back(name);
    set_value_info(*gp.add_output(), name, v->meta);
  }
  return model;
}

}  // namespace detail

std::string export_model_bytes(const graph::Graph& graph, int opset) {
  ExportOptions options;
  options.opset = opset;
  return export_model_bytes(graph, options);
}

std::string export_model_bytes(const graph::Graph& graph, const ExportOptions& options) {
  ::onnx::ModelProto model = detail::export_proto(graph, options);
  std::string bytes;
  if (!model.SerializeToString(&bytes)) throw InternalError("export_model: protobuf serialization failed");
  return bytes;
}

void export_model(const graph::Graph& graph, const std::string& path, int opset) {
  detail::write_file_atomic(path, export_model_bytes(graph, opset));
}

void export_model(const graph::Graph& graph, const std::string& path, const ExportOptions& options) {
  detail::write_file_atomic(path, export_model_bytes(graph, options));
}

}  // namespace oar::onnx
