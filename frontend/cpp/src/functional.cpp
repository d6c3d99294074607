// oar::nn::functional: torch.nn.functional's signatures mapped onto catalog
// ops. Composite functions (adaptive pooling, mse_loss, the running
// statistics of batch_norm) are written with other ops, so autograd covers
// them through those ops' rules.
#include "oar/functional.h"

#include <cmath>

#include "oar/autograd.h"
#include "oar/dispatch.h"
#include "oar/error.h"

namespace oar::nn {

ExpandingArray2::ExpandingArray2(std::initializer_list<int64_t> v) : ExpandingArray2(std::vector<int64_t>(v)) {}

ExpandingArray2::ExpandingArray2(const std::vector<int64_t>& v) : values{0, 0} {
  if (v.size() != 1 && v.size() != 2)
    throw ValueError(str("a 2-D size needs 1 or 2 values, got ", v.size()));
  values[0] = v[0];
  values[1] = v.back();
}

namespace functional {

namespace {

void require_defined(const Tensor& t, const char* fn, const char* arg) {
  if (!t.defined()) throw ValueError(str(fn, ": argument '", arg, "' is an undefined tensor"));
}

// Window [start, end) of adaptive pooling cell i of n over a dim of size `in`.
std::pair<int64_t, int64_t> adaptive_window(int64_t i, int64_t n, int64_t in) {
  int64_t start = (i * in) / n;
  int64_t end = ((i + 1) * in + n - 1) / n;
  return {start, end};
}

}  // namespace

void check_reduction(const std::string& reduction, const char* who) {
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    throw ValueError(str(who, ": reduction must be 'mean', 'sum' or 'none', got '", reduction, "'"));
}

Tensor linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  require_defined(input, "linear", "input");
  require_defined(weight, "linear", "weight");
  return call1("linear", {input, weight, bias});  // one fused op; the catalog checks shapes
}

Tensor relu(const Tensor& input) { return call1("relu", {input}); }
Tensor gelu(const Tensor& input, const std::string& approximate) {
  return call1("gelu", {input}, {{"approximate", approximate}});
}
Tensor silu(const Tensor& input) { return call1("silu", {input}); }
Tensor sigmoid(const Tensor& input) { return call1("sigmoid", {input}); }
Tensor tanh(const Tensor& input) { return call1("tanh", {input}); }
Tensor leaky_relu(const Tensor& input, double negative_slope) {
  return call1("leaky_relu", {input}, {{"negative_slope", negative_slope}});
}
Tensor softmax(const Tensor& input, int64_t dim) { return call1("softmax", {input}, {{"dim", dim}}); }
Tensor log_softmax(const Tensor& input, int64_t dim) { return call1("log_softmax", {input}, {{"dim", dim}}); }

Tensor dropout(const Tensor& input, double p, bool training) {
  if (!(p >= 0 && p <= 1)) throw ValueError(str("dropout: probability must be in [0, 1], got ", p));
  if (!training || p == 0) return input;
  // The op refuses p = 1 (its scale would be infinite); everything is dropped.
  if (p == 1) return input * 0.0;
  return call("dropout", {input}, {{"p", p}})[0];
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const Tensor& bias, ExpandingArray2 stride,
              ExpandingArray2 padding, ExpandingArray2 dilation, int64_t groups) {
  return call1("conv2d", {input, weight, bias},
               {{"stride", stride.vec()}, {"padding", padding.vec()}, {"dilation", dilation.vec()},
                {"groups", groups}});
}

Tensor max_pool2d(const Tensor& input, ExpandingArray2 kernel_size, std::optional<ExpandingArray2> stride,
                  ExpandingArray2 padding, bool ceil_mode) {
  return call1("max_pool2d", {input},
               {{"kernel_size", kernel_size.vec()},
                {"stride", stride ? stride->vec() : std::vector<int64_t>{}},
                {"padding", padding.vec()},
                {"ceil_mode", ceil_mode}});
}

Tensor avg_pool2d(const Tensor& input, ExpandingArray2 kernel_size, std::optional<ExpandingArray2> stride,
                  ExpandingArray2 padding, bool ceil_mode, bool count_include_pad) {
  return call1("avg_pool2d", {input},
               {{"kernel_size", kernel_size.vec()},
                {"stride", stride ? stride->vec() : std::vector<int64_t>{}},
                {"padding", padding.vec()},
                {"ceil_mode", ceil_mode},
                {"count_include_pad", count_include_pad}});
}

Tensor adaptive_avg_pool2d(const Tensor& input, ExpandingArray2 output_size) {
  require_defined(input, "adaptive_avg_pool2d", "input");
  if (input.dim() != 4)
    throw ShapeError(str("adaptive_avg_pool2d: input must be 4-D [N, C, H, W], got ", shape_str(input.shape())));
  const int64_t H = input.size(2), W = input.size(3), oh = output_size[0], ow = output_size[1];
  if (oh < 1 || ow < 1)
    throw ValueError(str("adaptive_avg_pool2d: output_size must be >= 1, got [", oh, ", ", ow, "]"));
  if (H == 0 || W == 0)
    throw ShapeError(str("adaptive_avg_pool2d: input ", shape_str(input.shape()), " has an empty spatial dim"));
  if (oh == 1 && ow == 1) return mean(input, {2, 3}, true);
  if (H % oh == 0 && W % ow == 0) {
    ExpandingArray2 k({H / oh, W / ow});
    return avg_pool2d(input, k, k);
  }
  // Uneven windows: one mean per output cell, joined back row by row.
  std::vector<Tensor> rows;
  for (int64_t i = 0; i < oh; ++i) {
    auto [hs, he] = adaptive_window(i, oh, H);
    std::vector<Tensor> cells;
    for (int64_t j = 0; j < ow; ++j) {
      auto [ws, we] = adaptive_window(j, ow, W);
      cells.push_back(mean(input.slice(2, hs, he).slice(3, ws, we), {2, 3}, true));
    }
    rows.push_back(call1("concat", cells, {{"dim", int64_t(3)}}));
  }
  return call1("concat", rows, {{"dim", int64_t(2)}});
}

Tensor batch_norm(const Tensor& input, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, bool training, double momentum, double eps) {
  require_defined(input, "batch_norm", "input");
  if (running_mean.defined() != running_var.defined())
    throw ValueError("batch_norm: running_mean and running_var must both be given or both be undefined");
  auto outs = call("batch_norm", {input, weight, bias, running_mean, running_var},
                   {{"training", training}, {"eps", eps}});
  if (training && running_mean.defined()) {
    // The op leaves running statistics alone; update them as PyTorch does,
    // outside the graph (they are buffers, not functions of the parameters).
    autograd::NoGradGuard no_grad;
    const int64_t n = input.numel() / input.size(1);
    Tensor batch_mean = outs[1].detach();
    Tensor batch_var = outs[2].detach() * (double(n) / double(n - 1));
    Tensor rm = running_mean, rv = running_var;  // handles onto the caller's buffers
    rm.copy_(rm * (1.0 - momentum) + batch_mean * momentum);
    rv.copy_(rv * (1.0 - momentum) + batch_var * momentum);
  }
  return outs[0];
}

Tensor layer_norm(const Tensor& input, const std::vector<int64_t>& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps) {
  require_defined(input, "layer_norm", "input");
  const int64_t nd = int64_t(normalized_shape.size());
  bool fits = nd >= 1 && nd <= input.dim();
  for (int64_t i = 0; fits && i < nd; ++i) fits = input.size(input.dim() - nd + i) == normalized_shape[size_t(i)];
  if (!fits)
    throw ShapeError(str("layer_norm: input ", shape_str(input.shape()), " does not end in normalized_shape ",
                         shape_str(normalized_shape)));
  return call("layer_norm", {input, weight, bias}, {{"normalized_ndim", nd}, {"eps", eps}})[0];
}

Tensor embedding(const Tensor& input, const Tensor& weight, std::optional<int64_t> padding_idx) {
  require_defined(weight, "embedding", "weight");
  int64_t pad = -1;
  if (padding_idx) {
    const int64_t v = weight.size(0);
    if (*padding_idx < -v || *padding_idx >= v)
      throw IndexError(str("embedding: padding_idx ", *padding_idx, " is out of range for ", v, " embeddings"));
    pad = *padding_idx < 0 ? *padding_idx + v : *padding_idx;
  }
  return call1("embedding", {weight, input}, {{"padding_idx", pad}});
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const std::string& reduction, int64_t ignore_index,
                     double label_smoothing) {
  check_reduction(reduction, "cross_entropy");
  return call1("cross_entropy", {input, target},
               {{"reduction", reduction}, {"ignore_index", ignore_index}, {"label_smoothing", label_smoothing}});
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const std::string& reduction, int64_t ignore_index) {
  check_reduction(reduction, "nll_loss");
  return call1("nll_loss", {input, target}, {{"reduction", reduction}, {"ignore_index", ignore_index}});
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const std::string& reduction) {
  check_reduction(reduction, "mse_loss");
  require_defined(input, "mse_loss", "input");
  require_defined(target, "mse_loss", "target");
  if (input.shape() != target.shape())
    throw ShapeError(str("mse_loss: input ", shape_str(input.shape()), " and target ", shape_str(target.shape()),
                         " must have the same shape"));
  Tensor sq = square(input - target);
  if (reduction == "none") return sq;
  return reduction == "sum" ? sum(sq) : mean(sq);
}

}  // namespace functional
}  // namespace oar::nn
