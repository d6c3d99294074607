// The graph executor (see executor.h): steps resolved at construction, slots
// indexed by value id, intermediates freed after their last reader.
#include "oar/graph/executor.h"

#include <algorithm>

#include "oar/autograd.h"
#include "oar/dispatch.h"
#include "oar/error.h"
#include "oar/graph/trace.h"
#include "oar/kernel_registry.h"
#include "oar/op_registry.h"

namespace oar::graph {

struct Executor::Step {
  enum class Kind { kKernel, kView, kEager };
  Kind kind = Kind::kEager;
  const OpSchema* op = nullptr;
  std::vector<int32_t> inputs;   // slots; -1: an absent optional input
  std::vector<int32_t> outputs;  // slots
  std::vector<TensorMeta> output_metas;
  Attrs attrs;
  std::vector<oar_attr> abi;  // points into attrs; a Step never moves (held by unique_ptr)
  const std::vector<KernelEntry>* impls = nullptr;
  std::vector<int32_t> release;  // slots nobody reads after this step
  // An elementwise step may write its output into this input (index into
  // inputs), whose value dies here: same shape and dtype, a kernel's own buffer.
  int32_t inplace_input = -1;
  std::vector<int32_t> output_targets;  // per output: the updated state slot it is written into, or -1
};

namespace {

const std::vector<KernelEntry>* find_kernels(const OpSchema& op, Device device, const std::vector<DType>& input_dtypes,
                                             const std::vector<bool>& defined) {
  std::vector<DType> sig;
  for (size_t i = 0; i < input_dtypes.size(); ++i) {
    size_t s = std::min(i, op.inputs.size() - 1);
    if (!op.inputs[s].in_signature || !defined[i]) continue;
    if (op.inputs[s].variadic && i > s) continue;  // a list contributes its first dtype
    sig.push_back(input_dtypes[i]);
  }
  return KernelRegistry::instance().lookup(op.id, device.type, sig.data(), sig.size());
}

bool random_unseeded(const Node& n) {
  return n.op->needs_generator && n.attrs.has("seed") && n.attrs.get_int("seed") < 0;
}

}  // namespace

Executor::Executor(std::shared_ptr<const Graph> graph, Device device) : graph_(std::move(graph)), device_(device) {
  if (!graph_) throw ValueError("executor: no graph");
  graph_->verify();
  int32_t max_id = -1;
  for (Value* v : graph_->inputs()) max_id = std::max(max_id, v->id);
  for (Value* v : graph_->tensors()) max_id = std::max(max_id, v->id);
  for (const auto& n : graph_->nodes())
    for (Value* v : n->outputs) max_id = std::max(max_id, v->id);
  slot_count_ = size_t(max_id + 1);
  constants_.resize(slot_count_);
  for (Value* v : graph_->tensors())
    if (v->kind == ValueKind::kConstant) constants_[size_t(v->id)] = v->tensor.to(device_);

  const OpSchema& cast = OpRegistry::instance().get("cast");
  for (const auto& node : graph_->nodes()) {
    const OpSchema& op = *node->op;
    auto step = std::make_unique<Step>();
    step->op = &op;
    step->attrs = node->attrs;
    for (Value* v : node->inputs) step->inputs.push_back(v != nullptr ? v->id : -1);
    for (Value* v : node->outputs) {
      step->outputs.push_back(v->id);
      step->output_metas.push_back(v->meta);
    }
    if (op.view) {
      step->kind = Step::Kind::kView;
      steps_.push_back(std::move(step));
      continue;
    }
    if (random_unseeded(*node)) {  // eager dispatch draws fresh numbers each run
      steps_.push_back(std::move(step));
      continue;
    }
    // The dtype policy as explicit casts, each a resolved step of its own.
    std::optional<DType> common = promoted_dtype(op, node->inputs.size(), [&](size_t i) -> std::optional<PromotionOperand> {
      if (node->inputs[i] == nullptr) return std::nullopt;
      return PromotionOperand{node->inputs[i]->meta.dtype, node->inputs[i]->meta.shape.empty()};
    });
    std::vector<std::unique_ptr<Step>> casts;
    std::vector<DType> dtypes;
    std::vector<bool> defined;
    bool resolvable = true;
    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const Value* v = node->inputs[i];
      defined.push_back(v != nullptr);
      dtypes.push_back(v != nullptr ? v->meta.dtype : DType::f32);
      if (v == nullptr || !common || !op.inputs[std::min(i, op.inputs.size() - 1)].promoted || v->meta.dtype == *common)
        continue;
      auto c = std::make_unique<Step>();
      c->kind = Step::Kind::kKernel;
      c->op = &cast;
      c->inputs = {v->id};
      c->outputs = {int32_t(slot_count_++)};
      c->output_metas = {{v->meta.shape, *common}};
      c->attrs = normalize_attrs(cast, {{"dtype", *common}});
      c->impls = find_kernels(cast, device_, {v->meta.dtype}, {true});
      resolvable &= c->impls != nullptr;
      step->inputs[i] = c->outputs[0];
      dtypes[i] = *common;
      casts.push_back(std::move(c));
    }
    step->impls = find_kernels(op, device_, dtypes, defined);
    if (!resolvable || step->impls == nullptr) {
      // Decomposition or CPU fallback: eager dispatch decides, with its casts.
      step->inputs.clear();
      for (Value* v : node->inputs) step->inputs.push_back(v != nullptr ? v->id : -1);
      step->impls = nullptr;
      steps_.push_back(std::move(step));
      continue;
    }
    step->kind = Step::Kind::kKernel;
    for (auto& c : casts) steps_.push_back(std::move(c));
    steps_.push_back(std::move(step));
  }
  constants_.resize(slot_count_);
  for (auto& s : steps_)
    if (s->kind == Step::Kind::kKernel) s->abi = abi_attrs(s->attrs);

