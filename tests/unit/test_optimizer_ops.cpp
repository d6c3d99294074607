// Tests of the fused optimizer ops sgd_step and adam_step (the optimizer
// kernel family) on every device and float dtype: several steps over a list
// of parameters of different shapes, in place (outputs = inputs, as the
// frontends call them) and functionally (fresh outputs, as a graph executor
// calls them), against a plain double-precision loop of PyTorch's rules that
// rounds stored state as the dtype does; the kernels against the catalog's
// decomposition; step and hyperparameter tensors ([lr], [lr, momentum],
// [lr, beta1, beta2]) against the attributes;
// bad lists and hyper-parameters must raise the typed oar errors.
#include <cmath>

#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

const DType kFloats[] = {DType::f32, DType::f64, DType::f16, DType::bf16};
const Shape kShapes[] = {{3, 5}, {7}, {}, {0, 4}, {2, 3, 4}};

struct Sgd {
  double lr = 0.1, momentum = 0, dampening = 0, wd = 0;
  bool nesterov = false, maximize = false;
  Attrs attrs(bool init) const {
    return {{"lr", lr},         {"momentum", momentum}, {"dampening", dampening}, {"weight_decay", wd},
            {"nesterov", nesterov}, {"maximize", maximize}, {"init_buffers", init}};
  }
};

struct Adam {
  double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0;
  bool amsgrad = false, maximize = false, decoupled = false;
  Attrs attrs(const std::vector<double>& steps) const {
    return {{"lr", lr}, {"beta1", b1}, {"beta2", b2}, {"eps", eps}, {"weight_decay", wd}, {"amsgrad", amsgrad},
            {"maximize", maximize}, {"decoupled_weight_decay", decoupled}, {"steps", steps}};
  }
};

// One parameter's host values: p, its state lists (buffer or m, v, vmax).
struct HostParam {
  std::vector<double> p, a, b, c;
};

void sgd_ref(HostParam& h, const std::vector<double>& g, const Sgd& o, bool first, DType d) {
  for (size_t i = 0; i < h.p.size(); ++i) {
    double x = o.maximize ? -g[i] : g[i];
    if (o.wd != 0) x += o.wd * h.p[i];
    if (o.momentum != 0) {
      h.a[i] = round_to(first ? x : o.momentum * h.a[i] + (1 - o.dampening) * x, d);
      x = o.nesterov ? x + o.momentum * h.a[i] : h.a[i];
    }
    h.p[i] = round_to(h.p[i] - o.lr * x, d);
  }
}

void adam_ref(HostParam& h, const std::vector<double>& g, const Adam& o, double t, DType d) {
  for (size_t i = 0; i < h.p.size(); ++i) {
    double x = o.maximize ? -g[i] : g[i], p = h.p[i];
    if (o.wd != 0) {
      if (o.decoupled) p *= 1 - o.lr * o.wd;
      else x += o.wd * p;
    }
    h.a[i] = round_to(o.b1 * h.a[i] + (1 - o.b1) * x, d);
    h.b[i] = round_to(o.b2 * h.b[i] + (1 - o.b2) * x * x, d);
    double second = h.b[i];
    if (o.amsgrad) second = h.c[i] = std::max(h.c[i], h.b[i]);
    const double denom = std::sqrt(second) / std::sqrt(1 - std::pow(o.b2, t)) + o.eps;
    h.p[i] = round_to(p - o.lr / (1 - std::pow(o.b1, t)) * (h.a[i] / denom), d);
  }
}

// Relative tolerance after a few steps: the update divides small moments.
double rtol(DType d) { return d == DType::f64 ? 1e-10 : d == DType::f32 ? 2e-5 : tolerance(d) * 2; }

struct Case {
  std::vector<HostParam> host;
  std::vector<Tensor> params, states[3];
};

Case make_case(Device dev, DType d, int lists, uint32_t seed) {
  Case c;
  for (const Shape& s : kShapes) {
    int64_t n = numel_of(s);
    HostParam h;
    h.p = random_values(n, -1, 1, seed++, d);
    for (auto& x : h.p) x = round_to(x, d);
    h.a.assign(size_t(n), 0), h.b.assign(size_t(n), 0), h.c.assign(size_t(n), 0);
    c.params.push_back(make_tensor(h.p, s, d, dev));
    for (int l = 0; l < lists; ++l) c.states[l].push_back(Tensor::zeros(s, d, dev));
    c.host.push_back(std::move(h));
  }
  return c;
}

std::vector<std::vector<double>> make_grads(const Case& c, DType d, uint32_t seed) {
  std::vector<std::vector<double>> g;
  for (const auto& h : c.host) {
    auto v = random_values(int64_t(h.p.size()), -2, 2, seed++, d);
    for (auto& x : v) x = round_to(x, d);
    g.push_back(v);
  }
  return g;
}

