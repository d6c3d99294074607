// Optimizers: parameter groups, zero_grad, and the SGD / Adam / AdamW
// steps. The updates are the fused sgd_step / adam_step ops
// (oar/optim/fused_update.h), which write the parameters' and the state's
// existing storage, so parameters keep their identity.
#include "oar/optim/optimizer.h"

#include <tuple>
#include <unordered_set>

#include "oar/autograd.h"
#include "oar/error.h"
#include "oar/optim/fused_update.h"
#include "oar/tensor_ops.h"

namespace oar::optim {

namespace {

template <class Options>
Options& options_as(OptimizerParamGroup& group, const char* optimizer) {
  auto* o = dynamic_cast<Options*>(&group.options());
  if (!o) throw ValueError(str(optimizer, ": a parameter group has options of another optimizer"));
  o->validate();
  return *o;
}

void require(bool ok, const char* optimizer, const char* what, double value) {
  if (!ok) throw ValueError(str(optimizer, ": invalid ", what, ": ", value));
}

}  // namespace

// ---- groups and the base ----

OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}
OptimizerParamGroup::OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
    : params_(std::move(params)), options_(std::move(options)) {}
OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& other)
    : params_(other.params_), options_(other.options_ ? other.options_->clone() : nullptr) {}
OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& other) {
  if (this != &other) {
    params_ = other.params_;
    options_ = other.options_ ? other.options_->clone() : nullptr;
  }
  return *this;
}

OptimizerOptions& OptimizerParamGroup::options() {
  if (!options_) throw ValueError("parameter group has no options (add it to an optimizer first)");
  return *options_;
}
const OptimizerOptions& OptimizerParamGroup::options() const {
  if (!options_) throw ValueError("parameter group has no options (add it to an optimizer first)");
  return *options_;
}

Optimizer::Optimizer(std::vector<OptimizerParamGroup> param_groups, std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  defaults_->validate();
  for (const auto& g : param_groups) add_param_group(g);
}

Optimizer::~Optimizer() = default;

void Optimizer::add_param_group(const OptimizerParamGroup& group) {
  std::unordered_set<const TensorImpl*> seen;
  for (const auto& g : param_groups_)
    for (const auto& p : g.params()) seen.insert(p.impl_ptr().get());
  for (const auto& p : group.params()) {
    if (!p.defined()) throw ValueError("optimizer: a parameter is an undefined tensor");
    if (!p.is_leaf()) throw ValueError("optimizer: can't optimize a non-leaf tensor");
    if (!seen.insert(p.impl_ptr().get()).second)
      throw ValueError("optimizer: some parameters appear in more than one parameter group");
  }
  OptimizerParamGroup added(group.params(), group.has_options() ? group.options().clone() : defaults_->clone());
  added.options().validate();
  param_groups_.push_back(std::move(added));
}

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& g : param_groups_)
    for (auto& p : g.params()) {
      Tensor grad = p.grad();
      if (!grad.defined()) continue;
      if (set_to_none) {
        p.set_grad(Tensor());
      } else {
        autograd::NoGradGuard no_grad;
        grad.copy_(Tensor::zeros({}, grad.dtype(), grad.device()));
      }
    }
}

size_t Optimizer::size() const {
  size_t n = 0;
  for (const auto& g : param_groups_) n += g.params().size();
  return n;
}

Tensor Optimizer::run_closure(const LossClosure& closure) {
  if (!closure) return Tensor();
  autograd::GradModeGuard enable(true);
  return closure();
}

// ---- SGD ----

void SGDOptions::validate() const {
  require(lr_ >= 0, "SGD", "learning rate", lr_);
  require(momentum_ >= 0, "SGD", "momentum value", momentum_);
  require(weight_decay_ >= 0, "SGD", "weight_decay value", weight_decay_);
  if (nesterov_ && (momentum_ <= 0 || dampening_ != 0))
    throw ValueError("SGD: Nesterov momentum requires a momentum and zero dampening");
}

SGD::SGD(std::vector<OptimizerParamGroup> groups, SGDOptions defaults)
    : Optimizer(std::move(groups), std::make_unique<SGDOptions>(defaults)) {}
SGD::SGD(std::vector<Tensor> params, SGDOptions defaults)
    : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

