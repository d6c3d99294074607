// The digits CNN of examples/train_digits.py through the C++ API: same model,
// optimizer and schedule, trained on the default device (OAR_DEVICE), with a
// line per epoch (loss, accuracy, samples/s), held-out accuracy, a saved
// checkpoint and a reload check. The data is scikit-learn's digits.csv.gz
// (found through python3, or given as the first argument / OAR_DIGITS_CSV).
//
//   train_digits [digits.csv.gz] [--epochs N] [--checkpoint PATH]
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "oar/oar.h"

using namespace oar;
namespace F = oar::nn::functional;

namespace {

struct DigitsCNNImpl : nn::Module {
  DigitsCNNImpl() {
    features = register_module("features", nn::Sequential(nn::Conv2d(1, 16, 3, 1, 1), nn::BatchNorm2d(16), nn::ReLU(),
                                                          nn::MaxPool2d(2), nn::Conv2d(16, 32, 3, 1, 1),
                                                          nn::BatchNorm2d(32), nn::ReLU(), nn::MaxPool2d(2)));
    classifier = register_module("classifier", nn::Sequential(nn::Flatten(), nn::Linear(32 * 2 * 2, 64), nn::ReLU(),
                                                              nn::Dropout(0.1), nn::Linear(64, 10)));
  }
  Tensor forward(const Tensor& x) override { return classifier(features(x)); }
  nn::Sequential features{nullptr}, classifier{nullptr};
};
using DigitsCNN = nn::ModuleHolder<DigitsCNNImpl>;

std::string find_digits_csv(int argc, char** argv) {
  if (argc > 1 && argv[1][0] != '-') return argv[1];
  if (const char* env = std::getenv("OAR_DIGITS_CSV")) return env;
  FILE* p = popen("python3 -c \"import os, sklearn; print(os.path.join(os.path.dirname(sklearn.__file__), "
                  "'datasets', 'data', 'digits.csv.gz'))\" 2>/dev/null", "r");
  char buf[4096] = {0};
  if (p) {
    if (!std::fgets(buf, sizeof(buf), p)) buf[0] = '\0';
    pclose(p);
  }
  std::string path(buf);
  while (!path.empty() && (path.back() == '\n' || path.back() == '\r')) path.pop_back();
  if (path.empty())
    throw IOError("cannot locate digits.csv.gz: install scikit-learn or pass the file's path (or set OAR_DIGITS_CSV)");
  return path;
}

// Rows of 64 pixel values (0..16) and a label.
void load_digits(const std::string& path, std::vector<float>& pixels, std::vector<int64_t>& labels) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw IOError(str("cannot open ", path));
  char line[2048];
  while (gzgets(f, line, sizeof(line))) {
    std::vector<double> row;
    for (char* tok = std::strtok(line, ",\n"); tok; tok = std::strtok(nullptr, ",\n")) row.push_back(std::atof(tok));
    if (row.empty()) continue;
    if (row.size() != 65) {
      gzclose(f);
      throw IOError(str(path, ": expected 65 values per row, got ", row.size()));
    }
    for (int i = 0; i < 64; ++i) pixels.push_back(float(row[i] / 16.0));
    labels.push_back(int64_t(row[64]));
  }
  gzclose(f);
}

double evaluate(DigitsCNN& model, const Tensor& x, const Tensor& y) {
  model->eval();
  autograd::NoGradGuard no_grad;
  Tensor pred = call1("argmax", {model(x)}, {{"dims", std::vector<int64_t>{1}}});
  return call1("mean", {call1("eq", {pred, y}).to(DType::f32)}).item();
}

}  // namespace

