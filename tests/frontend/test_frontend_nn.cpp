// oar::nn modules: forward of every layer against references written here
// (plain double loops), BatchNorm2d running statistics and eval mode,
// Dropout in train/eval, parameter and buffer naming (Sequential "0.weight",
// nested modules), train/eval propagation, in-place to(dtype), zero_grad,
// and constructor/forward argument errors.
#include <cmath>

#include "oar/oar.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;
namespace F = oar::nn::functional;

namespace {

std::vector<double> vals(const Tensor& t) { return host_values(t); }

Tensor rand_tensor(const Shape& s, uint32_t seed, Device dev, DType dt = DType::f32) {
  return make_tensor(random_values(numel_of(s), -1, 1, seed, dt), s, dt, dev);
}

// y[n, o] = sum_i x[n, i] * w[o, i] + b[o]
std::vector<double> linear_ref(const std::vector<double>& x, const std::vector<double>& w,
                               const std::vector<double>& b, int64_t N, int64_t I, int64_t O) {
  std::vector<double> y(size_t(N * O));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o) {
      double acc = b.empty() ? 0.0 : b[size_t(o)];
      for (int64_t i = 0; i < I; ++i) acc += x[size_t(n * I + i)] * w[size_t(o * I + i)];
      y[size_t(n * O + o)] = acc;
    }
  return y;
}

struct ConvGeom {
  int64_t N, C, H, W, O, kh, kw, sh, sw, ph, pw, dh, dw, groups;
};

std::vector<double> conv_ref(const std::vector<double>& x, const std::vector<double>& w,
                             const std::vector<double>& b, const ConvGeom& g, int64_t& OH, int64_t& OW) {
  OH = (g.H + 2 * g.ph - g.dh * (g.kh - 1) - 1) / g.sh + 1;
  OW = (g.W + 2 * g.pw - g.dw * (g.kw - 1) - 1) / g.sw + 1;
  const int64_t cin = g.C / g.groups, cout = g.O / g.groups;
  std::vector<double> y(size_t(g.N * g.O * OH * OW));
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t o = 0; o < g.O; ++o)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double acc = b[size_t(o)];
          const int64_t grp = o / cout;
          for (int64_t c = 0; c < cin; ++c)
            for (int64_t u = 0; u < g.kh; ++u)
              for (int64_t v = 0; v < g.kw; ++v) {
                int64_t h = i * g.sh - g.ph + u * g.dh, ww = j * g.sw - g.pw + v * g.dw;
                if (h < 0 || h >= g.H || ww < 0 || ww >= g.W) continue;
                acc += x[size_t(((n * g.C + grp * cin + c) * g.H + h) * g.W + ww)] *
                       w[size_t(((o * cin + c) * g.kh + u) * g.kw + v)];
              }
          y[size_t(((n * g.O + o) * OH + i) * OW + j)] = acc;
        }
  return y;
}

}  // namespace

TEST(FrontendNN, LinearMatchesLoopAndInitBounds) {
  for (Device dev : devices()) {
    manual_seed(7);
    nn::Linear fc(5, 3);
    fc->to(dev);
    ASSERT_EQ(fc->weight.shape(), (Shape{3, 5}));
    ASSERT_EQ(fc->bias.shape(), (Shape{3}));
    EXPECT_TRUE(fc->weight.requires_grad());
    // PyTorch's default init: U(-1/sqrt(in), 1/sqrt(in)) for weight and bias.
    const double bound = 1.0 / std::sqrt(5.0);
    for (double v : vals(fc->weight)) EXPECT_LE(std::abs(v), bound);
    for (double v : vals(fc->bias)) EXPECT_LE(std::abs(v), bound);
    Tensor x = rand_tensor({4, 5}, 1, dev);
    Tensor y = fc(x);
    ASSERT_EQ(y.shape(), (Shape{4, 3}));
    expect_close(vals(y), linear_ref(vals(x), vals(fc->weight), vals(fc->bias), 4, 5, 3), 1e-5, 1e-6, "linear");
    // A transposed (non-contiguous) input and a 3-D batch give the same rows.
    Tensor xt = rand_tensor({5, 4}, 2, dev).t();
    expect_close(vals(fc(xt)), linear_ref(vals(xt), vals(fc->weight), vals(fc->bias), 4, 5, 3), 1e-5, 1e-6,
                 "linear transposed input");
    EXPECT_EQ(fc(x.reshape({2, 2, 5})).shape(), (Shape{2, 2, 3}));
    // Same seed, same parameters.
    manual_seed(7);
    nn::Linear again(5, 3);
    EXPECT_EQ(vals(again->weight), vals(fc->weight));
    nn::Linear nobias(5, 3, /*bias=*/false);
    nobias->to(dev);
    EXPECT_FALSE(nobias->bias.defined());
    EXPECT_EQ(nobias->parameters().size(), 1u);
    expect_close(vals(nobias(x)), linear_ref(vals(x), vals(nobias->weight), {}, 4, 5, 3), 1e-5, 1e-6, "no bias");
    EXPECT_THROW(fc(rand_tensor({4, 6}, 3, dev)), ShapeError);
  }
  EXPECT_THROW(nn::Linear(0, 3), ValueError);
}