std::vector<Tensor> grad_tensors(const Case& c, const std::vector<std::vector<double>>& g, DType d, Device dev) {
  std::vector<Tensor> out;
  for (size_t k = 0; k < g.size(); ++k) out.push_back(make_tensor(g[k], c.params[k].shape(), d, dev));
  return out;
}

void check(const Case& c, int lists, DType d, const std::string& what) {
  for (size_t k = 0; k < c.params.size(); ++k) {
    expect_close(host_values(c.params[k]), c.host[k].p, rtol(d), rtol(d) * 1e-2, what + " param " + std::to_string(k));
    const std::vector<double>* refs[3] = {&c.host[k].a, &c.host[k].b, &c.host[k].c};
    for (int l = 0; l < lists; ++l)
      expect_close(host_values(c.states[l][k]), *refs[l], rtol(d), rtol(d) * 1e-2,
                   what + " state " + std::to_string(l) + " of param " + std::to_string(k));
  }
}

std::string name_of(Device dev, DType d) { return dev.str() + " " + dtype_name(d); }

TEST(OptimizerOps, SgdVariantsInPlaceMatchTheReference) {
  std::vector<Sgd> variants(6);
  variants[1].momentum = 0.9;
  variants[2].momentum = 0.9, variants[2].dampening = 0.3, variants[2].wd = 0.01;
  variants[3].momentum = 0.8, variants[3].nesterov = true, variants[3].wd = 0.05;
  variants[4].maximize = true, variants[4].wd = 0.1;
  variants[5].momentum = 0.5, variants[5].maximize = true;
  for (Device dev : devices())
    for (DType d : kFloats)
      for (size_t v = 0; v < variants.size(); ++v) {
        const Sgd& o = variants[v];
        const int lists = o.momentum != 0;
        Case c = make_case(dev, d, lists, 10);
        for (int step = 0; step < 3; ++step) {
          auto g = make_grads(c, d, 100 + step * 10);
          std::vector<Tensor> in{Tensor()}, out = c.params;
          for (auto& p : c.params) in.push_back(p);
          for (auto& t : grad_tensors(c, g, d, dev)) in.push_back(t);
          for (int l = 0; l < lists; ++l)
            for (auto& t : c.states[l]) in.push_back(t), out.push_back(t);
          call_out(OpRegistry::instance().get("sgd_step"), in, o.attrs(step == 0), out);
          for (size_t k = 0; k < c.host.size(); ++k) sgd_ref(c.host[k], g[k], o, step == 0, d);
        }
        check(c, lists, d, name_of(dev, d) + " sgd variant " + std::to_string(v));
      }
}

TEST(OptimizerOps, AdamVariantsInPlaceMatchTheReference) {
  std::vector<Adam> variants(5);
  variants[1].wd = 0.1;                                  // Adam, L2
  variants[2].wd = 0.1, variants[2].decoupled = true;    // AdamW
  variants[3].amsgrad = true, variants[3].b1 = 0.5;      // AMSGrad
  variants[4].maximize = true, variants[4].amsgrad = true, variants[4].decoupled = true, variants[4].wd = 0.01;
  for (Device dev : devices())
    for (DType d : kFloats)
      for (size_t v = 0; v < variants.size(); ++v) {
        const Adam& o = variants[v];
        const int lists = 2 + o.amsgrad;
        Case c = make_case(dev, d, lists, 20);
        for (int step = 1; step <= 3; ++step) {
          auto g = make_grads(c, d, 200 + step * 10);
          std::vector<Tensor> in{Tensor()}, out = c.params;
          for (auto& p : c.params) in.push_back(p);
          for (auto& t : grad_tensors(c, g, d, dev)) in.push_back(t);
          for (int l = 0; l < lists; ++l)
            for (auto& t : c.states[l]) in.push_back(t), out.push_back(t);
          // Parameters at different step counts in one call, as after a step without a gradient.
          std::vector<double> steps;
          for (size_t k = 0; k < c.host.size(); ++k) steps.push_back(double(step + int(k % 2)));
          call_out(OpRegistry::instance().get("adam_step"), in, o.attrs(steps), out);
          for (size_t k = 0; k < c.host.size(); ++k) adam_ref(c.host[k], g[k], o, steps[k], d);
        }
        check(c, lists, d, name_of(dev, d) + " adam variant " + std::to_string(v));
      }
}

