// Graph::verify and Graph::dump: the checks every pass and loader relies on,
// and the text form tests and users read.
#include <sstream>
#include <unordered_set>

#include "oar/dispatch.h"
#include "oar/error.h"
#include "oar/graph/graph.h"

namespace oar::graph {

std::string attr_value_str(const AttrValue& value) {
  std::ostringstream os;
  std::visit(
      [&](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::vector<int64_t>> || std::is_same_v<V, std::vector<double>>) {
          os << "[";
          for (size_t i = 0; i < v.size(); ++i) os << (i ? ", " : "") << v[i];
          os << "]";
        } else if constexpr (std::is_same_v<V, std::string>) {
          os << '"' << v << '"';
        } else if constexpr (std::is_same_v<V, bool>) {
          os << (v ? "true" : "false");
        } else if constexpr (std::is_same_v<V, DType>) {
          os << dtype_name(v);
        } else {
          os << v;
        }
      },
      value);
  return os.str();
}

namespace {

std::string value_ref(const Value* v) {
  if (v == nullptr) return "_";
  std::string ref = "%";  // appended, not "%" + ...: GCC 12 warns falsely (-Wrestrict) on that
  ref += std::to_string(v->id);
  return ref;
}

std::string meta_str(const TensorMeta& m) { return str(dtype_name(m.dtype), shape_str(m.shape)); }

}  // namespace

void Graph::verify() const {
  std::unordered_set<const Value*> owned, defined;
  for (const auto& v : values_) owned.insert(v.get());
  auto where = [](const Node& n) { return str("node #", n.id, " (", n.op->name, ")"); };
  auto check_value = [&](const Value* v, const std::string& context) {
    if (!owned.count(v)) throw GraphError(str(context, " reads a value that is not in this graph"));
    if (!defined.count(v)) throw GraphError(str(context, " reads ", value_ref(v), " before it is defined"));
  };
  for (const auto& v : values_) {
    if (v->kind == ValueKind::kNode) continue;
    if ((v->kind == ValueKind::kCaptured || v->kind == ValueKind::kConstant) &&
        (!v->tensor.defined() || v->tensor.shape() != v->meta.shape || v->tensor.dtype() != v->meta.dtype))
      throw GraphError(str(value_kind_name(v->kind), " value ", value_ref(v.get()), " '", v->name,
                           "' does not hold a tensor of ", meta_str(v->meta)));
    defined.insert(v.get());
  }
  for (const auto& n : nodes_) {
    if (n->op == nullptr) throw GraphError(str("node #", n->id, " has no op"));
    const OpSchema& op = *n->op;
    bool variadic = !op.inputs.empty() && op.inputs.back().variadic;
    size_t fixed = variadic ? op.inputs.size() - 1 : op.inputs.size();
    if (variadic ? n->inputs.size() < fixed + 1 : n->inputs.size() != fixed)
      throw GraphError(str(where(*n), " has ", n->inputs.size(), " inputs; the op takes ", variadic ? "at least " : "",
                           variadic ? fixed + 1 : fixed));
    std::vector<const TensorMeta*> metas;
    for (size_t i = 0; i < n->inputs.size(); ++i) {
      const Value* v = n->inputs[i];
      const InputSpec& spec = op.inputs[std::min(i, op.inputs.size() - 1)];
      if (v == nullptr) {
        if (!spec.optional) throw GraphError(str(where(*n), ": required input '", spec.name, "' is absent"));
        metas.push_back(nullptr);
        continue;
      }
      check_value(v, str(where(*n), " input '", spec.name, "'"));
      metas.push_back(&v->meta);
    }
    std::vector<TensorMeta> inferred;
    try {
      Attrs normalized = normalize_attrs(op, n->attrs);
      inferred = infer_metas(op, metas, normalized, Device{});
    } catch (const GraphError&) {
      throw;
    } catch (const Error& e) {
      throw GraphError(str(where(*n), ": ", e.what()));
    }
    if (inferred.size() != n->outputs.size())
      throw GraphError(str(where(*n), " has ", n->outputs.size(), " outputs; inference gives ", inferred.size()));
    for (size_t i = 0; i < inferred.size(); ++i) {
      const Value* out = n->outputs[i];
      if (!owned.count(out) || out->producer != n.get() || out->output_index != int32_t(i))
        throw GraphError(str(where(*n), " output ", i, " is not a value this node defines"));
      if (defined.count(out)) throw GraphError(str(where(*n), " redefines ", value_ref(out), " (not SSA)"));
      if (out->meta.shape != inferred[i].shape || out->meta.dtype != inferred[i].dtype)
        throw GraphError(str(where(*n), " output ", value_ref(out), " is declared ", meta_str(out->meta),
                             " but inference gives ", meta_str(inferred[i])));
      defined.insert(out);
    }
  }
  for (size_t i = 0; i < outputs_.size(); ++i) check_value(outputs_[i], str("graph output ", i));
  for (const auto& u : updates_) {
    check_value(u.source, "an update");
    if (!owned.count(u.target) || (u.target->kind != ValueKind::kInput && u.target->kind != ValueKind::kCaptured))
      throw GraphError(str("an update targets ", value_ref(u.target), ", which is not an input or captured value"));
    if (u.source->meta.shape != u.target->meta.shape || u.source->meta.dtype != u.target->meta.dtype)
      throw GraphError(str("an update stores ", meta_str(u.source->meta), " into ", value_ref(u.target), " of ",
                           meta_str(u.target->meta)));
  }
}

std::string Graph::dump() const {
  std::ostringstream os;
  os << "graph(" << inputs_.size() << " inputs, " << nodes_.size() << " nodes) {\n";
  for (const Value* v : inputs_) os << "  " << value_ref(v) << " = input '" << v->name << "' " << meta_str(v->meta) << "\n";
  for (const Value* v : tensors())
    os << "  " << value_ref(v) << " = " << value_kind_name(v->kind) << " '" << v->name << "' " << meta_str(v->meta)
       << "\n";
  for (const auto& n : nodes_) {
    os << "  ";
    for (size_t i = 0; i < n->outputs.size(); ++i) os << (i ? ", " : "") << value_ref(n->outputs[i]);
    os << " = " << n->op->name << "(";
    for (size_t i = 0; i < n->inputs.size(); ++i) os << (i ? ", " : "") << value_ref(n->inputs[i]);
    os << ")";
    if (!n->attrs.items().empty()) {
      os << " {";
      bool first = true;
      for (const auto& [name, value] : n->attrs.items()) {
        os << (first ? "" : ", ") << name << "=" << attr_value_str(value);
        first = false;
      }
      os << "}";
    }
    os << " :";
    for (const Value* v : n->outputs) os << " " << meta_str(v->meta);
    os << "\n";
  }
  for (const auto& u : updates_) os << "  update " << value_ref(u.target) << " <- " << value_ref(u.source) << "\n";
  os << "  return";
  for (size_t i = 0; i < outputs_.size(); ++i) os << (i ? ", " : " ") << value_ref(outputs_[i]);
  os << "\n}\n";
  return os.str();
}

}  // namespace oar::graph
