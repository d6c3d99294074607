// Tests of nll_loss, cross_entropy and their backward ops against plain
// double-precision reference loops, on f32/f64/f16/bf16 with i64 and i32
// targets, [N, C], [N, C, d...] and [C] inputs, every reduction, ignore_index,
// label smoothing and non-contiguous inputs; backward ops are checked against
// the analytic gradient and central finite differences of the forward (f64);
// bad arguments must raise the typed oar errors.
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

const DType kFloats[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

std::vector<double> sample(int64_t n, DType d, uint32_t seed, double lo, double hi) {
  auto v = random_values(n, lo, hi, seed, d);
  for (auto& x : v) x = round_to(x, d);
  return v;
}

struct Layout {
  int64_t N, C, S;
  explicit Layout(const Shape& x) {
    if (x.size() == 1) {
      N = 1, C = x[0], S = 1;
      return;
    }
    N = x[0], C = x[1], S = 1;
    for (size_t d = 2; d < x.size(); ++d) S *= x[d];
  }
  int64_t at(int64_t p, int64_t c) const { return (p / S) * C * S + c * S + p % S; }
};

Shape target_shape(const Shape& x) {
  if (x.size() == 1) return {};
  Shape t{x[0]};
  t.insert(t.end(), x.begin() + 2, x.end());
  return t;
}

// Targets in [0, C), with every fourth position set to `ignore`.
std::vector<double> targets(int64_t n, int64_t C, int64_t ignore, uint32_t seed) {
  auto v = random_values(n, 0, double(C), seed, DType::f64);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = i % 4 == 1 ? double(ignore) : std::min(std::floor(v[i]), double(C - 1));
  return v;
}

struct Cfg {
  std::string reduction = "mean";
  int64_t ignore = -100;
  double eps = 0;
  Attrs attrs(bool fused) const {
    Attrs a{{"reduction", reduction}, {"ignore_index", ignore}};
    if (fused) a.set("label_smoothing", eps);
    return a;
  }
};

// Reference loss (per position for 'none', else one value) in double.
std::vector<double> loss_ref(const std::vector<double>& x, const std::vector<double>& t, const Shape& xs,
                             const Cfg& cfg, bool fused) {
  Layout L(xs);
  std::vector<double> per;
  double count = 0;
  for (int64_t p = 0; p < L.N * L.S; ++p) {
    int64_t tgt = int64_t(t[size_t(p)]);
    if (tgt == cfg.ignore) {
      per.push_back(0);
      continue;
    }
    count += 1;
    if (!fused) {
      per.push_back(-x[size_t(L.at(p, tgt))]);
      continue;
    }
    double m = -INFINITY, s = 0, sum_x = 0;
    for (int64_t c = 0; c < L.C; ++c) m = std::max(m, x[size_t(L.at(p, c))]);
    for (int64_t c = 0; c < L.C; ++c)
      s += std::exp(x[size_t(L.at(p, c))] - m), sum_x += x[size_t(L.at(p, c))];
    double lse = m + std::log(s);
    double nll = lse - x[size_t(L.at(p, tgt))], smooth = double(L.C) * lse - sum_x;
    per.push_back((1 - cfg.eps) * nll + cfg.eps / double(L.C) * smooth);
  }
  if (cfg.reduction == "none") return per;
  double total = 0;
  for (double v : per) total += v;
  return {cfg.reduction == "mean" ? total / count : total};
}

// Reference gradient of sum(grad_y * loss) with respect to the scores.
std::vector<double> grad_ref(const std::vector<double>& g, const std::vector<double>& x,
                             const std::vector<double>& t, const Shape& xs, const Cfg& cfg, bool fused) {
  Layout L(xs);
  double count = 0;
  for (double v : t) count += int64_t(v) != cfg.ignore;
  std::vector<double> out(x.size(), 0.0);
  for (int64_t p = 0; p < L.N * L.S; ++p) {
    int64_t tgt = int64_t(t[size_t(p)]);
    if (tgt == cfg.ignore) continue;
    double gp = cfg.reduction == "none" ? g[size_t(p)] : g[0];
    if (cfg.reduction == "mean") gp /= count;
    if (!fused) {
      out[size_t(L.at(p, tgt))] = -gp;
      continue;
    }
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < L.C; ++c) m = std::max(m, x[size_t(L.at(p, c))]);
    for (int64_t c = 0; c < L.C; ++c) s += std::exp(x[size_t(L.at(p, c))] - m);
    for (int64_t c = 0; c < L.C; ++c) {
      double q = (c == tgt ? 1 - cfg.eps : 0) + cfg.eps / double(L.C);
      out[size_t(L.at(p, c))] = gp * (std::exp(x[size_t(L.at(p, c))] - m) / s - q);
    }
  }
  return out;
}