// Modules converted with to(dtype) compute in that dtype (f64, f16, bf16).
TEST(FrontendNN, LinearAndConvInEveryFloatingDType) {
  for (Device dev : devices())
    for (DType dt : {DType::f64, DType::f16, DType::bf16}) {
      manual_seed(4);
      nn::Linear fc(6, 4);
      nn::Conv2d conv(2, 3, 3, 1, 1);
      fc->to(dt);
      conv->to(dt);
      fc->to(dev);
      conv->to(dev);
      ASSERT_EQ(fc->weight.dtype(), dt);
      const double tol = tolerance(dt) * 8;
      Tensor x = rand_tensor({3, 6}, 21, dev, dt);
      Tensor y = fc(x);
      EXPECT_EQ(y.dtype(), dt);
      expect_close(vals(y), linear_ref(vals(x), vals(fc->weight), vals(fc->bias), 3, 6, 4), tol, tol,
                   std::string("linear ") + dtype_name(dt));
      Tensor img = rand_tensor({1, 2, 4, 4}, 22, dev, dt);
      int64_t OH = 0, OW = 0;
      auto want = conv_ref(vals(img), vals(conv->weight), vals(conv->bias), {1, 2, 4, 4, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1},
                           OH, OW);
      expect_close(vals(conv(img)), want, tol, tol, std::string("conv2d ") + dtype_name(dt));
    }
}

TEST(FrontendNN, Conv2dMatchesLoopAndOp) {
  for (Device dev : devices()) {
    manual_seed(3);
    const ConvGeom g{2, 4, 7, 6, 6, 3, 2, 2, 1, 1, 0, 1, 2, 2};
    nn::Conv2d conv(nn::Conv2dOptions(4, 6, {3, 2}).stride({2, 1}).padding({1, 0}).dilation({1, 2}).groups(2));
    conv->to(dev);
    EXPECT_EQ(conv->weight.shape(), (Shape{6, 2, 3, 2}));
    Tensor x = rand_tensor({2, 4, 7, 6}, 4, dev);
    Tensor y = conv(x);
    int64_t OH = 0, OW = 0;
    auto want = conv_ref(vals(x), vals(conv->weight), vals(conv->bias), g, OH, OW);
    ASSERT_EQ(y.shape(), (Shape{2, 6, OH, OW}));
    expect_close(vals(y), want, 1e-5, 1e-5, "conv2d module");
    Tensor direct = call1("conv2d", {x, conv->weight, conv->bias},
                          {{"stride", std::vector<int64_t>{2, 1}}, {"padding", std::vector<int64_t>{1, 0}},
                           {"dilation", std::vector<int64_t>{1, 2}}, {"groups", int64_t(2)}});
    EXPECT_EQ(vals(y), vals(direct));
    // Positional form, square kernel, no bias.
    nn::Conv2d plain(3, 2, 3, /*stride=*/1, /*padding=*/1, /*dilation=*/1, /*groups=*/1, /*bias=*/false);
    plain->to(dev);
    EXPECT_EQ(plain(rand_tensor({1, 3, 5, 5}, 5, dev)).shape(), (Shape{1, 2, 5, 5}));
    EXPECT_THROW(plain(rand_tensor({1, 4, 5, 5}, 6, dev)), ShapeError);
  }
  EXPECT_THROW(nn::Conv2d(3, 4, 3, 1, 0, 1, /*groups=*/2), ValueError);
}

