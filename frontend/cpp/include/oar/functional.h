// oar::nn::functional: typed wrappers over catalog ops with the names,
// argument order and defaults of torch.nn.functional, so modules and user
// code call `F::conv2d(x, w, b, /*stride=*/2)` instead of spelling op
// attributes. Everything runs through eager dispatch and is differentiable
// wherever the ops have gradient rules. Use `namespace F = oar::nn::functional;`.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "oar/tensor.h"
#include "oar/tensor_ops.h"

namespace oar::nn {

// A 2-D size given as one int (used for both dims) or two: `3`, `{3, 5}`
// (torch::ExpandingArray<2>).
struct ExpandingArray2 {
  int64_t values[2];
  ExpandingArray2(int64_t v) : values{v, v} {}  // NOLINT: implicit like PyTorch
  ExpandingArray2(std::initializer_list<int64_t> v);
  ExpandingArray2(const std::vector<int64_t>& v);
  int64_t operator[](size_t i) const { return values[i]; }
  std::vector<int64_t> vec() const { return {values[0], values[1]}; }
};

namespace functional {

// y = input @ weight^T + bias; weight [out, in], bias [out] or undefined.
Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor());

Tensor relu(const Tensor& input);
Tensor gelu(const Tensor& input, const std::string& approximate = "none");
Tensor silu(const Tensor& input);
Tensor sigmoid(const Tensor& input);
Tensor tanh(const Tensor& input);
Tensor leaky_relu(const Tensor& input, double negative_slope = 0.01);
Tensor softmax(const Tensor& input, int64_t dim);
Tensor log_softmax(const Tensor& input, int64_t dim);

// Zeroes elements with probability p and scales the rest by 1 / (1 - p) when
// training; identity otherwise. Draws from the global generator (manual_seed).
Tensor dropout(const Tensor& input, double p = 0.5, bool training = true);

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias = Tensor(),
              ExpandingArray2 stride = 1, ExpandingArray2 padding = 0, ExpandingArray2 dilation = 1,
              int64_t groups = 1);
// stride defaults to kernel_size.
Tensor max_pool2d(const Tensor& input, ExpandingArray2 kernel_size,
                  std::optional<ExpandingArray2> stride = std::nullopt, ExpandingArray2 padding = 0,
                  bool ceil_mode = false);
Tensor avg_pool2d(const Tensor& input, ExpandingArray2 kernel_size,
                  std::optional<ExpandingArray2> stride = std::nullopt, ExpandingArray2 padding = 0,
                  bool ceil_mode = false, bool count_include_pad = true);
// PyTorch's adaptive windows: output cell i covers [floor(i*H/oh), ceil((i+1)*H/oh)).
Tensor adaptive_avg_pool2d(const Tensor& input, ExpandingArray2 output_size);

// Batch normalization over dim 1. When training, batch statistics are used and
// running_mean / running_var (if defined) are updated in place, without
// recording gradients: running = (1 - momentum) * running + momentum * batch,
// with the unbiased batch variance for running_var. In eval the running
// statistics are used (they must be defined).
Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), bool training = false,
                  double momentum = 0.1, double eps = 1e-5);
// Normalizes over the trailing dims, which must equal normalized_shape.
Tensor layer_norm(const Tensor& input, const std::vector<int64_t>& normalized_shape,
                  const Tensor& weight = Tensor(), const Tensor& bias = Tensor(), double eps = 1e-5);
// Rows of weight [V, D] at the integer indices of input.
Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx = std::nullopt);

// reduction: "mean", "sum" or "none".
Tensor cross_entropy(const Tensor& input, const Tensor& target, const std::string& reduction = "mean",
                     int64_t ignore_index = -100, double label_smoothing = 0.0);
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean",
                int64_t ignore_index = -100);
Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction = "mean");

// Throws ValueError unless reduction is "mean", "sum" or "none".
void check_reduction(const std::string& reduction, const char* who);

}  // namespace functional
}  // namespace oar::nn
