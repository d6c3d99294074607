// The C++ frontend's hand-written tensor functions (oar/tensor_functions.h:
// result_type, remainder, round with decimals, equal, allclose, isnan/isinf/
// isfinite, norm, argsort, repeat, unflatten, hstack/vstack, swapaxes,
// broadcast_to, index_put, ...) and its in-place forms, generated (oar::exp_,
// oar::clamp_, ...) and hand-written (oar::add_, oar::index_put_, ...), as a
// C++ user calls them: values against plain loops and known numbers on every
// device; in-place writes checked for identity, versions, views, refused
// dtypes and autograd.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>

#include "oar/oar.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
using V = std::vector<double>;

// Python's a % b: the remainder with the sign of b.
double py_mod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && (r < 0) != (b < 0)) r += b;
  return r;
}

Tensor f32(const V& v, const Shape& s, Device d) { return make_tensor(v, s, DType::f32, d); }
Tensor f64(const V& v, const Shape& s, Device d) { return make_tensor(v, s, DType::f64, d); }
Tensor idx(const V& v, Device d) { return make_tensor(v, {int64_t(v.size())}, DType::i64, d); }
Tensor mask(const V& v, const Shape& s, Device d) { return make_tensor(v, s, DType::boolean, d); }

V iota(int n) {
  V v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

Tensor leaf(const V& v, const Shape& s, Device d) {
  Tensor t = f64(v, s, d);
  t.set_requires_grad(true);
  return t;
}

}  // namespace

TEST(TensorApi, ResultTypeIsTheDispatchersPromotion) {
  auto t = [](DType d, const Shape& s) { return Tensor::zeros(s, d, Device::cpu()); };
  EXPECT_EQ(oar::result_type(t(DType::i32, {2}), t(DType::f32, {})), DType::f32);
  EXPECT_EQ(oar::result_type(t(DType::f16, {2}), t(DType::f64, {})), DType::f16);  // a 0-d tensor does not widen
  EXPECT_EQ(oar::result_type(t(DType::i32, {2}), t(DType::i64, {})), DType::i32);
  EXPECT_EQ(oar::result_type(t(DType::i32, {}), t(DType::i64, {})), DType::i64);
  EXPECT_EQ(oar::result_type(t(DType::u8, {2}), t(DType::i8, {2})), DType::i32);
  EXPECT_EQ(oar::result_type(t(DType::boolean, {2}), t(DType::i64, {})), DType::i64);
  EXPECT_EQ(oar::result_type({t(DType::i32, {2}), t(DType::f32, {}), t(DType::f64, {3})}), DType::f64);
  EXPECT_EQ(oar::result_type(t(DType::i64, {2}), 2.5), DType::f32);  // the default float dtype
  EXPECT_EQ(oar::result_type(t(DType::i64, {2}), 2.0), DType::i64);  // a whole double is an integer scalar
  EXPECT_EQ(oar::result_type(t(DType::boolean, {2}), 1.0), DType::i64);
  EXPECT_EQ(oar::result_type(t(DType::f16, {}), 2.5), DType::f16);
  EXPECT_THROW(oar::result_type(std::vector<Tensor>{}), ValueError);
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const Tensor a = make_tensor({1, 2}, {2}, DType::i32, dev), s = f32({0.5}, {}, dev);
    const Tensor b = make_tensor({3, 4}, {2}, DType::i64, dev);
    EXPECT_EQ(oar::add(a, s).dtype(), oar::result_type(a, s));
    EXPECT_EQ((a + b).dtype(), oar::result_type(a, b));
    EXPECT_EQ((b * 2.0).dtype(), oar::result_type(b, 2.0));
    EXPECT_EQ((b * 2.5).dtype(), oar::result_type(b, 2.5));
  }
}

TEST(TensorApi, RemainderTakesTheDivisorsSign) {
  const V av{-7, 7, -7, 7, 5, -5, 0, 9, -1}, bv{2, -2, -2, 2, 3, 3, 4, -4, 5};
  V want;
  for (size_t i = 0; i < av.size(); ++i) want.push_back(py_mod(av[i], bv[i]));
  const V fa{-7.5, 7.25, -0.75, 5.5}, fb{2, -2, 0.5, -1.5};
  V fwant;
  for (size_t i = 0; i < fa.size(); ++i) fwant.push_back(py_mod(fa[i], fb[i]));
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    for (DType dt : {DType::f32, DType::f64, DType::i32, DType::i64}) {
      Tensor r = oar::remainder(make_tensor(av, {9}, dt, dev), make_tensor(bv, {9}, dt, dev));
      EXPECT_EQ(r.dtype(), dt);
      expect_close(host_values(r), want, 0, 0, std::string("remainder ") + dtype_name(dt));
    }
    expect_close(host_values(oar::remainder(f64(fa, {4}, dev), f64(fb, {4}, dev))), fwant, 1e-12, 1e-12,
                 "remainder of fractions");
    // numbers: a whole double keeps an integer tensor integral
    Tensor r = oar::remainder(make_tensor({-7, 8, 3}, {3}, DType::i64, dev), 3.0);
    EXPECT_EQ(r.dtype(), DType::i64);
    EXPECT_EQ(host_values(r), (V{2, 2, 0}));
    EXPECT_EQ(host_values(oar::remainder(10.0, make_tensor({3, -3, 4}, {3}, DType::i64, dev))), (V{1, -2, 2}));
    EXPECT_EQ(host_values(oar::remainder(f32({-1.5, 2.5}, {2}, dev), 1.0)), (V{0.5, 0.5}));
    EXPECT_THROW(oar::remainder(make_tensor({1, 2, 3}, {3}, DType::i64, dev), make_tensor({1, 0, 2}, {3}, DType::i64, dev)),
                 ValueError);
    EXPECT_THROW(oar::remainder(mask({1}, {1}, dev), mask({1}, {1}, dev)), DTypeError);
  }
}

