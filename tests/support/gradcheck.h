// Gradient checks: autograd's gradients against central finite differences
// in f64 (gradcheck), and second derivatives by checking the gradient of a
// gradient the same way (gradgradcheck).
#pragma once

#include <functional>

#include "oar/autograd.h"
#include "test_util.h"

namespace oar::testing {

using TensorFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

namespace detail {
// sum_k sum(outputs_k * weights_k) over the floating outputs.
inline Tensor weighted_sum(const std::vector<Tensor>& outs, const std::vector<Tensor>& weights) {
  Tensor total;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!outs[k].defined() || !is_floating(outs[k].dtype())) continue;
    Tensor term = call1("sum", {call1("mul", {outs[k], weights[k]})});
    total = total.defined() ? call1("add", {total, term}) : term;
  }
  return total;
}

inline std::vector<Tensor> fixed_weights(const std::vector<Tensor>& outs, uint32_t seed) {
  std::vector<Tensor> w;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!outs[k].defined() || !is_floating(outs[k].dtype())) {
      w.emplace_back();
      continue;
    }
    auto v = random_values(outs[k].numel(), -1, 1, seed + uint32_t(k), DType::f64);
    w.push_back(make_tensor(v, outs[k].shape(), outs[k].dtype(), outs[k].device()));
  }
  return w;
}
}  // namespace detail

// `differentiable[i]`: whether input i is checked (others are passed as given).
inline void gradcheck(const TensorFn& f, const std::vector<Tensor>& inputs, const std::vector<bool>& differentiable,
                      const std::string& what, double eps = 1e-6, double atol = 1e-5, double rtol = 1e-4) {
  SCOPED_TRACE(what);
  std::vector<Tensor> leaves;
  std::vector<size_t> index;
  std::vector<Tensor> args = inputs;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!differentiable[i]) continue;
    args[i] = args[i].detach().clone();
    args[i].set_requires_grad(true);
    leaves.push_back(args[i]);
    index.push_back(i);
  }
  std::vector<Tensor> outs = f(args);
  std::vector<Tensor> weights = detail::fixed_weights(outs, 99);
  Tensor loss = detail::weighted_sum(outs, weights);
  ASSERT_TRUE(loss.defined()) << "function has no floating output";
  std::vector<Tensor> analytic = autograd::grad({loss}, leaves, {}, false, false, /*allow_unused=*/true);
  autograd::NoGradGuard no_grad;
  for (size_t k = 0; k < leaves.size(); ++k) {
    size_t i = index[k];
    std::vector<double> base = host_values(inputs[i]);
    std::vector<double> numeric(base.size());
    for (size_t j = 0; j < base.size(); ++j) {
      auto eval = [&](double delta) {
        std::vector<double> v = base;
        v[j] += delta;
        std::vector<Tensor> a = inputs;
        a[i] = make_tensor(v, inputs[i].shape(), inputs[i].dtype(), inputs[i].device());
        return detail::weighted_sum(f(a), weights).item();
      };
      numeric[j] = (eval(eps) - eval(-eps)) / (2 * eps);
    }
    std::vector<double> got = analytic[k].defined() ? host_values(analytic[k]) : std::vector<double>(base.size(), 0);
    expect_close(got, numeric, rtol, atol, str(what, ": d/d input ", i));
  }
}

// Checks second derivatives: the gradient of sum(grad_i * v_i) w.r.t. the inputs.
inline void gradgradcheck(const TensorFn& f, const std::vector<Tensor>& inputs, const std::vector<bool>& differentiable,
                          const std::string& what) {
  TensorFn first_grads = [&](const std::vector<Tensor>& args) {
    std::vector<Tensor> leaves;
    for (size_t i = 0; i < args.size(); ++i)
      if (differentiable[i]) leaves.push_back(args[i]);
    std::vector<Tensor> outs = f(args);
    Tensor loss = detail::weighted_sum(outs, detail::fixed_weights(outs, 7));
    auto g = autograd::grad({loss}, leaves, {}, true, /*create_graph=*/true, true);
    std::vector<Tensor> result;
    for (auto& t : g) result.push_back(t.defined() ? t : Tensor());
    return result;
  };
  // Finite differences of first_grads need grad mode on; wrap so each evaluation
  // builds its own graph from fresh leaves.
  TensorFn wrapped = [&](const std::vector<Tensor>& args) {
    autograd::GradModeGuard on(true);
    std::vector<Tensor> a = args;
    for (size_t i = 0; i < a.size(); ++i)
      if (differentiable[i] && !a[i].requires_grad()) {
        a[i] = a[i].detach();
        a[i].set_requires_grad(true);
      }
    return first_grads(a);
  };
  gradcheck(wrapped, inputs, differentiable, what + " (second order)", 1e-5, 1e-4, 1e-3);
}

}  // namespace oar::testing
