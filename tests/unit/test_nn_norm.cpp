// batch_norm / layer_norm and their backward ops against double loops over
// the definitions (statistics per channel or per row, biased variance), with
// and without weight/bias, training and inference batch norm, 2-D to 4-D
// inputs, every float dtype; the backward loops are themselves checked
// against central finite differences of the f64 forward op. Typed errors.
#include <functional>

#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

const DType kFloatTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

// Normalization groups: which group (channel / row) and which parameter each element uses.
struct Groups {
  int64_t count, params;
  std::function<int64_t(int64_t)> group, param;
};

Groups batch_groups(const Shape& x) {
  int64_t C = x[1], S = numel_of(x) / (x[0] * C);
  return {C, C, [=](int64_t k) { return (k / S) % C; }, [=](int64_t k) { return (k / S) % C; }};
}
Groups layer_groups(const Shape& x, int64_t nd) {
  int64_t D = numel_of(Shape(x.end() - nd, x.end()));
  return {numel_of(x) / D, D, [=](int64_t k) { return k / D; }, [=](int64_t k) { return k % D; }};
}

struct Forward {
  std::vector<double> y, mean, var;
};

// y = (x - mean) / sqrt(var + eps) * w + b; statistics from x unless given.
Forward norm_forward(const std::vector<double>& x, const Groups& g, const std::vector<double>& w,
                     const std::vector<double>& b, double eps, const std::vector<double>* mean_in = nullptr,
                     const std::vector<double>* var_in = nullptr) {
  Forward f;
  std::vector<double> n(size_t(g.count), 0.0);
  f.mean.assign(size_t(g.count), 0.0);
  f.var.assign(size_t(g.count), 0.0);
  for (size_t k = 0; k < x.size(); ++k) f.mean[size_t(g.group(int64_t(k)))] += x[k], n[size_t(g.group(int64_t(k)))] += 1;
  for (int64_t c = 0; c < g.count; ++c) f.mean[size_t(c)] /= n[size_t(c)];
  for (size_t k = 0; k < x.size(); ++k) {
    double d = x[k] - f.mean[size_t(g.group(int64_t(k)))];
    f.var[size_t(g.group(int64_t(k)))] += d * d;
  }
  for (int64_t c = 0; c < g.count; ++c) f.var[size_t(c)] /= n[size_t(c)];
  if (mean_in) f.mean = *mean_in, f.var = *var_in;
  for (size_t k = 0; k < x.size(); ++k) {
    size_t c = size_t(g.group(int64_t(k))), p = size_t(g.param(int64_t(k)));
    double wp = w.empty() ? 1.0 : w[p], bp = b.empty() ? 0.0 : b[p];
    f.y.push_back((x[k] - f.mean[c]) / std::sqrt(f.var[c] + eps) * wp + bp);
  }
  return f;
}

struct Backward {
  std::vector<double> gx, gw, gb;
};

// The textbook gradient through the batch statistics: with xhat and dxhat = gy * w,
// gx = (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)) / sqrt(var + eps).
Backward norm_backward(const std::vector<double>& gy, const std::vector<double>& x, const Groups& g,
                       const std::vector<double>& w, const std::vector<double>& mean, const std::vector<double>& var,
                       double eps) {
  size_t G = size_t(g.count);
  std::vector<double> n(G, 0.0), m1(G, 0.0), m2(G, 0.0), xhat(x.size());
  Backward r{std::vector<double>(x.size()), std::vector<double>(size_t(g.params), 0.0),
             std::vector<double>(size_t(g.params), 0.0)};
  for (size_t k = 0; k < x.size(); ++k) {
    size_t c = size_t(g.group(int64_t(k))), p = size_t(g.param(int64_t(k)));
    xhat[k] = (x[k] - mean[c]) / std::sqrt(var[c] + eps);
    double dx = gy[k] * (w.empty() ? 1.0 : w[p]);
    m1[c] += dx, m2[c] += dx * xhat[k], n[c] += 1;
    r.gw[p] += gy[k] * xhat[k];
    r.gb[p] += gy[k];
  }
  for (size_t k = 0; k < x.size(); ++k) {
    size_t c = size_t(g.group(int64_t(k))), p = size_t(g.param(int64_t(k)));
    double dx = gy[k] * (w.empty() ? 1.0 : w[p]);
    r.gx[k] = (dx - m1[c] / n[c] - xhat[k] * m2[c] / n[c]) / std::sqrt(var[c] + eps);
  }
  return r;
}