TEST(TensorApi, RoundWithDecimals) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    Tensor x = f64({1.234, 2.678, -0.5678, 10.0}, {4}, dev);
    expect_close(host_values(oar::round(x, 2)), {1.23, 2.68, -0.57, 10.0}, 1e-12, 1e-12, "decimals=2");
    expect_close(host_values(oar::round(f64({123, 178, -64, 5.5}, {4}, dev), -1)), {120, 180, -60, 10}, 0, 1e-9,
                 "decimals=-1");
    expect_close(host_values(oar::round(x, 0)), {1, 3, -1, 10}, 0, 0, "decimals=0");
    Tensor ints = make_tensor({3, -4}, {2}, DType::i64, dev);
    Tensor r = oar::round(ints, 2);
    EXPECT_EQ(r.dtype(), DType::i64);
    EXPECT_EQ(host_values(r), (V{3, -4}));
    EXPECT_FALSE(r.is_same(ints));
  }
}

TEST(TensorApi, EqualAllcloseAndFloatClasses) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const Tensor a = f32({1, 2, 3, 4}, {2, 2}, dev);
    EXPECT_TRUE(oar::equal(a, a.clone()));
    EXPECT_TRUE(oar::equal(a, make_tensor({1, 2, 3, 4}, {2, 2}, DType::i64, dev)));  // compared after promotion
    EXPECT_FALSE(oar::equal(a, f32({1, 2, 3, 5}, {2, 2}, dev)));
    EXPECT_FALSE(oar::equal(a, a.reshape({4})));  // same elements, another shape
    const Tensor b = f64({1, 2, 3, 4}, {4}, dev);
    EXPECT_TRUE(oar::allclose(b, b + 1e-9));
    EXPECT_FALSE(oar::allclose(b, b + 1e-3));
    EXPECT_TRUE(oar::allclose(b, b + 1e-3, 1e-2));
    EXPECT_TRUE(oar::allclose(b, b + 1e-3, 0.0, 2e-3));
    const Tensor n = f64({1, kNaN}, {2}, dev);
    EXPECT_FALSE(oar::allclose(n, n));
    EXPECT_TRUE(oar::allclose(n, n, 1e-5, 1e-8, true));

    const Tensor c = f32({1, kNaN, kInf, -kInf, 0, -2.5}, {6}, dev);
    const Tensor nan = oar::isnan(c), inf = oar::isinf(c), finite = oar::isfinite(c);
    EXPECT_EQ(nan.dtype(), DType::boolean);
    EXPECT_EQ(inf.dtype(), DType::boolean);
    EXPECT_EQ(finite.dtype(), DType::boolean);
    EXPECT_EQ(host_values(nan), (V{0, 1, 0, 0, 0, 0}));
    EXPECT_EQ(host_values(inf), (V{0, 0, 1, 1, 0, 0}));
    EXPECT_EQ(host_values(oar::isposinf(c)), (V{0, 0, 1, 0, 0, 0}));
    EXPECT_EQ(host_values(oar::isneginf(c)), (V{0, 0, 0, 1, 0, 0}));
    EXPECT_EQ(host_values(finite), (V{1, 0, 0, 0, 1, 1}));
    const Tensor k = make_tensor({1, -2, 0}, {3}, DType::i64, dev);  // integers hold no NaN or infinity
    EXPECT_EQ(host_values(oar::isnan(k)), (V{0, 0, 0}));
    EXPECT_EQ(host_values(oar::isinf(k)), (V{0, 0, 0}));
    EXPECT_EQ(host_values(oar::isposinf(k)), (V{0, 0, 0}));
    EXPECT_EQ(host_values(oar::isfinite(k)), (V{1, 1, 1}));
    EXPECT_EQ(oar::isfinite(k).dtype(), DType::boolean);
  }
}