TEST(FrontendNN, BatchNorm2dRunningStatsAndEval) {
  for (Device dev : devices()) {
    nn::BatchNorm2d bn(3);
    bn->to(dev);
    {
      oar::autograd::NoGradGuard g;
      bn->weight.copy_(Tensor::from_vector<float>({1.5f, -1.0f, 0.5f}, {3}));
      bn->bias.copy_(Tensor::from_vector<float>({0.1f, 0.2f, -0.3f}, {3}));
    }
    const int64_t N = 2, C = 3, HW = 4;
    Tensor x = rand_tensor({N, C, 2, 2}, 11, dev);
    auto xv = vals(x), w = vals(bn->weight), b = vals(bn->bias);
    std::vector<double> mean(C, 0), var(C, 0);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t k = 0; k < HW; ++k) mean[size_t(c)] += xv[size_t((n * C + c) * HW + k)] / double(N * HW);
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t k = 0; k < HW; ++k) var[size_t(c)] += std::pow(xv[size_t((n * C + c) * HW + k)] - mean[size_t(c)], 2);
    std::vector<double> want(xv.size()), rm(C), rv(C), want_eval(xv.size());
    for (int64_t c = 0; c < C; ++c) {
      rm[size_t(c)] = 0.1 * mean[size_t(c)];
      rv[size_t(c)] = 0.9 + 0.1 * var[size_t(c)] / double(N * HW - 1);  // unbiased
    }
    for (int64_t n = 0; n < N; ++n)
      for (int64_t c = 0; c < C; ++c)
        for (int64_t k = 0; k < HW; ++k) {
          size_t i = size_t((n * C + c) * HW + k);
          want[i] = (xv[i] - mean[size_t(c)]) / std::sqrt(var[size_t(c)] / double(N * HW) + 1e-5) * w[size_t(c)] + b[size_t(c)];
          want_eval[i] = (xv[i] - rm[size_t(c)]) / std::sqrt(rv[size_t(c)] + 1e-5) * w[size_t(c)] + b[size_t(c)];
        }
    EXPECT_TRUE(bn->is_training());
    expect_close(vals(bn(x)), want, 1e-4, 1e-5, "batch_norm train output");
    expect_close(vals(bn->running_mean), rm, 1e-5, 1e-6, "running_mean");
    expect_close(vals(bn->running_var), rv, 1e-5, 1e-6, "running_var");
    EXPECT_EQ(bn->num_batches_tracked.item(), 1);
    bn->eval();
    expect_close(vals(bn(x)), want_eval, 1e-4, 1e-5, "batch_norm eval output");
    expect_close(vals(bn->running_mean), rm, 1e-5, 1e-6, "eval leaves running_mean");
    EXPECT_EQ(bn->num_batches_tracked.item(), 1);
    // momentum = nullopt: cumulative average over the batches seen.
    nn::BatchNorm2d cum(3, 1e-5, std::nullopt);
    cum->to(dev);
    Tensor x2 = rand_tensor({N, C, 2, 2}, 12, dev);
    cum(x);
    cum(x2);
    Tensor m1 = oar::mean(x, {0, 2, 3}), m2 = oar::mean(x2, {0, 2, 3});
    expect_close(vals(cum->running_mean), vals((m1 + m2) * 0.5), 1e-5, 1e-6, "cumulative running_mean");
    EXPECT_THROW(bn(rand_tensor({2, 4, 2, 2}, 1, dev)), ShapeError);
  }
}

TEST(FrontendNN, BatchNormWithoutRunningStatsUsesBatchStats) {
  nn::BatchNorm2d bn(2, 1e-5, 0.1, /*affine=*/false, /*track_running_stats=*/false);
  EXPECT_TRUE(bn->parameters().empty());
  EXPECT_TRUE(bn->buffers().empty());
  Tensor x = rand_tensor({3, 2, 2, 2}, 5, Device::cpu());
  Tensor train = bn(x);
  bn->eval();
  EXPECT_EQ(vals(bn(x)), vals(train));
  // Per channel the output has zero mean.
  for (double m : vals(mean(train, {0, 2, 3}))) EXPECT_NEAR(m, 0.0, 1e-6);
}

