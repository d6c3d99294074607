// linear (x W^T + b) against a double-precision loop on every float dtype:
// with and without bias, 1-D to 4-D inputs, sizes on both sides of the
// small-problem limit (direct loops vs oneDNN), strided inputs, K = 0; its
// decomposition into matmul + add agrees with the kernel; gradients (first
// and second order) by finite differences; typed errors for bad shapes.
#include "gradcheck.h"
#include "oar/autograd.h"
#include "oar/op_registry.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

const DType kFloatTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

Tensor rand(const Shape& s, DType d, Device dev, uint32_t seed) {
  return make_tensor(random_values(numel_of(s), -1, 1, seed, d), s, d, dev);
}

Tensor rnd(const Shape& s, uint32_t seed, Device dev) { return rand(s, DType::f64, dev, seed); }

// y[r, n] = b[n] + sum_k x[r, k] w[n, k] over the rows r of x's leading dims.
std::vector<double> ref_linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  std::vector<double> xv = host_values(x), wv = host_values(w);
  std::vector<double> bv = b.defined() ? host_values(b) : std::vector<double>();
  int64_t K = w.shape()[1], N = w.shape()[0], M = K ? x.numel() / K : 0;
  if (K == 0) {
    M = 1;
    for (int64_t i = 0; i + 1 < x.dim(); ++i) M *= x.shape()[size_t(i)];
  }
  std::vector<double> out;
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = bv.empty() ? 0.0 : bv[size_t(n)];
      for (int64_t k = 0; k < K; ++k) acc += xv[size_t(m * K + k)] * wv[size_t(n * K + k)];
      out.push_back(acc);
    }
  return out;
}

void check(const Tensor& x, const Tensor& w, const Tensor& b, const std::string& what) {
  Tensor y = call1("linear", {x, w, b});
  Shape want_shape(x.shape().begin(), x.shape().end() - 1);
  want_shape.push_back(w.shape()[0]);
  ASSERT_EQ(y.shape(), want_shape) << what;
  ASSERT_EQ(y.dtype(), x.dtype()) << what;
  double tol = tolerance(x.dtype()), k = double(w.shape()[1]);
  std::string label = what + " " + dtype_name(x.dtype()) + (b.defined() ? " +bias" : "");
  expect_close(host_values(y), ref_linear(x, w, b), tol, tol * (1 + std::sqrt(k)), label);
  // The decomposition (what a device without a linear kernel runs) agrees.
  const OpSchema& s = OpRegistry::instance().get("linear");
  ASSERT_TRUE(bool(s.decompose));
  Tensor d = s.decompose({x, w, b}, {})[0];
  ASSERT_EQ(d.shape(), want_shape) << label << " decomposed";
  expect_close(host_values(d), host_values(y), tol, tol * (1 + std::sqrt(k)), label + " decomposed");
}

}  // namespace

TEST(NNLinear, ShapesBiasAndDTypes) {
  for (Device dev : devices())
    for (DType d : kFloatTypes)
      for (bool bias : {true, false}) {
        auto b = [&](int64_t n, uint32_t seed) { return bias ? rand({n}, d, dev, seed) : Tensor(); };
        check(rand({1, 64}, d, dev, 1), rand({64, 64}, d, dev, 2), b(64, 3), "one sample, 64 -> 64");
        check(rand({7}, d, dev, 4), rand({5, 7}, d, dev, 5), b(5, 6), "1-D input");
        check(rand({2, 3, 6}, d, dev, 7), rand({4, 6}, d, dev, 8), b(4, 9), "3-D input");
        check(rand({2, 1, 3, 5}, d, dev, 10), rand({2, 5}, d, dev, 11), b(2, 12), "4-D input");
        // Past the small-problem limit (oneDNN for f32/bf16, loops otherwise).
        check(rand({96, 80}, d, dev, 13), rand({72, 80}, d, dev, 14), b(72, 15), "96x80 -> 72");
      }
}

TEST(NNLinear, StridedInputsAndEmptyDims) {
  for (Device dev : devices())
    for (DType d : {DType::f32, DType::f64}) {
      Tensor xt = rand({9, 4}, d, dev, 20).t();  // [4, 9], column-major
      ASSERT_FALSE(xt.is_contiguous());
      check(xt, rand({3, 9}, d, dev, 21), rand({3}, d, dev, 22), "transposed input");
      Tensor wt = rand({9, 3}, d, dev, 23).t();  // weight [3, 9] as a view
      check(rand({4, 9}, d, dev, 24), wt, Tensor(), "transposed weight");
      check(rand({70, 90}, d, dev, 25).slice(1, 0, 90, 2), rand({80, 45}, d, dev, 26), rand({80}, d, dev, 27),
            "stepped input, large");
      check(Tensor::zeros({0, 5}, d, dev), rand({3, 5}, d, dev, 28), rand({3}, d, dev, 29), "no rows");
      check(Tensor::zeros({4, 0}, d, dev), Tensor::zeros({3, 0}, d, dev), rand({3}, d, dev, 30), "K = 0");
    }
}

TEST(NNLinear, Gradients) {
  for (Device dev : devices()) {
    struct Case { Shape x, w; bool bias; };
    for (const Case& k : std::vector<Case>{{{3, 4}, {5, 4}, true},
                                           {{2, 3, 4}, {2, 4}, true},
                                           {{4}, {3, 4}, true},
                                           {{3, 4}, {5, 4}, false}}) {
      TensorFn f = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{call1("linear", in)}; };
      std::vector<Tensor> in{rnd(k.x, 1, dev), rnd(k.w, 2, dev), k.bias ? rnd({k.w[0]}, 3, dev) : Tensor()};
      std::string what = str("linear ", shape_str(k.x), " weight ", shape_str(k.w), k.bias ? " +bias" : "");
      gradcheck(f, in, {true, true, k.bias}, what);
      gradgradcheck(f, in, {true, true, k.bias}, what);
    }
  }
}

TEST(NNLinear, TypedErrors) {
  for (Device dev : devices()) {
    Tensor x = rand({3, 4}, DType::f32, dev, 40), w = rand({5, 4}, DType::f32, dev, 41);
    EXPECT_THROW(call1("linear", {rand({3, 5}, DType::f32, dev, 42), w, Tensor()}), ShapeError);
    EXPECT_THROW(call1("linear", {x, rand({4}, DType::f32, dev, 43), Tensor()}), ShapeError);
    EXPECT_THROW(call1("linear", {x, rand({2, 5, 4}, DType::f32, dev, 44), Tensor()}), ShapeError);
    EXPECT_THROW(call1("linear", {x, w, rand({4}, DType::f32, dev, 45)}), ShapeError);
    EXPECT_THROW(call1("linear", {x, w, rand({1, 5}, DType::f32, dev, 46)}), ShapeError);
    EXPECT_THROW(call1("linear", {x, w, rand({5}, DType::f64, dev, 47)}), DTypeError);
    EXPECT_THROW(call1("linear", {Tensor::full({}, 1.0, DType::f32, dev), w, Tensor()}), ShapeError);
    EXPECT_THROW(call1("linear", {Tensor::ones({3, 4}, DType::i64, dev), Tensor::ones({5, 4}, DType::i64, dev),
                                  Tensor()}),
                 DTypeError);
    try {
      call1("linear", {rand({3, 5}, DType::f32, dev, 48), w, Tensor()});
    } catch (const ShapeError& e) {
      EXPECT_NE(std::string(e.what()).find("in_features=4"), std::string::npos) << e.what();
    }
  }
}