TEST(TensorApi, NormFormsMatchLoops) {
  const V xv = random_values(6, -2, 2, 11, DType::f64);
  double sq = 0;
  for (double v : xv) sq += v * v;
  V l1(2, 0), linf(3, 0);
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c) {
      l1[size_t(r)] += std::fabs(xv[size_t(r * 3 + c)]);
      linf[size_t(c)] = std::max(linf[size_t(c)], std::fabs(xv[size_t(r * 3 + c)]));
    }
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const Tensor x = f64(xv, {2, 3}, dev);
    expect_close(host_values(oar::norm(x)), {std::sqrt(sq)}, 1e-12, 1e-12, "norm");
    expect_close(host_values(oar::norm(x, "fro")), {std::sqrt(sq)}, 1e-12, 1e-12, "norm fro");
    expect_close(host_values(oar::norm(x, 1, {1})), l1, 1e-12, 1e-12, "norm p=1 over dim 1");
    expect_close(host_values(oar::norm(x, kInf, {0})), linf, 1e-12, 1e-12, "norm p=inf over dim 0");
    EXPECT_EQ(oar::norm(x, 2.0, {1}, true).shape(), (Shape{2, 1}));
    // nuclear: the singular values of [[3, 0, 0], [0, -4, 0]] are 4 and 3
    const Tensor m = f64({3, 0, 0, 0, -4, 0}, {2, 3}, dev);
    expect_close(host_values(oar::norm(m, "nuc")), {7}, 1e-6, 1e-6, "nuc");
    const Tensor batch = oar::stack({m, m * 2.0});  // [2, 2, 3]
    expect_close(host_values(oar::norm(batch, "nuc", {1, 2})), {7, 14}, 1e-6, 1e-6, "batched nuc");
    Tensor kept = oar::norm(batch, "nuc", {2, 1}, true);
    EXPECT_EQ(kept.shape(), (Shape{2, 1, 1}));
    expect_close(host_values(kept), {7, 14}, 1e-6, 1e-6, "nuc keepdim");
    // over dims 0 and 2 the matrices are rank one: [[3,0,0],[6,0,0]] and [[0,-4,0],[0,-8,0]]
    expect_close(host_values(oar::norm(batch, "nuc", {0, 2})), {std::sqrt(45.0), std::sqrt(80.0)}, 1e-6, 1e-6,
                 "nuc over dims 0 and 2");
    EXPECT_THROW(oar::norm(make_tensor({1, 2}, {2}, DType::i64, dev)), DTypeError);
    EXPECT_THROW(oar::norm(x, "inf"), ValueError);
    EXPECT_THROW(oar::norm(batch, "nuc"), ShapeError);
  }
}

TEST(TensorApi, ArgsortIsAStableSort) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const Tensor x = f32({3, 1, 2, 1}, {4}, dev);
    const Tensor order = oar::argsort(x);
    EXPECT_EQ(order.dtype(), DType::i64);
    EXPECT_EQ(host_values(order), (V{1, 3, 2, 0}));  // ties keep their order
    EXPECT_EQ(host_values(oar::argsort(f32({3, 1, 2, 0}, {4}, dev), 0, true)), (V{0, 2, 1, 3}));
    const Tensor m = f32({5, 1, 4, 2, 3, 6}, {2, 3}, dev);
    EXPECT_EQ(host_values(oar::argsort(m)), (V{1, 2, 0, 0, 1, 2}));
    EXPECT_EQ(host_values(oar::argsort(m, 0)), (V{1, 0, 0, 0, 1, 1}));
    EXPECT_EQ(host_values(oar::argsort(mask({1, 0, 1, 0}, {4}, dev))), (V{1, 3, 0, 2}));
  }
}

TEST(TensorApi, ShapeFunctions) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const Tensor x = f32({1, 2, 3, 4}, {2, 2}, dev);
    Tensor r = oar::repeat(x, {1, 2});
    EXPECT_EQ(r.shape(), (Shape{2, 4}));
    EXPECT_EQ(host_values(r), (V{1, 2, 1, 2, 3, 4, 3, 4}));
    r = oar::repeat(x, {2, 1, 1});
    EXPECT_EQ(r.shape(), (Shape{2, 2, 2}));
    EXPECT_EQ(host_values(r), (V{1, 2, 3, 4, 1, 2, 3, 4}));
    EXPECT_EQ(host_values(oar::repeat(f32({1, 2}, {2}, dev), {2, 2})), (V{1, 2, 1, 2, 1, 2, 1, 2}));
    EXPECT_THROW(oar::repeat(x, {2}), ShapeError);
    Tensor l = leaf({1, 2}, {2}, dev);  // each element is used 3 * 2 times
    oar::sum(oar::repeat(l, {3, 2})).backward();
    EXPECT_EQ(host_values(l.grad()), (V{6, 6}));

    const Tensor y = f32(iota(12), {2, 6}, dev);
    Tensor u = oar::unflatten(y, 1, {2, -1});
    EXPECT_EQ(u.shape(), (Shape{2, 2, 3}));
    EXPECT_EQ(host_values(u), iota(12));
    EXPECT_EQ(oar::unflatten(y, -1, {3, 2}).shape(), (Shape{2, 3, 2}));
    EXPECT_THROW(oar::unflatten(y, 1, {4, -1}), ShapeError);
    EXPECT_THROW(oar::unflatten(y, 1, {4, 2}), ShapeError);

    Tensor h = oar::hstack({f32({1, 2}, {2}, dev), f32({3}, {1}, dev)});
    EXPECT_EQ(host_values(h), (V{1, 2, 3}));
    h = oar::hstack({f32({1, 2}, {2, 1}, dev), f32({3, 4}, {2, 1}, dev)});
    EXPECT_EQ(h.shape(), (Shape{2, 2}));
    EXPECT_EQ(host_values(h), (V{1, 3, 2, 4}));
    Tensor v = oar::vstack({f32({1, 2}, {2}, dev), f32({3, 4}, {2}, dev)});
    EXPECT_EQ(v.shape(), (Shape{2, 2}));
    EXPECT_EQ(host_values(v), (V{1, 2, 3, 4}));
    v = oar::vstack({x, f32({5, 6}, {2}, dev)});
    EXPECT_EQ(v.shape(), (Shape{3, 2}));
    EXPECT_EQ(host_values(v), (V{1, 2, 3, 4, 5, 6}));
    EXPECT_THROW(oar::vstack({}), ValueError);

    Tensor s = oar::swapaxes(y, 0, 1);
    EXPECT_EQ(s.shape(), (Shape{6, 2}));
    EXPECT_EQ(host_values(s), host_values(y.transpose(0, 1)));
    EXPECT_EQ(host_values(s)[1], 6.0);  // s[0][1] = y[1][0]
    EXPECT_EQ(oar::swapdims(y, 1, 0).shape(), (Shape{6, 2}));
    Tensor bt = oar::broadcast_to(f32({1, 2, 3}, {3}, dev), {2, 3});
    EXPECT_EQ(bt.shape(), (Shape{2, 3}));
    EXPECT_EQ(host_values(bt), (V{1, 2, 3, 1, 2, 3}));
    EXPECT_EQ(oar::unsqueeze(x, 1).shape(), (Shape{2, 1, 2}));
  }
}