Tensor SGD::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  autograd::NoGradGuard no_grad;
  for (auto& group : param_groups_) {
    const auto& o = options_as<SGDOptions>(group, "SGD");
    std::vector<Tensor> params, grads, buffers;
    std::vector<bool> fresh;
    for (Tensor& param : group.params()) {
      Tensor grad = param.grad();
      if (!grad.defined()) continue;
      params.push_back(param);
      grads.push_back(grad);
      if (o.momentum() != 0) {
        Tensor& buf = momentum_buffers_[param.impl_ptr().get()];
        fresh.push_back(!buf.defined());
        if (!buf.defined()) buf = zeros_like(param.detach());
        buffers.push_back(buf);
      }
    }
    if (params.empty()) continue;
    SGDUpdate u;
    u.lr = o.lr(), u.momentum = o.momentum(), u.dampening = o.dampening(), u.weight_decay = o.weight_decay();
    u.nesterov = o.nesterov();
    sgd_update(params, grads, buffers, fresh, u);
  }
  return loss;
}

Tensor SGD::momentum_buffer(const Tensor& param) const {
  auto it = momentum_buffers_.find(param.impl_ptr().get());
  return it == momentum_buffers_.end() ? Tensor() : it->second;
}

// ---- Adam / AdamW ----

void AdamOptions::validate() const {
  require(lr_ >= 0, "Adam", "learning rate", lr_);
  require(eps_ >= 0, "Adam", "epsilon value", eps_);
  require(std::get<0>(betas_) >= 0 && std::get<0>(betas_) < 1, "Adam", "beta parameter at index 0",
          std::get<0>(betas_));
  require(std::get<1>(betas_) >= 0 && std::get<1>(betas_) < 1, "Adam", "beta parameter at index 1",
          std::get<1>(betas_));
  require(weight_decay_ >= 0, "Adam", "weight_decay value", weight_decay_);
}

Adam::Adam(std::vector<OptimizerParamGroup> groups, std::unique_ptr<OptimizerOptions> defaults, bool decoupled)
    : Optimizer(std::move(groups), std::move(defaults)), decoupled_weight_decay_(decoupled) {}
Adam::Adam(std::vector<OptimizerParamGroup> groups, AdamOptions defaults)
    : Adam(std::move(groups), std::make_unique<AdamOptions>(defaults), false) {}
Adam::Adam(std::vector<Tensor> params, AdamOptions defaults)
    : Adam(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

AdamW::AdamW(std::vector<OptimizerParamGroup> groups, AdamWOptions defaults)
    : Adam(std::move(groups), std::make_unique<AdamWOptions>(defaults), true) {}
AdamW::AdamW(std::vector<Tensor> params, AdamWOptions defaults)
    : AdamW(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}

Tensor Adam::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  autograd::NoGradGuard no_grad;
  const char* who = decoupled_weight_decay_ ? "AdamW" : "Adam";
  for (auto& group : param_groups_) {
    const auto& o = options_as<AdamOptions>(group, who);
    std::vector<Tensor> params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs;
    std::vector<double> steps;
    for (Tensor& param : group.params()) {
      Tensor grad = param.grad();
      if (!grad.defined()) continue;
      AdamParamState& s = state_[param.impl_ptr().get()];
      Tensor p = param.detach();
      if (s.step == 0) {
        s.exp_avg = zeros_like(p);
        s.exp_avg_sq = zeros_like(p);
      }
      if (o.amsgrad() && !s.max_exp_avg_sq.defined()) s.max_exp_avg_sq = zeros_like(p);
      steps.push_back(double(++s.step));
      params.push_back(param);
      grads.push_back(grad);
      exp_avgs.push_back(s.exp_avg);
      exp_avg_sqs.push_back(s.exp_avg_sq);
      if (o.amsgrad()) max_exp_avg_sqs.push_back(s.max_exp_avg_sq);
    }
    if (params.empty()) continue;
    AdamUpdate u;
    std::tie(u.beta1, u.beta2) = o.betas();
    u.lr = o.lr(), u.eps = o.eps(), u.weight_decay = o.weight_decay(), u.amsgrad = o.amsgrad();
    u.decoupled_weight_decay = decoupled_weight_decay_;
    adam_update(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, {}, u);
  }
  return loss;
}

const AdamParamState* Adam::state(const Tensor& param) const {
  auto it = state_.find(param.impl_ptr().get());
  return it == state_.end() ? nullptr : &it->second;
}

}  // namespace oar::optim
