// Parameterised layers of oar::nn: Linear, Conv2d, Embedding, BatchNorm2d,
// LayerNorm and Dropout, with torch.nn's constructor arguments, defaults,
// initialisation and parameter names (so state dicts line up with PyTorch's).
// Each XImpl is the module; X = ModuleHolder<XImpl> is what users declare.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "oar/functional.h"
#include "oar/nn/module.h"

namespace oar::nn {

// y = x W^T + b. weight [out, in] and bias [out] ~ U(-1/sqrt(in), 1/sqrt(in))
// (PyTorch's kaiming_uniform_(a = sqrt(5)) and bias rule).
class LinearImpl : public Module {
 public:
  LinearImpl(int64_t in_features, int64_t out_features, bool bias = true);
  void reset_parameters();
  Tensor forward(const Tensor& input) override;

  int64_t in_features, out_features;
  Tensor weight, bias;  // bias undefined when constructed with bias = false
};
using Linear = ModuleHolder<LinearImpl>;

// Conv2d's arguments as chainable setters (torch::nn::Conv2dOptions), e.g.
// `nn::Conv2d(nn::Conv2dOptions(3, 16, {3, 5}).stride(2).padding(1))`.
class Conv2dOptions {
 public:
  Conv2dOptions(int64_t in_channels, int64_t out_channels, ExpandingArray2 kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  Conv2dOptions& stride(ExpandingArray2 v) { stride_ = v; return *this; }
  Conv2dOptions& padding(ExpandingArray2 v) { padding_ = v; return *this; }
  Conv2dOptions& dilation(ExpandingArray2 v) { dilation_ = v; return *this; }
  Conv2dOptions& groups(int64_t v) { groups_ = v; return *this; }
  Conv2dOptions& bias(bool v) { bias_ = v; return *this; }
  int64_t in_channels() const { return in_channels_; }
  int64_t out_channels() const { return out_channels_; }
  ExpandingArray2 kernel_size() const { return kernel_size_; }
  ExpandingArray2 stride() const { return stride_; }
  ExpandingArray2 padding() const { return padding_; }
  ExpandingArray2 dilation() const { return dilation_; }
  int64_t groups() const { return groups_; }
  bool bias() const { return bias_; }

 private:
  int64_t in_channels_, out_channels_;
  ExpandingArray2 kernel_size_, stride_ = 1, padding_ = 0, dilation_ = 1;
  int64_t groups_ = 1;
  bool bias_ = true;
};

// 2-D convolution over [N, C, H, W]; weight [out, in / groups, kH, kW], bias [out].
class Conv2dImpl : public Module {
 public:
  explicit Conv2dImpl(const Conv2dOptions& options);
  Conv2dImpl(int64_t in_channels, int64_t out_channels, ExpandingArray2 kernel_size, ExpandingArray2 stride = 1,
             ExpandingArray2 padding = 0, ExpandingArray2 dilation = 1, int64_t groups = 1, bool bias = true);
  void reset_parameters();
  Tensor forward(const Tensor& input) override;

  int64_t in_channels, out_channels, groups;
  ExpandingArray2 kernel_size, stride, padding, dilation;
  Tensor weight, bias;
};
using Conv2d = ModuleHolder<Conv2dImpl>;

// Lookup table [num_embeddings, embedding_dim] ~ N(0, 1); the padding_idx row is zero.
class EmbeddingImpl : public Module {
 public:
  EmbeddingImpl(int64_t num_embeddings, int64_t embedding_dim, std::optional<int64_t> padding_idx = std::nullopt);
  void reset_parameters();
  Tensor forward(const Tensor& indices) override;

  int64_t num_embeddings, embedding_dim;
  std::optional<int64_t> padding_idx;
  Tensor weight;
};
using Embedding = ModuleHolder<EmbeddingImpl>;

// Batch normalization of [N, C, H, W] per channel. In training, batch
// statistics normalize and update running_mean/running_var (momentum; a
// nullopt momentum is the cumulative average over num_batches_tracked); in
// eval the running statistics are used. Without track_running_stats, batch
// statistics are used in both modes and no buffers exist.
class BatchNorm2dImpl : public Module {
 public:
  explicit BatchNorm2dImpl(int64_t num_features, double eps = 1e-5, std::optional<double> momentum = 0.1,
                           bool affine = true, bool track_running_stats = true);
  void reset_running_stats();
  void reset_parameters();
  Tensor forward(const Tensor& input) override;

  int64_t num_features;
  double eps;
  std::optional<double> momentum;
  bool affine, track_running_stats;
  Tensor weight, bias;                                     // affine only
  Tensor running_mean, running_var, num_batches_tracked;  // track_running_stats only
};
using BatchNorm2d = ModuleHolder<BatchNorm2dImpl>;

// Layer normalization over the trailing normalized_shape dims.
class LayerNormImpl : public Module {
 public:
  explicit LayerNormImpl(std::vector<int64_t> normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  void reset_parameters();
  Tensor forward(const Tensor& input) override;

  std::vector<int64_t> normalized_shape;
  double eps;
  bool elementwise_affine;
  Tensor weight, bias;
};
using LayerNorm = ModuleHolder<LayerNormImpl>;

// Zeroes elements with probability p in training (scaling the rest by
// 1 / (1 - p)); identity in eval.
class DropoutImpl : public Module {
 public:
  explicit DropoutImpl(double p = 0.5);
  Tensor forward(const Tensor& input) override;

  double p;
};
using Dropout = ModuleHolder<DropoutImpl>;

}  // namespace oar::nn
