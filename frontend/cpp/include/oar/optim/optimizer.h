// oar::optim: optimizers with torch::optim's API and PyTorch's update
// formulas. An optimizer holds parameter groups, each with its own options
// (a group without options takes a copy of the defaults). step() reads each
// parameter's .grad and writes the new value into the parameter's existing
// storage without recording gradients, so the parameter tensors the model
// holds stay the same objects.
//
//   optim::SGD opt(model->parameters(), optim::SGDOptions(0.1).momentum(0.9));
//   opt.zero_grad(); loss.backward(); opt.step();
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "oar/tensor.h"

namespace oar::optim {

class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
  // Throws ValueError for out-of-range hyper-parameters.
  virtual void validate() const = 0;
};

class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params);  // NOLINT: a plain list is a group
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options);
  OptimizerParamGroup(const OptimizerParamGroup& other);
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other);
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;

  bool has_options() const { return options_ != nullptr; }
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

class Optimizer {
 public:
  // Re-evaluates the model and returns the loss (gradients enabled while it runs).
  using LossClosure = std::function<Tensor()>;

  Optimizer(std::vector<OptimizerParamGroup> param_groups, std::unique_ptr<OptimizerOptions> defaults);
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // Parameters must be leaves and appear in only one group (ValueError otherwise).
  void add_param_group(const OptimizerParamGroup& group);
  // One update of every parameter that has a gradient; returns the closure's loss.
  virtual Tensor step(LossClosure closure = nullptr) = 0;
  // Clears .grad (set_to_none) or zeroes it in place.
  void zero_grad(bool set_to_none = true);

  std::vector<OptimizerParamGroup>& param_groups() { return param_groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const { return param_groups_; }
  OptimizerOptions& defaults() { return *defaults_; }
  // Number of parameters over all groups.
  size_t size() const;

 protected:
  Tensor run_closure(const LossClosure& closure);

  std::vector<OptimizerParamGroup> param_groups_;
  std::unique_ptr<OptimizerOptions> defaults_;
};

// ---- SGD ----

class SGDOptions : public OptimizerOptions {
 public:
  explicit SGDOptions(double lr) : lr_(lr) {}
  SGDOptions& lr(double v) { lr_ = v; return *this; }
  SGDOptions& momentum(double v) { momentum_ = v; return *this; }
  SGDOptions& dampening(double v) { dampening_ = v; return *this; }
  SGDOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  SGDOptions& nesterov(bool v) { nesterov_ = v; return *this; }
  double lr() const { return lr_; }
  double momentum() const { return momentum_; }
  double dampening() const { return dampening_; }
  double weight_decay() const { return weight_decay_; }
  bool nesterov() const { return nesterov_; }

  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<SGDOptions>(*this); }
  double get_lr() const override { return lr_; }
  void set_lr(double v) override { lr_ = v; }
  void validate() const override;

 private:
  double lr_, momentum_ = 0, dampening_ = 0, weight_decay_ = 0;
  bool nesterov_ = false;
};

// g = grad + wd * p; buf = g (first step) else momentum * buf + (1 - dampening) * g;
// g = g + momentum * buf (nesterov) or buf; p -= lr * g.
class SGD : public Optimizer {
 public:
  SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults);
  SGD(std::vector<Tensor> params, SGDOptions defaults);
  Tensor step(LossClosure closure = nullptr) override;
  // The momentum buffer of a parameter (undefined before its first momentum step).
  Tensor momentum_buffer(const Tensor& param) const;

 private:
  std::unordered_map<const TensorImpl*, Tensor> momentum_buffers_;
};

// ---- Adam / AdamW ----

class AdamOptions : public OptimizerOptions {
 public:
  explicit AdamOptions(double lr = 1e-3) : lr_(lr) {}
  AdamOptions& lr(double v) { lr_ = v; return *this; }
  AdamOptions& betas(std::tuple<double, double> v) { betas_ = v; return *this; }
  AdamOptions& eps(double v) { eps_ = v; return *this; }
  AdamOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  AdamOptions& amsgrad(bool v) { amsgrad_ = v; return *this; }
  double lr() const { return lr_; }
  std::tuple<double, double> betas() const { return betas_; }
  double eps() const { return eps_; }
  double weight_decay() const { return weight_decay_; }
  bool amsgrad() const { return amsgrad_; }

  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<AdamOptions>(*this); }
  double get_lr() const override { return lr_; }
  void set_lr(double v) override { lr_ = v; }
  void validate() const override;

 protected:
  double lr_;
  std::tuple<double, double> betas_{0.9, 0.999};
  double eps_ = 1e-8, weight_decay_ = 0;
  bool amsgrad_ = false;
};

// AdamW's options: Adam's, with weight_decay defaulting to 1e-2.
class AdamWOptions : public AdamOptions {
 public:
  explicit AdamWOptions(double lr = 1e-3) : AdamOptions(lr) { weight_decay_ = 1e-2; }
  AdamWOptions& lr(double v) { lr_ = v; return *this; }
  AdamWOptions& betas(std::tuple<double, double> v) { betas_ = v; return *this; }
  AdamWOptions& eps(double v) { eps_ = v; return *this; }
  AdamWOptions& weight_decay(double v) { weight_decay_ = v; return *this; }
  AdamWOptions& amsgrad(bool v) { amsgrad_ = v; return *this; }
  using AdamOptions::lr;
  using AdamOptions::betas;
  using AdamOptions::eps;
  using AdamOptions::weight_decay;
  using AdamOptions::amsgrad;
  std::unique_ptr<OptimizerOptions> clone() const override { return std::make_unique<AdamWOptions>(*this); }
};

// Per-parameter state shared by Adam and AdamW.
struct AdamParamState {
  int64_t step = 0;
  Tensor exp_avg, exp_avg_sq, max_exp_avg_sq;
};

// Adam: g = grad + wd * p; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
// p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)  (v -> max(v) with amsgrad).
class Adam : public Optimizer {
 public:
  Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults);
  Adam(std::vector<Tensor> params, AdamOptions defaults);
  Tensor step(LossClosure closure = nullptr) override;
  // Null before the parameter's first update.
  const AdamParamState* state(const Tensor& param) const;

 protected:
  Adam(std::vector<OptimizerParamGroup> param_groups, std::unique_ptr<OptimizerOptions> defaults, bool decoupled);

 private:
  bool decoupled_weight_decay_;
  std::unordered_map<const TensorImpl*, AdamParamState> state_;
};

// AdamW: decoupled weight decay, p *= 1 - lr * wd, then Adam's update without L2.
class AdamW : public Adam {
 public:
  AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults);
  AdamW(std::vector<Tensor> params, AdamWOptions defaults);
};

}  // namespace oar::optim
