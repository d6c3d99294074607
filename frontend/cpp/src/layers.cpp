// Parameterised layers (Linear, Conv2d, Embedding, BatchNorm2d, LayerNorm,
// Dropout): parameter registration, PyTorch's default initialisation, and
// forward through oar::nn::functional.
#include "oar/nn/layers.h"

#include <cmath>

#include "oar/autograd.h"
#include "oar/error.h"
#include "oar/nn/init.h"

namespace oar::nn {

namespace F = functional;

namespace {

void require_positive(int64_t v, const char* module, const char* arg) {
  if (v <= 0) throw ValueError(str(module, ": ", arg, " must be positive, got ", v));
}

// PyTorch's rule for weights [out, fan_in...] and their bias.
void init_weight_and_bias(Tensor& weight, Tensor& bias) {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    int64_t fan_in = init::calculate_fan_in_and_fan_out(weight).first;
    double bound = fan_in > 0 ? 1.0 / std::sqrt(double(fan_in)) : 0.0;
    init::uniform_(bias, -bound, bound);
  }
}

}  // namespace

// ---- Linear ----

LinearImpl::LinearImpl(int64_t in, int64_t out, bool with_bias) : in_features(in), out_features(out) {
  require_positive(in, "Linear", "in_features");
  require_positive(out, "Linear", "out_features");
  weight = register_parameter("weight", Tensor::empty({out, in}));
  if (with_bias) bias = register_parameter("bias", Tensor::empty({out}));
  reset_parameters();
}

void LinearImpl::reset_parameters() { init_weight_and_bias(weight, bias); }

Tensor LinearImpl::forward(const Tensor& input) { return F::linear(input, weight, bias); }

// ---- Conv2d ----

Conv2dImpl::Conv2dImpl(int64_t in, int64_t out, ExpandingArray2 k, ExpandingArray2 s, ExpandingArray2 p,
                       ExpandingArray2 d, int64_t g, bool with_bias)
    : in_channels(in), out_channels(out), groups(g), kernel_size(k), stride(s), padding(p), dilation(d) {
  require_positive(in, "Conv2d", "in_channels");
  require_positive(out, "Conv2d", "out_channels");
  require_positive(g, "Conv2d", "groups");
  if (in % g || out % g)
    throw ValueError(str("Conv2d: in_channels ", in, " and out_channels ", out, " must be divisible by groups ", g));
  for (int i = 0; i < 2; ++i) {
    require_positive(k[i], "Conv2d", "kernel_size");
    require_positive(s[i], "Conv2d", "stride");
    require_positive(d[i], "Conv2d", "dilation");
    if (p[i] < 0) throw ValueError(str("Conv2d: padding must be >= 0, got ", p[i]));
  }
  weight = register_parameter("weight", Tensor::empty({out, in / g, k[0], k[1]}));
  if (with_bias) bias = register_parameter("bias", Tensor::empty({out}));
  reset_parameters();
}

Conv2dImpl::Conv2dImpl(const Conv2dOptions& o)
    : Conv2dImpl(o.in_channels(), o.out_channels(), o.kernel_size(), o.stride(), o.padding(), o.dilation(),
                 o.groups(), o.bias()) {}

void Conv2dImpl::reset_parameters() { init_weight_and_bias(weight, bias); }

Tensor Conv2dImpl::forward(const Tensor& input) {
  return F::conv2d(input, weight, bias, stride, padding, dilation, groups);
}

// ---- Embedding ----

EmbeddingImpl::EmbeddingImpl(int64_t n, int64_t dim, std::optional<int64_t> pad)
    : num_embeddings(n), embedding_dim(dim) {
  require_positive(n, "Embedding", "num_embeddings");
  require_positive(dim, "Embedding", "embedding_dim");
  if (pad) {
    if (*pad < -n || *pad >= n)
      throw IndexError(str("Embedding: padding_idx ", *pad, " must be within [", -n, ", ", n - 1, "]"));
    padding_idx = *pad < 0 ? *pad + n : *pad;
  }
  weight = register_parameter("weight", Tensor::empty({n, dim}));
  reset_parameters();
}