TEST(TensorApi, IndexPutMatchesLoops) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    auto zeros = [&](const Shape& s) { return Tensor::zeros(s, DType::f32, dev); };
    // single elements
    Tensor a = oar::index_put(zeros({3, 4}), {idx({0, 2}, dev), idx({1, -1}, dev)}, f32({5, 6}, {2}, dev));
    V want(12, 0);
    want[0 * 4 + 1] = 5, want[2 * 4 + 3] = 6;
    EXPECT_EQ(host_values(a), want);
    // rows, the values broadcast over them
    Tensor b = oar::index_put(zeros({3, 4}), {idx({2, 0}, dev)}, f32({1, 2, 3, 4}, {4}, dev));
    EXPECT_EQ(host_values(b), (V{1, 2, 3, 4, 0, 0, 0, 0, 1, 2, 3, 4}));
    // a repeated index: the last write wins, or the writes sum with accumulate
    const Tensor two_rows = f32({1, 1, 1, 1, 2, 2, 2, 2}, {2, 4}, dev);
    EXPECT_EQ(host_values(oar::index_put(zeros({3, 4}), {idx({1, 1}, dev)}, two_rows)),
              (V{0, 0, 0, 0, 2, 2, 2, 2, 0, 0, 0, 0}));
    EXPECT_EQ(host_values(oar::index_put(Tensor::ones({3, 4}, DType::f32, dev), {idx({1, 1}, dev)}, two_rows, true)),
              (V{1, 1, 1, 1, 4, 4, 4, 4, 1, 1, 1, 1}));
    // a bool mask over rows; a whole dim before an index
    EXPECT_EQ(host_values(oar::index_put(zeros({3, 4}), {mask({1, 0, 1}, {3}, dev)}, 7.0)),
              (V{7, 7, 7, 7, 0, 0, 0, 0, 7, 7, 7, 7}));
    EXPECT_EQ(host_values(oar::index_put(zeros({3, 4}), {Tensor(), idx({0, -1}, dev)}, 9.0)),
              (V{9, 0, 0, 9, 9, 0, 0, 9, 9, 0, 0, 9}));
    // a 2-D mask is masked_fill
    const Tensor m2 = mask({1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1}, {3, 4}, dev);
    EXPECT_EQ(host_values(oar::index_put(zeros({3, 4}), {m2}, 3.0)),
              host_values(oar::masked_fill(zeros({3, 4}), m2, 3.0)));
    // indices separated by a whole dim: their dims come first in the values' shape
    Tensor g = oar::index_put(zeros({2, 3, 4}), {idx({0, 1}, dev), Tensor(), idx({3, 0}, dev)},
                              f32({1, 2, 3, 4, 5, 6}, {2, 3}, dev));
    V gw(24, 0);
    for (int j = 0; j < 3; ++j) gw[size_t(0 * 12 + j * 4 + 3)] = 1 + j, gw[size_t(1 * 12 + j * 4 + 0)] = 4 + j;
    EXPECT_EQ(host_values(g), gw);
    // adjacent indices after a whole dim stay in place: x[:, i, j] of [2,3,4] is [2, len(i)]
    Tensor h = oar::index_put(zeros({2, 3, 4}), {Tensor(), idx({0, 2}, dev), idx({1, 3}, dev)},
                              f32({1, 2, 3, 4}, {2, 2}, dev));
    V hw(24, 0);
    hw[0 * 12 + 0 * 4 + 1] = 1, hw[0 * 12 + 2 * 4 + 3] = 2, hw[1 * 12 + 0 * 4 + 1] = 3, hw[1 * 12 + 2 * 4 + 3] = 4;
    EXPECT_EQ(host_values(h), hw);
    // bool tensors
    Tensor bools = oar::index_put(Tensor::zeros({4}, DType::boolean, dev), {idx({1, 3}, dev)}, 1.0);
    EXPECT_EQ(bools.dtype(), DType::boolean);
    EXPECT_EQ(host_values(bools), (V{0, 1, 0, 1}));
    // no index: the whole tensor
    EXPECT_EQ(host_values(oar::index_put(zeros({2, 2}), {}, f32({1, 2}, {2}, dev))), (V{1, 2, 1, 2}));
    // errors
    EXPECT_THROW(oar::index_put(zeros({3, 4}), {idx({3}, dev)}, 1.0), IndexError);
    EXPECT_THROW(oar::index_put(zeros({3, 4}), {idx({-4}, dev)}, 1.0), IndexError);
    EXPECT_THROW(oar::index_put(zeros({3, 4}), {idx({0}, dev), idx({0}, dev), idx({0}, dev)}, 1.0), IndexError);
    EXPECT_THROW(oar::index_put(zeros({3, 4}), {f32({0.5}, {1}, dev)}, 1.0), IndexError);
    EXPECT_THROW(oar::index_put(zeros({3, 4}), {idx({0, 1}, dev)}, f32({1, 2, 3}, {3}, dev)), ShapeError);

    // gradients: to x where it was not overwritten, to values where they went
    const V wv = random_values(12, -1, 1, 21, DType::f64);
    const Tensor w = f64(wv, {3, 4}, dev);
    for (bool accumulate : {false, true}) {
      Tensor base = leaf(iota(12), {3, 4}, dev), values = leaf({10, 20}, {2}, dev);
      oar::sum(oar::mul(oar::index_put(base, {idx({0, 2}, dev), idx({1, 3}, dev)}, values, accumulate), w)).backward();
      V gx = wv;
      if (!accumulate) gx[1] = 0, gx[11] = 0;
      expect_close(host_values(base.grad()), gx, 0, 0, accumulate ? "d/dx accumulate" : "d/dx");
      expect_close(host_values(values.grad()), {wv[1], wv[11]}, 0, 0, "d/dvalues");
    }
  }
}

