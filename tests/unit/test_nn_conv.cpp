// conv2d, conv2d_backward_data and conv2d_backward_weight against plain
// double loops over the definition (the backward ones as the scatter form of
// the forward's adjoint, independent of the kernels' gather loops), over
// stride / padding / dilation / groups variants, with and without bias, on
// every float dtype, non-contiguous inputs, and typed errors for bad shapes.
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

const DType kFloatTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

struct Case {
  Shape x, w;
  std::vector<int64_t> stride, padding, dilation;
  int64_t groups;
};

const Case kCases[] = {
    {{2, 3, 7, 6}, {4, 3, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 1},
    {{1, 3, 8, 8}, {5, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 1},
    {{2, 2, 9, 7}, {3, 2, 3, 2}, {1, 2}, {2, 0}, {2, 3}, 1},
    {{1, 4, 6, 6}, {6, 2, 3, 3}, {2, 1}, {1, 1}, {1, 1}, 2},
    {{2, 4, 5, 5}, {4, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 4},  // depthwise
    {{1, 2, 5, 4}, {3, 2, 1, 1}, {3, 2}, {0, 0}, {1, 1}, 1},  // 1x1, stride larger than kernel
};

// Index helper for contiguous NCHW-like 4-D host arrays.
struct Idx4 {
  Shape s;
  int64_t operator()(int64_t a, int64_t b, int64_t c, int64_t d) const {
    return ((a * s[1] + b) * s[2] + c) * s[3] + d;
  }
};

Shape out_shape(const Case& k) {
  Shape y{k.x[0], k.w[0], 0, 0};
  for (int i = 0; i < 2; ++i)
    y[2 + i] = (k.x[2 + i] + 2 * k.padding[i] - k.dilation[i] * (k.w[2 + i] - 1) - 1) / k.stride[i] + 1;
  return y;
}

// Calls f(n, oc, oh, ow, c, ic, ih, iw, kh, kw) for every in-bounds tap of the conv.
template <class F>
void for_each_tap(const Case& k, F f) {
  Shape y = out_shape(k);
  int64_t Cg = k.w[1], OCg = k.w[0] / k.groups;
  for (int64_t n = 0; n < y[0]; ++n)
    for (int64_t oc = 0; oc < y[1]; ++oc)
      for (int64_t oh = 0; oh < y[2]; ++oh)
        for (int64_t ow = 0; ow < y[3]; ++ow)
          for (int64_t ic = 0; ic < Cg; ++ic)
            for (int64_t kh = 0; kh < k.w[2]; ++kh)
              for (int64_t kw = 0; kw < k.w[3]; ++kw) {
                int64_t ih = oh * k.stride[0] - k.padding[0] + kh * k.dilation[0];
                int64_t iw = ow * k.stride[1] - k.padding[1] + kw * k.dilation[1];
                if (ih < 0 || iw < 0 || ih >= k.x[2] || iw >= k.x[3]) continue;
                f(n, oc, oh, ow, (oc / OCg) * Cg + ic, ic, ih, iw, kh, kw);
              }
}

Attrs conv_attrs(const Case& k) {
  return {{"stride", k.stride}, {"padding", k.padding}, {"dilation", k.dilation}, {"groups", k.groups}};
}

Tensor rand(const Shape& s, DType d, Device dev, uint32_t seed) {
  return make_tensor(random_values(numel_of(s), -1, 1, seed, d), s, d, dev);
}

double atol(DType d, const Case& k) { return tolerance(d) * (1 + std::sqrt(double(k.w[1] * k.w[2] * k.w[3]))); }

}  // namespace

TEST(NNConv, ForwardMatchesLoop) {
  for (Device dev : devices())
    for (DType d : kFloatTypes)
      for (const Case& k : kCases)
        for (bool with_bias : {false, true}) {
          Tensor x = rand(k.x, d, dev, 1), w = rand(k.w, d, dev, 2), b = rand({k.w[0]}, d, dev, 3);
          std::vector<double> xv = host_values(x), wv = host_values(w), bv = host_values(b);
          Shape ys = out_shape(k);
          Idx4 X{k.x}, Wt{k.w}, Y{ys};
          std::vector<double> want(size_t(numel_of(ys)), 0.0);
          if (with_bias)
            for (size_t i = 0; i < want.size(); ++i) want[i] = bv[size_t(int64_t(i) / (ys[2] * ys[3]) % ys[1])];
          for_each_tap(k, [&](auto n, auto oc, auto oh, auto ow, auto c, auto ic, auto ih, auto iw, auto kh, auto kw) {
            want[size_t(Y(n, oc, oh, ow))] += xv[size_t(X(n, c, ih, iw))] * wv[size_t(Wt(oc, ic, kh, kw))];
          });
          Tensor y = call1("conv2d", {x, w, with_bias ? b : Tensor()}, conv_attrs(k));
          ASSERT_EQ(y.shape(), ys);
          expect_close(host_values(y), want, tolerance(d), atol(d, k),
                       str("conv2d ", dtype_name(d), " x ", shape_str(k.x), " w ", shape_str(k.w), " bias ", with_bias));
        }
}

TEST(NNConv, BackwardDataAndWeightMatchAdjointLoops) {
  for (Device dev : devices())
    for (DType d : kFloatTypes)
      for (const Case& k : kCases) {
        Shape ys = out_shape(k);
        Tensor x = rand(k.x, d, dev, 4), w = rand(k.w, d, dev, 5), gy = rand(ys, d, dev, 6);
        std::vector<double> xv = host_values(x), wv = host_values(w), gv = host_values(gy);
        Idx4 X{k.x}, Wt{k.w}, Y{ys};
        std::vector<double> gx(size_t(numel_of(k.x)), 0.0), gw(size_t(numel_of(k.w)), 0.0);
        for_each_tap(k, [&](auto n, auto oc, auto oh, auto ow, auto c, auto ic, auto ih, auto iw, auto kh, auto kw) {
          gx[size_t(X(n, c, ih, iw))] += gv[size_t(Y(n, oc, oh, ow))] * wv[size_t(Wt(oc, ic, kh, kw))];
          gw[size_t(Wt(oc, ic, kh, kw))] += gv[size_t(Y(n, oc, oh, ow))] * xv[size_t(X(n, c, ih, iw))];
        });
        Attrs a = conv_attrs(k);
        a.set("input_shape", k.x);
        Tensor got_x = call1("conv2d_backward_data", {gy, w}, a);
        std::string what = str(dtype_name(d), " x ", shape_str(k.x), " w ", shape_str(k.w));
        ASSERT_EQ(got_x.shape(), k.x);
        double reach = double(ys[1] / k.groups * k.w[2] * k.w[3]);
        expect_close(host_values(got_x), gx, tolerance(d), tolerance(d) * (1 + std::sqrt(reach)),
                     "backward_data " + what);
        Attrs b = conv_attrs(k);
        b.set("weight_shape", k.w);
        Tensor got_w = call1("conv2d_backward_weight", {gy, x}, b);
        ASSERT_EQ(got_w.shape(), k.w);
        double terms = double(ys[0] * ys[2] * ys[3]);
        expect_close(host_values(got_w), gw, tolerance(d), tolerance(d) * (1 + std::sqrt(terms)) * 2,
                     "backward_weight " + what);
      }
}

TEST(NNConv, NonContiguousInputsAndSingleValueAttrs) {
  for (Device dev : devices()) {
    const Case& k = kCases[1];
    Tensor x = rand({k.x[0], k.x[2], k.x[3], k.x[1]}, DType::f32, dev, 7).permute({0, 3, 1, 2});  // NHWC memory
    Tensor w = rand({k.w[1], k.w[0], k.w[2], k.w[3]}, DType::f32, dev, 8).transpose(0, 1);
    ASSERT_FALSE(x.is_contiguous());
    Tensor want = call1("conv2d", {x.contiguous(), w.contiguous(), Tensor()}, conv_attrs(k));
    Tensor got = call1("conv2d", {x, w, Tensor()},
                       {{"stride", int64_t(2)}, {"padding", int64_t(1)}, {"dilation", int64_t(1)}});
    expect_close(host_values(got), host_values(want), 1e-6, 1e-6, "permuted inputs, int attrs");
  }
}

TEST(NNConv, EmptyBatchGivesZeroWeightGradient) {
  for (Device dev : devices())
    for (DType d : {DType::f32, DType::f64}) {
      Tensor gy = Tensor::zeros({0, 4, 5, 4}, d, dev), x = Tensor::zeros({0, 3, 7, 6}, d, dev);
      Tensor gw = call1("conv2d_backward_weight", {gy, x}, {{"weight_shape", Shape{4, 3, 3, 3}}});
      EXPECT_EQ(host_values(gw), std::vector<double>(4 * 3 * 3 * 3, 0.0));
    }
}

TEST(NNConv, Errors) {
  for (Device dev : devices()) {
    Tensor x = Tensor::zeros({1, 3, 8, 8}, DType::f32, dev);
    Tensor w = Tensor::zeros({4, 3, 3, 3}, DType::f32, dev);
    // wrong channel count
    EXPECT_THROW(call1("conv2d", {x, Tensor::zeros({4, 2, 3, 3}, DType::f32, dev), Tensor()}), ShapeError);
    // groups must divide channels
    EXPECT_THROW(call1("conv2d", {x, w, Tensor()}, {{"groups", int64_t(2)}}), ShapeError);
    // kernel larger than the padded input names both shapes
    try {
      call1("conv2d", {x, Tensor::zeros({4, 3, 11, 3}, DType::f32, dev), Tensor()});
      ADD_FAILURE() << "expected ShapeError";
    } catch (const ShapeError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("[1, 3, 8, 8]"), std::string::npos) << m;
      EXPECT_NE(m.find("[4, 3, 11, 3]"), std::string::npos) << m;
    }
    EXPECT_NO_THROW(call1("conv2d", {x, Tensor::zeros({4, 3, 10, 3}, DType::f32, dev), Tensor()}, {{"padding", int64_t(1)}}));
    EXPECT_THROW(call1("conv2d", {x.reshape({3, 8, 8}), w, Tensor()}), ShapeError);
    EXPECT_THROW(call1("conv2d", {x, w, Tensor::zeros({3}, DType::f32, dev)}), ShapeError);
    EXPECT_THROW(call1("conv2d", {x, w, Tensor::zeros({4}, DType::f64, dev)}), DTypeError);
    EXPECT_THROW(call1("conv2d", {x.to(DType::i32), w.to(DType::i32), Tensor()}), DTypeError);
    EXPECT_THROW(call1("conv2d", {x, w, Tensor()}, {{"stride", std::vector<int64_t>{0, 1}}}), ValueError);
    EXPECT_THROW(call1("conv2d", {x, w, Tensor()}, {{"padding", std::vector<int64_t>{1, 1, 1}}}), ValueError);
    // backward shapes must agree with the forward geometry
    EXPECT_THROW(call1("conv2d_backward_data", {Tensor::zeros({1, 4, 5, 5}, DType::f32, dev), w},
                       {{"input_shape", Shape{1, 3, 8, 8}}}),
                 ShapeError);
    EXPECT_THROW(call1("conv2d_backward_weight", {Tensor::zeros({1, 4, 6, 6}, DType::f32, dev), x},
                       {{"weight_shape", Shape{4, 3, 3}}}),
                 ValueError);
  }
}