int main(int argc, char** argv) {
  try {
    int epochs = 15;
    std::string checkpoint = "/tmp/oar_digits_cpp.oar";
    for (int i = 1; i < argc; ++i) {
      if (!std::strcmp(argv[i], "--epochs") && i + 1 < argc) epochs = std::atoi(argv[++i]);
      else if (!std::strcmp(argv[i], "--checkpoint") && i + 1 < argc) checkpoint = argv[++i];
    }
    Device dev = Device::default_device();
    manual_seed(0);
    std::vector<float> pixels;
    std::vector<int64_t> labels;
    load_digits(find_digits_csv(argc, argv), pixels, labels);
    int64_t n = int64_t(labels.size());
    Tensor x_all = Tensor::from_vector(pixels, {n, 1, 8, 8}, dev);
    Tensor y_all = Tensor::from_vector(labels, {n}, dev);
    std::vector<int64_t> order(static_cast<size_t>(n));
    std::iota(order.begin(), order.end(), 0);
    std::mt19937_64 gen(0);
    std::shuffle(order.begin(), order.end(), gen);
    int64_t n_test = n / 5;
    auto take = [&](const Tensor& t, int64_t begin, int64_t end) {
      std::vector<int64_t> idx(order.begin() + begin, order.begin() + end);
      return call1("index_select", {t, Tensor::from_vector(idx, {end - begin}, dev)}, {{"dim", int64_t(0)}});
    };
    Tensor x_test = take(x_all, 0, n_test), y_test = take(y_all, 0, n_test);
    Tensor x_train = take(x_all, n_test, n), y_train = take(y_all, n_test, n);
    int64_t n_train = n - n_test;
    std::printf("digits: %lld train / %lld test images on %s\n", (long long)n_train, (long long)n_test,
                dev.str().c_str());

    DigitsCNN model;
    optim::Adam opt(model->parameters(), optim::AdamOptions(3e-3));
    optim::CosineAnnealingLR sched(opt, epochs);
    nn::CrossEntropyLoss criterion;
    const int64_t batch = 64;
    auto start = std::chrono::steady_clock::now();
    for (int epoch = 1; epoch <= epochs; ++epoch) {
      model->train();
      std::vector<int64_t> perm(static_cast<size_t>(n_train));
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), gen);
      double loss_sum = 0, correct = 0;
      auto t0 = std::chrono::steady_clock::now();
      for (int64_t b = 0; b < n_train; b += batch) {
        int64_t e = std::min(n_train, b + batch);
        Tensor idx = Tensor::from_vector(std::vector<int64_t>(perm.begin() + b, perm.begin() + e), {e - b}, dev);
        Tensor xb = call1("index_select", {x_train, idx}, {{"dim", int64_t(0)}});
        Tensor yb = call1("index_select", {y_train, idx}, {{"dim", int64_t(0)}});
        opt.zero_grad();
        Tensor logits = model(xb);
        Tensor loss = criterion(logits, yb);
        loss.backward();
        opt.step();
        loss_sum += loss.item() * double(e - b);
        correct += call1("sum", {call1("eq", {call1("argmax", {logits}, {{"dims", std::vector<int64_t>{1}}}), yb})}).item();
      }
      sched.step();
      double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("epoch %2d/%d  loss %.4f  acc %5.1f%%  %7.0f samples/s\n", epoch, epochs, loss_sum / double(n_train),
                  100.0 * correct / double(n_train), double(n_train) / secs);
    }
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    double acc = evaluate(model, x_test, y_test);
    std::printf("test accuracy %.2f%% after %d epochs in %.1f s\n", 100 * acc, epochs, elapsed);

    oar::save(model, checkpoint);
    DigitsCNN reloaded;
    oar::load(reloaded, checkpoint);
    double acc2 = evaluate(reloaded, x_test, y_test);
    bool same = acc2 == acc;
    std::printf("checkpoint %s: reloaded model accuracy %.2f%% (%s)\n", checkpoint.c_str(), 100 * acc2,
                same ? "same" : "DIFFERENT");
    return acc >= 0.97 && same ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "error (%s): %s\n", error_kind_name(e.kind()), e.what());
    return 2;
  }
}