void EmbeddingImpl::reset_parameters() {
  init::normal_(weight);
  if (padding_idx) init::zeros_(weight.select(0, *padding_idx));
}

Tensor EmbeddingImpl::forward(const Tensor& indices) { return F::embedding(indices, weight, padding_idx); }

// ---- BatchNorm2d ----

BatchNorm2dImpl::BatchNorm2dImpl(int64_t n, double e, std::optional<double> m, bool aff, bool track)
    : num_features(n), eps(e), momentum(m), affine(aff), track_running_stats(track) {
  require_positive(n, "BatchNorm2d", "num_features");
  if (affine) {
    weight = register_parameter("weight", Tensor::ones({n}));
    bias = register_parameter("bias", Tensor::zeros({n}));
  }
  if (track) {
    running_mean = register_buffer("running_mean", Tensor::zeros({n}));
    running_var = register_buffer("running_var", Tensor::ones({n}));
    num_batches_tracked = register_buffer("num_batches_tracked", Tensor::zeros({}, DType::i64));
  }
}

void BatchNorm2dImpl::reset_running_stats() {
  if (!track_running_stats) return;
  init::zeros_(running_mean);
  init::ones_(running_var);
  init::zeros_(num_batches_tracked);
}

void BatchNorm2dImpl::reset_parameters() {
  reset_running_stats();
  if (affine) {
    init::ones_(weight);
    init::zeros_(bias);
  }
}

Tensor BatchNorm2dImpl::forward(const Tensor& input) {
  if (!input.defined() || input.dim() != 4)
    throw ShapeError(str("BatchNorm2d: expected 4-D input [N, C, H, W], got ",
                         input.defined() ? shape_str(input.shape()) : std::string("an undefined tensor")));
  if (input.size(1) != num_features)
    throw ShapeError(str("BatchNorm2d: input ", shape_str(input.shape()), " has ", input.size(1),
                         " channels, expected num_features = ", num_features));
  double factor = momentum.value_or(0.0);
  if (is_training() && track_running_stats) {
    autograd::NoGradGuard no_grad;
    num_batches_tracked.copy_(num_batches_tracked + 1.0);
    if (!momentum) factor = 1.0 / num_batches_tracked.item();
  }
  // Batch statistics in training, and in eval too when there are no running
  // ones (the running buffers are undefined then, so nothing is updated).
  const bool use_batch_stats = is_training() || !track_running_stats;
  return F::batch_norm(input, running_mean, running_var, weight, bias, use_batch_stats, factor, eps);
}

// ---- LayerNorm ----

LayerNormImpl::LayerNormImpl(std::vector<int64_t> shape, double e, bool affine)
    : normalized_shape(std::move(shape)), eps(e), elementwise_affine(affine) {
  if (normalized_shape.empty()) throw ValueError("LayerNorm: normalized_shape must not be empty");
  for (int64_t d : normalized_shape) require_positive(d, "LayerNorm", "normalized_shape entries");
  if (affine) {
    weight = register_parameter("weight", Tensor::ones(normalized_shape));
    bias = register_parameter("bias", Tensor::zeros(normalized_shape));
  }
}

void LayerNormImpl::reset_parameters() {
  if (!elementwise_affine) return;
  init::ones_(weight);
  init::zeros_(bias);
}

Tensor LayerNormImpl::forward(const Tensor& input) {
  return F::layer_norm(input, normalized_shape, weight, bias, eps);
}

// ---- Dropout ----

DropoutImpl::DropoutImpl(double prob) : p(prob) {
  if (!(p >= 0 && p <= 1)) throw ValueError(str("Dropout: p must be in [0, 1], got ", p));
}

Tensor DropoutImpl::forward(const Tensor& input) { return F::dropout(input, p, is_training()); }

}  // namespace oar::nn