  // Free each intermediate after its last reader; outputs and update sources live to the end.
  std::vector<int32_t> last(slot_count_, -1);
  for (size_t i = 0; i < steps_.size(); ++i)
    for (int32_t slot : steps_[i]->inputs)
      if (slot >= 0) last[size_t(slot)] = int32_t(i);
  for (Value* v : graph_->outputs()) last[size_t(v->id)] = -1;
  for (const auto& u : graph_->updates()) last[size_t(u.source->id)] = -1;
  for (size_t slot = 0; slot < last.size(); ++slot)
    if (last[slot] >= 0) steps_[size_t(last[slot])]->release.push_back(int32_t(slot));
  plan_updates_in_place(last);

  // Memory planning, in place: an elementwise kernel (out[i] depends on in[i]
  // only) may overwrite an input that dies at this step. Only buffers a kernel
  // step allocated qualify: never inputs, captured tensors, constants or views.
  std::vector<const TensorMeta*> owned(slot_count_, nullptr);  // slot -> meta, for kernel-allocated slots
  for (const auto& s : steps_)
    if (s->kind == Step::Kind::kKernel)
      for (size_t o = 0; o < s->outputs.size(); ++o) owned[size_t(s->outputs[o])] = &s->output_metas[o];
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& s = *steps_[i];
    if (s.kind != Step::Kind::kKernel || !s.op->broadcast || s.outputs.size() != 1) continue;
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      int32_t slot = s.inputs[k];
      if (slot < 0 || owned[size_t(slot)] == nullptr || last[size_t(slot)] != int32_t(i)) continue;
      if (std::count(s.inputs.begin(), s.inputs.end(), slot) != 1) continue;  // read twice: keep it
      const TensorMeta& meta = *owned[size_t(slot)];
      if (meta.shape == s.output_metas[0].shape && meta.dtype == s.output_metas[0].dtype) {
        s.inplace_input = int32_t(k);
        break;
      }
    }
  }
}

