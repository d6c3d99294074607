// The tracer (see trace.h): layout-keyed values, captured tensors, in-place
// writes as updates, and the errors for what a graph cannot express.
#include "oar/graph/trace.h"

#include <functional>

#include "oar/autograd.h"
#include "oar/error.h"

namespace oar::graph {

namespace {
thread_local Tracer* t_current = nullptr;
thread_local int t_suspended = 0;

std::string describe(const Tensor& t) { return str(dtype_name(t.dtype()), shape_str(t.shape())); }
}  // namespace

size_t Tracer::LayoutHash::operator()(const LayoutKey& k) const {
  size_t h = std::hash<const void*>()(k.storage);
  auto mix = [&h](int64_t v) { h ^= std::hash<int64_t>()(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
  mix(k.offset);
  mix(int64_t(k.dtype));
  for (int64_t d : k.shape) mix(d);
  for (int64_t s : k.strides) mix(s);
  return h;
}

Tracer::LayoutKey Tracer::key_of(const Tensor& t) {
  return {t.storage().get(), t.offset(), t.shape(), t.strides(), t.dtype()};
}

Tracer::Tracer(const std::vector<Tensor>& inputs, const std::vector<std::string>& names)
    : graph_(std::make_unique<Graph>()) {
  if (!names.empty() && names.size() != inputs.size())
    throw ValueError(str("trace: ", inputs.size(), " inputs but ", names.size(), " names"));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined()) throw ValueError(str("trace: input ", i, " is an undefined tensor"));
    auto it = entries_.find(key_of(t));
    if (it != entries_.end()) {
      // The same tensor passed twice is one input: a graph cannot tell them apart.
      throw ValueError(str("trace: input ", i, " is the same tensor as an earlier input; pass it once"));
    }
    Value* v = graph_->add_input(names.empty() ? str("input", i) : names[i], {t.shape(), t.dtype()});
    bind(t, v);
    entries_[key_of(t)].state = v;
  }
  previous_ = t_current;
  t_current = this;
}

Tracer::~Tracer() {
  for (const Tensor& t : keep_alive_) t.storage()->add_internal_ref(-1);
  if (finished_) return;
  if (t_current == this) t_current = previous_;
  try {
    restore_saved();  // an abandoned trace leaves no side effects either
  } catch (...) {
  }
}

bool Tracer::created(const Tensor& t) const {
  auto it = entries_.find(key_of(t));
  return it != entries_.end() && it->second.state == nullptr && !it->second.stale;
}

void Tracer::before_write(const Tensor& dst) {
  LayoutKey key = key_of(dst);
  if (saved_keys_.count(key)) return;
  auto it = entries_.find(key);
  bool outlives = it == entries_.end() || it->second.state != nullptr;
  if (!outlives) return;  // a tensor the trace created
  saved_keys_[key] = true;
  TraceSuspend untraced;
  autograd::NoGradGuard no_grad;
  saved_.emplace_back(dst, dst.clone());
}

void Tracer::restore_saved() {
  TraceSuspend untraced;
  autograd::NoGradGuard no_grad;
  for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) it->first.copy_(it->second);
  saved_.clear();
}

Tracer* Tracer::active() { return t_suspended > 0 ? nullptr : t_current; }

void Tracer::name_tensor(const Tensor& t, const std::string& name) {
  if (t.defined()) names_[t.impl_ptr().get()] = name;
}

void Tracer::bind(const Tensor& t, Value* v) {
  LayoutKey key = key_of(t);
  auto [it, inserted] = entries_.try_emplace(key);
  it->second.value = v;
  it->second.stale = false;
  if (inserted) {
    keys_by_storage_[key.storage].push_back(key);
    // An alias keeps the memory (whose address is the key) alive; it is an
    // internal reference, so the traced tensor's own memory can still be
    // swapped by an in-place update (Tensor::update_).
    keep_alive_.push_back(t.detach());
    keep_alive_.back().storage()->add_internal_ref(1);
  }
}