TEST(TensorApi, InPlaceArithmeticWritesIntoSelf) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    Tensor x = f32({1, 2, 3, 4}, {4}, dev);
    const Tensor y = f32({4, 3, 2, 1}, {4}, dev);
    const uint32_t before = x.version();
    Tensor r = oar::add_(x, y, 2.0);
    EXPECT_TRUE(r.is_same(x));
    EXPECT_GT(x.version(), before);
    EXPECT_EQ(host_values(x), (V{9, 8, 7, 6}));
    oar::add_(x, 1.0);
    EXPECT_EQ(host_values(x), (V{10, 9, 8, 7}));
    oar::sub_(x, y);
    EXPECT_EQ(host_values(x), (V{6, 6, 6, 6}));
    oar::sub_(x, 0.5, 2.0);
    EXPECT_EQ(host_values(x), (V{5, 5, 5, 5}));
    oar::mul_(x, y);
    EXPECT_EQ(host_values(x), (V{20, 15, 10, 5}));
    oar::mul_(x, 0.5);
    EXPECT_EQ(host_values(x), (V{10, 7.5, 5, 2.5}));
    oar::div_(x, y);
    EXPECT_EQ(host_values(x), (V{2.5, 2.5, 2.5, 2.5}));
    oar::div_(x, 0.5);
    EXPECT_EQ(host_values(x), (V{5, 5, 5, 5}));
    oar::pow_(x, 2.0);
    expect_close(host_values(x), {25, 25, 25, 25}, 1e-6, 0, "pow_ number");
    oar::pow_(x, f32({0.5, 1, 0, 2}, {4}, dev));
    expect_close(host_values(x), {5, 25, 1, 625}, 1e-6, 0, "pow_ tensor");
    oar::remainder_(x, 7.0);
    expect_close(host_values(x), {5, 4, 1, 2}, 1e-5, 1e-5, "remainder_");
    oar::fmod_(x, -3.5);
    expect_close(host_values(x), {1.5, 0.5, 1, 2}, 1e-5, 1e-5, "fmod_");
    oar::reciprocal_(x);
    expect_close(host_values(x), {1 / 1.5, 2, 1, 0.5}, 1e-5, 1e-5, "reciprocal_");
    oar::round_(x, 1);
    expect_close(host_values(x), {0.7, 2, 1, 0.5}, 1e-6, 1e-6, "round_ decimals=1");
    oar::zero_(x);
    EXPECT_EQ(host_values(x), (V{0, 0, 0, 0}));
    oar::fill_(x, 2.5);
    EXPECT_EQ(host_values(x), (V{2.5, 2.5, 2.5, 2.5}));
    oar::lerp_(x, y, 0.5);
    EXPECT_EQ(host_values(x), (V{3.25, 2.75, 2.25, 1.75}));
    oar::lerp_(x, y, f32({0, 1, 0, 1}, {4}, dev));
    EXPECT_EQ(host_values(x), (V{3.25, 3, 2.25, 1}));
    oar::addcmul_(x, y, y, 0.5);
    EXPECT_EQ(host_values(x), (V{11.25, 7.5, 4.25, 1.5}));
    oar::addcdiv_(x, y, y, -1.0);
    EXPECT_EQ(host_values(x), (V{10.25, 6.5, 3.25, 0.5}));
    EXPECT_EQ(x.dtype(), DType::f32);

    // integers stay integral; a floating result is refused and nothing is written
    Tensor k = make_tensor({7, -7}, {2}, DType::i64, dev);
    oar::add_(k, 3.0);
    EXPECT_EQ(host_values(k), (V{10, -4}));
    oar::remainder_(k, 3.0);
    EXPECT_EQ(host_values(k), (V{1, 2}));
    oar::fmod_(k, make_tensor({2}, {}, DType::i64, dev));
    EXPECT_EQ(host_values(k), (V{1, 0}));
    EXPECT_THROW(oar::div_(k, 2.0), DTypeError);
    EXPECT_THROW(oar::add_(k, 0.5), DTypeError);
    EXPECT_EQ(k.dtype(), DType::i64);
    EXPECT_EQ(host_values(k), (V{1, 0}));

    // through a view: the base's memory changes
    Tensor base = Tensor::zeros({2, 3}, DType::f32, dev);
    oar::add_(base.select(0, 1), 5.0);
    EXPECT_EQ(host_values(base), (V{0, 0, 0, 5, 5, 5}));
    oar::mul_(base.narrow(1, 1, 1), 2.0);
    EXPECT_EQ(host_values(base), (V{0, 0, 0, 5, 10, 5}));
  }
}