TEST(FrontendNN, DropoutTrainScalesEvalIsIdentity) {
  for (Device dev : devices()) {
    nn::Dropout drop(0.25);
    Tensor x = Tensor::ones({100, 100}, DType::f32, dev);
    manual_seed(1);
    auto y = vals(drop(x));
    size_t zeros = 0;
    for (double v : y) {
      if (v == 0) ++zeros;
      else EXPECT_NEAR(v, 1.0 / 0.75, 1e-6);
    }
    EXPECT_NEAR(double(zeros) / double(y.size()), 0.25, 0.03);
    manual_seed(1);
    EXPECT_EQ(vals(drop(x)), y) << "same seed, same mask";
    drop->eval();
    EXPECT_TRUE(drop(x).is_same(x));
    drop->train();
    EXPECT_EQ(vals(nn::Dropout(1.0)(x)), std::vector<double>(10000, 0.0));
    EXPECT_TRUE(nn::Dropout(0.0)(x).is_same(x));
  }
  EXPECT_THROW(nn::Dropout(1.5), ValueError);
}

TEST(FrontendNN, LayerNormEmbeddingActivationsPools) {
  Device dev = Device::cpu();
  nn::LayerNorm ln(std::vector<int64_t>{4});
  Tensor x = rand_tensor({3, 4}, 9, dev);
  auto xv = vals(x);
  std::vector<double> want(xv.size());
  for (int r = 0; r < 3; ++r) {
    double m = 0, v = 0;
    for (int c = 0; c < 4; ++c) m += xv[size_t(r * 4 + c)] / 4;
    for (int c = 0; c < 4; ++c) v += std::pow(xv[size_t(r * 4 + c)] - m, 2) / 4;
    for (int c = 0; c < 4; ++c) want[size_t(r * 4 + c)] = (xv[size_t(r * 4 + c)] - m) / std::sqrt(v + 1e-5);
  }
  expect_close(vals(ln(x)), want, 1e-4, 1e-5, "layer_norm");
  EXPECT_THROW(ln(rand_tensor({3, 5}, 1, dev)), ShapeError);

  manual_seed(2);
  nn::Embedding emb(10, 3, /*padding_idx=*/0);
  EXPECT_EQ(vals(emb->weight.select(0, 0)), std::vector<double>(3, 0.0));
  Tensor idx = Tensor::from_vector<int64_t>({4, 0, 9}, {3});
  auto out = vals(emb(idx)), table = vals(emb->weight);
  for (int i = 0; i < 3; ++i)
    for (int d = 0; d < 3; ++d) EXPECT_EQ(out[size_t(i * 3 + d)], table[size_t(std::vector<int>{4, 0, 9}[size_t(i)] * 3 + d)]);

  for (double v : vals(nn::ReLU()(x))) EXPECT_GE(v, 0.0);
  expect_close(vals(nn::Sigmoid()(x)), [&] { std::vector<double> r; for (double v : xv) r.push_back(1 / (1 + std::exp(-v))); return r; }(), 1e-5, 1e-6, "sigmoid");
  expect_close(vals(nn::Tanh()(x)), [&] { std::vector<double> r; for (double v : xv) r.push_back(std::tanh(v)); return r; }(), 1e-5, 1e-6, "tanh");
  expect_close(vals(nn::SiLU()(x)), [&] { std::vector<double> r; for (double v : xv) r.push_back(v / (1 + std::exp(-v))); return r; }(), 1e-5, 1e-6, "silu");
  expect_close(vals(nn::GELU()(x)), [&] { std::vector<double> r; for (double v : xv) r.push_back(0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))); return r; }(), 1e-5, 1e-6, "gelu");

  // Pooling on 1..16 laid out as a 4x4 image.
  std::vector<float> img(16);
  for (int i = 0; i < 16; ++i) img[size_t(i)] = float(i + 1);
  Tensor im = Tensor::from_vector(img, {1, 1, 4, 4});
  EXPECT_EQ(vals(nn::MaxPool2d(2)(im)), (std::vector<double>{6, 8, 14, 16}));
  EXPECT_EQ(vals(nn::AvgPool2d(2)(im)), (std::vector<double>{3.5, 5.5, 11.5, 13.5}));
  EXPECT_EQ(vals(nn::AdaptiveAvgPool2d(1)(im)), (std::vector<double>{8.5}));
  EXPECT_EQ(vals(nn::AdaptiveAvgPool2d(2)(im)), (std::vector<double>{3.5, 5.5, 11.5, 13.5}));
  // Uneven windows (PyTorch's): rows [0,2) [1,3) [2,4), all columns.
  expect_close(vals(nn::AdaptiveAvgPool2d(nn::ExpandingArray2{3, 1})(im)), {4.5, 8.5, 12.5}, 1e-6, 1e-6,
               "adaptive uneven");
  EXPECT_EQ(nn::Flatten()(im).shape(), (Shape{1, 16}));
}

