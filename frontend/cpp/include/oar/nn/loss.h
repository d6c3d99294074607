// Loss modules of oar::nn: CrossEntropyLoss, NLLLoss and MSELoss, called as
// loss_fn(input, target) with torch.nn's reduction ("mean", "sum", "none")
// and ignore_index / label_smoothing arguments.
#pragma once

#include <string>

#include "oar/functional.h"
#include "oar/nn/module.h"

namespace oar::nn {

// Base of two-input modules: operator()(input, target) reaches forward(input, target).
class LossModule : public Module {
 public:
  explicit LossModule(std::string reduction);
  using Module::forward;
  virtual Tensor forward(const Tensor& input, const Tensor& target) = 0;
  std::string reduction;

 protected:
  Tensor forward_inputs(const std::vector<Tensor>& inputs) override;
};

class CrossEntropyLossImpl : public LossModule {
 public:
  explicit CrossEntropyLossImpl(std::string reduction = "mean", int64_t ignore_index = -100,
                                double label_smoothing = 0.0);
  using LossModule::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  int64_t ignore_index;
  double label_smoothing;
};
using CrossEntropyLoss = ModuleHolder<CrossEntropyLossImpl>;

class NLLLossImpl : public LossModule {
 public:
  explicit NLLLossImpl(std::string reduction = "mean", int64_t ignore_index = -100);
  using LossModule::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
  int64_t ignore_index;
};
using NLLLoss = ModuleHolder<NLLLossImpl>;

class MSELossImpl : public LossModule {
 public:
  explicit MSELossImpl(std::string reduction = "mean");
  using LossModule::forward;
  Tensor forward(const Tensor& input, const Tensor& target) override;
};
using MSELoss = ModuleHolder<MSELossImpl>;

}  // namespace oar::nn
