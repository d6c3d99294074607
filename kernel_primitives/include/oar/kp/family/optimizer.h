// The optimizer family: multi-tensor SGD (momentum, dampening, Nesterov,
// weight decay) and Adam/AdamW (AMSGrad, maximize) updates, written once
// (optimizer.kp). One call updates a list of parameters and their state in
// place: the frontends (oar.optim, oar::optim) and training graphs pass the
// state tensors as the outputs. A graph executor that passes fresh outputs
// gets them as copies of the inputs, then updated.
//
// Inputs (runtime/src/catalog/optimizer.cpp declares them): 0 = none
// (attributes) or an f32 tensor of the hyperparameters a schedule changes:
// [lr], or [lr, momentum] (sgd_step) / [lr, beta1[, beta2]] (adam_step), then
// lists of n tensors each: sgd_step params, grads[, momentum_buffers];
// adam_step params, grads, exp_avgs, exp_avg_sqs[, max_exp_avg_sqs][, steps
// as one-element f32 tensors when the attribute "steps" is empty]. Outputs:
// the updated lists, in that order, without grads and steps.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "oar/kp/family/register.h"

namespace oar::kp::family {

template <class TT, class IT, class ACC>
struct OptimizerKernels {
  OAR_KP_FAMILY_TYPES(TT, IT, ACC)
#include "oar/kp/family/optimizer.kp"
};

template <class B>
struct Optimizer {
  // Tensor k of input list `list` (after the learning rate) and of output list `list`.
  struct Lists {
    const sdk::KernelArgs& a;
    int n;
    const oar_tensor_view& in(int list, int k) const { return a.input(1 + list * n + k); }
    const oar_tensor_view& out(int list, int k) const { return a.output(list * n + k); }
  };

  static Lists lists(const sdk::KernelArgs& a, int count) {
    const int tensors = a.num_inputs() - 1;
    if (count <= 0 || tensors % count != 0)
      sdk::fail(OAR_STATUS_INVALID_ARGUMENT, std::string(a.context().op_name) + ": " + std::to_string(tensors) +
                                                 " tensors do not form " + std::to_string(count) + " lists");
    return {a, tensors / count};
  }

  // Element i of a contiguous f32 tensor in host memory (host_memory<B>() only).
  static float host_float(const oar_tensor_view& v, int64_t i) {
    return static_cast<const float*>(v.data)[v.offset + i];
  }

  static Launch launch_for(const sdk::KernelArgs& a, const oar_tensor_view& param) {
    Launch L;
    L.family = "optimizer";
    L.t = param.dtype;
    L.lanes = sdk::numel(param);
    L.work_per_lane = 1;
    if (a.has_input(0)) L.p[5] = operand(a.input(0)), L.A.i[3] = int(sdk::numel(a.input(0)));
    L.A.f[0] = param_bits(a.attr_float("lr"));
    return L;
  }

  // The operand to update: `out` itself, which starts as a copy of `in`
  // unless the caller passed the input as its own output.
  static Operand updated(B& b, const oar_tensor_view& out, const oar_tensor_view& in) {
    if (out.data != in.data || out.offset != in.offset) {
      Launch C;
      C.family = "optimizer";
      C.t = out.dtype;
      C.lanes = sdk::numel(out);
      C.p[0] = operand(out), C.p[1] = operand(in);
      OAR_KP_LAUNCH(OptimizerKernels, kFloat, b, C, optim_copy);
    }
    return operand(out);
  }

  static void sgd(B& b) {
    const sdk::KernelArgs& a = b.args();
    const double momentum = a.attr_float("momentum");
    const bool has_buffer = momentum != 0;
    const Lists l = lists(a, has_buffer ? 3 : 2);
    for (int k = 0; k < l.n; ++k) {
      if (sdk::numel(l.in(0, k)) == 0) continue;
      Launch L = launch_for(a, l.in(0, k));
      L.p[0] = updated(b, l.out(0, k), l.in(0, k));
      L.p[1] = operand(l.in(1, k));
      if (has_buffer) L.p[2] = updated(b, l.out(1, k), l.in(2, k));
      L.A.i[0] = has_buffer, L.A.i[1] = a.attr_bool("maximize"), L.A.i[2] = a.attr_bool("nesterov");
      L.A.i[5] = a.attr_bool("init_buffers");
      L.A.f[1] = param_bits(momentum), L.A.f[2] = param_bits(a.attr_float("dampening"));
      L.A.f[3] = param_bits(a.attr_float("weight_decay"));
      OAR_KP_LAUNCH(OptimizerKernels, kFloat, b, L, sgd_update);
    }
  }

  static void adam(B& b) {
    const sdk::KernelArgs& a = b.args();
    const bool amsgrad = a.attr_bool("amsgrad");
    const std::vector<double> steps = a.attr_floats("steps");
    const bool step_tensors = steps.empty();
    const Lists l = lists(a, 4 + amsgrad + step_tensors);
    const double beta1 = a.attr_float("beta1"), beta2 = a.attr_float("beta2");
    for (int k = 0; k < l.n; ++k) {
      if (sdk::numel(l.in(0, k)) == 0) continue;
      Launch L = launch_for(a, l.in(0, k));
      L.p[0] = updated(b, l.out(0, k), l.in(0, k));
      L.p[1] = operand(l.in(1, k));
      L.p[2] = updated(b, l.out(1, k), l.in(2, k));
      L.p[3] = updated(b, l.out(2, k), l.in(3, k));
      if (amsgrad) L.p[4] = updated(b, l.out(3, k), l.in(4, k));
      const oar_tensor_view* step = step_tensors ? &l.in(4 + amsgrad, k) : nullptr;
      if (step != nullptr && !host_memory<B>()) {
        L.p[6] = operand(*step);  // each lane raises the betas to it (a device scalar)
        L.A.i[4] = 1;
      } else {
        // On the host in double, as PyTorch computes them in Python (a step
        // tensor in host memory read once, not two powers per lane).
        const double t = step ? double(host_float(*step, 0)) : steps[size_t(k)];
        double b1 = beta1, b2 = beta2;  // or the betas the kernel reads from the hyperparameter tensor
        if (step && L.A.i[3] > 1) b1 = host_float(a.input(0), 1);
        if (step && L.A.i[3] > 2) b2 = host_float(a.input(0), 2);
        L.A.f[5] = param_bits(1 - std::pow(b1, t));
        L.A.f[6] = param_bits(std::sqrt(1 - std::pow(b2, t)));
      }
      L.A.i[0] = amsgrad, L.A.i[1] = a.attr_bool("maximize"), L.A.i[2] = a.attr_bool("decoupled_weight_decay");
      L.A.f[1] = param_bits(beta1), L.A.f[2] = param_bits(beta2);
      L.A.f[3] = param_bits(a.attr_float("eps")), L.A.f[4] = param_bits(a.attr_float("weight_decay"));
      OAR_KP_LAUNCH(OptimizerKernels, kFloat, b, L, adam_update);
    }
  }

  static oar_status_t register_ops(Registrar& r) {
    r.add("sgd_step", "T", DTypeSet::kFloat, entry<B, &sgd>);
    return r.add("adam_step", "T", DTypeSet::kFloat, entry<B, &adam>);
  }
};

}  // namespace oar::kp::family
