// Groups an optimizer's parameters by device and dtype and calls the fused
// update ops (see oar/optim/fused_update.h).
#include "oar/optim/fused_update.h"

#include <map>
#include <utility>

#include "oar/autograd.h"
#include "oar/dispatch.h"
#include "oar/error.h"
#include "oar/op_registry.h"

namespace oar::optim {

namespace {

// Parameters that one call updates: same device, dtype and `extra` key.
std::vector<std::vector<size_t>> groups_of(const std::vector<Tensor>& params, const std::vector<int>& extra) {
  std::map<std::tuple<std::string, int, int>, size_t> index;
  std::vector<std::vector<size_t>> groups;
  for (size_t k = 0; k < params.size(); ++k) {
    auto key = std::make_tuple(params[k].device().str(), int(params[k].dtype()), extra.empty() ? 0 : extra[k]);
    auto [it, added] = index.emplace(key, groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(k);
  }
  return groups;
}

Tensor hyper_for(const std::vector<Tensor>& hyper_tensors, Device device, const char* op) {
  if (hyper_tensors.empty()) return Tensor();
  for (const Tensor& t : hyper_tensors)
    if (t.device() == device) return t;
  throw DeviceError(str(op, ": no hyperparameter tensor on ", device.str(), ", where parameters are"));
}

// The attribute for hyperparameter k: a fixed stand-in when the tensor
// carries it, since a graph must not record the value a scheduler changes.
double attr_value(const Tensor& hyper, int64_t k, double value, double stand_in) {
  return hyper.defined() && hyper.numel() > k ? stand_in : value;
}

// Runs `op` with outputs = the state it updates: in place, or (when one of
// them is not contiguous, which the kernels do not write) through new
// tensors copied back.
void update(const OpSchema& op, const std::vector<Tensor>& inputs, const Attrs& attrs,
            const std::vector<Tensor>& outputs) {
  autograd::NoGradGuard no_grad;
  bool dense = true;
  for (const Tensor& t : outputs) dense = dense && t.is_contiguous();
  if (dense) {
    call_out(op, inputs, attrs, outputs);
    // One in-place write each, as PyTorch counts it (autograd checks saved tensors with it).
    for (const Tensor& t : outputs) t.storage()->bump_version();
    return;
  }
  std::vector<Tensor> results = call(op, inputs, attrs);
  for (size_t i = 0; i < outputs.size(); ++i) outputs[i].detach().copy_(results[i]);
}

void require_lengths(const char* op, size_t n, std::initializer_list<std::pair<const char*, size_t>> lists) {
  for (const auto& [name, size] : lists)
    if (size != n) throw ValueError(str(op, ": ", size, " ", name, " for ", n, " parameters"));
}

}  // namespace

void sgd_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                const std::vector<Tensor>& momentum_buffers, const std::vector<bool>& fresh, const SGDUpdate& u) {
  static const OpSchema& op = OpRegistry::instance().get("sgd_step");
  const bool momentum = u.momentum != 0;
  require_lengths("sgd_step", params.size(), {{"grads", grads.size()}});
  if (momentum) require_lengths("sgd_step", params.size(), {{"momentum buffers", momentum_buffers.size()}, {"fresh flags", fresh.size()}});
  std::vector<int> first;
  if (momentum) first.assign(fresh.begin(), fresh.end());
  for (const auto& group : groups_of(params, first)) {
    const Device device = params[group[0]].device();
    std::vector<Tensor> in{hyper_for(u.hyper_tensors, device, "sgd_step")}, out;
    const double lr = attr_value(in[0], 0, u.lr, 0.0);
    // Zero or not decides whether there are buffers, so the stand-in keeps that.
    const double momentum_attr = attr_value(in[0], 1, u.momentum, momentum ? 1.0 : 0.0);
    for (size_t k : group) in.push_back(params[k].detach()), out.push_back(params[k].detach());
    for (size_t k : group) in.push_back(grads[k]);
    if (momentum)
      for (size_t k : group) in.push_back(momentum_buffers[k]), out.push_back(momentum_buffers[k]);
    Attrs attrs{{"lr", lr},
                {"momentum", momentum_attr},
                {"dampening", u.dampening},
                {"weight_decay", u.weight_decay},
                {"nesterov", u.nesterov},
                {"maximize", u.maximize},
                {"init_buffers", momentum && bool(fresh[group[0]])}};
    update(op, in, attrs, out);
  }
}

void adam_update(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                 const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
                 const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<double>& steps,
                 const std::vector<Tensor>& step_tensors, const AdamUpdate& u) {
  static const OpSchema& op = OpRegistry::instance().get("adam_step");
  const size_t n = params.size();
  require_lengths("adam_step", n, {{"grads", grads.size()}, {"exp_avgs", exp_avgs.size()},
                                   {"exp_avg_sqs", exp_avg_sqs.size()}});
  if (u.amsgrad) require_lengths("adam_step", n, {{"max_exp_avg_sqs", max_exp_avg_sqs.size()}});
  require_lengths("adam_step", n, {{steps.empty() ? "step tensors" : "steps", steps.empty() ? step_tensors.size() : steps.size()}});
  for (const auto& group : groups_of(params, {})) {
    const Device device = params[group[0]].device();
    std::vector<Tensor> in{hyper_for(u.hyper_tensors, device, "adam_step")}, out;
    const double lr = attr_value(in[0], 0, u.lr, 0.0);  // as in sgd_update
    std::vector<double> group_steps;
    for (size_t k : group) in.push_back(params[k].detach()), out.push_back(params[k].detach());
    for (size_t k : group) in.push_back(grads[k]);
    for (size_t k : group) in.push_back(exp_avgs[k]), out.push_back(exp_avgs[k]);
    for (size_t k : group) in.push_back(exp_avg_sqs[k]), out.push_back(exp_avg_sqs[k]);
    if (u.amsgrad)
      for (size_t k : group) in.push_back(max_exp_avg_sqs[k]), out.push_back(max_exp_avg_sqs[k]);
    for (size_t k : group) {
      if (steps.empty()) in.push_back(step_tensors[k]);
      else group_steps.push_back(steps[k]);
    }
    Attrs attrs{{"lr", lr},
                {"beta1", attr_value(in[0], 1, u.beta1, 0.5)},
                {"beta2", attr_value(in[0], 2, u.beta2, 0.5)},
                {"eps", u.eps},
                {"weight_decay", u.weight_decay},
                {"amsgrad", u.amsgrad},
                {"maximize", u.maximize},
                {"decoupled_weight_decay", u.decoupled_weight_decay},
                {"steps", group_steps}};
    update(op, in, attrs, out);
  }
}

}  // namespace oar::optim
