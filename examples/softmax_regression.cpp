// Trains a softmax-regression classifier on three Gaussian blobs with eager
// oar ops on the default device (OAR_DEVICE), computing gradients with the
// catalog's backward ops. It is the project's main job until the digits CNN
// demo of the Python frontend arrives. Exits non-zero if it does not learn.
#include <cstdio>
#include <cstdlib>

#include "oar/core.h"

using namespace oar;

namespace {

Tensor op(const char* name, const std::vector<Tensor>& in, const Attrs& attrs = {}) { return call1(name, in, attrs); }
Tensor scalar(double v, Device dev) { return Tensor::full({}, v, DType::f32, dev); }

// Three blobs centred at (0, 3), (3, -2), (-3, -2), `per_class` points each.
void make_blobs(int64_t per_class, Device dev, Tensor& x, Tensor& y) {
  const double centres[3][2] = {{0, 3}, {3, -2}, {-3, -2}};
  std::vector<Tensor> xs, ys;
  CallOptions on;
  on.device = dev;
  for (int c = 0; c < 3; ++c) {
    Tensor noise = call1("normal", {}, {{"shape", Shape{per_class, 2}}, {"std", 1.0}}, on);
    Tensor centre = Tensor::from_vector<float>({float(centres[c][0]), float(centres[c][1])}, {2}, dev);
    xs.push_back(op("add", {noise, centre}));
    ys.push_back(Tensor::full({per_class}, double(c), DType::i64, dev));
  }
  x = op("concat", xs, {{"dim", int64_t(0)}});
  y = op("concat", ys, {{"dim", int64_t(0)}});
}

}  // namespace

int main() {
  try {
    Device dev = Device::default_device();
    manual_seed(0);
    Tensor x, y;
    make_blobs(200, dev, x, y);
    Tensor w = Tensor::zeros({2, 3}, DType::f32, dev);
    Tensor b = Tensor::zeros({3}, DType::f32, dev);
    const Attrs batch_dim{{"dims", std::vector<int64_t>{0}}};
    Tensor lr = scalar(0.5, dev), one = scalar(1.0, dev);
    std::printf("softmax regression on %s: %lld samples, 2 features, 3 classes\n", dev.str().c_str(),
                (long long)x.size(0));
    double loss_value = 0;
    for (int epoch = 1; epoch <= 30; ++epoch) {
      Tensor logits = op("add", {op("matmul", {x, w}), b});
      Tensor loss = op("cross_entropy", {logits, y});
      Tensor grad_logits = op("cross_entropy_backward", {one, logits, y});
      Tensor grad_w = op("matmul", {x.t(), grad_logits});
      Tensor grad_b = op("sum", {grad_logits}, batch_dim);
      w = op("sub", {w, op("mul", {lr, grad_w})});
      b = op("sub", {b, op("mul", {lr, grad_b})});
      loss_value = loss.item();
      if (epoch % 5 == 0 || epoch == 1) std::printf("epoch %2d  loss %.4f\n", epoch, loss_value);
    }
    Tensor pred = op("argmax", {op("add", {op("matmul", {x, w}), b})}, {{"dims", std::vector<int64_t>{1}}});
    double accuracy = op("mean", {op("eq", {pred, y}).to(DType::f32)}).item();
    std::printf("final loss %.4f, training accuracy %.1f%%\n", loss_value, 100 * accuracy);
    return accuracy >= 0.9 ? 0 : 1;
  } catch (const Error& e) {
    std::fprintf(stderr, "error (%s): %s\n", error_kind_name(e.kind()), e.what());
    return 2;
  }
}
