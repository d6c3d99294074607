// max_pool2d / avg_pool2d and their backward ops against plain loops over
// PyTorch's definition: output sizes (pinned by hand, including ceil_mode's
// "last window starts inside the input or left padding" rule), window
// clipping, count_include_pad divisors, gradients routed to the first max or
// spread over the window; every float dtype, and typed errors.
#include <algorithm>
#include <limits>
#include <numeric>

#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

const DType kFloatTypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16};

struct Case {
  Shape x;
  std::vector<int64_t> kernel, stride, padding;
  bool ceil_mode;
  Shape y;  // expected output shape (PyTorch)
};

const Case kCases[] = {
    {{2, 3, 8, 8}, {2, 2}, {2, 2}, {0, 0}, false, {2, 3, 4, 4}},
    {{1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}, false, {1, 2, 4, 4}},
    {{1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}, true, {1, 2, 4, 4}},
    {{1, 2, 6, 6}, {3, 3}, {2, 2}, {0, 0}, true, {1, 2, 3, 3}},   // last window hangs past the input
    {{1, 2, 6, 6}, {3, 3}, {2, 2}, {0, 0}, false, {1, 2, 2, 2}},
    {{1, 1, 5, 5}, {2, 2}, {2, 2}, {1, 1}, true, {1, 1, 3, 3}},   // 4th window would start in right padding
    {{2, 2, 7, 5}, {3, 2}, {2, 1}, {1, 0}, true, {2, 2, 4, 4}},
    {{1, 3, 6, 6}, {3, 3}, {}, {1, 1}, false, {1, 3, 2, 2}},       // stride defaults to kernel_size
    {{1, 1, 9, 4}, {4, 2}, {3, 1}, {2, 1}, true, {1, 1, 4, 5}},
};

Attrs pool_attrs(const Case& k, bool avg, bool include_pad) {
  Attrs a{{"kernel_size", k.kernel}, {"stride", k.stride}, {"padding", k.padding}, {"ceil_mode", k.ceil_mode}};
  if (avg) a.set("count_include_pad", include_pad);
  return a;
}

// Values distinct within each plane and exact in every float dtype, so the max is unique.
Tensor distinct_values(const Shape& s, DType d, Device dev, uint32_t seed) {
  int64_t plane = s[2] * s[3];
  std::vector<double> v;
  std::mt19937 gen(seed);
  for (int64_t p = 0; p < s[0] * s[1]; ++p) {
    std::vector<int64_t> perm(static_cast<size_t>(plane));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), gen);
    for (int64_t i : perm) v.push_back(double(i - plane / 2) / 8.0);
  }
  return make_tensor(v, s, d, dev);
}

// Forward value and the input positions / weights each output depends on.
struct Ref {
  std::vector<double> max_y, avg_y, max_gx, avg_gx;
};

Ref reference(const Case& k, const std::vector<double>& x, const std::vector<double>& gy, bool include_pad) {
  int64_t H = k.x[2], W = k.x[3], OH = k.y[2], OW = k.y[3];
  std::vector<int64_t> s = k.stride.empty() ? k.kernel : k.stride;
  Ref r;
  r.max_gx.assign(x.size(), 0.0);
  r.avg_gx.assign(x.size(), 0.0);
  for (int64_t p = 0; p < k.x[0] * k.x[1]; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t best_at = -1, valid = 0, padded_h = 0, padded_w = 0;
        std::vector<int64_t> taps;
        for (int64_t i = 0; i < k.kernel[0]; ++i) {
          int64_t h = oh * s[0] - k.padding[0] + i;
          if (h >= -k.padding[0] && h < H + k.padding[0]) ++padded_h;
        }
        for (int64_t j = 0; j < k.kernel[1]; ++j) {
          int64_t w = ow * s[1] - k.padding[1] + j;
          if (w >= -k.padding[1] && w < W + k.padding[1]) ++padded_w;
        }
        for (int64_t i = 0; i < k.kernel[0]; ++i)
          for (int64_t j = 0; j < k.kernel[1]; ++j) {
            int64_t h = oh * s[0] - k.padding[0] + i, w = ow * s[1] - k.padding[1] + j;
            if (h < 0 || w < 0 || h >= H || w >= W) continue;
            int64_t at = p * H * W + h * W + w;
            taps.push_back(at);
            ++valid;
            sum += x[size_t(at)];
            if (x[size_t(at)] > best) best = x[size_t(at)], best_at = at;
          }
        double divisor = double(include_pad ? padded_h * padded_w : valid);
        double g = gy[size_t((p * OH + oh) * OW + ow)];
        r.max_y.push_back(best);
        r.avg_y.push_back(sum / divisor);
        r.max_gx[size_t(best_at)] += g;
        for (int64_t at : taps) r.avg_gx[size_t(at)] += g / divisor;
      }
  return r;
}

}  // namespace

