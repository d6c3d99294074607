// Gradient rules of the nn ops (matmul, linear, conv2d, pooling, batch/layer norm,
// softmax, losses, dropout, embedding) and of the backward ops they call, so
// that second derivatives (gradient penalties, Hessian-vector products) work.
// First-order gradients use the fused backward kernels. The backward ops that
// are linear in grad_y get rules from their adjoints (conv, pooling, losses,
// embedding); the norms instead switch to a formula written with ops when the
// backward pass itself is recorded (create_graph), because their fused
// backward ops have no rule. Norm rules also take gradients of the statistics
// outputs (mean/var), which the composed formulas rely on.
#include <limits>
#include <utility>

#include "rules_util.h"

namespace oar::autograd {

using namespace rules;

namespace {

Tensor sum_over(const Tensor& t, std::vector<int64_t> dims, bool keepdim) {
  return op("sum", {t}, {{"dims", std::move(dims)}, {"keepdim", keepdim}});
}
// Sum along one softmax dim, kept; a 0-d tensor is its own (only) slice.
Tensor sum_along(const Tensor& t, int64_t dim) {
  return sum_over(t, t.dim() == 0 ? std::vector<int64_t>{} : std::vector<int64_t>{dim}, true);
}
Tensor scale(const Tensor& t, double s) { return mul(t, scalar_like(t, s)); }
Tensor accumulate(const Tensor& a, const Tensor& b) { return a.defined() ? add(a, b) : b; }

// ---- conv2d ----

Attrs conv_attrs(const Attrs& a) {
  return {{"stride", a.get("stride")}, {"padding", a.get("padding")}, {"dilation", a.get("dilation")},
          {"groups", a.get("groups")}};
}
Tensor conv(const Tensor& x, const Tensor& w, const Attrs& a) { return op("conv2d", {x, w, Tensor()}, conv_attrs(a)); }
Tensor conv_data(const Tensor& gy, const Tensor& w, const Shape& x_shape, const Attrs& a) {
  return op("conv2d_backward_data", {gy, w}, conv_attrs(a).set("input_shape", x_shape));
}
Tensor conv_weight(const Tensor& gy, const Tensor& x, const Shape& w_shape, const Attrs& a) {
  return op("conv2d_backward_weight", {gy, x}, conv_attrs(a).set("weight_shape", w_shape));
}

// ---- max pooling: the adjoint of max_pool2d_backward in grad_y ----

// out[n, c, i, j] = gg at the position of the window's maximum of x (the first
// one in row-major window order): for each kernel offset, a strided view of
// the padded tensors lines every window's element at that offset up with the
// output, and the offset whose x equals the window's max is selected. Only
// gg's path is recorded, so this is differentiable in gg.
Tensor max_pool_select(const Tensor& gg, const Tensor& x, const Attrs& a) {
  auto k = a.get_ints("kernel_size"), s = a.get_ints("stride"), p = a.get_ints("padding");
  if (s.empty()) s = k;
  int64_t kh = k.front(), kw = k.back(), sh = s.front(), sw = s.back(), ph = p.front(), pw = p.back();
  Tensor xd = x.detach(), y, xp, found;
  std::vector<Tensor> masks;
  std::vector<int64_t> pads;
  int64_t oh = 0, ow = 0;
  {
    NoGradGuard no_grad;
    y = op("max_pool2d", {xd}, a);
    oh = y.size(2), ow = y.size(3);
    // ceil_mode windows may hang past the right padding; -inf never wins
    int64_t prh = std::max(ph, (oh - 1) * sh + kh - x.size(2) - ph);
    int64_t prw = std::max(pw, (ow - 1) * sw + kw - x.size(3) - pw);
    pads = {pw, prw, ph, prh};
    xp = op("pad", {xd}, {{"pads", pads}, {"value", -std::numeric_limits<double>::infinity()}});
  }
  auto window = [&](const Tensor& t, int64_t di, int64_t dj) {
    return t.slice(2, di, di + (oh - 1) * sh + 1, sh).slice(3, dj, dj + (ow - 1) * sw + 1, sw);
  };
  {
    NoGradGuard no_grad;
    for (int64_t di = 0; di < kh; ++di)
      for (int64_t dj = 0; dj < kw; ++dj) {
        Tensor m = op("eq", {window(xp, di, dj), y});
        if (found.defined()) m = op("logical_and", {m, op("logical_not", {found})});
        found = found.defined() ? op("logical_or", {found, m}) : m;
        masks.push_back(m);
      }
  }
  Tensor gp = op("pad", {gg}, {{"pads", pads}}), out, zero = scalar_like(gg, 0.0);
  for (int64_t di = 0, i = 0; di < kh; ++di)
    for (int64_t dj = 0; dj < kw; ++dj, ++i)
      out = accumulate(out, op("where", {masks[size_t(i)], window(gp, di, dj), zero}));
  return out;
}

// ---- losses ----

int64_t class_dim(const Tensor& scores) { return scores.dim() >= 2 ? 1 : 0; }

// Adjoint in grad_y of a loss backward op (linear in grad_y): each loss
// element's share is sum over classes of gg * backward(1).
Tensor loss_grad_y_adjoint(const char* backward_op, const GradContext& c, const Tensor& gg) {
  const Tensor &gy = c.inputs[0], &scores = c.inputs[1], &target = c.inputs[2];
  Tensor unit = op(backward_op, {ones_like(gy), scores, target}, c.attrs);
  Tensor prod = mul(gg, unit);
  if (c.attrs.get_string("reduction") == "none") return sum_over(prod, {class_dim(scores)}, false);
  return sum_over(prod, {}, false);
}

// Per-position factor grad_y * valid / count of cross_entropy_backward, shaped
// to broadcast against the logits.
Tensor cross_entropy_factor(const GradContext& c) {
  const Tensor &gy = c.inputs[0], &logits = c.inputs[1], &target = c.inputs[2];
  Tensor ignore = Tensor::full({}, double(c.attrs.get_int("ignore_index")), target.dtype(), target.device());
  Tensor valid = op("ne", {target, ignore}).to(logits.dtype());
  const std::string& red = c.attrs.get_string("reduction");
  Tensor f = mul(gy, valid);
  if (red == "mean") f = div(f, sum_over(valid, {}, false));
  return logits.dim() >= 2 ? f.unsqueeze(1) : f;
}

// ---- normalization ----

// A per-channel [C] tensor viewed as [1, C, 1, ...] for an ndim-D input.
Tensor per_channel(const Tensor& v, int64_t ndim) {
  Shape s(size_t(ndim), 1);
  s[1] = v.size(0);
  return v.reshape(s);
}

// Gradient reaching x through the statistics outputs mean = sum(x)/n and
// var = sum((x - mean)^2)/n; mean_b broadcasts against x, gm/gv are those
// outputs' gradients reshaped the same way.
Tensor stats_grad(const Tensor& x, const Tensor& mean_b, const Tensor& gm, const Tensor& gv, double n) {
  Tensor r;
  if (gm.defined()) r = add(zeros_like(x), scale(gm, 1.0 / n));
  if (gv.defined()) r = accumulate(r, mul(scale(gv, 2.0 / n), sub(x, mean_b)));
  return r;
}

// Training-mode normalization gradient with ops (differentiable):
// gx = rstd * (gw - mean_R(gw) - xhat * mean_R(gw * xhat)), gw = g * weight.
Tensor norm_grad_x(const Tensor& g, const Tensor& xhat, const Tensor& w_b, const Tensor& rstd_b,
                   const std::vector<int64_t>& dims, double n) {
  Tensor gw = w_b.defined() ? mul(g, w_b) : g;
  Tensor s1 = scale(sum_over(gw, dims, true), 1.0 / n);
  Tensor s2 = scale(sum_over(mul(gw, xhat), dims, true), 1.0 / n);
  return mul(rstd_b, sub(sub(gw, s1), mul(xhat, s2)));
}

std::vector<Tensor> batch_norm_rule(const GradContext& c) {
  const Tensor &x = c.inputs[0], &w = c.inputs[1];
  double eps = c.attrs.get_float("eps");
  int64_t nd = x.dim(), C = x.size(1);
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < nd; ++d) dims.push_back(d);
  double n = C > 0 ? double(x.numel() / C) : 0.0;
  std::vector<Tensor> out(5);
  const Tensor& g = c.grads[0];
  Tensor w_b = w.defined() ? per_channel(w, nd) : Tensor();
  if (c.attrs.get_bool("training")) {
    const Tensor &mean = c.outputs[1], &var = c.outputs[2];
    Tensor mean_b = per_channel(mean, nd);
    if (g.defined() && !is_grad_enabled()) {
      auto r = ops("batch_norm_backward", {g, x, w, mean, var}, {{"eps", eps}});
      out = {r[0], r[1], r[2], Tensor(), Tensor()};
    } else if (g.defined()) {
      Tensor rstd_b = per_channel(op("rsqrt", {add(var, scalar_like(var, eps))}), nd);
      Tensor xhat = mul(sub(x, mean_b), rstd_b);
      out[0] = norm_grad_x(g, xhat, w_b, rstd_b, dims, n);
      if (c.needs(1)) out[1] = sum_over(mul(g, xhat), dims, false);
      if (c.needs(2)) out[2] = sum_over(g, dims, false);
    }
    auto chan = [&](size_t i) { return c.grads[i].defined() ? per_channel(c.grads[i], nd) : Tensor(); };
    Tensor sg = stats_grad(x, mean_b, chan(1), chan(2), n);
    if (sg.defined()) out[0] = accumulate(out[0], sg);
    if (!c.needs(0)) out[0] = Tensor();
    return out;
  }
  // Inference: y = (x - rm) * rstd * w + b with the running stats, which are
  // also returned as outputs 1 and 2 (identity gradients).
  const Tensor &rm = c.inputs[3], &rv = c.inputs[4];
  Tensor rstd = op("rsqrt", {add(rv, scalar_like(rv, eps))});
  Tensor rstd_b = per_channel(rstd, nd), xc = sub(x, per_channel(rm, nd));
  if (g.defined()) {
    if (c.needs(0)) out[0] = mul(g, w_b.defined() ? mul(w_b, rstd_b) : rstd_b);
    if (c.needs(1)) out[1] = sum_over(mul(g, mul(xc, rstd_b)), dims, false);
    if (c.needs(2) || c.needs(3)) out[2] = sum_over(g, dims, false);
    Tensor ws = w.defined() ? mul(w, rstd) : rstd;
    if (c.needs(3)) out[3] = neg(mul(out[2], ws));
    if (c.needs(4)) {
      Tensor r3 = mul(rstd, mul(rstd, ws));
      out[4] = mul(sum_over(mul(g, xc), dims, false), scale(r3, -0.5));
    }
    if (!c.needs(2)) out[2] = Tensor();
  }
  if (c.needs(3) && c.grads[1].defined()) out[3] = accumulate(out[3], c.grads[1]);
  if (c.needs(4) && c.grads[2].defined()) out[4] = accumulate(out[4], c.grads[2]);
  return out;
}

std::vector<Tensor> layer_norm_rule(const GradContext& c) {
  const Tensor &x = c.inputs[0], &w = c.inputs[1];
  const Tensor &mean = c.outputs[1], &var = c.outputs[2];
  int64_t k = c.attrs.get_int("normalized_ndim"), nd = x.dim();
  double eps = c.attrs.get_float("eps");
  std::vector<int64_t> dims;
  double n = 1;
  for (int64_t d = nd - k; d < nd; ++d) dims.push_back(d), n *= double(x.size(d));
  Shape kept = mean.shape();  // leading dims, then ones over the normalized dims
  kept.resize(size_t(nd), 1);
  auto lead = [&](const Tensor& t) { return t.reshape(kept); };
  std::vector<Tensor> out(3);
  const Tensor& g = c.grads[0];
  Tensor mean_b = lead(mean);
  if (g.defined() && !is_grad_enabled()) {
    auto r = ops("layer_norm_backward", {g, x, w, mean, var},
                 {{"normalized_ndim", k}, {"eps", eps}});
    out = {r[0], r[1], r[2]};
  } else if (g.defined()) {
    Tensor rstd_b = lead(op("rsqrt", {add(var, scalar_like(var, eps))}));
    Tensor xhat = mul(sub(x, mean_b), rstd_b);
    out[0] = norm_grad_x(g, xhat, w, rstd_b, dims, n);
    if (c.needs(1)) out[1] = mul(g, xhat);  // the engine sums over the leading dims
    if (c.needs(2)) out[2] = g;
  }
  auto stat = [&](size_t i) { return c.grads[i].defined() ? lead(c.grads[i]) : Tensor(); };
  Tensor sg = stats_grad(x, mean_b, stat(1), stat(2), n);
  if (sg.defined()) out[0] = accumulate(out[0], sg);
  if (!c.needs(0)) out[0] = Tensor();
  if (!c.needs(1)) out[1] = Tensor();
  if (!c.needs(2)) out[2] = Tensor();
  return out;
}

// d loss / d mask of attention_fused: with P = exp(scale q k^T + mask - lse)
// (zero above the diagonal when causal), dS = P * (gO v^T - rowsum(gO * out)
// + grad_lse). Built from ops, so it is differentiable again.
// Returns {P, dS}.
std::pair<Tensor, Tensor> attention_probs_and_score_grad(const GradContext& c) {
  const Tensor &q = c.inputs[0], &k = c.inputs[1], &v = c.inputs[2];
  const Tensor &out = c.outputs[0], &lse = c.outputs[1];
  Tensor scores = mul(op("matmul", {q, k.transpose(-1, -2)}), scalar_like(q, c.attrs.get_float("scale")));
  if (c.inputs[3].defined()) scores = add(scores, c.inputs[3]);
  Tensor p = op("exp", {sub(scores, lse.unsqueeze(-1))});
  if (c.attrs.has("causal") && c.attrs.get_bool("causal")) p = op("tril", {p}, {{"diagonal", int64_t(0)}});
  Tensor g_out = c.grad_or_zeros(0);
  Tensor dp = sub(op("matmul", {g_out, v.transpose(-1, -2)}),
                  op("sum", {mul(g_out, out)}, {{"dims", std::vector<int64_t>{-1}}, {"keepdim", true}}));
  if (c.grads[1].defined()) dp = add(dp, c.grads[1].unsqueeze(-1));
  return {p, mul(p, dp)};
}

Tensor attention_mask_grad(const GradContext& c) { return attention_probs_and_score_grad(c).second; }

// The whole gradient of attention_fused in ops (the [L, S] matrices stored):
// under create_graph, where the fused backward kernel has no derivative of its
// own, so second derivatives (gradient penalties, meta-learning) go through these.
std::vector<Tensor> attention_grad_in_ops(const GradContext& c) {
  auto [p, ds] = attention_probs_and_score_grad(c);
  const Tensor &q = c.inputs[0], &k = c.inputs[1];
  Tensor scale = scalar_like(q, c.attrs.get_float("scale"));
  return {c.needs(0) ? mul(op("matmul", {ds, k}), scale) : Tensor(),
          c.needs(1) ? mul(op("matmul", {ds.transpose(-1, -2), q}), scale) : Tensor(),
          c.needs(2) ? op("matmul", {p.transpose(-1, -2), c.grad_or_zeros(0)}) : Tensor(),
          c.inputs[3].defined() && c.needs(3) ? ds : Tensor()};
}

}  // namespace