void Executor::plan_updates_in_place(const std::vector<int32_t>& last) {
  // An optimizer step's output goes straight into the state tensor that the
  // graph's update writes it back to (the op's own input for that output, as
  // eager calls it), when nothing reads the old value later and it is no graph
  // output: apply_updates then has nothing to copy, and no buffer is allocated.
  for (size_t i = 0; i < steps_.size(); ++i) {
    Step& s = *steps_[i];
    if (s.kind != Step::Kind::kKernel || !s.op->output_alias) continue;
    for (const auto& u : graph_->updates()) {
      auto at = std::find(s.outputs.begin(), s.outputs.end(), u.source->id);
      if (at == s.outputs.end()) continue;
      size_t o = size_t(at - s.outputs.begin());
      int64_t j = s.op->output_alias(o, s.inputs.size(), s.attrs);
      if (j < 0 || size_t(j) >= s.inputs.size() || s.inputs[size_t(j)] != u.target->id) continue;
      if (last[size_t(u.target->id)] != int32_t(i)) continue;
      if (u.target->meta.shape != s.output_metas[o].shape || u.target->meta.dtype != s.output_metas[o].dtype) continue;
      if (s.output_targets.empty()) s.output_targets.assign(s.outputs.size(), -1);
      s.output_targets[o] = u.target->id;
    }
  }
}

size_t Executor::update_in_place_count() const {
  size_t n = 0;
  for (const auto& s : steps_)
    for (int32_t t : s->output_targets) n += t >= 0;
  return n;
}

size_t Executor::inplace_step_count() const {
  size_t n = 0;
  for (const auto& s : steps_) n += s->inplace_input >= 0;
  return n;
}

Executor::~Executor() = default;

size_t Executor::eager_node_count() const {
  size_t n = 0;
  for (const auto& s : steps_) n += s->kind == Step::Kind::kEager;
  return n;
}

void check_run_inputs(const Graph& graph, const std::vector<Tensor>& inputs) {
  const auto& declared = graph.inputs();
  if (inputs.size() != declared.size())
    throw ValueError(str("graph takes ", declared.size(), " inputs, got ", inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* v = declared[i];
    const Tensor& t = inputs[i];
    if (!t.defined()) throw ValueError(str("graph input ", i, " ('", v->name, "') is an undefined tensor"));
    if (t.shape() != v->meta.shape)
      throw ShapeError(str("graph input ", i, " ('", v->name, "') has shape ", shape_str(t.shape()),
                           "; the graph was built for ", shape_str(v->meta.shape)));
    if (t.dtype() != v->meta.dtype)
      throw DTypeError(str("graph input ", i, " ('", v->name, "') has dtype ", dtype_name(t.dtype()),
                           "; the graph was built for ", dtype_name(v->meta.dtype)));
  }
}

std::vector<Tensor> Executor::run(const std::vector<Tensor>& inputs) {
  check_run_inputs(*graph_, inputs);
  const auto& declared = graph_->inputs();
  std::vector<Tensor> slots(slot_count_);
  bool needs_grad = false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value* v = declared[i];
    const Tensor& t = inputs[i];
    slots[size_t(v->id)] = t.to(device_);
    needs_grad |= t.requires_grad();
  }
  for (Value* v : graph_->tensors()) {
    if (v->kind == ValueKind::kConstant) {
      slots[size_t(v->id)] = constants_[size_t(v->id)];
    } else {
      slots[size_t(v->id)] = v->tensor.to(device_);
      needs_grad |= v->tensor.requires_grad();
    }
  }
  // Under a tracer, or for outputs that carry gradients, the nodes go through
  // eager dispatch, which records them (into the trace, onto the tape).
  std::vector<Tensor> outputs = Tracer::active() != nullptr || (needs_grad && autograd::is_grad_enabled())
                                    ? run_eager(slots)
                                    : run_resolved(slots);
  apply_updates(slots, inputs);
  return outputs;
}