Tensor rand(const Shape& s, DType d, Device dev, uint32_t seed, double lo = -1, double hi = 1) {
  return make_tensor(random_values(numel_of(s), lo, hi, seed, d), s, d, dev);
}

std::vector<double> values_or_empty(const Tensor& t) { return t.defined() ? host_values(t) : std::vector<double>{}; }

// d/dv sum(gy * f(v)) by central differences, one element of `v` at a time (f64).
std::vector<double> numeric_grad(const Tensor& v, const Tensor& gy, const std::function<Tensor(const Tensor&)>& f) {
  std::vector<double> base = host_values(v), gyv = host_values(gy), out;
  const double h = 1e-6;
  for (size_t i = 0; i < base.size(); ++i) {
    double loss[2];
    for (int s = 0; s < 2; ++s) {
      std::vector<double> p = base;
      p[i] += s ? -h : h;
      std::vector<double> y = host_values(f(make_tensor(p, v.shape(), DType::f64, v.device())));
      loss[s] = 0;
      for (size_t k = 0; k < y.size(); ++k) loss[s] += gyv[k] * y[k];
    }
    out.push_back((loss[0] - loss[1]) / (2 * h));
  }
  return out;
}

}  // namespace

TEST(NNNorm, BatchNormForwardAndBackward) {
  const Shape shapes[] = {{6, 3}, {2, 3, 4, 5}, {3, 2, 7}};
  for (Device dev : devices())
    for (DType d : kFloatTypes)
      for (const Shape& xs : shapes)
        for (bool affine : {true, false})
          for (bool training : {true, false}) {
            int64_t C = xs[1];
            Tensor x = rand(xs, d, dev, 1, -2, 3), gy = rand(xs, d, dev, 2);
            Tensor w = affine ? rand({C}, d, dev, 3, 0.5, 1.5) : Tensor(), b = affine ? rand({C}, d, dev, 4) : Tensor();
            Tensor rm = rand({C}, d, dev, 5), rv = rand({C}, d, dev, 6, 0.5, 2);
            std::vector<double> rmv = host_values(rm), rvv = host_values(rv);
            Groups g = batch_groups(xs);
            Forward want = norm_forward(host_values(x), g, values_or_empty(w), values_or_empty(b), 1e-3,
                                        training ? nullptr : &rmv, training ? nullptr : &rvv);
            auto outs = call("batch_norm", {x, w, b, rm, rv}, {{"training", training}, {"eps", 1e-3}});
            std::string what = str("batch_norm ", dtype_name(d), " ", shape_str(xs), " affine ", affine, " training ", training);
            double tol = tolerance(d);
            expect_close(host_values(outs[0]), want.y, tol, tol * 8, what + " y");
            expect_close(host_values(outs[1]), want.mean, tol, tol * 4, what + " save_mean");
            expect_close(host_values(outs[2]), want.var, tol, tol * 4, what + " save_var");
            if (!training) continue;
            Backward bw = norm_backward(host_values(gy), host_values(x), g, values_or_empty(w), host_values(outs[1]),
                                        host_values(outs[2]), 1e-3);
            auto grads = call("batch_norm_backward", {gy, x, w, outs[1], outs[2]}, {{"eps", 1e-3}});
            expect_close(host_values(grads[0]), bw.gx, tol * 4, tol * 16, what + " grad_x");
            expect_close(host_values(grads[1]), bw.gw, tol * 4, tol * 16, what + " grad_weight");
            expect_close(host_values(grads[2]), bw.gb, tol * 4, tol * 16, what + " grad_bias");
          }
}