void register_nn_grad_rules() {
  register_grad_rule("matmul", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor g = c.grad_or_zeros(0);
    // broadcast batch dims are summed away by the engine; each saved input is
    // read only for the other's gradient (so a frozen side may be written in place)
    return {c.needs(0) ? op("matmul", {g, c.inputs[1].transpose(-1, -2)}) : Tensor(),
            c.needs(1) ? op("matmul", {c.inputs[0].transpose(-1, -2), g}) : Tensor()};
  });

  // y = x W^T + b: gx = g W, gW = g^T x over all leading dims, gb = g summed over them.
  register_grad_rule("linear", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor g = c.grad_or_zeros(0);
    const Tensor &xm = c.inputs.meta(0), &wm = c.inputs.meta(1);
    int64_t out = wm.shape()[0], in = wm.shape()[1];
    std::vector<int64_t> lead;
    int64_t rows = 1;  // counted, not -1: with 0 features a -1 would be ambiguous
    for (int64_t i = 0; i + 1 < g.dim(); ++i) {
      lead.push_back(i);
      rows *= g.size(i);
    }
    return {c.needs(0) ? op("matmul", {g.reshape({rows, out}), c.inputs[1]}).reshape(xm.shape()) : Tensor(),
            c.needs(1) ? op("matmul", {g.reshape({rows, out}).t(), c.inputs[0].reshape({rows, in})}) : Tensor(),
            c.needs(2) ? (lead.empty() ? g : sum_over(g, lead, false)) : Tensor()};
  });

  register_grad_rule("conv2d", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor g = c.grad_or_zeros(0);
    const Tensor &xm = c.inputs.meta(0), &wm = c.inputs.meta(1);
    return {c.needs(0) ? conv_data(g, c.inputs[1], xm.shape(), c.attrs) : Tensor(),
            c.needs(1) ? conv_weight(g, c.inputs[0], wm.shape(), c.attrs) : Tensor(),
            c.needs(2) ? sum_over(g, {0, 2, 3}, false) : Tensor()};
  });
  // grad_x = D(grad_y, w) is the adjoint of conv2d(., w): <D(gy, w), u> = <gy, conv(u, w)>
  register_grad_rule("conv2d_backward_data", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor gg = c.grad_or_zeros(0);
    const Tensor &gy = c.inputs[0], &w = c.inputs[1];
    return {c.needs(0) ? conv(gg, w, c.attrs) : Tensor(),
            c.needs(1) ? conv_weight(gy, gg, w.shape(), c.attrs) : Tensor()};
  });
  // grad_w = W(grad_y, x) with <W(gy, x), v> = <gy, conv(x, v)>
  register_grad_rule("conv2d_backward_weight", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor gg = c.grad_or_zeros(0);
    const Tensor &gy = c.inputs[0], &x = c.inputs[1];
    return {c.needs(0) ? conv(x, gg, c.attrs) : Tensor(),
            c.needs(1) ? conv_data(gy, gg, x.shape(), c.attrs) : Tensor()};
  });

  // Pooling: grad_x is linear in grad_y and piecewise constant in x.
  for (const char* name : {"max_pool2d", "avg_pool2d"}) {
    std::string backward = std::string(name) + "_backward";
    register_grad_rule(name, [backward](const GradContext& c) -> std::vector<Tensor> {
      return {op(backward.c_str(), {c.grad_or_zeros(0), c.inputs[0]}, c.attrs)};
    });
  }
  register_grad_rule("max_pool2d_backward", [](const GradContext& c) -> std::vector<Tensor> {
    return {c.needs(0) ? max_pool_select(c.grad_or_zeros(0), c.inputs[1], c.attrs) : Tensor(), Tensor()};
  });
  register_grad_rule("avg_pool2d_backward", [](const GradContext& c) -> std::vector<Tensor> {
    return {c.needs(0) ? op("avg_pool2d", {c.grad_or_zeros(0)}, c.attrs) : Tensor(), Tensor()};
  });

  register_grad_rule("batch_norm", batch_norm_rule);
  register_grad_rule("layer_norm", layer_norm_rule);

  register_grad_rule("softmax", [](const GradContext& c) -> std::vector<Tensor> {
    return {op("softmax_backward", {c.grad_or_zeros(0), c.outputs[0]}, c.attrs)};
  });
  register_grad_rule("log_softmax", [](const GradContext& c) -> std::vector<Tensor> {
    return {op("log_softmax_backward", {c.grad_or_zeros(0), c.outputs[0]}, c.attrs)};
  });
  // out = y * (gy - s), s = sum(gy * y): d/dgy = y * (G - sum(G * y)) (self-adjoint),
  // d/dy = G * (gy - s) - sum(G * y) * gy
  register_grad_rule("softmax_backward", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor G = c.grad_or_zeros(0);
    const Tensor &gy = c.inputs[0], &y = c.inputs[1];
    int64_t dim = c.attrs.get_int("dim");
    Tensor dgy, dy;
    if (c.needs(0)) dgy = op("softmax_backward", {G, y}, c.attrs);
    if (c.needs(1)) {
      Tensor s = sum_along(mul(gy, y), dim);
      dy = sub(mul(G, sub(gy, s)), mul(sum_along(mul(G, y), dim), gy));
    }
    return {dgy, dy};
  });
  // out = gy - exp(y) * sum(gy): d/dgy = G - sum(G * exp(y)), d/dy = -G * exp(y) * sum(gy)
  register_grad_rule("log_softmax_backward", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor G = c.grad_or_zeros(0);
    const Tensor &gy = c.inputs[0], &y = c.inputs[1];
    int64_t dim = c.attrs.get_int("dim");
    Tensor p = op("exp", {y});
    return {c.needs(0) ? sub(G, sum_along(mul(G, p), dim)) : Tensor(),
            c.needs(1) ? neg(mul(mul(G, p), sum_along(gy, dim))) : Tensor()};
  });

  for (const char* name : {"cross_entropy", "nll_loss"}) {
    std::string backward = std::string(name) + "_backward";
    register_grad_rule(name, [backward](const GradContext& c) -> std::vector<Tensor> {
      return {op(backward.c_str(), {c.grad_or_zeros(0), c.inputs[0], c.inputs[1]}, c.attrs), Tensor()};
    });
  }
  register_grad_rule("nll_loss_backward", [](const GradContext& c) -> std::vector<Tensor> {
    // independent of the log-probabilities' values
    return {c.needs(0) ? loss_grad_y_adjoint("nll_loss_backward", c, c.grad_or_zeros(0)) : Tensor(), Tensor(),
            Tensor()};
  });
  // grad_logits = f * (softmax(x) - (1 - e) onehot - e / C) with f = gy * valid / count:
  // only softmax depends on x, so d/dx = softmax_backward(G * f, softmax(x)).
  register_grad_rule("cross_entropy_backward", [](const GradContext& c) -> std::vector<Tensor> {
    Tensor G = c.grad_or_zeros(0);
    const Tensor& x = c.inputs[1];
    Tensor dgy, dx;
    if (c.needs(0)) dgy = loss_grad_y_adjoint("cross_entropy_backward", c, G);
    if (c.needs(1)) {
      Attrs dim{{"dim", class_dim(x)}};
      dx = op("softmax_backward", {mul(G, cross_entropy_factor(c)), op("softmax", {x}, dim)}, dim);
    }
    return {dgy, dx, Tensor()};
  });

  // y = x * mask / (1 - p); the mask (output 1) is a constant draw
  register_grad_rule("dropout", [](const GradContext& c) -> std::vector<Tensor> {
    if (!c.grads[0].defined()) return {Tensor()};
    Tensor mask = c.outputs[1].detach();
    return {mul(c.grads[0], scale(mask, 1.0 / (1.0 - c.attrs.get_float("p"))))};
  });

  register_grad_rule("embedding", [](const GradContext& c) -> std::vector<Tensor> {
    const Tensor &w = c.inputs[0], &idx = c.inputs[1];
    return {op("embedding_backward", {c.grad_or_zeros(0), idx},
               {{"num_weights", w.size(0)}, {"padding_idx", c.attrs.get_int("padding_idx")}}),
            Tensor()};
  });
  // grad_weight[v] = sum of grad rows with index v (v != padding_idx), so
  // d/dgrad = G[index] masked where index == padding_idx
  register_grad_rule("embedding_backward", [](const GradContext& c) -> std::vector<Tensor> {
    if (!c.needs(0)) return {Tensor(), Tensor()};
    const Tensor& idx = c.inputs[1];
    int64_t pad = c.attrs.get_int("padding_idx");
    Tensor rows = op("embedding", {c.grad_or_zeros(0), idx}, {{"padding_idx", pad}});
    if (pad >= 0) {
      Tensor keep = op("ne", {idx, Tensor::full({}, double(pad), idx.dtype(), idx.device())});
      rows = mul(rows, keep.to(rows.dtype()).unsqueeze(-1));
    }
    return {rows, Tensor()};
  });

  // Fused attention: one backward kernel for q, k and v (recomputing the
  // probabilities from lse). A float mask that requires grad (as PyTorch's
  // math path allows) gets dS, which has the mask's [..., L, S] shape anyway.
  register_grad_rule("attention_fused", [](const GradContext& c) -> std::vector<Tensor> {
    if (is_grad_enabled()) return attention_grad_in_ops(c);
    auto g = ops("attention_fused_backward",
                 {c.grad_or_zeros(0), c.inputs[0], c.inputs[1], c.inputs[2], c.inputs[3], c.outputs[0], c.outputs[1],
                  c.grads[1]},
                 c.attrs);
    Tensor grad_mask = c.inputs[3].defined() && c.needs(3) ? attention_mask_grad(c) : Tensor();
    return {g[0], g[1], g[2], grad_mask};
  });

  // Fused recurrent layer: one backward kernel (it recomputes the forward)
  // for the input, the initial states, the weights and the biases.
  register_grad_rule("rnn_layer", [](const GradContext& c) -> std::vector<Tensor> {
    std::vector<Tensor> in;
    for (size_t i = 0; i < 8; ++i) in.push_back(i < c.inputs.size() ? c.inputs[i] : Tensor());
    for (size_t k = 0; k < 3; ++k) in.push_back(c.grads[k]);
    auto g = ops("rnn_layer_backward", in, c.attrs);
    auto given = [&](size_t i, const Tensor& t) { return in[i].defined() ? t : Tensor(); };
    // per input: x, hx, w_ih, w_hh, cx, b_ih, b_hh, lengths
    return {g[0], g[1], g[3], g[4], given(4, g[2]), given(5, g[5]), given(6, g[6]), Tensor()};
  });
}

}  // namespace oar::autograd