// Fresh outputs (a graph executor's call): the inputs stay as they were and
// the outputs hold what the in-place update writes; the catalog's
// decomposition (for devices without the kernels) gives the same values;
// tensors for the learning rate and the step counts give what the
// attributes give.
TEST(OptimizerOps, FunctionalDecompositionAndTensorHyperParametersAgree) {
  const OpSchema& adam = OpRegistry::instance().get("adam_step");
  const OpSchema& sgd = OpRegistry::instance().get("sgd_step");
  for (Device dev : devices())
    for (DType d : {DType::f32, DType::f64}) {
      Case c = make_case(dev, d, 3, 30);
      auto g = grad_tensors(c, make_grads(c, d, 300), d, dev);
      for (auto& l : c.states)
        for (auto& t : l) t = make_tensor(random_values(t.numel(), 0, 1, 7, d), t.shape(), d, dev);
      Adam o;
      o.amsgrad = true, o.wd = 0.05, o.decoupled = true;
      std::vector<Tensor> in{Tensor()};
      for (auto& p : c.params) in.push_back(p);
      for (auto& t : g) in.push_back(t);
      for (auto& l : c.states)
        for (auto& t : l) in.push_back(t);
      std::vector<double> steps(c.params.size(), 4.0);
      std::vector<double> before = host_values(c.params[0]);
      std::vector<Tensor> functional = call(adam, in, o.attrs(steps));
      EXPECT_EQ(host_values(c.params[0]), before) << "the inputs of a functional call are not written";
      ASSERT_EQ(functional.size(), c.params.size() * 4);
      std::vector<Tensor> parts = adam.decompose(in, normalize_attrs(adam, o.attrs(steps)));
      // learning rate and steps as tensors
      std::vector<Tensor> with_tensors = in;
      with_tensors[0] = Tensor::full({}, o.lr, DType::f32, dev);
      for (size_t k = 0; k < c.params.size(); ++k) with_tensors.push_back(Tensor::full({}, 4.0, DType::f32, dev));
      Adam t = o;
      t.lr = 123;  // ignored: the tensor wins
      std::vector<Tensor> tensors = call(adam, with_tensors, t.attrs({}));
      // [lr, beta1, beta2] as one tensor (a training graph with cycled betas): kernel and decomposition
      with_tensors[0] = make_tensor({o.lr, o.b1, o.b2}, {3}, DType::f32, dev);
      t.b1 = 0.5, t.b2 = 0.25;  // ignored too
      std::vector<Tensor> hyper = call(adam, with_tensors, t.attrs({}));
      std::vector<Tensor> hyper_parts = adam.decompose(with_tensors, normalize_attrs(adam, t.attrs({})));
      Adam rounded = o;  // the hyperparameter tensor holds f32 betas: the reference uses the same values
      rounded.b1 = double(float(o.b1)), rounded.b2 = double(float(o.b2));
      std::vector<Tensor> hyper_want = call(adam, in, rounded.attrs(steps));
      const double tol = d == DType::f64 ? 1e-6 : 1e-5;  // the f32 learning rate and device pow
      for (size_t i = 0; i < functional.size(); ++i) {
        expect_close(host_values(parts[i]), host_values(functional[i]), tol, 1e-9, name_of(dev, d) + " decomposition");
        expect_close(host_values(tensors[i]), host_values(functional[i]), tol, 1e-9, name_of(dev, d) + " tensors");
        expect_close(host_values(hyper[i]), host_values(hyper_want[i]), tol, 1e-9, name_of(dev, d) + " betas tensor");
        expect_close(host_values(hyper_parts[i]), host_values(hyper_want[i]), tol, 1e-9,
                     name_of(dev, d) + " betas tensor, decomposition");
      }
      call_out(adam, in, o.attrs(steps), [&] {
        std::vector<Tensor> out = c.params;
        for (auto& l : c.states)
          for (auto& s : l) out.push_back(s);
        return out;
      }());
      for (size_t k = 0; k < c.params.size(); ++k)
        EXPECT_EQ(host_values(c.params[k]), host_values(functional[k])) << name_of(dev, d) << " in place = functional";

      Sgd s;
      s.momentum = 0.9, s.nesterov = true, s.wd = 0.01;
      std::vector<Tensor> sin{Tensor()};
      for (auto& p : c.params) sin.push_back(p);
      for (auto& t2 : g) sin.push_back(t2);
      for (auto& b : c.states[0]) sin.push_back(b);
      auto sf = call(sgd, sin, s.attrs(false));
      auto sp = sgd.decompose(sin, normalize_attrs(sgd, s.attrs(false)));
      sin[0] = Tensor::full({}, s.lr, DType::f32, dev);
      auto st = call(sgd, sin, s.attrs(false));
      sin[0] = make_tensor({s.lr, s.momentum}, {2}, DType::f32, dev);
      Sgd junk = s;
      junk.lr = 7, junk.momentum = 0.2;  // the tensor [lr, momentum] wins
      auto sh = call(sgd, sin, junk.attrs(false));
      auto shp = sgd.decompose(sin, normalize_attrs(sgd, junk.attrs(false)));
      for (size_t i = 0; i < sf.size(); ++i) {
        expect_close(host_values(sp[i]), host_values(sf[i]), tol, 1e-9, name_of(dev, d) + " sgd decomposition");
        expect_close(host_values(st[i]), host_values(sf[i]), tol, 1e-9, name_of(dev, d) + " sgd lr tensor");
        expect_close(host_values(sh[i]), host_values(sf[i]), tol, 1e-9, name_of(dev, d) + " sgd momentum tensor");
        expect_close(host_values(shp[i]), host_values(sf[i]), tol, 1e-9,
                     name_of(dev, d) + " sgd momentum tensor, decomposition");
      }
    }
}

