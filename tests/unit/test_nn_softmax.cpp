// softmax / log_softmax along every dim and their backward ops, against
// double loops: the forward from the definition, the backward as an explicit
// Jacobian-vector product (sum_j grad_y[j] * dy[j]/dx[i]); every float dtype,
// large inputs (stability), scalars, non-contiguous inputs, typed errors.
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

const DType kFloatTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

// Calls f(indices of one lane along `dim`) for every lane of a contiguous tensor.
template <class F>
void for_each_lane(const Shape& s, int64_t dim, F f) {
  int64_t outer = 1, inner = 1, d = s.empty() ? 1 : s[size_t(dim)];
  for (int64_t i = 0; i < int64_t(s.size()); ++i) {
    if (i < dim) outer *= s[size_t(i)];
    if (i > dim) inner *= s[size_t(i)];
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      std::vector<size_t> lane;
      for (int64_t j = 0; j < d; ++j) lane.push_back(size_t((o * d + j) * inner + in));
      f(lane);
    }
}

struct Ref {
  std::vector<double> y, gx;
};

Ref reference(const std::vector<double>& x, const std::vector<double>& gy, const Shape& s, int64_t dim, bool log) {
  Ref r{std::vector<double>(x.size()), std::vector<double>(x.size())};
  for_each_lane(s, dim, [&](const std::vector<size_t>& lane) {
    double total = 0;
    for (size_t i : lane) total += std::exp(x[i]);  // inputs are small enough here
    std::vector<double> p;
    for (size_t i : lane) p.push_back(std::exp(x[i]) / total);
    for (size_t a = 0; a < lane.size(); ++a) r.y[lane[a]] = log ? std::log(p[a]) : p[a];
    for (size_t a = 0; a < lane.size(); ++a) {
      double g = 0;
      for (size_t b = 0; b < lane.size(); ++b) {
        double delta = a == b ? 1.0 : 0.0;
        double dyb_dxa = log ? delta - p[a] : p[b] * (delta - p[a]);
        g += gy[lane[b]] * dyb_dxa;
      }
      r.gx[lane[a]] = g;
    }
  });
  return r;
}

}  // namespace

TEST(NNSoftmax, ForwardAndBackwardAlongEveryDim) {
  const Shape shapes[] = {{3, 5}, {2, 3, 4}, {4, 1}, {1, 7}, {2, 2, 3, 2}};
  for (Device dev : devices())
    for (DType d : kFloatTypes)
      for (const Shape& s : shapes)
        for (int64_t dim = -int64_t(s.size()); dim < int64_t(s.size()); ++dim)
          for (bool log : {false, true}) {
            std::string op = log ? "log_softmax" : "softmax";
            Tensor x = make_tensor(random_values(numel_of(s), -3, 3, 1, d), s, d, dev);
            Tensor gy = make_tensor(random_values(numel_of(s), -1, 1, 2, d), s, d, dev);
            int64_t axis = dim < 0 ? dim + int64_t(s.size()) : dim;
            Tensor y = call1(op, {x}, {{"dim", dim}});
            Ref r = reference(host_values(x), host_values(gy), s, axis, log);
            std::string what = str(op, " ", dtype_name(d), " ", shape_str(s), " dim ", dim);
            double tol = tolerance(d);
            expect_close(host_values(y), r.y, tol, tol * 4, what);
            // Backward from the exact y (rounded to dtype), so only the op's own error counts.
            std::vector<double> yv = host_values(y);
            Tensor gx = call1(op + "_backward", {gy, y}, {{"dim", dim}});
            // The Jacobian in terms of y: recompute the reference from y itself.
            std::vector<double> p(yv.size());
            for (size_t i = 0; i < yv.size(); ++i) p[i] = log ? std::exp(yv[i]) : yv[i];
            std::vector<double> gyv = host_values(gy), want(yv.size());
            for_each_lane(s, axis, [&](const std::vector<size_t>& lane) {
              for (size_t a : lane) {
                double g = 0;
                for (size_t b : lane) g += gyv[b] * (log ? (a == b) - p[a] : p[b] * ((a == b) - p[a]));
                want[a] = g;
              }
            });
            expect_close(host_values(gx), want, tol * 2, tol * 8, what + " backward");
            if (d == DType::f64) expect_close(want, r.gx, 1e-9, 1e-9, what + " jacobian from x vs from y");
          }
}

TEST(NNSoftmax, LargeInputsAreStable) {
  for (Device dev : devices())
    for (DType d : {DType::f32, DType::f64, DType::bf16}) {
      Tensor x = make_tensor({1000, 1001, 1002, -1000}, {1, 4}, d, dev);
      std::vector<double> y = host_values(call1("softmax", {x}));
      std::vector<double> ly = host_values(call1("log_softmax", {x}));
      std::vector<double> xv = host_values(x), want, want_log;  // bf16 rounds 1001 and 1002
      double z = 0;
      for (double v : xv) z += std::exp(v - xv[2]);
      for (double v : xv) want.push_back(std::exp(v - xv[2]) / z), want_log.push_back(v - xv[2] - std::log(z));
      double tol = tolerance(d);
      expect_close(y, want, tol, tol, str("softmax large ", dtype_name(d)));
      expect_close(ly, want_log, tol, tol * 4, str("log_softmax large ", dtype_name(d)));
    }
}

TEST(NNSoftmax, ScalarAndNonContiguous) {
  for (Device dev : devices()) {
    Tensor s = Tensor::full({}, 3.5, DType::f32, dev);
    EXPECT_EQ(call1("softmax", {s}, {{"dim", int64_t(0)}}).item(), 1.0);
    EXPECT_NEAR(call1("log_softmax", {s}).item(), 0.0, 1e-5);  // oneDNN's log is approximate
    Tensor x = make_tensor(random_values(20, -2, 2, 3), {4, 5}, DType::f32, dev).t();  // [5, 4]
    ASSERT_FALSE(x.is_contiguous());
    for (int64_t dim : {0, 1}) {
      Tensor got = call1("softmax", {x}, {{"dim", dim}});
      Tensor want = call1("softmax", {x.contiguous()}, {{"dim", dim}});
      EXPECT_EQ(host_values(got), host_values(want));
    }
  }
}

TEST(NNSoftmax, Errors) {
  for (Device dev : devices()) {
    Tensor x = Tensor::zeros({3, 4}, DType::f32, dev);
    EXPECT_THROW(call1("softmax", {x.to(DType::i32)}), DTypeError);
    EXPECT_THROW(call1("log_softmax", {x.to(DType::i64)}), DTypeError);
    EXPECT_THROW(call1("softmax", {x}, {{"dim", int64_t(2)}}), IndexError);
    EXPECT_THROW(call1("log_softmax", {x}, {{"dim", int64_t(-3)}}), IndexError);
    EXPECT_THROW(call1("softmax_backward", {x, Tensor::zeros({4, 3}, DType::f32, dev)}), ShapeError);
    EXPECT_THROW(call1("softmax_backward", {x, x}, {{"dim", int64_t(5)}}), IndexError);
  }
}