// `values` as a step-2 slice along dim 0 (non-contiguous).
Tensor sliced(const std::vector<double>& values, const Shape& shape, DType d, Device dev) {
  Shape bs = shape;
  bs[0] *= 2;
  int64_t row = numel_of(shape) / shape[0];
  std::vector<double> buf(size_t(numel_of(bs)), 0.5);
  for (int64_t r = 0; r < shape[0]; ++r)
    std::copy_n(values.begin() + r * row, row, buf.begin() + 2 * r * row);
  return make_tensor(buf, bs, d, dev).slice(0, 0, bs[0], 2);
}

const std::vector<Shape> kShapes = {{5, 4}, {2, 3, 2, 3}, {4}};

void check_forward(bool fused) {
  const char* op = fused ? "cross_entropy" : "nll_loss";
  for (Device dev : devices())
    for (DType dt : kFloats)
      for (DType tt : {DType::i64, DType::i32})
        for (const Shape& xs : kShapes)
          for (const char* red : {"none", "mean", "sum"})
            for (int64_t ignore : {int64_t(-100), int64_t(1)})
              for (double eps : fused ? std::vector<double>{0.0, 0.1} : std::vector<double>{0.0}) {
                Cfg cfg{red, ignore, eps};
                Layout L(xs);
                auto x = sample(numel_of(xs), dt, 70, fused ? -4 : -6, fused ? 4 : 0);
                auto t = targets(L.N * L.S, L.C, ignore, 71);
                if (xs.size() == 1) t = {2};
                auto want = loss_ref(x, t, xs, cfg, fused);
                Tensor target = make_tensor(t, target_shape(xs), tt, dev);
                std::vector<Tensor> inputs{make_tensor(x, xs, dt, dev), sliced(x, xs, dt, dev)};
                if (xs.size() == 2) inputs.push_back(make_tensor(x, xs, dt, dev).t().contiguous().t());
                for (const Tensor& in : inputs) {
                  Tensor y = call1(op, {in, target}, cfg.attrs(fused));
                  ASSERT_EQ(y.shape(), cfg.reduction == "none" ? target_shape(xs) : Shape{});
                  ASSERT_EQ(y.dtype(), dt);
                  double tol = std::max(tolerance(dt), 1e-12);
                  expect_close(host_values(y), want, tol, tol,
                               str(op, " ", dt, " ", tt, " ", shape_str(xs), " ", red, " ignore ", ignore,
                                   " eps ", eps));
                }
              }
}