TEST(FrontendNN, SequentialAndNestedNames) {
  nn::Sequential seq(nn::Linear(2, 3), nn::ReLU(), nn::Linear(3, 1));
  EXPECT_EQ(seq->named_parameters().keys(), (std::vector<std::string>{"0.weight", "0.bias", "2.weight", "2.bias"}));
  EXPECT_EQ(seq->size(), 3u);
  ASSERT_NE(seq->ptr_as<nn::LinearImpl>(2), nullptr);
  Tensor x = rand_tensor({5, 2}, 3, Device::cpu());
  auto l0 = seq->ptr_as<nn::LinearImpl>(0), l2 = seq->ptr_as<nn::LinearImpl>(2);
  Tensor h = F::relu(F::linear(x, l0->weight, l0->bias));
  EXPECT_EQ(vals(seq(x)), vals(F::linear(h, l2->weight, l2->bias)));

  struct Net : nn::Module {
    Net() {
      features = register_module("features", nn::Sequential(nn::Conv2d(1, 2, 3), nn::BatchNorm2d(2)));
      head = register_module("head", nn::Linear(8, 2));
    }
    Tensor forward(const Tensor& x) override { return head(features(x).flatten(1)); }
    nn::Sequential features{nullptr};
    nn::Linear head{nullptr};
  };
  auto net = std::make_shared<Net>();
  EXPECT_EQ(net->named_parameters().keys(),
            (std::vector<std::string>{"features.0.weight", "features.0.bias", "features.1.weight", "features.1.bias",
                                      "head.weight", "head.bias"}));
  EXPECT_EQ(net->named_buffers().keys(),
            (std::vector<std::string>{"features.1.running_mean", "features.1.running_var",
                                      "features.1.num_batches_tracked"}));
  EXPECT_EQ(net->named_parameters(/*recurse=*/false).size(), 0u);
  EXPECT_EQ(net->children().size(), 2u);
  EXPECT_EQ(net->modules().size(), 5u);  // net, features, conv, bn, head
  EXPECT_EQ(net->state_dict().size(), 9u);
  EXPECT_EQ((*net)(rand_tensor({2, 1, 4, 4}, 4, Device::cpu())).shape(), (Shape{2, 2}));
  net->eval();
  EXPECT_FALSE(net->features->ptr(1)->is_training());
  net->train();
  EXPECT_TRUE(net->features->ptr(1)->is_training());
  EXPECT_THROW(net->register_parameter("head", Tensor::zeros({1})), ValueError);
  EXPECT_THROW(net->register_buffer("a.b", Tensor::zeros({1})), ValueError);
  EXPECT_THROW(nn::Module().forward(x), NotImplementedError);
}

TEST(FrontendNN, ToDTypeKeepsIdentityAndZeroGrad) {
  nn::Linear fc(3, 2);
  Tensor w = fc->weight;  // a handle the user (or an optimizer) keeps
  auto before = vals(w);
  fc->to(DType::f64);
  EXPECT_EQ(w.dtype(), DType::f64) << "in-place conversion keeps tensor identity";
  EXPECT_TRUE(w.requires_grad());
  expect_close(vals(w), before, 0, 0, "values survive to(f64)");
  nn::BatchNorm2d bn(2);
  bn->to(DType::f64);
  EXPECT_EQ(bn->num_batches_tracked.dtype(), DType::i64) << "integer buffers are not converted";
  EXPECT_EQ(bn->running_var.dtype(), DType::f64);
  fc->to(Device::cpu());
  EXPECT_EQ(w.device(), Device::cpu());

  Tensor y = fc(Tensor::ones({1, 3}, DType::f64));
  sum(y).backward();
  ASSERT_TRUE(fc->weight.grad().defined());
  fc->zero_grad(/*set_to_none=*/false);
  EXPECT_EQ(vals(fc->weight.grad()), std::vector<double>(6, 0.0));
  fc->zero_grad();
  EXPECT_FALSE(fc->weight.grad().defined());
}