TEST(TensorApi, GeneratedInPlaceForms) {
  std::set<std::string> ops;
  for (const auto& f : inplace_op_functions()) ops.insert(f.op);
  for (const char* op : {"exp", "log", "sqrt", "sigmoid", "tanh", "relu", "gelu", "leaky_relu", "neg", "abs", "clamp",
                         "floor", "round", "sign", "erfinv", "softsign"})
    EXPECT_TRUE(ops.count(op)) << op << " has no generated in-place form";
  for (const char* op : {"copy", "cast", "logical_not", "bitwise_not", "eq", "add", "where", "sum", "nan_to_num"})
    EXPECT_FALSE(ops.count(op)) << op << " should have no generated in-place form";
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    Tensor x = f32({-1, 0.5, 2}, {3}, dev);
    EXPECT_TRUE(oar::clamp_(x).is_same(x));  // the catalog's defaults: no bound
    EXPECT_EQ(host_values(x), (V{-1, 0.5, 2}));
    oar::clamp_(x, -0.5, 1.0);
    EXPECT_EQ(host_values(x), (V{-0.5, 0.5, 1}));
    oar::neg_(x);
    EXPECT_EQ(host_values(x), (V{0.5, -0.5, -1}));
    oar::abs_(x);
    EXPECT_EQ(host_values(x), (V{0.5, 0.5, 1}));
    oar::exp_(x);
    expect_close(host_values(x), {std::exp(0.5), std::exp(0.5), std::exp(1.0)}, 1e-6, 0, "exp_");
    oar::log_(x);
    expect_close(host_values(x), {0.5, 0.5, 1}, 1e-6, 1e-6, "log_");
    Tensor z = f32({-1, 2}, {2}, dev);
    oar::leaky_relu_(z, 0.25);
    EXPECT_EQ(host_values(z), (V{-0.25, 2}));
    oar::relu_(z);
    EXPECT_EQ(host_values(z), (V{0, 2}));
    Tensor ints = make_tensor({-3, 4}, {2}, DType::i64, dev);
    oar::abs_(ints);
    EXPECT_EQ(ints.dtype(), DType::i64);
    EXPECT_EQ(host_values(ints), (V{3, 4}));
    EXPECT_THROW(oar::exp_(ints), DTypeError);  // exp of an integer tensor is floating
  }
}

