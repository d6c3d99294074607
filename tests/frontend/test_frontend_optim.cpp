// oar::optim: SGD (momentum, dampening, nesterov, weight decay), Adam,
// AdamW and amsgrad against hand-computed updates over three steps with
// fixed gradients (double-precision reference loops); zero_grad, parameter
// groups with their own lr, option validation; StepLR and CosineAnnealingLR
// lr sequences; and a small training loop written as a PyTorch user would.
#include <cmath>
#include <numbers>

#include "oar/oar.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

std::vector<double> vals(const Tensor& t) { return host_values(t); }

Tensor param(const std::vector<double>& v) {
  Tensor p = Tensor::from_vector<double>(v, {int64_t(v.size())});
  p.set_requires_grad(true);
  return p;
}

const std::vector<std::vector<double>> kGrads = {{0.5, -1.0, 2.0}, {-0.25, 0.75, 1.5}, {1.0, 0.0, -3.0}};
const std::vector<double> kStart = {1.0, -2.0, 0.5};

struct AdamRef {
  double lr, b1, b2, eps, wd;
  bool decoupled, amsgrad;
};

// Reference Adam/AdamW per PyTorch's documented algorithm.
std::vector<std::vector<double>> adam_reference(const AdamRef& o) {
  std::vector<double> p = kStart, m(3, 0), v(3, 0), vmax(3, 0);
  std::vector<std::vector<double>> out;
  for (size_t t = 1; t <= kGrads.size(); ++t) {
    for (size_t i = 0; i < 3; ++i) {
      double g = kGrads[t - 1][i];
      if (o.wd != 0) {
        if (o.decoupled) p[i] *= 1 - o.lr * o.wd;
        else g += o.wd * p[i];
      }
      m[i] = o.b1 * m[i] + (1 - o.b1) * g;
      v[i] = o.b2 * v[i] + (1 - o.b2) * g * g;
      double bc1 = 1 - std::pow(o.b1, double(t)), bc2 = 1 - std::pow(o.b2, double(t));
      vmax[i] = std::max(vmax[i], v[i]);
      double second = o.amsgrad ? vmax[i] : v[i];
      p[i] -= o.lr / bc1 * m[i] / (std::sqrt(second) / std::sqrt(bc2) + o.eps);
    }
    out.push_back(p);
  }
  return out;
}

void run_steps(optim::Optimizer& opt, Tensor& p, const std::vector<std::vector<double>>& want, const char* what) {
  for (size_t t = 0; t < kGrads.size(); ++t) {
    opt.zero_grad();
    p.set_grad(Tensor::from_vector<double>(kGrads[t], {3}));
    opt.step();
    expect_close(vals(p), want[t], 1e-12, 1e-12, std::string(what) + " step " + std::to_string(t + 1));
  }
}

}  // namespace

TEST(FrontendOptim, SGDMomentumNesterovWeightDecay) {
  const double lr = 0.1, mom = 0.9, wd = 0.01;
  for (bool nesterov : {false, true}) {
    for (double damp : {0.0, 0.3}) {
      if (nesterov && damp != 0) continue;
      std::vector<double> p = kStart, buf(3, 0);
      std::vector<std::vector<double>> want;
      for (size_t t = 0; t < kGrads.size(); ++t) {
        for (size_t i = 0; i < 3; ++i) {
          double g = kGrads[t][i] + wd * p[i];
          buf[i] = t == 0 ? g : mom * buf[i] + (1 - damp) * g;
          p[i] -= lr * (nesterov ? g + mom * buf[i] : buf[i]);
        }
        want.push_back(p);
      }
      Tensor w = param(kStart);
      Tensor same = w;  // the model's handle keeps seeing the updates
      optim::SGD opt({w}, optim::SGDOptions(lr).momentum(mom).dampening(damp).weight_decay(wd).nesterov(nesterov));
      run_steps(opt, w, want, nesterov ? "sgd nesterov" : "sgd momentum");
      EXPECT_TRUE(same.is_same(w));
      EXPECT_TRUE(w.requires_grad());
      EXPECT_TRUE(w.is_leaf());
      expect_close(vals(opt.momentum_buffer(w)), buf, 1e-12, 1e-12, "momentum buffer");
    }
  }
  // Plain SGD: p -= lr * g.
  Tensor w = param({1, 2, 3});
  optim::SGD plain({w}, optim::SGDOptions(0.5));
  w.set_grad(Tensor::from_vector<double>({1, 1, -2}, {3}));
  plain.step();
  EXPECT_EQ(vals(w), (std::vector<double>{0.5, 1.5, 4}));
  EXPECT_THROW(optim::SGD({w}, optim::SGDOptions(0.1).nesterov(true)), ValueError);
  EXPECT_THROW(optim::SGD({w}, optim::SGDOptions(-1)), ValueError);
}