std::vector<Tensor> Executor::run_resolved(std::vector<Tensor>& slots) {
  autograd::NoGradGuard no_grad;
  std::vector<Tensor> in, out;
  for (const auto& step : steps_) {
    in.clear();
    for (int32_t slot : step->inputs) in.push_back(slot >= 0 ? slots[size_t(slot)] : Tensor());
    switch (step->kind) {
      case Step::Kind::kView: out = step->op->decompose(in, step->attrs); break;
      case Step::Kind::kEager: out = call(*step->op, in, step->attrs); break;
      case Step::Kind::kKernel: {
        const OpSchema& op = *step->op;
        for (Tensor& t : in) {
          if (!t.defined()) continue;
          if (op.broadcast && t.shape() != step->output_metas[0].shape) t = t.expand(step->output_metas[0].shape);
          if (!op.strided_inputs && !t.is_contiguous()) t = t.contiguous();
        }
        out.clear();
        if (step->inplace_input >= 0) {
          // Reuse only a buffer nothing else can see: this tensor alone owns its
          // storage (no alias from a view), laid out exactly as the output.
          Tensor& victim = in[size_t(step->inplace_input)];
          if (victim.storage().use_count() == 1 && victim.offset() == 0 && victim.is_contiguous() &&
              victim.shape() == step->output_metas[0].shape)
            out.push_back(victim);
        }
        for (size_t o = out.size(); o < step->output_metas.size(); ++o) {
          const TensorMeta& m = step->output_metas[o];
          int32_t target = step->output_targets.empty() ? -1 : step->output_targets[o];
          const Tensor* t = target >= 0 ? &slots[size_t(target)] : nullptr;
          if (t && t->defined() && t->is_contiguous() && t->shape() == m.shape && t->dtype() == m.dtype)
            out.push_back(*t);  // the updated state itself (plan_updates_in_place)
          else
            out.push_back(Tensor::empty(m.shape, m.dtype, device_));
        }
        launch_kernel(op, device_, *step->impls, in, out, step->abi);
        break;
      }
    }
    for (size_t i = 0; i < step->outputs.size(); ++i) slots[size_t(step->outputs[i])] = std::move(out[i]);
    for (int32_t slot : step->release) slots[size_t(slot)] = Tensor();
  }
  std::vector<Tensor> results;
  for (Value* v : graph_->outputs()) results.push_back(slots[size_t(v->id)]);
  return results;
}

std::vector<Tensor> Executor::run_eager(std::vector<Tensor>& slots) {
  for (const auto& node : graph_->nodes()) {
    std::vector<Tensor> in;
    for (Value* v : node->inputs) in.push_back(v != nullptr ? slots[size_t(v->id)] : Tensor());
    // A fused node (fused_elementwise, conv2d_act) has no gradient rule of its own:
    // call() runs it as its parts when a gradient is wanted, and they record theirs.
    std::vector<Tensor> out = call(*node->op, in, node->attrs);
    for (size_t i = 0; i < node->outputs.size(); ++i) slots[size_t(node->outputs[i]->id)] = std::move(out[i]);
  }
  std::vector<Tensor> results;
  for (Value* v : graph_->outputs()) results.push_back(slots[size_t(v->id)]);
  return results;
}

void Executor::apply_updates(const std::vector<Tensor>& slots, const std::vector<Tensor>& inputs) {
  if (graph_->updates().empty()) return;
  autograd::NoGradGuard no_grad;
  const auto& declared = graph_->inputs();
  for (const auto& u : graph_->updates()) {
    Tensor target;
    if (u.target->kind == ValueKind::kCaptured) {
      target = u.target->tensor;
    } else {
      size_t i = size_t(std::find(declared.begin(), declared.end(), u.target) - declared.begin());
      target = inputs.at(i);
    }
    const Tensor& source = slots[size_t(u.source->id)];
    if (source.defined() && source.impl().storage == target.impl().storage && source.offset() == target.offset() &&
        source.shape() == target.shape() && source.strides() == target.strides()) {
      target.impl().storage->bump_version();  // written in place by its step, as copy_ would have
      continue;
    }
    target.copy_(source);
  }
}

}  // namespace oar::graph