TEST(TensorApi, InPlaceClampWhereAndIndexing) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const Tensor x = f32({-3, -1, 0, 2, 5}, {5}, dev);
    const Tensor lo = f32({-2, 0, 0, 0, 0}, {5}, dev), hi = f32({4}, {}, dev);
    EXPECT_EQ(host_values(oar::clamp(x, lo, hi)), (V{-2, 0, 0, 2, 4}));
    EXPECT_EQ(host_values(oar::clamp(x, Tensor(), hi)), (V{-3, -1, 0, 2, 4}));
    EXPECT_THROW(oar::clamp(x, Tensor(), Tensor()), ValueError);
    Tensor c = x.clone();
    oar::clamp_(c, lo, hi);
    EXPECT_EQ(host_values(c), (V{-2, 0, 0, 2, 4}));
    EXPECT_EQ(host_values(oar::clamp_min(x, 1)), (V{1, 1, 1, 2, 5}));
    EXPECT_EQ(host_values(oar::clamp_max(x, 1)), (V{-3, -1, 0, 1, 1}));
    c = x.clone();
    oar::clamp_min_(c, 0.0);
    EXPECT_EQ(host_values(c), (V{0, 0, 0, 2, 5}));
    oar::clamp_max_(c, 1.0);
    EXPECT_EQ(host_values(c), (V{0, 0, 0, 1, 1}));
    Tensor n = f32({kNaN, kInf, -kInf, 1}, {4}, dev);
    oar::nan_to_num_(n, 0.5, {9.0}, {-9.0});
    EXPECT_EQ(host_values(n), (V{0.5, 9, -9, 1}));

    const Tensor cond = mask({1, 0, 1, 0, 1}, {5}, dev);
    Tensor w = oar::where(cond, x, 0.0);
    EXPECT_EQ(w.dtype(), DType::f32);
    EXPECT_EQ(host_values(w), (V{-3, 0, 0, 0, 5}));
    EXPECT_EQ(host_values(oar::where(cond, 1.5, x)), (V{1.5, -1, 1.5, 2, 1.5}));
    EXPECT_EQ(oar::where(cond, make_tensor({1, 2, 3, 4, 5}, {5}, DType::i64, dev), 0.5).dtype(), DType::f32);
    Tensor m = x.clone();
    oar::masked_fill_(m, cond, -7.0);
    EXPECT_EQ(host_values(m), (V{-7, -1, -7, 2, -7}));
    oar::masked_fill_(m, oar::logical_not(cond), f32({3}, {}, dev));
    EXPECT_EQ(host_values(m), (V{-7, 3, -7, 3, -7}));
    EXPECT_EQ(host_values(oar::masked_fill(x, cond, f32({1}, {}, dev))), (V{1, -1, 1, 2, 1}));

    const Tensor sq = f32({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3}, dev);
    Tensor t = sq.clone();
    oar::tril_(t);
    EXPECT_EQ(host_values(t), (V{1, 0, 0, 4, 5, 0, 7, 8, 9}));
    t = sq.clone();
    oar::triu_(t, 1);
    EXPECT_EQ(host_values(t), (V{0, 2, 3, 0, 0, 6, 0, 0, 0}));
    t = sq.clone();
    oar::cumsum_(t, 1);
    EXPECT_EQ(host_values(t), (V{1, 3, 6, 4, 9, 15, 7, 15, 24}));
    t = f32({1, 2, 3, 4}, {4}, dev);
    oar::cumprod_(t, 0);
    EXPECT_EQ(host_values(t), (V{1, 2, 6, 24}));

    Tensor z = Tensor::zeros({3, 2}, DType::f32, dev);
    oar::index_fill_(z, idx({0, 2}, dev), 0, 4.0);
    EXPECT_EQ(host_values(z), (V{4, 4, 0, 0, 4, 4}));
    oar::index_copy_(z, idx({1}, dev), f32({7, 8}, {1, 2}, dev), 0);
    EXPECT_EQ(host_values(z), (V{4, 4, 7, 8, 4, 4}));
    oar::index_add_(z, idx({0, 0}, dev), f32({1, 1, 2, 2}, {2, 2}, dev), 0, 0.5);
    EXPECT_EQ(host_values(z), (V{5.5, 5.5, 7, 8, 4, 4}));

    Tensor s = Tensor::zeros({4}, DType::f32, dev);
    oar::scatter_(s, idx({3, 0}, dev), f32({1, 2}, {2}, dev), 0);
    EXPECT_EQ(host_values(s), (V{2, 0, 0, 1}));
    oar::scatter_(s, idx({1}, dev), 5.0, 0);
    EXPECT_EQ(host_values(s), (V{2, 5, 0, 1}));
    oar::scatter_add_(s, idx({1, 1, 2}, dev), f32({1, 1, 1}, {3}, dev), 0);
    EXPECT_EQ(host_values(s), (V{2, 7, 1, 1}));
    oar::scatter_reduce_(s, idx({0, 0}, dev), f32({3, 9}, {2}, dev), 0, "amax");
    EXPECT_EQ(host_values(s), (V{9, 7, 1, 1}));

    Tensor p = Tensor::zeros({4}, DType::f32, dev);
    oar::masked_scatter_(p, mask({0, 1, 0, 1}, {4}, dev), f32({5, 6}, {2}, dev));
    EXPECT_EQ(host_values(p), (V{0, 5, 0, 6}));
    oar::put_(p, idx({0, -1}, dev), f32({1, 2}, {2}, dev));
    EXPECT_EQ(host_values(p), (V{1, 5, 0, 2}));
    oar::put_(p, idx({0, 0}, dev), f32({1, 1}, {2}, dev), true);
    EXPECT_EQ(host_values(p), (V{3, 5, 0, 2}));
    const uint32_t before = p.version();
    EXPECT_TRUE(oar::index_put_(p, {idx({2}, dev)}, 8.0).is_same(p));
    EXPECT_GT(p.version(), before);
    EXPECT_EQ(host_values(p), (V{3, 5, 8, 2}));
    oar::index_put_(p, {idx({2, 2}, dev)}, f32({1, 1}, {2}, dev), true);
    EXPECT_EQ(host_values(p), (V{3, 5, 10, 2}));
  }
}