TEST(FrontendOptim, AdamAdamWAmsgrad) {
  {
    Tensor w = param(kStart);
    optim::Adam opt({w}, optim::AdamOptions(0.1).betas({0.8, 0.95}).eps(1e-6).weight_decay(0.05));
    run_steps(opt, w, adam_reference({0.1, 0.8, 0.95, 1e-6, 0.05, false, false}), "adam");
    ASSERT_NE(opt.state(w), nullptr);
    EXPECT_EQ(opt.state(w)->step, 3);
  }
  {
    Tensor w = param(kStart);
    optim::AdamW opt({w}, optim::AdamWOptions(0.1).weight_decay(0.1));
    run_steps(opt, w, adam_reference({0.1, 0.9, 0.999, 1e-8, 0.1, true, false}), "adamw");
  }
  {
    Tensor w = param(kStart);
    optim::Adam opt({w}, optim::AdamOptions(0.05).amsgrad(true));
    run_steps(opt, w, adam_reference({0.05, 0.9, 0.999, 1e-8, 0.0, false, true}), "amsgrad");
  }
  EXPECT_DOUBLE_EQ(optim::AdamWOptions().weight_decay(), 1e-2);
  EXPECT_DOUBLE_EQ(optim::AdamOptions().weight_decay(), 0.0);
  Tensor w = param(kStart);
  EXPECT_THROW(optim::Adam({w}, optim::AdamOptions(0.1).betas({1.0, 0.9})), ValueError);
}

TEST(FrontendOptim, ZeroGradGroupsAndSkippedParams) {
  Tensor a = param({1, 1, 1}), b = param({1, 1, 1}), c = param({5, 5, 5});
  std::vector<optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{a});
  groups.emplace_back(std::vector<Tensor>{b}, std::make_unique<optim::SGDOptions>(1.0));
  optim::SGD opt(groups, optim::SGDOptions(0.1));
  EXPECT_EQ(opt.size(), 2u);
  opt.add_param_group(optim::OptimizerParamGroup({c}));
  EXPECT_DOUBLE_EQ(opt.param_groups()[1].options().get_lr(), 1.0);
  Tensor g = Tensor::ones({3}, DType::f64);
  a.set_grad(g.clone());
  b.set_grad(g.clone());
  opt.step();  // c has no gradient: untouched
  EXPECT_EQ(vals(a), std::vector<double>(3, 0.9));
  EXPECT_EQ(vals(b), std::vector<double>(3, 0.0));
  EXPECT_EQ(vals(c), std::vector<double>(3, 5.0));
  opt.zero_grad(/*set_to_none=*/false);
  EXPECT_EQ(vals(a.grad()), std::vector<double>(3, 0.0));
  opt.zero_grad();
  EXPECT_FALSE(a.grad().defined());
  EXPECT_THROW(opt.add_param_group(optim::OptimizerParamGroup({a})), ValueError) << "duplicate parameter";
  Tensor nonleaf = a * 2.0;
  EXPECT_THROW(optim::SGD({nonleaf}, optim::SGDOptions(0.1)), ValueError);
}

TEST(FrontendOptim, SchedulersLrSequence) {
  Tensor w = param({1, 2, 3});
  optim::SGD opt({w}, optim::SGDOptions(1.0));
  optim::StepLR step(opt, /*step_size=*/2, /*gamma=*/0.5);
  std::vector<double> got = {step.get_last_lr()[0]};
  for (int e = 0; e < 6; ++e) {
    opt.step();
    step.step();
    got.push_back(step.get_last_lr()[0]);
    EXPECT_DOUBLE_EQ(opt.param_groups()[0].options().get_lr(), got.back());
  }
  EXPECT_EQ(got, (std::vector<double>{1, 1, 0.5, 0.5, 0.25, 0.25, 0.125}));

  optim::Adam adam({w}, optim::AdamOptions(0.1));
  optim::CosineAnnealingLR cos(adam, /*T_max=*/4, /*eta_min=*/0.01);
  for (int e = 1; e <= 8; ++e) {
    cos.step();
    double want = 0.01 + (0.1 - 0.01) * (1 + std::cos(std::numbers::pi * e / 4.0)) / 2;
    EXPECT_NEAR(cos.get_last_lr()[0], want, 1e-15) << "epoch " << e;
    EXPECT_NEAR(adam.param_groups()[0].options().get_lr(), want, 1e-15);
  }
  EXPECT_NEAR(cos.get_last_lr()[0], 0.1, 1e-15) << "back at the base lr after 2 * T_max";
  EXPECT_THROW(optim::StepLR(opt, 0), ValueError);
}