void check_backward(bool fused) {
  const char* op = fused ? "cross_entropy" : "nll_loss";
  std::string bop = std::string(op) + "_backward";
  for (Device dev : devices())
    for (DType dt : kFloats)
      for (const Shape& xs : kShapes)
        for (const char* red : {"none", "mean", "sum"})
          for (double eps : fused ? std::vector<double>{0.0, 0.2} : std::vector<double>{0.0}) {
            Cfg cfg{red, -100, eps};
            Layout L(xs);
            Shape ys = cfg.reduction == "none" ? target_shape(xs) : Shape{};
            auto x = sample(numel_of(xs), dt, 72, -3, 3);
            auto t = xs.size() == 1 ? std::vector<double>{1} : targets(L.N * L.S, L.C, -100, 73);
            auto g = sample(numel_of(ys), dt, 74, -2, 2);
            Tensor target = make_tensor(t, target_shape(xs), DType::i64, dev);
            Tensor gx =
                call1(bop, {make_tensor(g, ys, dt, dev), sliced(x, xs, dt, dev), target}, cfg.attrs(fused));
            ASSERT_EQ(gx.shape(), xs);
            ASSERT_EQ(gx.dtype(), dt);
            auto want = grad_ref(g, x, t, xs, cfg, fused);
            double tol = std::max(tolerance(dt), 1e-12);
            expect_close(host_values(gx), want, tol, tol, str(bop, " ", dt, " ", shape_str(xs), " ", red));
            if (dt != DType::f64) continue;
            // central differences of sum(g * loss(x)) in f64
            auto objective = [&](const std::vector<double>& xv) {
              auto y = host_values(call1(op, {make_tensor(xv, xs, dt, dev), target}, cfg.attrs(fused)));
              double s = 0;
              for (size_t i = 0; i < y.size(); ++i) s += y[i] * g[i];
              return s;
            };
            auto got = host_values(gx);
            const double h = 1e-5;
            for (size_t i = 0; i < x.size(); ++i) {
              auto xp = x, xm = x;
              xp[i] += h;
              xm[i] -= h;
              double fd = (objective(xp) - objective(xm)) / (2 * h);
              EXPECT_NEAR(got[i], fd, 1e-7) << bop << " FD at " << i << " " << shape_str(xs) << " " << red;
            }
          }
}

}  // namespace

TEST(NllLoss, ForwardMatchesReference) { check_forward(false); }
TEST(NllLoss, BackwardMatchesAnalyticAndFiniteDifferences) { check_backward(false); }
TEST(CrossEntropy, ForwardMatchesReference) { check_forward(true); }
TEST(CrossEntropy, BackwardMatchesAnalyticAndFiniteDifferences) { check_backward(true); }

TEST(CrossEntropy, StableForLargeLogits) {
  for (Device dev : devices())
    for (DType dt : {DType::f32, DType::f64}) {
      std::vector<double> x{1000, 0, -1000, 500, 520, 510};
      Tensor target = make_tensor({2, 1}, {2}, DType::i64, dev);
      Cfg cfg{"none"};
      auto y =
          host_values(call1("cross_entropy", {make_tensor(x, {2, 3}, dt, dev), target}, cfg.attrs(true)));
      expect_close(y, loss_ref(x, {2, 1}, {2, 3}, cfg, true), 1e-6, 1e-6, "large logits");
      auto gx = host_values(call1("cross_entropy_backward",
                                  {Tensor::ones({2}, dt, dev), make_tensor(x, {2, 3}, dt, dev), target},
                                  cfg.attrs(true)));
      expect_close(gx, grad_ref({1, 1}, x, {2, 1}, {2, 3}, cfg, true), 1e-6, 1e-6, "large logits grad");
    }
}

TEST(Losses, EmptyAndAllIgnored) {
  for (Device dev : devices())
    for (const char* op : {"nll_loss", "cross_entropy"}) {
      Tensor x = Tensor::zeros({3, 4}, DType::f32, dev);
      Tensor ignored = make_tensor({-100, -100, -100}, {3}, DType::i64, dev);
      EXPECT_TRUE(std::isnan(call1(op, {x, ignored}).item())) << op;
      EXPECT_EQ(call1(op, {x, ignored}, {{"reduction", std::string("sum")}}).item(), 0.0) << op;
      Tensor e = Tensor::zeros({0, 4}, DType::f32, dev);
      Tensor et = Tensor::zeros({0}, DType::i64, dev);
      EXPECT_EQ(call1(op, {e, et}, {{"reduction", std::string("sum")}}).item(), 0.0) << op;
      EXPECT_EQ(call1(op, {e, et}, {{"reduction", std::string("none")}}).shape(), (Shape{0})) << op;
      Tensor gx = call1(std::string(op) + "_backward", {Tensor::ones({}, DType::f32, dev), x, ignored});
      EXPECT_EQ(host_values(gx), std::vector<double>(12, 0.0)) << op;
    }
}