TEST(TensorApi, InPlaceViewChanges) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    Tensor x = f32({1, 2, 3, 4, 5, 6}, {2, 3}, dev);
    EXPECT_TRUE(oar::transpose_(x, 0, 1).is_same(x));
    EXPECT_EQ(x.shape(), (Shape{3, 2}));
    EXPECT_EQ(host_values(x), (V{1, 4, 2, 5, 3, 6}));
    oar::t_(x);
    EXPECT_EQ(x.shape(), (Shape{2, 3}));
    EXPECT_EQ(host_values(x), (V{1, 2, 3, 4, 5, 6}));
    oar::swapaxes_(x, 1, 0);
    EXPECT_EQ(x.shape(), (Shape{3, 2}));
    oar::unsqueeze_(x, 0);
    EXPECT_EQ(x.shape(), (Shape{1, 3, 2}));
    oar::squeeze_(x);
    EXPECT_EQ(x.shape(), (Shape{3, 2}));
    oar::unsqueeze_(x, 2);
    EXPECT_EQ(x.shape(), (Shape{3, 2, 1}));
    oar::squeeze_(x, -1);
    EXPECT_EQ(x.shape(), (Shape{3, 2}));
    EXPECT_EQ(host_values(x), (V{1, 4, 2, 5, 3, 6}));
    // under autograd a tracked tensor keeps its gradient path through the view change
    Tensor a = leaf({1, 2, 3, 4, 5, 6}, {2, 3}, dev);
    Tensor b = a * 1.0;
    oar::t_(b);
    oar::sum(oar::mul(b, f64({1, 2, 3, 4, 5, 6}, {3, 2}, dev))).backward();
    EXPECT_EQ(host_values(a.grad()), (V{1, 3, 5, 2, 4, 6}));
  }
}

TEST(TensorApi, InPlaceAutogradMatchesTheOutOfPlaceForms) {
  const V av{0.25, -0.5, 1.0};
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    Tensor a = leaf(av, {3}, dev);
    EXPECT_THROW(oar::add_(a, 1.0), ValueError);  // a leaf that requires grad refuses, as in PyTorch
    EXPECT_THROW(oar::exp_(a), ValueError);
    Tensor b = a * 1.0;
    oar::mul_(b, 3.0);
    oar::exp_(b);
    oar::sum(b).backward();
    V g;
    for (double v : av) g.push_back(3 * std::exp(3 * v));
    expect_close(host_values(a.grad()), g, 1e-12, 1e-12, "d/da exp_(mul_(a, 3))");

    // a value saved for backward survives the in-place write after it
    Tensor a2 = leaf(av, {3}, dev);
    Tensor y = a2 * 1.0;
    Tensor sq = oar::mul(y, y);
    oar::add_(y, 1.0);
    oar::sum(sq).backward();
    expect_close(host_values(a2.grad()), {0.5, -1.0, 2.0}, 1e-12, 1e-12, "d/da (a*a) with a written after");
    expect_close(host_values(y), {1.25, 0.5, 2.0}, 0, 0, "y after add_");

    // the generated clamp_: gradient 1 inside the bounds, 0 outside
    Tensor a3 = leaf(av, {3}, dev);
    Tensor c = a3 * 1.0;
    oar::clamp_(c, -0.4, 0.6);
    oar::sum(c).backward();
    EXPECT_EQ(host_values(a3.grad()), (V{1, 0, 0}));

    // a write into a view reaches its base's history and the written tensor's
    const Tensor w = f64({1, 2, 3, 4, 5, 6}, {2, 3}, dev);
    Tensor m = leaf({1, 2, 3, 4, 5, 6}, {2, 3}, dev), src = leaf({7, 8, 9}, {3}, dev);
    Tensor base = m * 1.0;
    oar::add_(base.select(0, 0), src, 2.0);
    EXPECT_EQ(host_values(base), (V{15, 18, 21, 4, 5, 6}));
    oar::sum(oar::mul(base, w)).backward();
    EXPECT_EQ(host_values(m.grad()), (V{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(host_values(src.grad()), (V{2, 4, 6}));

    // index_put_ and masked_fill_: what they overwrite gets no gradient
    Tensor m2 = leaf({1, 2, 3, 4, 5, 6}, {2, 3}, dev), values = leaf({10, 20, 30}, {3}, dev);
    Tensor base2 = m2 * 1.0;
    oar::index_put_(base2, {idx({1}, dev)}, values);
    oar::masked_fill_(base2, mask({1, 0, 0, 0, 0, 0}, {2, 3}, dev), 0.0);
    EXPECT_EQ(host_values(base2), (V{0, 2, 3, 10, 20, 30}));
    oar::sum(oar::mul(base2, w)).backward();
    EXPECT_EQ(host_values(m2.grad()), (V{0, 2, 3, 0, 0, 0}));
    EXPECT_EQ(host_values(values.grad()), (V{4, 5, 6}));
  }
}