// y = 3 x0 - 2 x1 + 0.5 learned by a small MLP with the usual loop.
TEST(FrontendOptim, TrainingLoopLossDecreases) {
  manual_seed(0);
  const int64_t n = 64;
  auto xs = random_values(n * 2, -1, 1, 42);
  std::vector<double> ys;
  for (int64_t i = 0; i < n; ++i) ys.push_back(3 * xs[size_t(2 * i)] - 2 * xs[size_t(2 * i + 1)] + 0.5);
  Tensor x = make_tensor(xs, {n, 2}, DType::f32, Device::cpu());
  Tensor y = make_tensor(ys, {n, 1}, DType::f32, Device::cpu());

  for (int which = 0; which < 2; ++which) {
    nn::Sequential model(nn::Linear(2, 16), nn::Tanh(), nn::Linear(16, 1));
    nn::MSELoss loss_fn;
    std::unique_ptr<optim::Optimizer> opt;
    if (which == 0) opt = std::make_unique<optim::SGD>(model->parameters(), optim::SGDOptions(0.05).momentum(0.9));
    else opt = std::make_unique<optim::Adam>(model->parameters(), optim::AdamOptions(0.02));
    double first = 0, last = 0;
    for (int epoch = 0; epoch < 150; ++epoch) {
      opt->zero_grad();
      Tensor loss = loss_fn(model(x), y);
      loss.backward();
      opt->step();
      if (epoch == 0) first = loss.item();
      last = loss.item();
    }
    EXPECT_LT(last, first * 0.02) << (which ? "Adam" : "SGD") << ": first " << first << " last " << last;
    // Evaluation without a graph.
    {
      oar::autograd::NoGradGuard no_grad;
      Tensor pred = model(x);
      EXPECT_FALSE(pred.requires_grad());
    }
  }
}

// A small CNN classifier memorises 8 samples: gradients reach every layer
// (conv, batch norm, pooling incl. uneven adaptive windows, dropout, layer
// norm, GELU, linear, cross entropy) and Adam reduces the loss.
TEST(FrontendOptim, ClassifierTrainsThroughEveryLayer) {
  manual_seed(3);
  Tensor x = make_tensor(random_values(8 * 36, -1, 1, 9), {8, 1, 6, 6}, DType::f32, Device::cpu());
  Tensor labels = Tensor::from_vector<int64_t>({0, 1, 2, 0, 1, 2, 0, 1}, {8});
  nn::Sequential model(nn::Conv2d(1, 4, 3, /*stride=*/1, /*padding=*/1), nn::BatchNorm2d(4), nn::ReLU(),
                       nn::MaxPool2d(2), nn::AdaptiveAvgPool2d(2), nn::Flatten(), nn::Dropout(0.1),
                       nn::LayerNorm(std::vector<int64_t>{16}), nn::GELU(), nn::Linear(16, 3));
  optim::Adam opt(model->parameters(), optim::AdamOptions(0.05));
  nn::CrossEntropyLoss criterion;
  double first = 0, last = 0;
  for (int step = 0; step < 60; ++step) {
    opt.zero_grad();
    Tensor loss = criterion(model(x), labels);
    loss.backward();
    if (step == 0) {
      for (const auto& [name, p] : model->named_parameters()) EXPECT_TRUE(p.grad().defined()) << name;
    }
    opt.step();
    (step == 0 ? first : last) = loss.item();
  }
  EXPECT_LT(last, first * 0.3) << "first " << first << " last " << last;
  model->eval();
  oar::autograd::NoGradGuard no_grad;
  auto pred = host_values(call1("argmax", {model(x)}, {{"dims", std::vector<int64_t>{1}}}));
  EXPECT_EQ(pred, host_values(labels));
}

TEST(FrontendOptim, EmbeddingGradientReachesUsedRows) {
  nn::Embedding emb(5, 3);
  Tensor idx = Tensor::from_vector<int64_t>({1, 3, 1}, {3});
  sum(emb(idx)).backward();
  auto g = host_values(emb->weight.grad());
  std::vector<double> want = {0, 0, 0, 2, 2, 2, 0, 0, 0, 1, 1, 1, 0, 0, 0};
  EXPECT_EQ(g, want);
}
