// grad/<op>/<dtype>/<example> and gradgrad/...: autograd on the device
// against central finite differences computed on the CPU in f64, for every
// public op with a gradient rule or a decomposition (a composite), on its
// catalog examples. The first order checks d(sum(w * op(x)))/dx; the second
// order differentiates the device's own gradient again (create_graph), which
// works on every device because gradients are ops. An op whose backward is first-order only on the CPU too
// is skipped with that reason.
#include <algorithm>
#include <cmath>

#include "conformance_case.h"
#include "oar/autograd.h"
#include "oar/core.h"
#include "op_samples.h"

namespace oar::conformance {

namespace {

using Fn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

Tensor weighted_sum(const std::vector<Tensor>& outs, const std::vector<Tensor>& weights) {
  Tensor total;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!outs[k].defined() || !is_floating(outs[k].dtype()) || !weights[k].defined()) continue;
    Tensor w = weights[k].to(outs[k].device()).to(outs[k].dtype());
    Tensor term = call1("sum", {call1("mul", {outs[k], w})});
    total = total.defined() ? call1("add", {total, term}) : term;
  }
  return total;
}

// Fixed weights per output (f64 on the CPU), from the case seed.
std::vector<Tensor> weights_for(const std::vector<Tensor>& outs, uint64_t seed) {
  std::vector<Tensor> w;
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!outs[k].defined() || !is_floating(outs[k].dtype())) {
      w.emplace_back();
      continue;
    }
    std::vector<double> v(size_t(outs[k].numel()));
    uint64_t s = seed + k;
    for (double& x : v) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      x = double(s >> 11) * 0x1.0p-53 * 2 - 1;
    }
    w.push_back(Tensor::from_host(v.data(), int64_t(v.size()), outs[k].shape(), DType::f64, Device::cpu()));
  }
  return w;
}

std::vector<size_t> differentiable_inputs(const Sample& s) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < s.inputs.size(); ++i)
    if (s.inputs[i].defined() && is_floating(s.inputs[i].dtype()) && s.inputs[i].numel() > 0) idx.push_back(i);
  return idx;
}

// d loss / d inputs[idx] of `f` at `inputs` (first order, or of the first
// order gradient weighted by `v` when `v` is given).
std::vector<Tensor> gradients(const Fn& f, std::vector<Tensor> inputs, const std::vector<size_t>& idx,
                              const std::vector<Tensor>& w, const std::vector<Tensor>* v) {
  autograd::GradModeGuard on(true);
  std::vector<Tensor> leaves;
  for (size_t i : idx) {
    inputs[i] = inputs[i].detach().clone();
    inputs[i].set_requires_grad(true);
    leaves.push_back(inputs[i]);
  }
  Tensor loss = weighted_sum(f(inputs), w);
  require(loss.defined(), "the op has no floating output to differentiate");
  auto g = autograd::grad({loss}, leaves, {}, v != nullptr, v != nullptr, true);
  if (!v) return g;
  Tensor loss2;
  for (size_t k = 0; k < g.size(); ++k) {
    if (!g[k].defined() || !g[k].requires_grad()) continue;
    Tensor term = call1("sum", {call1("mul", {g[k], (*v)[k].to(g[k].device()).to(g[k].dtype())})});
    loss2 = loss2.defined() ? call1("add", {loss2, term}) : term;
  }
  if (!loss2.defined()) return std::vector<Tensor>(leaves.size());  // the gradient does not depend on x
  return autograd::grad({loss2}, leaves, {}, false, false, true);
}

// The value that `gradients` differentiates, on the CPU, for finite differences.
double objective(const Fn& f, const std::vector<Tensor>& inputs, const std::vector<size_t>& idx,
                 const std::vector<Tensor>& w, const std::vector<Tensor>* v) {
  if (!v) {
    autograd::NoGradGuard off;
    return weighted_sum(f(inputs), w).item();
  }
  auto g = gradients(f, inputs, idx, w, nullptr);
  double total = 0;
  for (size_t k = 0; k < g.size(); ++k)
    if (g[k].defined()) total += call1("sum", {call1("mul", {g[k].detach(), (*v)[k]})}).item();
  return total;
}

