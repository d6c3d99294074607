// oar._C.sgd_update / adam_update: the fused optimizer updates
// (oar/optim/fused_update.h) that oar.optim's SGD, Adam and AdamW call with
// lists of parameters and state; see frontend/python/oar/optim/.
#include "bindings.h"

#include "oar/optim/fused_update.h"

namespace oar::py {

void bind_optim(nb::module_& m) {
  m.def(
      "sgd_update",
      [](const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& buffers,
         const std::vector<bool>& fresh, double lr, double momentum, double dampening, double weight_decay,
         bool nesterov, bool maximize, const std::vector<Tensor>& hyper_tensors) {
        optim::SGDUpdate u;
        u.lr = lr, u.momentum = momentum, u.dampening = dampening, u.weight_decay = weight_decay;
        u.nesterov = nesterov, u.maximize = maximize, u.hyper_tensors = hyper_tensors;
        optim::sgd_update(params, grads, buffers, fresh, u);
      },
      nb::arg("params"), nb::arg("grads"), nb::arg("momentum_buffers"), nb::arg("fresh"), nb::arg("lr"),
      nb::arg("momentum"), nb::arg("dampening"), nb::arg("weight_decay"), nb::arg("nesterov"), nb::arg("maximize"),
      nb::arg("hyper_tensors"));
  m.def(
      "adam_update",
      [](const std::vector<Tensor>& params, const std::vector<Tensor>& grads, const std::vector<Tensor>& exp_avgs,
         const std::vector<Tensor>& exp_avg_sqs, const std::vector<Tensor>& max_exp_avg_sqs,
         const std::vector<double>& steps, const std::vector<Tensor>& step_tensors, double lr, double beta1,
         double beta2, double eps, double weight_decay, bool amsgrad, bool maximize, bool decoupled,
         const std::vector<Tensor>& hyper_tensors) {
        optim::AdamUpdate u;
        u.lr = lr, u.beta1 = beta1, u.beta2 = beta2, u.eps = eps, u.weight_decay = weight_decay;
        u.amsgrad = amsgrad, u.maximize = maximize, u.decoupled_weight_decay = decoupled, u.hyper_tensors = hyper_tensors;
        optim::adam_update(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, step_tensors, u);
      },
      nb::arg("params"), nb::arg("grads"), nb::arg("exp_avgs"), nb::arg("exp_avg_sqs"), nb::arg("max_exp_avg_sqs"),
      nb::arg("steps"), nb::arg("step_tensors"), nb::arg("lr"), nb::arg("beta1"), nb::arg("beta2"), nb::arg("eps"),
      nb::arg("weight_decay"), nb::arg("amsgrad"), nb::arg("maximize"), nb::arg("decoupled"), nb::arg("hyper_tensors"));
}

}  // namespace oar::py
