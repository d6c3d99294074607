// The fused optimizer updates as both frontends call them: lists of
// parameters and their state, grouped by device and dtype into calls of the
// catalog's sgd_step and adam_step ops, which update them in place (one
// kernel launch list per group instead of about ten elementwise ops per
// parameter). oar::optim's SGD/Adam/AdamW and Python's oar.optim use these,
// so the update rule lives once, in the optimizer kernel family
// (kernel_primitives/include/oar/kp/family/optimizer.kp).
#pragma once

#include <vector>

#include "oar/tensor.h"

namespace oar::optim {

struct SGDUpdate {
  double lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
  // f32 tensors [lr] or [lr, momentum] read instead of those fields, one per
  // device (a training graph captures them, so a schedule reaches the graph).
  std::vector<Tensor> hyper_tensors;
};

// params[k] -= lr * update from grads[k]; with momentum, momentum_buffers[k]
// is updated too, and fresh[k] says it was just created (set to the gradient).
void sgd_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& momentum_buffers, const std::vector<bool>& fresh, const SGDUpdate& u);

struct AdamUpdate {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool amsgrad = false, maximize = false, decoupled_weight_decay = false;
  std::vector<Tensor> hyper_tensors;  // as SGDUpdate's: [lr], [lr, beta1] or [lr, beta1, beta2]
};

// Adam (or AdamW) on params[k] with its moments; max_exp_avg_sqs only with
// amsgrad. The step counts (this step included) are `steps`, or when it is
// empty the one-element f32 tensors `step_tensors` (training graphs).
void adam_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                 const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& steps,
                 const std::vector<Tensor>& step_tensors, const AdamUpdate& u);

}  // namespace oar::optim
