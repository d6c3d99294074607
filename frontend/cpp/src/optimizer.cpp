// Optimizers: parameter groups, zero_grad, and the SGD / Adam / AdamW
// updates. Updates build new tensors with ops under NoGradGuard and copy_
// them into the parameter's storage, so parameters keep their identity.
#include "oar/optim/optimizer.h"

#include <cmath>
#include <unordered_set>

#include "oar/autograd.h"
#include "oar/error.h"
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
    for (Tensor& param : group.params()) {
      Tensor grad = param.grad();
      if (!grad.defined()) continue;
      Tensor p = param.detach();
      Tensor g = grad;
      if (o.weight_decay() != 0) g = g + p * o.weight_decay();
      if (o.momentum() != 0) {
        Tensor& buf = momentum_buffers_[param.impl_ptr().get()];
        buf = buf.defined() ? buf * o.momentum() + g * (1.0 - o.dampening()) : g.clone();
        g = o.nesterov() ? g + buf * o.momentum() : buf;
      }
      param.copy_(p - g * o.lr());
    }
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
    const auto [beta1, beta2] = o.betas();
    for (Tensor& param : group.params()) {
      Tensor grad = param.grad();
      if (!grad.defined()) continue;
      Tensor p = param.detach();
      Tensor g = grad;
      AdamParamState& s = state_[param.impl_ptr().get()];
      if (s.step == 0) {
        s.exp_avg = zeros_like(p);
        s.exp_avg_sq = zeros_like(p);
        if (o.amsgrad()) s.max_exp_avg_sq = zeros_like(p);
      }
      ++s.step;
      if (o.weight_decay() != 0) {
        if (decoupled_weight_decay_) p = p * (1.0 - o.lr() * o.weight_decay());
        else g = g + p * o.weight_decay();
      }
      s.exp_avg = s.exp_avg * beta1 + g * (1.0 - beta1);
      s.exp_avg_sq = s.exp_avg_sq * beta2 + square(g) * (1.0 - beta2);
      const double bias_correction1 = 1.0 - std::pow(beta1, double(s.step));
      const double bias_correction2 = 1.0 - std::pow(beta2, double(s.step));
      Tensor second = s.exp_avg_sq;
      if (o.amsgrad()) {
        if (!s.max_exp_avg_sq.defined()) s.max_exp_avg_sq = zeros_like(p);
        s.max_exp_avg_sq = maximum(s.max_exp_avg_sq, s.exp_avg_sq);
        second = s.max_exp_avg_sq;
      }
      Tensor denom = sqrt(second) / std::sqrt(bias_correction2) + o.eps();
      param.copy_(p - (s.exp_avg / denom) * (o.lr() / bias_correction1));
    }
  }
  return loss;
}

const AdamParamState* Adam::state(const Tensor& param) const {
  auto it = state_.find(param.impl_ptr().get());
  return it == state_.end() ? nullptr : &it->second;
}

}  // namespace oar::optim