TEST(Losses, Errors) {
  for (Device dev : devices())
    for (const char* op : {"nll_loss", "cross_entropy"}) {
      Tensor x = Tensor::zeros({3, 4}, DType::f32, dev);
      Tensor t = make_tensor({0, 4, 1}, {3}, DType::i64, dev);
      try {
        call1(op, {x, t});
        ADD_FAILURE() << "expected IndexError";
      } catch (const IndexError& e) {
        std::string m = e.what();
        EXPECT_NE(m.find(op), std::string::npos) << m;
        EXPECT_NE(m.find("target 4"), std::string::npos) << m;
        EXPECT_NE(m.find("[0, 4)"), std::string::npos) << m;
      }
      EXPECT_THROW(call1(op, {x, make_tensor({0, -1, 1}, {3}, DType::i32, dev)}), IndexError);
      std::string bop = std::string(op) + "_backward";
      EXPECT_THROW(call1(bop, {Tensor::ones({}, DType::f32, dev), x, t}), IndexError);
      EXPECT_THROW(call1(op, {x, t.to(DType::f32)}), DTypeError);
      EXPECT_THROW(call1(op, {x.to(DType::i64), t}), DTypeError);
      EXPECT_THROW(call1(op, {x, Tensor::zeros({4}, DType::i64, dev)}), ShapeError);
      EXPECT_THROW(call1(op, {Tensor::zeros({}, DType::f32, dev), Tensor::zeros({}, DType::i64, dev)}),
                   ShapeError);
      EXPECT_THROW(call1(op, {x, Tensor::zeros({3}, DType::i64, dev)}, {{"reduction", std::string("avg")}}),
                   ValueError);
      EXPECT_THROW(call1(bop, {Tensor::ones({3}, DType::f32, dev), x, Tensor::zeros({3}, DType::i64, dev)}),
                   ShapeError);
    }
  Tensor x = Tensor::zeros({3, 4}, DType::f32, devices()[0]);
  Tensor t = Tensor::zeros({3}, DType::i64, devices()[0]);
  EXPECT_THROW(call1("cross_entropy", {x, t}, {{"label_smoothing", 1.5}}), ValueError);
  EXPECT_THROW(call1("nll_loss", {x, t}, {{"label_smoothing", 0.1}}), ValueError);  // no such attribute
}

TEST(Losses, LargeInputsSplitAcrossThreads) {
  for (Device dev : devices())
    for (const Shape& xs : {Shape{8192, 10}, Shape{4, 5, 64, 64}})
      for (const char* red : {"none", "mean"}) {
        Cfg cfg{red, -100, 0.05};
        Layout L(xs);
        auto x = sample(numel_of(xs), DType::f32, 95, -5, 5);
        auto t = targets(L.N * L.S, L.C, -100, 96);
        Tensor xt = make_tensor(x, xs, DType::f32, dev),
               tt = make_tensor(t, target_shape(xs), DType::i64, dev);
        expect_close(host_values(call1("cross_entropy", {xt, tt}, cfg.attrs(true))),
                     loss_ref(x, t, xs, cfg, true), 1e-5, 1e-5,
                     str("large cross_entropy ", shape_str(xs), " ", red));
        Shape ys = cfg.reduction == "none" ? target_shape(xs) : Shape{};
        auto g = sample(numel_of(ys), DType::f32, 97, -1, 1);
        Tensor gx =
            call1("cross_entropy_backward", {make_tensor(g, ys, DType::f32, dev), xt, tt}, cfg.attrs(true));
        expect_close(host_values(gx), grad_ref(g, x, t, xs, cfg, true), 1e-5, 1e-6,
                     str("large cross_entropy_backward ", shape_str(xs), " ", red));
        expect_close(host_values(call1("nll_loss", {xt, tt}, cfg.attrs(false))),
                     loss_ref(x, t, xs, cfg, false), 1e-5, 1e-5,
                     str("large nll_loss ", shape_str(xs), " ", red));
      }
}
