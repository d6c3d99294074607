// train/digits_parity: the digits CNN of examples/ (conv-bn-relu-pool twice,
// two linear layers; no dropout, whose draws may differ by device) trained
// for a fixed number of Adam steps on the device and on the CPU from the same
// initial weights and the same batches; the two loss curves must agree step
// by step, and the loss must fall. The images are synthetic 8x8 digits
// (ten stroke patterns with seeded noise), so the check needs no dataset.
#include <cmath>
#include <sstream>

#include "conformance_case.h"

#ifdef OAR_CONFORMANCE_FRONTEND
#include "oar/oar.h"
#endif

namespace oar::conformance {

#ifdef OAR_CONFORMANCE_FRONTEND
namespace {

struct DigitsNetImpl : nn::Module {
  DigitsNetImpl() {
    features = register_module("features", nn::Sequential(nn::Conv2d(1, 16, 3, 1, 1), nn::BatchNorm2d(16), nn::ReLU(),
                                                          nn::MaxPool2d(2), nn::Conv2d(16, 32, 3, 1, 1),
                                                          nn::BatchNorm2d(32), nn::ReLU(), nn::MaxPool2d(2)));
    classifier = register_module(
        "classifier", nn::Sequential(nn::Flatten(), nn::Linear(32 * 2 * 2, 64), nn::ReLU(), nn::Linear(64, 10)));
  }
  Tensor forward(const Tensor& x) override { return classifier(features(x)); }
  nn::Sequential features{nullptr}, classifier{nullptr};
};
using DigitsNet = nn::ModuleHolder<DigitsNetImpl>;

// Ten 8x8 stroke patterns, each image one of them plus noise.
void synthetic_digits(int64_t n, std::vector<float>& pixels, std::vector<int64_t>& labels) {
  uint64_t s = 12345;
  auto uniform = [&] {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    return float(double(s >> 11) * 0x1.0p-53);
  };
  for (int64_t i = 0; i < n; ++i) {
    const int64_t label = i % 10;
    for (int r = 0; r < 8; ++r)
      for (int c = 0; c < 8; ++c) {
        bool on = (label % 2 == 0 && (r == label / 2 + 1 || c == label / 2 + 2)) ||
                  (label % 2 == 1 && (r + c == label + 2 || r - c == label / 3));
        pixels.push_back((on ? 0.8f : 0.05f) + 0.3f * uniform());
      }
    labels.push_back(label);
  }
}

std::vector<double> loss_curve(Device dev, const std::vector<Tensor>& init, const std::vector<float>& pixels,
                               const std::vector<int64_t>& labels, int steps, int64_t batch) {
  DigitsNet model;
  auto params = model->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    autograd::NoGradGuard off;
    params[i].copy_(init[i]);
  }
  model->to(dev);
  optim::Adam opt(model->parameters(), optim::AdamOptions(3e-3));
  nn::CrossEntropyLoss criterion;
  const int64_t n = int64_t(labels.size());
  Tensor x = Tensor::from_vector(pixels, {n, 1, 8, 8}, dev), y = Tensor::from_vector(labels, {n}, dev);
  std::vector<double> curve;
  for (int step = 0; step < steps; ++step) {
    const int64_t b = (step * batch) % n, e = std::min(n, b + batch);
    Tensor xb = x.slice(0, b, e), yb = y.slice(0, b, e);
    opt.zero_grad();
    Tensor loss = criterion(model(xb), yb);
    loss.backward();
    opt.step();
    curve.push_back(loss.item());
  }
  return curve;
}

Outcome digits_parity(const Target& t) {
  const int steps = t.level == Level::kFull ? 60 : 25;
  std::vector<float> pixels;
  std::vector<int64_t> labels;
  synthetic_digits(640, pixels, labels);
  manual_seed(0);
  DigitsNet init_model;
  std::vector<Tensor> init;
  for (const auto& p : init_model->parameters()) init.push_back(p.detach().clone());
  auto cpu = loss_curve(Device::cpu(), init, pixels, labels, steps, 64);
  auto dev = loss_curve(t.device, init, pixels, labels, steps, 64);
  for (size_t i = 0; i < cpu.size(); ++i) {
    require(std::isfinite(dev[i]), "step " + std::to_string(i) + ": loss " + std::to_string(dev[i]));
    // Rounding differences grow over the steps; a wrong kernel shows at once.
    const double tol = 2e-3 + 0.02 * double(i) / double(cpu.size());
    if (std::fabs(dev[i] - cpu[i]) > tol * std::max(1.0, std::fabs(cpu[i]))) {
      std::ostringstream os;
      os << "step " << i << ": loss " << dev[i] << " on the device, " << cpu[i] << " on the CPU (first loss "
         << dev[0] << " vs " << cpu[0] << ")";
      fail(os.str());
    }
  }
  require(dev.back() < 0.5 * dev.front(), "the loss did not fall: " + std::to_string(dev.front()) + " -> " +
                                              std::to_string(dev.back()));
  std::ostringstream os;
  os << steps << " steps, loss " << dev.front() << " -> " << dev.back() << " (CPU " << cpu.back() << ")";
  return {Status::kPass, os.str()};
}

}  // namespace
#endif

void add_train_cases(const Target& t, std::vector<Case>& cases) {
#ifdef OAR_CONFORMANCE_FRONTEND
  cases.push_back({"train/digits_parity", 300, "", "", [&t] { return digits_parity(t); }});
#else
  (void)t;
  cases.push_back({"train/digits_parity", 10, "", "", []() -> Outcome {
                     throw NotApplicable("oar was built without the C++ frontend");
                   }});
#endif
}

}  // namespace oar::conformance