TEST(NNNorm, LayerNormForwardAndBackward) {
  struct Case { Shape x; int64_t nd; };
  const Case cases[] = {{{4, 7}, 1}, {{2, 3, 4}, 2}, {{2, 3, 4}, 3}, {{3, 1, 16}, 1}};
  for (Device dev : devices())
    for (DType d : kFloatTypes)
      for (const Case& k : cases)
        for (bool affine : {true, false}) {
          Shape norm(k.x.end() - k.nd, k.x.end()), lead(k.x.begin(), k.x.end() - k.nd);
          Tensor x = rand(k.x, d, dev, 7, -2, 3), gy = rand(k.x, d, dev, 8);
          Tensor w = affine ? rand(norm, d, dev, 9, 0.5, 1.5) : Tensor(), b = affine ? rand(norm, d, dev, 10) : Tensor();
          Groups g = layer_groups(k.x, k.nd);
          Forward want = norm_forward(host_values(x), g, values_or_empty(w), values_or_empty(b), 1e-5);
          Attrs attrs{{"normalized_ndim", k.nd}};
          auto outs = call("layer_norm", {x, w, b}, attrs);
          std::string what = str("layer_norm ", dtype_name(d), " ", shape_str(k.x), " nd ", k.nd, " affine ", affine);
          double tol = tolerance(d);
          ASSERT_EQ(outs[1].shape(), lead) << what;
          expect_close(host_values(outs[0]), want.y, tol, tol * 8, what + " y");
          expect_close(host_values(outs[1]), want.mean, tol, tol * 4, what + " mean");
          expect_close(host_values(outs[2]), want.var, tol, tol * 4, what + " var");
          Backward bw = norm_backward(host_values(gy), host_values(x), g, values_or_empty(w), host_values(outs[1]),
                                      host_values(outs[2]), 1e-5);
          auto grads = call("layer_norm_backward", {gy, x, w, outs[1], outs[2]}, attrs);
          ASSERT_EQ(grads[1].shape(), norm);
          expect_close(host_values(grads[0]), bw.gx, tol * 4, tol * 16, what + " grad_x");
          expect_close(host_values(grads[1]), bw.gw, tol * 4, tol * 16, what + " grad_weight");
          expect_close(host_values(grads[2]), bw.gb, tol * 4, tol * 16, what + " grad_bias");
        }
}

// The analytic loops above match central differences of the f64 forward ops.
TEST(NNNorm, BackwardMatchesFiniteDifferences) {
  for (Device dev : devices()) {
    const DType d = DType::f64;
    Shape xs{3, 2, 2, 2};
    Tensor x = rand(xs, d, dev, 11, -2, 3), gy = rand(xs, d, dev, 12), w = rand({2}, d, dev, 13, 0.5, 1.5),
           b = rand({2}, d, dev, 14);
    auto bn = [&](const Tensor& xx, const Tensor& ww, const Tensor& bb) {
      return call("batch_norm", {xx, ww, bb, Tensor(), Tensor()}, {{"training", true}})[0];
    };
    auto outs = call("batch_norm", {x, w, b, Tensor(), Tensor()}, {{"training", true}});
    auto grads = call("batch_norm_backward", {gy, x, w, outs[1], outs[2]});
    expect_close(host_values(grads[0]), numeric_grad(x, gy, [&](const Tensor& t) { return bn(t, w, b); }), 1e-6, 1e-6, "bn dx");
    expect_close(host_values(grads[1]), numeric_grad(w, gy, [&](const Tensor& t) { return bn(x, t, b); }), 1e-6, 1e-6, "bn dw");
    expect_close(host_values(grads[2]), numeric_grad(b, gy, [&](const Tensor& t) { return bn(x, w, t); }), 1e-6, 1e-6, "bn db");

    Shape ls{2, 3, 4};
    Tensor lx = rand(ls, d, dev, 15, -2, 3), lgy = rand(ls, d, dev, 16), lw = rand({3, 4}, d, dev, 17), lb = rand({3, 4}, d, dev, 18);
    Attrs a{{"normalized_ndim", int64_t(2)}};
    auto ln = [&](const Tensor& xx, const Tensor& ww, const Tensor& bb) { return call("layer_norm", {xx, ww, bb}, a)[0]; };
    auto louts = call("layer_norm", {lx, lw, lb}, a);
    auto lgrads = call("layer_norm_backward", {lgy, lx, lw, louts[1], louts[2]}, a);
    expect_close(host_values(lgrads[0]), numeric_grad(lx, lgy, [&](const Tensor& t) { return ln(t, lw, lb); }), 1e-6, 1e-6, "ln dx");
    expect_close(host_values(lgrads[1]), numeric_grad(lw, lgy, [&](const Tensor& t) { return ln(lx, t, lb); }), 1e-6, 1e-6, "ln dw");
    expect_close(host_values(lgrads[2]), numeric_grad(lb, lgy, [&](const Tensor& t) { return ln(lx, lw, t); }), 1e-6, 1e-6, "ln db");
  }
}

