// oar::nn::init: torch.nn.init formulas on top of the uniform/normal ops.
#include "oar/nn/init.h"

#include <cmath>

#include "oar/autograd.h"
#include "oar/dispatch.h"
#include "oar/error.h"

namespace oar::nn::init {

namespace {

void require_floating_tensor(const Tensor& t, const char* fn) {
  if (!t.defined()) throw ValueError(str("init::", fn, ": undefined tensor"));
  if (!is_floating(t.dtype()))
    throw DTypeError(str("init::", fn, ": tensor must be floating, got ", dtype_name(t.dtype())));
}

Tensor fill_from(Tensor t, const Tensor& values) {
  autograd::NoGradGuard no_grad;
  t.copy_(values);
  return t;
}

Tensor random_like(const char* op, const Tensor& t, const char* a_name, double a, const char* b_name, double b) {
  CallOptions where;
  where.device = t.device();
  return call1(op, {}, {{"shape", t.shape()}, {a_name, a}, {b_name, b}, {"dtype", t.dtype()}}, where);
}

int64_t fan(const Tensor& t, const std::string& mode) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  if (mode == "fan_in") return fan_in;
  if (mode == "fan_out") return fan_out;
  throw ValueError(str("init: mode must be 'fan_in' or 'fan_out', got '", mode, "'"));
}

}  // namespace

Tensor uniform_(Tensor tensor, double low, double high) {
  require_floating_tensor(tensor, "uniform_");
  return fill_from(tensor, random_like("uniform", tensor, "low", low, "high", high));
}

Tensor normal_(Tensor tensor, double mean, double std) {
  require_floating_tensor(tensor, "normal_");
  return fill_from(tensor, random_like("normal", tensor, "mean", mean, "std", std));
}

Tensor constant_(Tensor tensor, double value) {
  if (!tensor.defined()) throw ValueError("init::constant_: undefined tensor");
  return fill_from(tensor, Tensor::full({}, value, tensor.dtype(), tensor.device()));
}
Tensor zeros_(Tensor tensor) { return constant_(std::move(tensor), 0.0); }
Tensor ones_(Tensor tensor) { return constant_(std::move(tensor), 1.0); }

double calculate_gain(const std::string& nonlinearity, double param) {
  if (nonlinearity == "linear" || nonlinearity == "conv2d" || nonlinearity == "sigmoid") return 1.0;
  if (nonlinearity == "tanh") return 5.0 / 3.0;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1.0 + param * param));
  if (nonlinearity == "selu") return 3.0 / 4.0;
  throw ValueError(str("init::calculate_gain: unsupported nonlinearity '", nonlinearity, "'"));
}

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  if (!tensor.defined() || tensor.dim() < 2)
    throw ShapeError(str("init: fan in and fan out need a tensor with at least 2 dimensions, got ",
                         tensor.defined() ? shape_str(tensor.shape()) : std::string("an undefined tensor")));
  int64_t receptive = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive *= tensor.size(d);
  return {tensor.size(1) * receptive, tensor.size(0) * receptive};
}

Tensor kaiming_uniform_(Tensor tensor, double a, const std::string& mode, const std::string& nonlinearity) {
  require_floating_tensor(tensor, "kaiming_uniform_");
  int64_t f = fan(tensor, mode);
  if (f == 0) return tensor;  // PyTorch warns and leaves a zero-element tensor alone
  double bound = calculate_gain(nonlinearity, a) * std::sqrt(3.0 / double(f));
  return uniform_(tensor, -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, const std::string& mode, const std::string& nonlinearity) {
  require_floating_tensor(tensor, "kaiming_normal_");
  int64_t f = fan(tensor, mode);
  if (f == 0) return tensor;
  return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / std::sqrt(double(f)));
}

Tensor xavier_uniform_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  double bound = gain * std::sqrt(6.0 / double(fan_in + fan_out));
  return uniform_(tensor, -bound, bound);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return normal_(tensor, 0.0, gain * std::sqrt(2.0 / double(fan_in + fan_out)));
}

}  // namespace oar::nn::init
