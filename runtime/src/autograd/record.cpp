// Recording the tape: nodes for op calls (rules from the registry) and for
// single-input functions (views, device copies), plus the rule registry.
#include <mutex>
#include <unordered_map>

#include "../pooled.h"
#include "node.h"
#include "oar/dispatch.h"
#include "oar/error.h"
#include "oar/op_registry.h"

namespace oar::autograd {

namespace {

std::atomic<uint64_t> g_sequence{0};

struct RuleTable {
  std::mutex mutex;
  std::unordered_map<std::string, GradRule> rules;
};

void register_builtin_rules();

RuleTable& rule_table() {
  static RuleTable* table = new RuleTable();
  return *table;
}

// Lookups load the built-in rules once; registration itself must not (it runs inside).
void ensure_builtin_rules() {
  static std::once_flag once;
  std::call_once(once, register_builtin_rules);
}

// A node for one call of a catalog op.
struct OpNode : Node {
  const OpSchema* op;
  const GradRule* rule;  // null: the op has no rule; backward through it is an error
  std::vector<Tensor> inputs;
  std::vector<Tensor> outputs;  // aliases without history (no reference cycle)
  std::vector<uint32_t> input_versions, output_versions;  // of the memory, when saved
  Attrs attrs;

  std::string name() const override { return op->name + "Backward"; }

  // Saved tensors are counted on their storage, so an in-place update can
  // tell whether anyone besides autograd still sees the memory it overwrites.
  void save(std::vector<Tensor>& into, std::vector<uint32_t>& versions, const Tensor& t) {
    into.push_back(t);
    versions.push_back(t.defined() ? t.version() : 0);
    if (t.defined()) t.storage()->add_internal_ref(1);
  }

  void release_saved() override {
    for (auto* list : {&inputs, &outputs})
      for (Tensor& t : *list)
        if (t.defined()) {
          t.storage()->add_internal_ref(-1);
          release_history(t);
        }
    inputs.clear();
    outputs.clear();
  }
  ~OpNode() override { release_saved(); }