// A NaN gradient reaches the parameter (no silent masking); AMSGrad's max keeps it.
TEST(OptimizerOps, NanPropagates) {
  for (Device dev : devices()) {
    Tensor p = make_tensor({1, 2}, {2}, DType::f32, dev), m = Tensor::zeros({2}, DType::f32, dev);
    Tensor v = Tensor::zeros({2}, DType::f32, dev), vmax = Tensor::zeros({2}, DType::f32, dev);
    Tensor g = make_tensor({NAN, 1}, {2}, DType::f32, dev);
    Adam o;
    o.amsgrad = true;
    call_out(OpRegistry::instance().get("adam_step"), {Tensor(), p, g, m, v, vmax}, o.attrs({1}), {p, m, v, vmax});
    auto pv = host_values(p), vm = host_values(vmax);
    EXPECT_TRUE(std::isnan(pv[0]) && std::isnan(vm[0])) << dev.str();
    EXPECT_FALSE(std::isnan(pv[1])) << dev.str();
  }
}

TEST(OptimizerOps, BadListsAndHyperParametersAreTypedErrors) {
  Device dev = devices().at(0);
  Tensor p = Tensor::zeros({3}, DType::f32, dev), g = Tensor::ones({3}, DType::f32, dev);
  Tensor m = Tensor::zeros({3}, DType::f32, dev), v = Tensor::zeros({3}, DType::f32, dev);
  Adam o;
  auto adam = [&](std::vector<Tensor> in, Attrs a) { return call("adam_step", in, a); };
  EXPECT_THROW(adam({Tensor(), p, g, m}, o.attrs({1})), ValueError);  // three lists, four needed
  EXPECT_THROW(adam({Tensor(), p, Tensor::ones({4}, DType::f32, dev), m, v}, o.attrs({1})), ShapeError);
  EXPECT_THROW(adam({Tensor(), p, g.to(DType::f64), m, v}, o.attrs({1})), DTypeError);
  EXPECT_THROW(adam({Tensor(), p.to(DType::i32), g.to(DType::i32), m.to(DType::i32), v.to(DType::i32)}, o.attrs({1})),
               DTypeError);
  EXPECT_THROW(adam({Tensor::full({}, 0.1, DType::f64, dev), p, g, m, v}, o.attrs({1})), DTypeError);  // lr not f32
  EXPECT_THROW(adam({make_tensor({0.1, 0.9, 0.99, 1}, {4}, DType::f32, dev), p, g, m, v}, o.attrs({1})),
               DTypeError);  // four hyperparameters
  EXPECT_THROW(adam({make_tensor({0.1, 0.9}, {2}, DType::f32, dev), p, g, m, v}, o.attrs({1})),
               ValueError);  // betas from a tensor with host step counts
  EXPECT_THROW(adam({Tensor(), p, g, m, v}, o.attrs({1, 2})), ValueError);  // two steps, one parameter
  EXPECT_THROW(adam({Tensor(), p, g, m, v}, o.attrs({0})), ValueError);     // steps count from 1
  EXPECT_THROW(adam({Tensor(), p, g, m, v, Tensor::full({}, 1, DType::i64, dev)}, o.attrs({})), DTypeError);
  Adam bad = o;
  bad.b2 = 1.0;
  EXPECT_THROW(adam({Tensor(), p, g, m, v}, bad.attrs({1})), ValueError);
  bad = o, bad.lr = -1;
  EXPECT_THROW(adam({Tensor(), p, g, m, v}, bad.attrs({1})), ValueError);
  Sgd s;
  s.nesterov = true;  // without momentum
  EXPECT_THROW(call("sgd_step", {Tensor(), p, g}, s.attrs(false)), ValueError);
  s = Sgd{}, s.momentum = 0.9;
  EXPECT_THROW(call("sgd_step", {Tensor(), p, g}, s.attrs(false)), ValueError);  // no buffer list
  EXPECT_THROW(call("sgd_step", {make_tensor({0.1, 0.9, 0}, {3}, DType::f32, dev), p, g, m}, s.attrs(false)),
               DTypeError);  // sgd takes [lr] or [lr, momentum]
  try {
    adam({Tensor(), p, Tensor::ones({4}, DType::f32, dev), m, v}, o.attrs({1}));
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("grads[0]"), std::string::npos) << e.what();
  }
}

}  // namespace
