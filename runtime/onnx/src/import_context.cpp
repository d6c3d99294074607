// NodeContext: attribute access with ONNX defaults, constant inputs, and the
// folding builder (see import_context.h for why folding happens here).
#include "import_context.h"

#include <algorithm>
#include <numeric>

#include "oar/autograd.h"
#include "oar/dispatch.h"
#include "oar/onnx/onnx.h"
#include "oar/op_registry.h"

namespace oar::onnx::detail {

NodeContext::NodeContext(graph::Graph& graph, const ::onnx::NodeProto& node, int64_t opset,
                         std::vector<Value*> inputs, std::string file,
                         const std::unordered_map<const Value*, Tensor>* bound)
    : graph_(graph), node_(node), opset_(opset), inputs_(std::move(inputs)), file_(std::move(file)), bound_(bound) {}

std::string NodeContext::where() const {
  std::string name = !node_.name().empty()           ? str("node '", node_.name(), "'")
                     : node_.output_size() > 0 ? str("node producing '", node_.output(0), "'")
                                               : std::string("unnamed node");
  return str(file_, ": ", name, " (", node_.op_type(), ", opset ", opset_, ")");
}

void NodeContext::unsupported(const std::string& what) const { throw NotImplementedError(str(where(), ": ", what)); }
void NodeContext::invalid(const std::string& what) const { throw ValueError(str(where(), ": ", what)); }

Value* NodeContext::required_input(size_t i) const {
  if (!has_input(i)) invalid(str("required input ", i, " is missing"));
  return inputs_[i];
}

namespace {

std::optional<Tensor> evaluate_value(const Value* v, const std::unordered_map<const Value*, Tensor>* bound,
                                     std::unordered_map<const Value*, std::optional<Tensor>>& memo) {
  if (v->kind == graph::ValueKind::kConstant) return v->tensor;
  if (v->kind == graph::ValueKind::kInput) {
    if (bound == nullptr) return std::nullopt;
    auto it = bound->find(v);
    return it == bound->end() ? std::nullopt : std::optional<Tensor>(it->second);
  }
  if (v->kind != graph::ValueKind::kNode || v->producer == nullptr) return std::nullopt;
  auto known = memo.find(v);
  if (known != memo.end()) return known->second;
  const graph::Node& n = *v->producer;
  std::optional<Tensor> result;
  if (!n.op->needs_generator) {
    std::vector<Tensor> in;
    bool ok = true;
    for (const Value* x : n.inputs) {
      if (x == nullptr) {
        in.emplace_back();
        continue;
      }
      auto t = evaluate_value(x, bound, memo);
      if (!t) {
        ok = false;
        break;
      }
      in.push_back(*t);
    }
    if (ok) {
      autograd::NoGradGuard no_grad;
      CallOptions options;
      options.device = Device::cpu();
      result = call(*n.op, in, n.attrs, options).at(size_t(v->output_index)).contiguous();
    }
  }
  memo[v] = result;
  return result;
}

}  // namespace

std::optional<Tensor> NodeContext::evaluate(const Value* v) const {
  std::unordered_map<const Value*, std::optional<Tensor>> memo;
  return evaluate_value(v, bound_, memo);
}

const Tensor& NodeContext::constant_input(size_t i, const char* what) {
  Value* v = required_input(i);
  if (!is_constant(v)) {
    // a parameter computed from bound inputs (ONNX functions compute sizes at run time)
    if (std::optional<Tensor> t = evaluate(v)) {
      inputs_[i] = graph_.add_constant(v->name, *t);
      return inputs_[i]->tensor;
    }
  }
  if (!is_constant(v))
    unsupported(str("input ", i, " ('", what,
                    "') must be a constant or computable at import time; oar graphs have static shapes and take it "
                    "as an attribute"));
  return v->tensor;
}

std::vector<int64_t> NodeContext::constant_ints(size_t i, const char* what) {
  const Tensor& t = constant_input(i, what);
  if (is_floating(t.dtype()) || t.dtype() == DType::boolean)
    invalid(str("input ", i, " ('", what, "') must be an integer tensor, got ", dtype_name(t.dtype())));
  return t.to_vector<int64_t>();
}

std::vector<double> NodeContext::constant_doubles(size_t i, const char* what) {
  return constant_input(i, what).to_vector<double>();
}

std::optional<std::vector<int64_t>> NodeContext::ints_input_or_attr(size_t i, const char* name,
                                                                    int64_t input_since) {
  if (opset_ >= input_since) {
    if (!has_input(i)) return std::nullopt;
    return constant_ints(i, name);
  }
  if (!has_attr(name)) return std::nullopt;
  return attr_ints(name);
}

const ::onnx::AttributeProto* NodeContext::find_attr(const std::string& name) const {
  for (const auto& a : node_.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t NodeContext::attr_int(const std::string& name, int64_t def) const {
  const auto* a = find_attr(name);
  return a ? a->i() : def;
}

int64_t NodeContext::attr_int(const std::string& name) const {
  const auto* a = find_attr(name);
  if (!a) invalid(str("required attribute '", name, "' is missing"));
  return a->i();
}

double NodeContext::attr_float(const std::string& name, double def) const {
  const auto* a = find_attr(name);
  return a ? double(a->f()) : def;
}

std::string NodeContext::attr_string(const std::string& name, const std::string& def) const {
  const auto* a = find_attr(name);
  return a ? a->s() : def;
}

std::vector<int64_t> NodeContext::attr_ints(const std::string& name, std::vector<int64_t> def) const {
  const auto* a = find_attr(name);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : def;
}

std::vector<double> NodeContext::attr_floats(const std::string& name, std::vector<double> def) const {
  const auto* a = find_attr(name);
  return a ? std::vector<double>(a->floats().begin(), a->floats().end()) : def;
}

Tensor NodeContext::attr_tensor(const std::string& name) const {
  const auto* a = find_attr(name);
  if (!a || !a->has_t()) invalid(str("required tensor attribute '", name, "' is missing"));
  return tensor_from_proto(a->t(), str(where(), ": attribute '", name, "'"));
}

std::vector<Value*> NodeContext::ops(const std::string& name, const std::vector<Value*>& in, const Attrs& attrs) {
  const OpSchema& schema = OpRegistry::instance().get(name);
  bool foldable = !schema.needs_generator;
  for (Value* v : in) foldable &= v == nullptr || is_constant(v);
  if (!foldable) return graph_.add_node(schema, in, attrs)->outputs;
  // All inputs known: compute now, on the CPU, and keep the result.
  autograd::NoGradGuard no_grad;
  std::vector<Tensor> tensors;
  for (Value* v : in) tensors.push_back(v != nullptr ? v->tensor : Tensor());
  CallOptions options;
  options.device = Device::cpu();
  std::vector<Tensor> results = call(schema, tensors, attrs, options);
  std::vector<Value*> out;
  for (const Tensor& t : results) out.push_back(graph_.add_constant("", t.contiguous()));
  return out;
}

Value* NodeContext::op(const std::string& name, const std::vector<Value*>& in, const Attrs& attrs) {
  return ops(name, in, attrs).at(0);
}

Value* NodeContext::constant(const Tensor& t) { return graph_.add_constant("", t); }

Value* NodeContext::scalar(double v, DType dtype) { return constant(Tensor::full({}, v, dtype, Device::cpu())); }

Value* NodeContext::ints(const std::vector<int64_t>& values) {
  return constant(Tensor::from_vector(values, {int64_t(values.size())}, Device::cpu()));
}

Value* NodeContext::cast(Value* v, DType d) { return dtype(v) == d ? v : op("cast", {v}, {{"dtype", d}}); }

Value* NodeContext::reshape(Value* v, const Shape& s) {
  return shape(v) == s ? v : op("reshape", {v}, {{"shape", s}});
}

Value* NodeContext::permute(Value* v, const std::vector<int64_t>& dims) {
  std::vector<int64_t> identity(dims.size());
  std::iota(identity.begin(), identity.end(), 0);
  return dims == identity ? v : op("permute", {v}, {{"dims", dims}});
}

Value* NodeContext::unsqueeze(Value* v, int64_t a) {
  Shape s = shape(v);
  s.insert(s.begin() + a, 1);
  return reshape(v, s);
}

Value* NodeContext::expand(Value* v, const Shape& s) { return shape(v) == s ? v : op("expand", {v}, {{"shape", s}}); }

Value* NodeContext::slice(Value* v, int64_t dim, int64_t start, int64_t end, int64_t step) {
  if (start == 0 && end >= shape(v)[size_t(dim)] && step == 1) return v;
  return op("slice", {v}, {{"dim", dim}, {"start", start}, {"end", end}, {"step", step}});
}

Value* NodeContext::flip(Value* v, int64_t a) {
  int64_t n = shape(v)[size_t(a)];
  std::vector<int64_t> idx(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) idx[size_t(i)] = n - 1 - i;
  return op("index_select", {v, ints(idx)}, {{"dim", a}});
}

Value* NodeContext::sum(Value* v, const std::vector<int64_t>& dims, bool keepdim) {
  Value* s = op("sum", {v}, {{"dims", dims}, {"keepdim", keepdim}});
  return cast(s, dtype(v) == DType::boolean ? DType::i64 : dtype(v));
}

int64_t NodeContext::axis(int64_t a, int64_t r, const char* what) const {
  int64_t n = std::max<int64_t>(r, 1);
  if (a < -n || a >= n) invalid(str(what, " ", a, " is out of range for rank ", r));
  return a < 0 ? a + n : a;
}

std::vector<std::string> MapperTable::op_types() const {
  std::vector<std::string> names;
  for (const auto& [name, m] : mappers_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

const MapperTable& mapper_table() {
  static const MapperTable table = [] {
    MapperTable t;
    register_elementwise_mappers(t);
    register_shape_mappers(t);
    register_reduction_mappers(t);
    register_nn_mappers(t);
    register_pool_conv_mappers(t);
    register_loss_mappers(t);
    register_resize_mappers(t);
    register_scatter_mappers(t);
    register_quantization_mappers(t);
    register_signal_mappers(t);
    register_training_mappers(t);
    register_einsum_mappers(t);
    register_rnn_mappers(t);
    register_grid_sample_mappers(t);
    register_col2im_mappers(t);
    return t;
  }();
  return table;
}

void rethrow_with_context(const Error& e, const std::string& prefix) {
  std::string m = str(prefix, e.what());
  switch (e.kind()) {
    case ErrorKind::kShape: throw ShapeError(m);
    case ErrorKind::kDType: throw DTypeError(m);
    case ErrorKind::kDevice: throw DeviceError(m);
    case ErrorKind::kIndex: throw IndexError(m);
    case ErrorKind::kValue: throw ValueError(m);
    case ErrorKind::kNotImplemented: throw NotImplementedError(m);
    case ErrorKind::kPlugin: throw PluginError(m);
    case ErrorKind::kIO: throw IOError(m);
    case ErrorKind::kInternal: throw InternalError(m);
    case ErrorKind::kGraph: throw GraphError(m);
  }
  throw Error(e.kind(), m);
}

AxisLast axis_last(int64_t rank, int64_t axis) {
  AxisLast a;
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis) a.perm.push_back(i);
  a.perm.push_back(axis);
  a.inverse.resize(size_t(rank));
  for (int64_t i = 0; i < rank; ++i) a.inverse[size_t(a.perm[size_t(i)])] = i;
  return a;
}

}  // namespace oar::onnx::detail