TEST(NNNorm, NonContiguousInputs) {
  for (Device dev : devices()) {
    Tensor x = rand({4, 5, 3, 2}, DType::f32, dev, 19).permute({0, 3, 1, 2});  // [4, 2, 5, 3]
    ASSERT_FALSE(x.is_contiguous());
    auto got = call("batch_norm", {x, Tensor(), Tensor(), Tensor(), Tensor()}, {{"training", true}});
    auto want = call("batch_norm", {x.contiguous(), Tensor(), Tensor(), Tensor(), Tensor()}, {{"training", true}});
    EXPECT_EQ(host_values(got[0]), host_values(want[0]));
    Tensor lx = rand({6, 4}, DType::f32, dev, 20).t();
    auto lgot = call("layer_norm", {lx, Tensor(), Tensor()});
    auto lwant = call("layer_norm", {lx.contiguous(), Tensor(), Tensor()});
    EXPECT_EQ(host_values(lgot[0]), host_values(lwant[0]));
  }
}

// oneDNN declines empty batches; the reference kernels give zero parameter gradients.
TEST(NNNorm, EmptyBatchBackward) {
  for (Device dev : devices())
    for (DType d : kFloatTypes) {
      Tensor c3 = Tensor::ones({3}, d, dev), x = Tensor::zeros({0, 3}, d, dev);
      auto g = call("batch_norm_backward", {x, x, c3, c3, c3});
      EXPECT_EQ(g[0].shape(), (Shape{0, 3}));
      EXPECT_EQ(host_values(g[1]), std::vector<double>(3, 0.0));
      EXPECT_EQ(host_values(g[2]), std::vector<double>(3, 0.0));
      Tensor m0 = Tensor::zeros({0}, d, dev);
      auto l = call("layer_norm_backward", {x, x, Tensor(), m0, m0});
      EXPECT_EQ(host_values(l[1]), std::vector<double>(3, 0.0));
      EXPECT_EQ(host_values(l[2]), std::vector<double>(3, 0.0));
    }
}

TEST(NNNorm, Errors) {
  for (Device dev : devices()) {
    Tensor x = Tensor::zeros({4, 3, 2, 2}, DType::f32, dev), c3 = Tensor::ones({3}, DType::f32, dev);
    EXPECT_THROW(call("batch_norm", {Tensor::zeros({4}, DType::f32, dev), Tensor(), Tensor(), Tensor(), Tensor()}), ShapeError);
    EXPECT_THROW(call("batch_norm", {x, Tensor::ones({4}, DType::f32, dev), Tensor(), c3, c3}), ShapeError);
    EXPECT_THROW(call("batch_norm", {x, c3.to(DType::f64), Tensor(), c3, c3}), DTypeError);
    EXPECT_THROW(call("batch_norm", {x, c3, c3, Tensor(), Tensor()}, {{"training", false}}), ValueError);
    EXPECT_THROW(call("batch_norm", {Tensor::zeros({1, 3}, DType::f32, dev), c3, c3, c3, c3}, {{"training", true}}),
                 ValueError);
    EXPECT_THROW(call("batch_norm", {x.to(DType::i32), Tensor(), Tensor(), Tensor(), Tensor()}, {{"training", true}}),
                 DTypeError);
    EXPECT_THROW(call("batch_norm_backward", {Tensor::zeros({4, 3}, DType::f32, dev), x, Tensor(), c3, c3}), ShapeError);
    EXPECT_THROW(call("layer_norm", {x, Tensor(), Tensor()}, {{"normalized_ndim", int64_t(5)}}), ValueError);
    EXPECT_THROW(call("layer_norm", {x, Tensor(), Tensor()}, {{"normalized_ndim", int64_t(0)}}), ValueError);
    EXPECT_THROW(call("layer_norm", {x, Tensor::ones({3, 2}, DType::f32, dev), Tensor()}, {{"normalized_ndim", int64_t(2)}}),
                 ShapeError);
    EXPECT_THROW(call("layer_norm_backward", {x, x, Tensor(), Tensor::zeros({4}, DType::f32, dev),
                                              Tensor::zeros({4}, DType::f32, dev)}),
                 ShapeError);
  }
}