  std::vector<Tensor> apply(const std::vector<Tensor>& grads) override {
    if (rule == nullptr)
      throw NotImplementedError(
          op->gradient == Gradient::kFirstOrderOnly
              ? str("op '", op->name, "' is a backward kernel without a gradient rule of its own: a derivative of "
                    "this order is not implemented",
                    op->name == "rnn_layer_backward"
                        ? " (recurrent layers: with oar.nn.rnn.fused_kernels = False they are composed of "
                          "differentiable ops)"
                        : "")
              : str("op '", op->name, "' has no gradient rule; cannot differentiate through it"));
    // Outputs handed to the rule are reconnected to this node, so rules that
    // use them (sigmoid, softmax) stay differentiable under create_graph.
    std::vector<Tensor> connected;
    connected.reserve(outputs.size());
    auto self = shared_from_this();
    for (size_t i = 0; i < outputs.size(); ++i) {
      Tensor t = alias_without_history(outputs[i]);
      if (is_grad_enabled() && is_floating(t.dtype())) set_history(t, self, uint32_t(i));
      connected.push_back(t);
    }
    std::vector<bool> needs(next.size());
    for (size_t i = 0; i < next.size(); ++i) needs[i] = next[i].valid();
    GradContext ctx{*op,
                    SavedTensors(inputs, &input_versions, *op, "input"),
                    SavedTensors(connected, &output_versions, *op, "output"),
                    attrs,
                    grads,
                    needs};
    std::vector<Tensor> out = (*rule)(ctx);
    if (out.size() < next.size()) out.resize(next.size());
    return out;
  }
};

struct FunctionNode : Node {
  std::string label;
  std::function<Tensor(const Tensor&)> fn;
  std::string name() const override { return label + "Backward0"; }  // PyTorch's: ExpandBackward0, ...
  void release_saved() override { fn = nullptr; }
  std::vector<Tensor> apply(const std::vector<Tensor>& grads) override {
    if (!fn) throw ValueError("backward through a freed graph");
    if (!grads[0].defined()) return {Tensor()};
    return {fn(grads[0])};
  }
};

// A custom function's node: the caller's backward, with the outputs'
// metadata kept to give zeros for outputs no gradient reached.
struct CustomNode : Node {
  std::string label;
  CustomBackward fn;
  bool materialize = true;
  std::vector<Shape> output_shapes;
  std::vector<DType> output_dtypes;
  std::vector<Device> output_devices;
  std::string name() const override { return label + "Backward"; }
  void release_saved() override { fn = nullptr; }
  std::vector<Tensor> apply(const std::vector<Tensor>& grads) override {
    if (!fn) throw ValueError(str(label, ": backward through a freed graph (use retain_graph=True)"));
    std::vector<Tensor> g = grads;
    if (materialize)
      for (size_t i = 0; i < g.size(); ++i)
        if (!g[i].defined()) g[i] = Tensor::zeros(output_shapes[i], output_dtypes[i], output_devices[i]);
    std::vector<Tensor> r = fn(g);
    if (r.size() != next.size())
      throw ValueError(str(label, ": backward returned ", r.size(), " gradients, expected ", next.size()));
    return r;
  }
};

}  // namespace

Node::Node() : sequence_nr(g_sequence.fetch_add(1)) {}

namespace {
thread_local std::vector<std::shared_ptr<Node>>* t_release_queue = nullptr;
}  // namespace

void release_node(std::shared_ptr<Node> node) {
  if (!node) return;
  if (t_release_queue != nullptr) {  // inside a release: the outer loop frees it
    t_release_queue->push_back(std::move(node));
    return;
  }
  std::vector<std::shared_ptr<Node>> queue;
  t_release_queue = &queue;
  queue.push_back(std::move(node));
  while (!queue.empty()) {
    std::shared_ptr<Node> last = std::move(queue.back());
    queue.pop_back();
    last.reset();  // its destructor queues the nodes behind it
  }
  t_release_queue = nullptr;
}

void release_history(Tensor& saved) {
  if (!saved.defined() || saved.impl_ptr().use_count() != 1) return;
  std::shared_ptr<AutogradMeta> meta = std::move(saved.impl().autograd);
  if (meta && meta.use_count() == 1) release_node(std::move(meta->grad_fn));
}

Node::~Node() {
  for (Edge& e : next) release_node(std::move(e.node));
}

void SavedTensors::throw_modified(size_t i) const {
  const Tensor& t = tensors_[i];
  throw ValueError(str("one of the variables needed for gradient computation has been modified by an inplace "
                       "operation: ", role_, " ", i, " of op '", op_.name, "' (shape ", shape_str(t.shape()), ", ",
                       dtype_name(t.dtype()), ") is at version ", t.version(), "; expected version ",
                       (*versions_)[i], " instead. Avoid the in-place operation, or clone() the tensor before it"));
}

size_t SavedTensors::checked(size_t i) const {
  if (i >= tensors_.size())
    throw InternalError(str("op '", op_.name, "': gradient rule reads ", role_, " ", i, " of ", tensors_.size()));
  return i;
}

Tensor GradContext::grad_or_zeros(size_t i) const {
  if (i < grads.size() && grads[i].defined()) return grads[i];
  const Tensor& o = outputs.meta(i);
  return Tensor::zeros(o.shape(), o.dtype(), o.device());
}

void register_grad_rule(const std::string& op, GradRule rule) {
  if (OpRegistry::instance().find(op) == nullptr)
    throw InternalError(str("gradient rule for op '", op, "', which is not in the catalog"));
  auto& t = rule_table();
  std::lock_guard<std::mutex> lock(t.mutex);
  // One definition per op: a rule written by hand and one from a .def
  // gradient column (or two hand-written ones) would silently shadow each other.
  if (!t.rules.emplace(op, std::move(rule)).second)
    throw InternalError(str("op '", op, "' has two gradient rules (rules_*.cpp and/or the .def gradient column)"));
}

const GradRule* find_grad_rule(const OpSchema& op) {
  ensure_builtin_rules();
  auto& t = rule_table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.rules.find(op.name);
  return it == t.rules.end() ? nullptr : &it->second;
}

bool is_non_differentiable(const OpSchema& op) { return op.gradient == Gradient::kNone; }

bool any_requires_grad(const std::vector<Tensor>& tensors) {
  for (const auto& t : tensors)
    if (t.defined() && t.requires_grad()) return true;
  return false;
}

Tensor alias_without_history(const Tensor& t) {
  if (!t.defined()) return t;
  auto impl = detail::make_pooled<TensorImpl>();
  const TensorImpl& src = t.impl();
  impl->storage = src.storage;
  impl->shape = src.shape;
  impl->strides = src.strides;
  impl->offset = src.offset;
  impl->dtype = src.dtype;
  return Tensor(std::move(impl));
}

Edge edge_of(const Tensor& t) {
  if (!t.defined() || !t.requires_grad()) return {};
  auto& meta = t.impl().autograd;
  if (meta->grad_fn) return {meta->grad_fn, meta->output_nr};
  std::shared_ptr<Node> acc = meta->grad_accumulator.lock();
  if (!acc) {
    acc = std::make_shared<AccumulateGrad>(t.impl_ptr());
    meta->grad_accumulator = acc;
  }
  return {acc, 0};
}

void set_history(Tensor& t, const std::shared_ptr<Node>& node, uint32_t output_nr) {
  auto meta = std::make_shared<AutogradMeta>();
  meta->requires_grad = true;
  meta->grad_fn = node;
  meta->output_nr = output_nr;
  t.impl().autograd = std::move(meta);
}

void collect_inputs(Node& node, const std::vector<Tensor>& inputs) {
  node.next.reserve(inputs.size());
  for (const auto& t : inputs) {
    node.next.push_back(edge_of(t));
    node.input_shapes.push_back(t.defined() ? t.shape() : Shape{});
    node.input_dtypes.push_back(t.defined() ? t.dtype() : DType::f32);
    node.input_devices.push_back(t.defined() ? t.device() : Device{});
  }
}

void record_op(const OpSchema& op, const std::vector<Tensor>& inputs, const Attrs& attrs,
               std::vector<Tensor>& outputs) {
  if (!is_grad_enabled() || !any_requires_grad(inputs) || is_non_differentiable(op)) return;
  auto node = std::make_shared<OpNode>();
  node->op = &op;
  node->rule = find_grad_rule(op);
  node->inputs.reserve(inputs.size());
  // Inputs are saved as aliases that share the history (so rules stay
  // differentiable) but not the tensor object: an in-place update that swaps
  // the tensor's memory leaves the saved values intact.
  for (const auto& t : inputs) {
    Tensor alias = alias_without_history(t);
    if (t.defined()) alias.impl().autograd = t.impl().autograd;
    node->save(node->inputs, node->input_versions, alias);
  }
  node->attrs = attrs;
  node->num_outputs = outputs.size();
  node->output_hooks.resize(outputs.size());
  node->retained_outputs.resize(outputs.size());
  for (const auto& o : outputs) node->save(node->outputs, node->output_versions, alias_without_history(o));
  collect_inputs(*node, inputs);
  for (size_t i = 0; i < outputs.size(); ++i)
    if (is_floating(outputs[i].dtype())) set_history(outputs[i], node, uint32_t(i));
}

void record_function(const char* name, const Tensor& input, Tensor& output,
                     std::function<Tensor(const Tensor& grad)> backward) {
  if (!is_grad_enabled() || !input.requires_grad()) return;
  auto node = std::make_shared<FunctionNode>();
  node->label = name;
  node->fn = std::move(backward);
  node->output_hooks.resize(1);
  node->retained_outputs.resize(1);
  collect_inputs(*node, {input});
  set_history(output, node, 0);
}

std::vector<Tensor> record_custom(const std::string& name, const std::vector<Tensor>& inputs,
                                  const std::vector<Tensor>& outputs, const std::vector<bool>& differentiable,
                                  bool materialize_grads, CustomBackward backward) {
  std::vector<Tensor> results;
  results.reserve(outputs.size());
  for (const auto& o : outputs) results.push_back(alias_without_history(o));
  if (!is_grad_enabled() || !any_requires_grad(inputs)) return results;
  auto node = std::make_shared<CustomNode>();
  node->label = name;
  node->fn = std::move(backward);
  node->materialize = materialize_grads;
  node->num_outputs = outputs.size();
  node->output_hooks.resize(outputs.size());
  node->retained_outputs.resize(outputs.size());
  for (const auto& o : outputs) {
    node->output_shapes.push_back(o.shape());
    node->output_dtypes.push_back(o.dtype());
    node->output_devices.push_back(o.device());
  }
  collect_inputs(*node, inputs);
  for (size_t i = 0; i < results.size(); ++i)
    if ((i >= differentiable.size() || differentiable[i]) && is_floating(results[i].dtype()))
      set_history(results[i], node, uint32_t(i));
  return results;
}

Tensor sum_to(const Tensor& grad, const Shape& shape) {
  if (grad.shape() == shape) return grad;
  const Shape& gs = grad.shape();
  if (gs.size() < shape.size())
    throw InternalError(str("sum_to: gradient ", shape_str(gs), " has fewer dims than ", shape_str(shape)));
  size_t lead = gs.size() - shape.size();
  std::vector<int64_t> dims;
  for (size_t i = 0; i < gs.size(); ++i)
    if (i < lead || (shape[i - lead] == 1 && gs[i] != 1)) dims.push_back(int64_t(i));
  Tensor r = dims.empty() ? grad : call1("sum", {grad}, {{"dims", dims}, {"keepdim", true}});
  return r.reshape(shape);
}

}  // namespace oar::autograd

// Rules live in rules_*.cpp; each file registers its share.
namespace oar::autograd {
void register_elementwise_grad_rules();
void register_functor_grad_rules();
void register_reduction_grad_rules();
void register_nn_grad_rules();
void register_indexing_grad_rules();
void register_scan_grad_rules();
void register_linalg_grad_rules();
namespace {
void register_builtin_rules() {
  register_elementwise_grad_rules();
  register_functor_grad_rules();
  register_reduction_grad_rules();
  register_nn_grad_rules();
  register_indexing_grad_rules();
  register_scan_grad_rules();
  register_linalg_grad_rules();
}
}  // namespace
}  // namespace oar::autograd