Outcome check(const Target& t, const OpSchema& op, const Example& ex, const std::vector<DType>& sig,
              const std::string& id, bool second) {
  const uint64_t seed = seed_of(id);
  DType dtype = DType::f32;
  for (DType d : sig)
    if (is_floating(d)) {
      dtype = d;
      break;
    }
  Sample dev = make_sample(op, ex, sig, Layout::kContiguous, t.device, seed);
  Sample ref = make_sample(op, ex, sig, Layout::kContiguous, Device::cpu(), seed);
  upcast_floats(ref, DType::f64);
  const auto idx = differentiable_inputs(dev);
  if (idx.empty()) throw NotApplicable("no floating input to differentiate");
  Fn f = [&](const std::vector<Tensor>& in) { return call(op, in, ex.attrs); };
  std::vector<Tensor> w;
  {
    autograd::NoGradGuard off;
    w = weights_for(call(op, ref.inputs, ex.attrs), seed);
  }
  std::vector<Tensor> v;  // second order: weights of the first-order gradients
  if (second) {
    std::vector<Tensor> shapes;
    for (size_t i : idx) shapes.push_back(ref.inputs[i]);
    v = weights_for(shapes, seed + 77);
    try {
      gradients(f, ref.inputs, idx, w, &v);
    } catch (const Error& e) {
      throw NotApplicable(std::string("not twice differentiable on the CPU either: ") + e.what());
    }
  }
  std::vector<Tensor> got;
  try {
    got = gradients(f, dev.inputs, idx, w, second ? &v : nullptr);
  } catch (const Error& e) {
    // An example the rule refuses by design (linalg.qr mode='r') is refused on the CPU too.
    try {
      gradients(f, ref.inputs, idx, w, second ? &v : nullptr);
    } catch (const Error& on_cpu) {
      throw NotApplicable(std::string("no gradient on the CPU either: ") + on_cpu.what());
    }
    throw;
  }
  const double eps = second ? 1e-5 : 1e-6;
  const bool low = dtype != DType::f64;
  const double rtol = low ? (second ? 3e-2 : 1e-2) : 1e-4, atol = low ? (second ? 3e-3 : 1e-3) : 1e-6;
  for (size_t k = 0; k < idx.size(); ++k) {
    const size_t i = idx[k];
    if (got[k].defined() && got[k].device() != t.device) fail("a gradient left the device: " + got[k].device().str());
    std::vector<double> analytic = got[k].defined() ? got[k].to_vector<double>()
                                                    : std::vector<double>(size_t(dev.inputs[i].numel()), 0.0);
    std::vector<double> base = ref.inputs[i].to_vector<double>();
    for (size_t j = 0; j < base.size(); ++j) {
      auto at = [&](double delta) {
        std::vector<double> moved = base;
        moved[j] += delta;
        std::vector<Tensor> in = ref.inputs;
        in[i] = Tensor::from_host(moved.data(), int64_t(moved.size()), ref.inputs[i].shape(), DType::f64, Device::cpu());
        return objective(f, in, idx, w, second ? &v : nullptr);
      };
      const double numeric = (at(eps) - at(-eps)) / (2 * eps);
      if (std::isnan(numeric)) continue;  // outside the op's domain (asin(2)): nothing to compare
      if (!(std::fabs(analytic[j] - numeric) <= atol + rtol * std::fabs(numeric)))
        fail(std::string(second ? "second" : "first") + "-order gradient of input '" +
             op.inputs[std::min(i, op.inputs.size() - 1)].name + "' element " + std::to_string(j) + ": " +
             std::to_string(analytic[j]) + " on the device, finite differences give " + std::to_string(numeric));
    }
  }
  return {};
}

}  // namespace

void add_grad_cases(const Target& t, std::vector<Case>& cases) {
  const bool full = t.level == Level::kFull;
  for (const auto& op_ptr : OpRegistry::instance().all()) {
    const OpSchema& op = *op_ptr;
    const bool differentiable = op.gradient == Gradient::kRule || op.gradient == Gradient::kDecomposition;
    if (!differentiable || op.role != OpRole::kPublic || op.needs_generator || op.creation) continue;
    std::vector<NamedExample> examples;
    try {
      examples = examples_for(op, false);
    } catch (const std::exception&) {
      continue;  // reported by the op cases
    }
    if (examples.empty()) continue;
    if (!full) examples.resize(1);
    bool decomposed = false;
    auto sigs = test_signatures(op, t.device.type, decomposed);
    for (DType dtype : {DType::f32, DType::f64}) {
      if (dtype == DType::f64 && !full) continue;
      // The first signature whose data (first floating input) has this dtype.
      std::vector<DType> sig;
      for (const auto& s : sigs) {
        auto first_float = std::find_if(s.begin(), s.end(), [](DType d) { return is_floating(d); });
        if (first_float != s.end() && *first_float == dtype) {
          sig = s;
          break;
        }
      }
      if (sig.empty()) continue;
      for (const auto& named : examples) {
        if (named.name == "scalar" || named.name == "broadcast" || named.name == "large") continue;
        if (named.example.attrs.has("dtype")) continue;  // casts: the output dtype is the example's
        for (bool second : {false, true}) {
          std::string id = std::string(second ? "gradgrad/" : "grad/") + op.name + "/" + dtype_name(dtype) + "/" + named.name;
          const OpSchema* opp = &op;
          Example ex = named.example;
          cases.push_back({id, 120, "", "", [&t, opp, ex, sig, id, second] {
                             return check(t, *opp, ex, sig, id, second);
                           }});
        }
      }
    }
  }
}

}  // namespace oar::conformance
