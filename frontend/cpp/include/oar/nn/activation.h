// Parameter-free layers of oar::nn: activations (ReLU, GELU, SiLU, Sigmoid,
// Tanh, LeakyReLU, Softmax, LogSoftmax), pooling (MaxPool2d, AvgPool2d,
// AdaptiveAvgPool2d), Flatten and Identity, with torch.nn's arguments.
#pragma once

#include <optional>
#include <string>

#include "oar/functional.h"
#include "oar/nn/module.h"

namespace oar::nn {

class ReLUImpl : public Module {
 public:
  Tensor forward(const Tensor& input) override;
};
using ReLU = ModuleHolder<ReLUImpl>;

class GELUImpl : public Module {
 public:
  explicit GELUImpl(std::string approximate = "none");
  Tensor forward(const Tensor& input) override;
  std::string approximate;  // "none" or "tanh"
};
using GELU = ModuleHolder<GELUImpl>;

class SiLUImpl : public Module {
 public:
  Tensor forward(const Tensor& input) override;
};
using SiLU = ModuleHolder<SiLUImpl>;

class SigmoidImpl : public Module {
 public:
  Tensor forward(const Tensor& input) override;
};
using Sigmoid = ModuleHolder<SigmoidImpl>;

class TanhImpl : public Module {
 public:
  Tensor forward(const Tensor& input) override;
};
using Tanh = ModuleHolder<TanhImpl>;

class LeakyReLUImpl : public Module {
 public:
  explicit LeakyReLUImpl(double negative_slope = 0.01) : negative_slope(negative_slope) {}
  Tensor forward(const Tensor& input) override;
  double negative_slope;
};
using LeakyReLU = ModuleHolder<LeakyReLUImpl>;

class SoftmaxImpl : public Module {
 public:
  explicit SoftmaxImpl(int64_t dim) : dim(dim) {}
  Tensor forward(const Tensor& input) override;
  int64_t dim;
};
using Softmax = ModuleHolder<SoftmaxImpl>;

class LogSoftmaxImpl : public Module {
 public:
  explicit LogSoftmaxImpl(int64_t dim) : dim(dim) {}
  Tensor forward(const Tensor& input) override;
  int64_t dim;
};
using LogSoftmax = ModuleHolder<LogSoftmaxImpl>;

class IdentityImpl : public Module {
 public:
  Tensor forward(const Tensor& input) override { return input; }
};
using Identity = ModuleHolder<IdentityImpl>;

// stride defaults to kernel_size.
class MaxPool2dImpl : public Module {
 public:
  explicit MaxPool2dImpl(ExpandingArray2 kernel_size, std::optional<ExpandingArray2> stride = std::nullopt,
                         ExpandingArray2 padding = 0, bool ceil_mode = false);
  Tensor forward(const Tensor& input) override;
  ExpandingArray2 kernel_size, stride, padding;
  bool ceil_mode;
};
using MaxPool2d = ModuleHolder<MaxPool2dImpl>;

class AvgPool2dImpl : public Module {
 public:
  explicit AvgPool2dImpl(ExpandingArray2 kernel_size, std::optional<ExpandingArray2> stride = std::nullopt,
                         ExpandingArray2 padding = 0, bool ceil_mode = false, bool count_include_pad = true);
  Tensor forward(const Tensor& input) override;
  ExpandingArray2 kernel_size, stride, padding;
  bool ceil_mode, count_include_pad;
};
using AvgPool2d = ModuleHolder<AvgPool2dImpl>;

class AdaptiveAvgPool2dImpl : public Module {
 public:
  explicit AdaptiveAvgPool2dImpl(ExpandingArray2 output_size) : output_size(output_size) {}
  Tensor forward(const Tensor& input) override;
  ExpandingArray2 output_size;
};
using AdaptiveAvgPool2d = ModuleHolder<AdaptiveAvgPool2dImpl>;

// Flattens dims start_dim..end_dim (default: all but the batch dim).
class FlattenImpl : public Module {
 public:
  explicit FlattenImpl(int64_t start_dim = 1, int64_t end_dim = -1) : start_dim(start_dim), end_dim(end_dim) {}
  Tensor forward(const Tensor& input) override;
  int64_t start_dim, end_dim;
};
using Flatten = ModuleHolder<FlattenImpl>;

}  // namespace oar::nn
