// Parameter-free layers (activations, pooling, Flatten), Sequential and the
// loss modules: argument checks at construction, forward via functional.
#include "oar/error.h"
#include "oar/nn/activation.h"
#include "oar/nn/loss.h"
#include "oar/nn/sequential.h"

namespace oar::nn {

namespace F = functional;

// ---- activations ----

Tensor ReLUImpl::forward(const Tensor& input) { return F::relu(input); }

GELUImpl::GELUImpl(std::string approx) : approximate(std::move(approx)) {
  if (approximate != "none" && approximate != "tanh")
    throw ValueError(str("GELU: approximate must be 'none' or 'tanh', got '", approximate, "'"));
}
Tensor GELUImpl::forward(const Tensor& input) { return F::gelu(input, approximate); }
Tensor SiLUImpl::forward(const Tensor& input) { return F::silu(input); }
Tensor SigmoidImpl::forward(const Tensor& input) { return F::sigmoid(input); }
Tensor TanhImpl::forward(const Tensor& input) { return F::tanh(input); }
Tensor LeakyReLUImpl::forward(const Tensor& input) { return F::leaky_relu(input, negative_slope); }
Tensor SoftmaxImpl::forward(const Tensor& input) { return F::softmax(input, dim); }
Tensor LogSoftmaxImpl::forward(const Tensor& input) { return F::log_softmax(input, dim); }

// ---- pooling and reshaping ----

MaxPool2dImpl::MaxPool2dImpl(ExpandingArray2 k, std::optional<ExpandingArray2> s, ExpandingArray2 p, bool ceil)
    : kernel_size(k), stride(s.value_or(k)), padding(p), ceil_mode(ceil) {}
Tensor MaxPool2dImpl::forward(const Tensor& input) {
  return F::max_pool2d(input, kernel_size, stride, padding, ceil_mode);
}

AvgPool2dImpl::AvgPool2dImpl(ExpandingArray2 k, std::optional<ExpandingArray2> s, ExpandingArray2 p, bool ceil,
                             bool include_pad)
    : kernel_size(k), stride(s.value_or(k)), padding(p), ceil_mode(ceil), count_include_pad(include_pad) {}
Tensor AvgPool2dImpl::forward(const Tensor& input) {
  return F::avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad);
}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& input) { return F::adaptive_avg_pool2d(input, output_size); }

Tensor FlattenImpl::forward(const Tensor& input) { return input.flatten(start_dim, end_dim); }

// ---- Sequential ----

SequentialImpl::SequentialImpl(const OrderedDict<std::string, std::shared_ptr<Module>>& named) {
  for (const auto& [n, m] : named) push_back(n, m);
}

void SequentialImpl::push_back(std::string n, std::shared_ptr<Module> module) {
  register_module(std::move(n), module);
  modules_.push_back(std::move(module));
}

const std::shared_ptr<Module>& SequentialImpl::ptr(size_t index) const {
  if (index >= modules_.size())
    throw IndexError(str("Sequential: index ", index, " is out of range for ", modules_.size(), " modules"));
  return modules_[index];
}

Tensor SequentialImpl::forward(const Tensor& input) {
  Tensor x = input;
  for (const auto& m : modules_) x = (*m)(x);
  return x;
}

// ---- losses ----

LossModule::LossModule(std::string r) : reduction(std::move(r)) { F::check_reduction(reduction, "loss"); }

Tensor LossModule::forward_inputs(const std::vector<Tensor>& inputs) {
  if (inputs.size() != 2)
    throw ValueError(str("loss module '", name(), "' takes (input, target), got ", inputs.size(), " tensor(s)"));
  return forward(inputs[0], inputs[1]);
}

CrossEntropyLossImpl::CrossEntropyLossImpl(std::string r, int64_t ignore, double smoothing)
    : LossModule(std::move(r)), ignore_index(ignore), label_smoothing(smoothing) {
  if (!(smoothing >= 0 && smoothing <= 1))
    throw ValueError(str("CrossEntropyLoss: label_smoothing must be in [0, 1], got ", smoothing));
}
Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::cross_entropy(input, target, reduction, ignore_index, label_smoothing);
}

NLLLossImpl::NLLLossImpl(std::string r, int64_t ignore) : LossModule(std::move(r)), ignore_index(ignore) {}
Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::nll_loss(input, target, reduction, ignore_index);
}

MSELossImpl::MSELossImpl(std::string r) : LossModule(std::move(r)) {}
Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
  return F::mse_loss(input, target, reduction);
}

}  // namespace oar::nn