TEST(NNPool, ForwardAndBackwardMatchLoops) {
  for (Device dev : devices())
    for (DType d : kFloatTypes)
      for (const Case& k : kCases)
        for (bool include_pad : {true, false}) {
          Tensor x = distinct_values(k.x, d, dev, 1);
          Tensor gy = make_tensor(random_values(numel_of(k.y), -1, 1, 2, d), k.y, d, dev);
          Ref r = reference(k, host_values(x), host_values(gy), include_pad);
          std::string what = str(dtype_name(d), " x ", shape_str(k.x), " k ", shape_str(k.kernel), " s ",
                                 shape_str(k.stride), " p ", shape_str(k.padding), " ceil ", k.ceil_mode,
                                 " include_pad ", include_pad);
          double tol = tolerance(d);
          if (include_pad) {  // max pooling has no count_include_pad; run it once
            Tensor y = call1("max_pool2d", {x}, pool_attrs(k, false, false));
            ASSERT_EQ(y.shape(), k.y) << what;
            expect_close(host_values(y), r.max_y, 0, 0, "max_pool2d " + what);
            Tensor gx = call1("max_pool2d_backward", {gy, x}, pool_attrs(k, false, false));
            ASSERT_EQ(gx.shape(), k.x);
            expect_close(host_values(gx), r.max_gx, tol, tol * 4, "max_pool2d_backward " + what);
          }
          Tensor y = call1("avg_pool2d", {x}, pool_attrs(k, true, include_pad));
          ASSERT_EQ(y.shape(), k.y) << what;
          expect_close(host_values(y), r.avg_y, tol, tol * 4, "avg_pool2d " + what);
          Tensor gx = call1("avg_pool2d_backward", {gy, x}, pool_attrs(k, true, include_pad));
          expect_close(host_values(gx), r.avg_gx, tol, tol * 4, "avg_pool2d_backward " + what);
        }
}

TEST(NNPool, NonContiguousInputAndScalarAttrs) {
  for (Device dev : devices()) {
    Tensor x = distinct_values({1, 2, 8, 8}, DType::f32, dev, 3).transpose(2, 3);
    ASSERT_FALSE(x.is_contiguous());
    Attrs a{{"kernel_size", int64_t(3)}, {"stride", int64_t(2)}, {"padding", int64_t(1)}};
    Tensor got = call1("max_pool2d", {x}, a);
    Tensor want = call1("max_pool2d", {x.contiguous()}, a);
    EXPECT_EQ(got.shape(), (Shape{1, 2, 4, 4}));
    EXPECT_EQ(host_values(got), host_values(want));
  }
}

TEST(NNPool, Errors) {
  for (Device dev : devices()) {
    Tensor x = Tensor::zeros({1, 1, 4, 4}, DType::f32, dev);
    Attrs pad_too_big{{"kernel_size", int64_t(2)}, {"padding", int64_t(2)}};
    EXPECT_THROW(call1("max_pool2d", {x}, pad_too_big), ValueError);
    EXPECT_THROW(call1("avg_pool2d", {x}, pad_too_big), ValueError);
    EXPECT_THROW(call1("max_pool2d", {x}, {{"kernel_size", int64_t(5)}}), ShapeError);
    EXPECT_THROW(call1("max_pool2d", {x}, {{"kernel_size", int64_t(0)}}), ValueError);
    EXPECT_THROW(call1("max_pool2d", {x}, {{"kernel_size", std::vector<int64_t>{2, 2, 2}}}), ValueError);
    EXPECT_THROW(call1("max_pool2d", {x.reshape({1, 4, 4})}, {{"kernel_size", int64_t(2)}}), ShapeError);
    EXPECT_THROW(call1("avg_pool2d", {x.to(DType::i64)}, {{"kernel_size", int64_t(2)}}), DTypeError);
    EXPECT_THROW(call1("max_pool2d", {x}, {}), ValueError);  // kernel_size is required
    EXPECT_THROW(call1("max_pool2d_backward", {Tensor::zeros({1, 1, 3, 3}, DType::f32, dev), x},
                       {{"kernel_size", int64_t(2)}}),
                 ShapeError);
  }
}