Value* Tracer::value_of(const Tensor& t, const OpSchema& reader) {
  auto it = entries_.find(key_of(t));
  if (it != entries_.end()) {
    if (it->second.stale)
      throw GraphError(str("op '", reader.name, "' reads a view (", describe(t),
                           ") of a tensor that was written in place after the view was taken; "
                           "a graph cannot express that aliasing: take the view after the write"));
    return it->second.value;
  }
  auto named = names_.find(t.impl_ptr().get());
  std::string name = named != names_.end() ? named->second : str("captured", captured_);
  ++captured_;
  Value* v = graph_->add_captured(name, t);
  bind(t, v);
  entries_[key_of(t)].state = v;
  return v;
}

void Tracer::record_op(const OpSchema& op, const std::vector<Tensor>& inputs, const Attrs& attrs,
                       const std::vector<Tensor>& outputs, bool into_outputs) {
  std::vector<Value*> in;
  in.reserve(inputs.size());
  for (const Tensor& t : inputs) in.push_back(t.defined() ? value_of(t, op) : nullptr);
  Node* node = graph_->add_node(op, in, attrs);
  if (node->outputs.size() != outputs.size())
    throw InternalError(str("trace: op '", op.name, "' produced ", outputs.size(), " tensors, its graph node ",
                            node->outputs.size()));
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& t = outputs[i];
    const TensorMeta& m = node->outputs[i]->meta;
    if (t.shape() != m.shape || t.dtype() != m.dtype)
      throw InternalError(str("trace: op '", op.name, "' output ", i, " is ", describe(t),
                              " but shape inference on the graph says ", dtype_name(m.dtype), shape_str(m.shape)));
    if (into_outputs) write(t, node->outputs[i]);
    else bind(t, node->outputs[i]);
  }
}

void Tracer::write(const Tensor& dst, Value* v) {
  LayoutKey key = key_of(dst);
  auto it = entries_.find(key);
  Value* state = nullptr;
  if (it == entries_.end()) {
    // Written before anything read it: a captured tensor the graph only stores into.
    auto named = names_.find(dst.impl_ptr().get());
    state = graph_->add_captured(named != names_.end() ? named->second : str("captured", captured_++), dst);
  } else {
    const Value* current = it->second.value;
    if (it->second.stale || (current->producer != nullptr && current->producer->op->view))
      throw GraphError(str("an in-place write into a view (", describe(dst),
                           ") cannot be captured in a graph: the tensor it views would not see it; "
                           "compute the new tensor and assign it whole, or run this part eagerly"));
    state = it->second.state;
  }
  bind(dst, v);
  entries_[key].state = state;
  if (state != nullptr) graph_->add_update(state, v);
  // Views of this storage taken before the write no longer show its contents.
  for (const LayoutKey& other : keys_by_storage_[key.storage])
    if (!(other == key)) entries_[other].stale = true;
}

void Tracer::check_host_read(const Tensor& t, const char* what) {
  auto it = entries_.find(key_of(t));
  if (it == entries_.end()) return;  // a tensor the trace never touched
  const Value* v = it->second.value;
  bool written = false;
  for (const auto& u : graph_->updates()) written |= u.target == it->second.state && it->second.state != nullptr;
  if (v->kind == ValueKind::kCaptured && !written) return;  // a parameter read as it is
  throw GraphError(str(what, " reads the values of a traced tensor (", describe(t),
                       ") on the host while a graph is being traced: Python control flow or values that "
                       "depend on tensor data would be frozen into the graph. Keep the computation in "
                       "tensor ops (oar.where, masks), or run this function eagerly"));
}

std::unique_ptr<Graph> Tracer::finish(const std::vector<Tensor>& outputs) {
  if (finished_) throw ValueError("trace: finish() called twice");
  if (t_current != this) throw ValueError("trace: finish() of a tracer that is not the innermost active one");
  static const OpSchema output_reader = [] {
    OpSchema s;
    s.name = "<graph output>";
    return s;
  }();
  std::vector<Value*> outs;
  for (const Tensor& t : outputs) {
    if (!t.defined()) throw ValueError("trace: a graph output is an undefined tensor");
    outs.push_back(value_of(t, output_reader));
  }
  t_current = previous_;
  finished_ = true;
  restore_saved();
  graph_->set_outputs(std::move(outs));
  graph_->verify();
  return std::move(graph_);
}

TraceSuspend::TraceSuspend() { ++t_suspended; }
TraceSuspend::~TraceSuspend() { --t_suspended; }

}  // namespace oar::graph
