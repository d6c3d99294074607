// Tests of the catalog composites in composites_reduce.cpp (std, var_mean,
// std_mean, all, any, count_nonzero, vector_norm, aminmax, nansum, nanmean),
// composites_linear.cpp (dot, mv, kron, linalg_cross, tensordot, block_diag,
// lerp, addcmul, addcdiv, diff), composites_index.cpp (masked_fill, take,
// put, index_fill, index_copy), the sample-point composites and the other
// writes (masked_scatter, vander, repeat_interleave_counts), through the
// generated C++ functions (oar::std, oar::kron, ...) a C++ user calls, against
// plain double loops on every device; finite-difference gradients and the
// typed errors.
#include <algorithm>
#include <cmath>
#include <limits>

#include "gradcheck.h"
#include "oar/ops.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
using Ints = std::vector<int64_t>;

// Row-wise reductions of a [rows, cols] matrix over its last dim.
template <class F>
std::vector<double> rows_of(const std::vector<double>& x, int64_t rows, int64_t cols, F f) {
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r) f(std::vector<double>(x.begin() + r * cols, x.begin() + (r + 1) * cols), out);
  return out;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / double(v.size());
}

double var_of(const std::vector<double>& v, int64_t correction) {
  const double m = mean_of(v);
  double s = 0;
  for (double x : v) s += (x - m) * (x - m);
  return s / double(int64_t(v.size()) - correction);
}

}  // namespace

TEST(CompositeReduce, StdVarMeanNormsMatchLoops) {
  const auto xv = random_values(12, -2, 2, 3, DType::f64);
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const Tensor x = make_tensor(xv, {3, 4}, DType::f64, dev);
    expect_close(host_values(oar::std(x, {1})),
                 rows_of(xv, 3, 4, [](auto r, auto& o) { o.push_back(std::sqrt(var_of(r, 1))); }), 1e-12, 1e-12, "std");
    auto vm = oar::var_mean(x, {-1}, false, 0);
    ASSERT_EQ(vm.size(), 2u);
    expect_close(host_values(vm[0]), rows_of(xv, 3, 4, [](auto r, auto& o) { o.push_back(var_of(r, 0)); }), 1e-12,
                 1e-12, "var_mean var");
    expect_close(host_values(vm[1]), rows_of(xv, 3, 4, [](auto r, auto& o) { o.push_back(mean_of(r)); }), 1e-12,
                 1e-12, "var_mean mean");
    auto sm = oar::std_mean(x, {}, true);
    EXPECT_EQ(sm[0].shape(), (Shape{1, 1}));
    expect_close(host_values(sm[0]), {std::sqrt(var_of(xv, 1))}, 1e-12, 1e-12, "std_mean std");
    expect_close(host_values(sm[1]), {mean_of(xv)}, 1e-12, 1e-12, "std_mean mean");
    for (double ord : {2.0, 1.0, 3.0, 0.5, kInf, -kInf, 0.0, -1.0}) {
      auto want = rows_of(xv, 3, 4, [ord](auto r, auto& o) {
        double s = 0, mx = 0, mn = kInf;
        for (double v : r) {
          mx = std::max(mx, std::abs(v)), mn = std::min(mn, std::abs(v));
          s += ord == 0 ? (v != 0) : std::pow(std::abs(v), ord);
        }
        o.push_back(std::isinf(ord) ? (ord > 0 ? mx : mn) : ord == 0 ? s : std::pow(s, 1 / ord));
      });
      expect_close(host_values(oar::vector_norm(x, {1}, false, ord)), want, 1e-12, 1e-12,
                   "vector_norm ord=" + std::to_string(ord));
    }
    // aminmax: NaN propagates; nansum / nanmean skip it.
    std::vector<double> nv = xv;
    nv[1] = kNaN, nv[9] = kNaN;
    const Tensor n = make_tensor(nv, {3, 4}, DType::f64, dev);
    auto mm = oar::aminmax(n, {1});
    auto mins = host_values(mm[0]), maxs = host_values(mm[1]);
    EXPECT_TRUE(std::isnan(mins[0]) && std::isnan(maxs[0]) && std::isnan(mins[2]));
    EXPECT_EQ(maxs[1], *std::max_element(xv.begin() + 4, xv.begin() + 8));
    expect_close(host_values(oar::nansum(n, {1})), rows_of(nv, 3, 4, [](auto r, auto& o) {
                   double s = 0;
                   for (double v : r) s += std::isnan(v) ? 0 : v;
                   o.push_back(s);
                 }), 1e-12, 1e-12, "nansum");
    expect_close(host_values(oar::nanmean(n, {1})), rows_of(nv, 3, 4, [](auto r, auto& o) {
                   double s = 0, k = 0;
                   for (double v : r)
                     if (!std::isnan(v)) s += v, ++k;
                   o.push_back(s / k);
                 }), 1e-12, 1e-12, "nanmean");
    EXPECT_EQ(oar::nansum(make_tensor({1, 2, 3}, {3}, DType::i32, dev)).dtype(), DType::i64);
  }
}

TEST(CompositeReduce, AllAnyCountNonzeroMatchLoops) {
  const std::vector<double> xv{0, 1, 2, 0, 0, 0, 3, kNaN, 5, 6, 7, 8};
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const Tensor x = make_tensor(xv, {3, 4}, DType::f32, dev);
    Tensor all = oar::all(x, {1});
    EXPECT_EQ(all.dtype(), DType::boolean);
    expect_close(host_values(all), {0, 0, 1}, 0, 0, "all (NaN counts as nonzero)");
    expect_close(host_values(oar::any(x, {1})), {1, 1, 1}, 0, 0, "any");
    expect_close(host_values(oar::any(x, {0}, true)), {1, 1, 1, 1}, 0, 0, "any over rows");
    expect_close(host_values(oar::count_nonzero(x, {0})), {1, 2, 3, 2}, 0, 0, "count_nonzero");
    expect_close(host_values(oar::count_nonzero(x)), {8}, 0, 0, "count_nonzero of all");
    EXPECT_EQ(oar::all(make_tensor({1, 2}, {2}, DType::u8, dev)).dtype(), DType::u8);  // as PyTorch
    expect_close(host_values(oar::all(x.narrow(0, 0, 0))), {1}, 0, 0, "all of nothing");
    expect_close(host_values(oar::any(x.narrow(0, 0, 0))), {0}, 0, 0, "any of nothing");
  }
}

TEST(CompositeLinear, ProductsMatchLoops) {
  const auto av = random_values(12, -2, 2, 5, DType::f64), bv = random_values(20, -2, 2, 6, DType::f64);
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const Tensor a = make_tensor(av, {3, 4}, DType::f64, dev), b = make_tensor(bv, {4, 5}, DType::f64, dev);
    // dot, mv
    const Tensor v = a.select(0, 0), w = a.select(0, 1);
    double d = 0;
    for (int k = 0; k < 4; ++k) d += av[size_t(k)] * av[size_t(4 + k)];
    expect_close(host_values(oar::dot(v, w)), {d}, 1e-12, 1e-12, "dot");
    expect_close(host_values(oar::dot(make_tensor({1, 2, 3}, {3}, DType::i64, dev),
                                      make_tensor({4, 5, 6}, {3}, DType::i64, dev))),
                 {32}, 0, 0, "integer dot");
    std::vector<double> mv;
    for (int i = 0; i < 3; ++i) {
      double s = 0;
      for (int k = 0; k < 4; ++k) s += av[size_t(i * 4 + k)] * bv[size_t(k * 5)];
      mv.push_back(s);
    }
    expect_close(host_values(oar::mv(a, b.select(1, 0).contiguous())), mv, 1e-12, 1e-12, "mv");
    // kron of [3,4] and [4,5]: [12,20]
    std::vector<double> kron(240);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 4; ++k)
          for (int l = 0; l < 5; ++l) kron[size_t((i * 4 + k) * 20 + j * 5 + l)] = av[size_t(i * 4 + j)] * bv[size_t(k * 5 + l)];
    Tensor kr = oar::kron(a, b);
    EXPECT_EQ(kr.shape(), (Shape{12, 20}));
    expect_close(host_values(kr), kron, 1e-12, 1e-12, "kron");
    // tensordot: a [3,4] . b [4,5] over a's 1 and b's 0 is a matmul; over nothing, an outer product
    std::vector<double> mm(15, 0);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j)
        for (int k = 0; k < 4; ++k) mm[size_t(i * 5 + j)] += av[size_t(i * 4 + k)] * bv[size_t(k * 5 + j)];
    expect_close(host_values(oar::tensordot(a, b, {1}, {0})), mm, 1e-12, 1e-12, "tensordot");
    expect_close(host_values(oar::tensordot(a, b.transpose(0, 1), {-1}, {1})), mm, 1e-12, 1e-12, "tensordot bt");
    EXPECT_EQ(oar::tensordot(a, b, {}, {}).shape(), (Shape{3, 4, 4, 5}));
    // linalg_cross of rows of 3
    const Tensor p = make_tensor(av, {4, 3}, DType::f64, dev), q = make_tensor(bv, {4, 5}, DType::f64, dev).narrow(1, 0, 3);
    auto cr = host_values(oar::linalg_cross(p, q));
    for (int r = 0; r < 4; ++r) {
      const double* x = &av[size_t(r * 3)];
      const double y[3] = {bv[size_t(r * 5)], bv[size_t(r * 5 + 1)], bv[size_t(r * 5 + 2)]};
      expect_close({cr[size_t(r * 3)], cr[size_t(r * 3 + 1)], cr[size_t(r * 3 + 2)]},
                   {x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]}, 1e-12, 1e-12,
                   "cross row " + std::to_string(r));
    }
    // block_diag of [2,2], a scalar and a vector of 3: [4, 6]
    Tensor bd = oar::block_diag({make_tensor({1, 2, 3, 4}, {2, 2}, DType::f64, dev), make_tensor({5}, {}, DType::f64, dev),
                                 make_tensor({6, 7, 8}, {3}, DType::f64, dev)});
    EXPECT_EQ(bd.shape(), (Shape{4, 6}));
    expect_close(host_values(bd), {1, 2, 0, 0, 0, 0, 3, 4, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 6, 7, 8}, 0, 0,
                 "block_diag");
  }
}

TEST(CompositeLinear, LerpAddcDiffMatchLoops) {
  const auto av = random_values(12, -2, 2, 7, DType::f64), bv = random_values(12, -2, 2, 8, DType::f64);
  const auto wv = random_values(12, -1, 2, 9, DType::f64);
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const Tensor a = make_tensor(av, {3, 4}, DType::f64, dev), b = make_tensor(bv, {3, 4}, DType::f64, dev);
    const Tensor w = make_tensor(wv, {3, 4}, DType::f64, dev);
    std::vector<double> lerp, addcmul, addcdiv;
    for (size_t i = 0; i < 12; ++i) {
      lerp.push_back(av[i] + wv[i] * (bv[i] - av[i]));
      addcmul.push_back(av[i] + 0.5 * bv[i] * wv[i]);
      addcdiv.push_back(av[i] - 2 * bv[i] / wv[i]);
    }
    expect_close(host_values(oar::lerp(a, b, w)), lerp, 1e-12, 1e-12, "lerp");
    // exact at weight 1, where start + (end - start) would round
    auto ends = host_values(oar::lerp(a, b, make_tensor({1}, {}, DType::f64, dev)));
    EXPECT_EQ(ends, bv);
    expect_close(host_values(oar::addcmul(a, b, w, 0.5)), addcmul, 1e-12, 1e-12, "addcmul");
    expect_close(host_values(oar::addcdiv(a, b, w, -2)), addcdiv, 1e-12, 1e-12, "addcdiv");
    // diff along dim 0, twice, after a prepended row
    Tensor pre = make_tensor({9, 9, 9, 9}, {1, 4}, DType::f64, dev);
    std::vector<double> rows = {9, 9, 9, 9};
    rows.insert(rows.end(), av.begin(), av.end());
    std::vector<double> d1, d2;
    for (size_t i = 0; i + 4 < rows.size(); ++i) d1.push_back(rows[i + 4] - rows[i]);
    for (size_t i = 0; i + 4 < d1.size(); ++i) d2.push_back(d1[i + 4] - d1[i]);
    Tensor df = oar::diff(a, pre, Tensor(), 2, 0);
    EXPECT_EQ(df.shape(), (Shape{2, 4}));
    expect_close(host_values(df), d2, 1e-12, 1e-12, "diff n=2 dim=0 with prepend");
    expect_close(host_values(oar::diff(make_tensor({1, 1, 0, 1}, {4}, DType::boolean, dev))), {0, 1, 1}, 0, 0,
                 "diff of bool is xor");
    EXPECT_EQ(oar::diff(a, Tensor(), Tensor(), 9).shape(), (Shape{3, 0}));
    expect_close(host_values(oar::diff(a, Tensor(), Tensor(), 0)), av, 0, 0, "diff n=0 is a copy");
  }
}

TEST(CompositeIndex, MaskedFillTakeIndexFillIndexCopyMatchLoops) {
  const auto xv = random_values(12, -2, 2, 10, DType::f64);
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const Tensor x = make_tensor(xv, {3, 4}, DType::f64, dev);
    const Tensor mask = make_tensor({1, 0, 0, 1}, {4}, DType::boolean, dev);
    std::vector<double> mf = xv;
    for (int r = 0; r < 3; ++r) mf[size_t(r * 4)] = mf[size_t(r * 4 + 3)] = 7.5;
    expect_close(host_values(oar::masked_fill(x, mask, 7.5)), mf, 0, 0, "masked_fill");
    const Tensor idx = make_tensor({0, -1, 5, 11, -12}, {5}, DType::i64, dev);
    expect_close(host_values(oar::take(x, idx)), {xv[0], xv[11], xv[5], xv[11], xv[0]}, 0, 0, "take");
    EXPECT_EQ(oar::take(x, make_tensor({1, 2, 3, 4}, {2, 2}, DType::i64, dev)).shape(), (Shape{2, 2}));
    std::vector<double> fill = xv;
    for (int r = 0; r < 3; ++r) fill[size_t(r * 4 + 1)] = fill[size_t(r * 4 + 3)] = -3;
    expect_close(host_values(oar::index_fill(x, make_tensor({1, -1, 1}, {3}, DType::i64, dev), 1, -3)), fill, 0, 0,
                 "index_fill (repeats, negative)");
    const Tensor src = make_tensor({10, 11, 12, 13, 20, 21, 22, 23}, {2, 4}, DType::f64, dev);
    std::vector<double> copy = xv;
    for (int c = 0; c < 4; ++c) copy[size_t(2 * 4 + c)] = 10 + c, copy[size_t(c)] = 20 + c;
    expect_close(host_values(oar::index_copy(x, make_tensor({2, 0}, {2}, DType::i64, dev), src, 0)), copy, 0, 0,
                 "index_copy");
  }
}

TEST(CompositeReduceLinearIndex, GradientsMatchFiniteDifferences) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    Tensor x = make_tensor(random_values(12, 0.5, 2, 21, DType::f64), {3, 4}, DType::f64, dev);
    Tensor y = make_tensor(random_values(12, -2, 2, 22, DType::f64), {3, 4}, DType::f64, dev);
    Tensor z = make_tensor(random_values(12, 0.5, 2, 23, DType::f64), {3, 4}, DType::f64, dev);
    auto one = [](const char* op, Attrs attrs) {
      return [op, attrs](const std::vector<Tensor>& in) { return call(op, in, attrs); };
    };
    gradcheck(one("std", {{"dims", Ints{1}}}), {y}, {true}, "std");
    gradcheck(one("var_mean", {{"dims", Ints{0}}}), {y}, {true}, "var_mean");
    gradcheck(one("vector_norm", {{"dims", Ints{1}}, {"ord", 3.0}}), {y}, {true}, "vector_norm 3");
    gradcheck(one("vector_norm", {}), {y}, {true}, "vector_norm 2");
    gradcheck(one("nanmean", {{"dims", Ints{1}}}), {y}, {true}, "nanmean");
    gradcheck(one("kron", {}), {x.narrow(0, 0, 2), y.narrow(1, 0, 2)}, {true, true}, "kron");
    gradcheck(one("tensordot", {{"dims_a", Ints{1}}, {"dims_b", Ints{1}}}), {x, y}, {true, true}, "tensordot");
    gradcheck(one("linalg_cross", {{"dim", int64_t(0)}}), {x.narrow(1, 0, 2), y.narrow(1, 0, 2)}, {true, true},
              "linalg_cross");
    gradcheck(one("lerp", {}), {x, y, z}, {true, true, true}, "lerp");
    gradcheck(one("addcdiv", {{"value", 0.5}}), {x, y, z}, {true, true, true}, "addcdiv");
    gradcheck(one("diff", {{"n", int64_t(2)}}), {y, Tensor(), x.narrow(1, 0, 1)}, {true, false, true}, "diff");
    gradcheck(one("block_diag", {}), {x, y.narrow(0, 0, 1)}, {true, true}, "block_diag");
    gradcheck(one("index_copy", {{"dim", int64_t(0)}}),
              {x, make_tensor({2, 0}, {2}, DType::i64, dev), y.narrow(0, 0, 2)}, {true, false, true}, "index_copy");
    gradcheck(one("take", {}), {x, make_tensor({3, -1, 3}, {3}, DType::i64, dev)}, {true, false}, "take");
  }
}

TEST(CompositeReduceLinearIndex, BadInputGetsTypedErrors) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const Tensor t = make_tensor(random_values(12, -1, 1, 30), {3, 4}, DType::f32, dev);
    const Tensor i = make_tensor({1, 2}, {2}, DType::i64, dev);
    EXPECT_THROW(oar::std(t.to(DType::i64)), DTypeError);
    EXPECT_THROW(oar::std(t, {}, false, -1), ValueError);
    EXPECT_THROW(oar::var_mean(t, {2}), IndexError);
    EXPECT_THROW(oar::vector_norm(t.to(DType::i32)), DTypeError);
    EXPECT_THROW(oar::vector_norm(t.narrow(0, 0, 0), {}, false, kInf), ValueError);
    EXPECT_THROW(oar::aminmax(t, {0, 1}), ValueError);
    EXPECT_THROW(oar::aminmax(t.narrow(0, 0, 0)), ValueError);
    EXPECT_THROW(oar::nanmean(t.to(DType::i64)), DTypeError);
    EXPECT_THROW(oar::dot(t, t), ShapeError);
    EXPECT_THROW(oar::dot(t.select(0, 0), t.select(0, 1).to(DType::f64)), DTypeError);
    EXPECT_THROW(oar::mv(t, t.select(1, 0)), ShapeError);
    EXPECT_THROW(oar::linalg_cross(t, t), ShapeError);
    EXPECT_THROW(oar::tensordot(t, t, {0}, {1}), ShapeError);
    EXPECT_THROW(oar::tensordot(t, t, {0}, {}), ValueError);
    EXPECT_THROW(oar::block_diag({t.reshape({3, 2, 2})}), ShapeError);
    EXPECT_THROW(oar::addcmul(t.to(DType::i64), t.to(DType::i64), t.to(DType::i64), 0.5), DTypeError);
    EXPECT_THROW(oar::diff(t.select(0, 0).select(0, 0)), ShapeError);
    EXPECT_THROW(oar::diff(t, Tensor(), Tensor(), -1), ValueError);
    EXPECT_THROW(oar::diff(t, make_tensor({1, 2}, {2}, DType::f32, dev)), ShapeError);
    EXPECT_THROW(oar::masked_fill(t, t, 1.0), DTypeError);
    EXPECT_THROW(oar::masked_fill(t, make_tensor({1, 0}, {2}, DType::boolean, dev), 1.0), ShapeError);
    EXPECT_THROW(oar::take(t, t), DTypeError);
    EXPECT_THROW(oar::index_fill(t, i.reshape({1, 2}), 0, 1.0), ShapeError);
    EXPECT_THROW(oar::index_fill(t, i, 2, 1.0), IndexError);
    EXPECT_THROW(oar::index_copy(t, i, t, 0), ShapeError);
    EXPECT_THROW(oar::index_copy(t, i, t.narrow(0, 0, 2).to(DType::f64), 0), DTypeError);
  }
}

TEST(CompositeSample, ProductsCombinationsAndTrapezoidsMatchLoops) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const Tensor a = make_tensor({1, 2}, {2}, DType::i64, dev), b = make_tensor({3, 4, 5}, {3}, DType::i64, dev);
    Tensor prod = oar::cartesian_prod({a, b});
    EXPECT_EQ(prod.shape(), (Shape{6, 2}));
    expect_close(host_values(prod), {1, 3, 1, 4, 1, 5, 2, 3, 2, 4, 2, 5}, 0, 0, "cartesian_prod");
    expect_close(host_values(oar::cartesian_prod({b})), {3, 4, 5}, 0, 0, "cartesian_prod of one");

    // combinations against an independent enumeration: every increasing (or non-decreasing) triple
    const std::vector<double> xv{10, 20, 30, 40, 50};
    const Tensor x = make_tensor(xv, {5}, DType::f32, dev);
    for (bool replace : {false, true}) {
      std::vector<double> want;
      for (int i = 0; i < 5; ++i)
        for (int j = replace ? i : i + 1; j < 5; ++j)
          for (int k = replace ? j : j + 1; k < 5; ++k)
            want.insert(want.end(), {xv[size_t(i)], xv[size_t(j)], xv[size_t(k)]});
      Tensor got = oar::combinations(x, 3, replace);
      EXPECT_EQ(got.shape(), (Shape{int64_t(want.size() / 3), 3}));
      expect_close(host_values(got), want, 0, 0, replace ? "combinations with replacement" : "combinations");
    }
    EXPECT_EQ(oar::combinations(x, 0).shape(), (Shape{0}));
    EXPECT_EQ(oar::combinations(x, 6).shape(), (Shape{0, 6}));

    // trapezoid along the rows of y [3, 5], with x, with dx, and running
    const auto yv = random_values(15, -2, 2, 40, DType::f64);
    const std::vector<double> sv{0, 0.5, 1.5, 1.75, 3};
    const Tensor y = make_tensor(yv, {3, 5}, DType::f64, dev), s = make_tensor(sv, {5}, DType::f64, dev);
    std::vector<double> with_x, with_dx, running;
    for (int r = 0; r < 3; ++r) {
      double total = 0, plain = 0;
      for (int c = 0; c < 4; ++c) {
        const double lo = yv[size_t(r * 5 + c)], hi = yv[size_t(r * 5 + c + 1)];
        total += (hi + lo) / 2 * (sv[size_t(c + 1)] - sv[size_t(c)]);
        plain += (hi + lo) / 2 * 0.25;
        running.push_back(total);
      }
      with_x.push_back(total), with_dx.push_back(plain);
    }
    expect_close(host_values(oar::trapezoid(y, s)), with_x, 1e-12, 1e-12, "trapezoid with x");
    expect_close(host_values(oar::trapezoid(y, Tensor(), 0.25)), with_dx, 1e-12, 1e-12, "trapezoid with dx");
    expect_close(host_values(oar::cumulative_trapezoid(y, s)), running, 1e-12, 1e-12, "cumulative_trapezoid");
    Tensor ints = oar::trapezoid(make_tensor({1, 2, 3}, {3}, DType::i64, dev));
    EXPECT_EQ(ints.dtype(), DType::f32);  // integers integrate as floats
    expect_close(host_values(ints), {4}, 0, 0, "trapezoid of integers");
    expect_close(host_values(oar::trapezoid(y.narrow(1, 0, 1))), {0, 0, 0}, 0, 0, "one sample: no area");
    gradcheck([](const std::vector<Tensor>& in) { return call("trapezoid", in, {}); }, {y, s}, {true, true},
              "trapezoid");
    gradcheck([](const std::vector<Tensor>& in) { return call("cumulative_trapezoid", in, {{"dim", int64_t(0)}}); },
              {y, make_tensor(random_values(15, 0, 3, 41, DType::f64), {3, 5}, DType::f64, dev)}, {true, true}, "cumulative_trapezoid with a full x");

    EXPECT_THROW(oar::cartesian_prod({a, b.to(DType::f32)}), DTypeError);
    EXPECT_THROW(oar::cartesian_prod({y}), ShapeError);
    EXPECT_THROW(oar::combinations(x, -1), ValueError);
    EXPECT_THROW(oar::combinations(y), ShapeError);
    EXPECT_THROW(oar::combinations(Tensor::zeros({400}, DType::f32, dev), 5), ValueError);  // 8e10 rows
    EXPECT_THROW(oar::trapezoid(y, s.narrow(0, 0, 4)), ShapeError);
    EXPECT_THROW(oar::trapezoid(y, Tensor::zeros({1, 3, 5}, DType::f64, dev)), ShapeError);
    EXPECT_THROW(oar::trapezoid(Tensor::full({}, 1.0, DType::f64, dev)), ShapeError);
    EXPECT_THROW(oar::trapezoid(y, Tensor(), 1.0, 2), IndexError);
  }
}

// masked_scatter, put, vander, repeat_interleave_counts (composites_select,
// _index, _sample, _shape) against plain loops, with their gradients.
TEST(CompositeWrites, MaskedScatterPutVanderRepeatCountsMatchLoops) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const auto xv = random_values(12, -2, 2, 50, DType::f64), sv = random_values(12, -2, 2, 51, DType::f64);
    const std::vector<double> mv{1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1};
    const Tensor x = make_tensor(xv, {3, 4}, DType::f64, dev), src = make_tensor(sv, {12}, DType::f64, dev);
    const Tensor mask = make_tensor(mv, {3, 4}, DType::boolean, dev);
    std::vector<double> want = xv;
    for (size_t i = 0, next = 0; i < 12; ++i)
      if (mv[i] != 0) want[i] = sv[next++];
    expect_close(host_values(oar::masked_scatter(x, mask, src)), want, 0, 0, "masked_scatter");
    // a [4] mask broadcast over the rows: every row takes the next source entries
    const Tensor cols = make_tensor({0, 1, 1, 0}, {4}, DType::boolean, dev);
    want = xv;
    for (size_t r = 0, next = 0; r < 3; ++r)
      for (size_t c : {1u, 2u}) want[r * 4 + c] = sv[next++];
    expect_close(host_values(oar::masked_scatter(x, cols, src.reshape({3, 4}))), want, 0, 0, "masked_scatter bcast");

    // put: negative indices from the end; accumulate sums repeats
    const Tensor index = make_tensor({0, -1, 5, 5}, {2, 2}, DType::i64, dev);
    const Tensor vals = make_tensor({1, 2, 3, 4}, {4}, DType::f64, dev);
    want = xv;
    want[0] = 1, want[11] = 2, want[5] = 4;  // the last write to 5 wins
    expect_close(host_values(oar::put(x, index, vals)), want, 0, 0, "put");
    want = xv;
    want[0] += 1, want[11] += 2, want[5] += 3 + 4;
    expect_close(host_values(oar::put(x, index, vals, true)), want, 1e-12, 0, "put accumulate");

    // vander: decreasing powers by default; integer points give i64
    const std::vector<double> pv{-1.5, 0, 2};
    const Tensor p = make_tensor(pv, {3}, DType::f64, dev);
    std::vector<double> dec, inc;
    for (double v : pv)
      for (int k = 0; k < 4; ++k) {
        dec.push_back(std::pow(v, 3 - k));
        inc.push_back(std::pow(v, k));
      }
    expect_close(host_values(oar::vander(p, 4)), dec, 1e-12, 0, "vander");
    expect_close(host_values(oar::vander(p, 4, true)), inc, 1e-12, 0, "vander increasing");
    const Tensor square = oar::vander(make_tensor({2, 3}, {2}, DType::i32, dev));
    EXPECT_EQ(square.dtype(), DType::i64);
    expect_close(host_values(square), {2, 1, 3, 1}, 0, 0, "vander of ints");

    // repeat_interleave_counts: row i repeated counts[i] times, or the flattened x
    const Tensor counts = make_tensor({2, 0, 1}, {3}, DType::i64, dev);
    const Tensor rows = oar::repeat_interleave_counts(x.narrow(1, 0, 2), counts, {0});
    EXPECT_EQ(rows.shape(), (Shape{3, 2}));
    expect_close(host_values(rows), {xv[0], xv[1], xv[0], xv[1], xv[8], xv[9]}, 0, 0, "repeat_interleave_counts");
    expect_close(host_values(oar::repeat_interleave_counts(p, counts)), {pv[0], pv[0], pv[2]}, 0, 0,
                 "repeat_interleave_counts flat");

    auto one = [](auto fn) { return [fn](const std::vector<Tensor>& in) { return std::vector<Tensor>{fn(in)}; }; };
    gradcheck(one([&](const std::vector<Tensor>& in) { return oar::masked_scatter(in[0], mask, in[1]); }), {x, src},
              {true, true}, "masked_scatter");
    gradcheck(one([&](const std::vector<Tensor>& in) { return oar::put(in[0], index, in[1], true); }), {x, vals},
              {true, true}, "put accumulate");
    gradcheck(one([](const std::vector<Tensor>& in) { return oar::vander(in[0], 4); }), {p}, {true}, "vander");
    gradcheck(one([&](const std::vector<Tensor>& in) { return oar::repeat_interleave_counts(in[0], counts, {0}); }),
              {x.narrow(0, 0, 3)}, {true}, "repeat_interleave_counts");

    EXPECT_THROW(oar::masked_scatter(x, mask, src.narrow(0, 0, 5)), ShapeError);  // 6 selected
    EXPECT_THROW(oar::masked_scatter(x, x, src), DTypeError);
    EXPECT_THROW(oar::masked_scatter(x.narrow(1, 0, 3), mask, src), ShapeError);  // [3,3] vs [3,4]
    EXPECT_THROW(oar::masked_scatter(x, mask, src.to(DType::f32)), DTypeError);
    // x broadcast with the mask, as torch's out-of-place form: a [4] row over a [3,4] mask
    const Tensor row = x.select(0, 0);
    const Tensor spread = oar::masked_scatter(row, mask, src);
    EXPECT_EQ(spread.shape(), (Shape{3, 4}));
    std::vector<double> spread_want(12);
    for (size_t i = 0, next = 0; i < 12; ++i) spread_want[i] = mv[i] != 0 ? sv[next++] : xv[i % 4];
    expect_close(host_values(spread), spread_want, 0, 0, "masked_scatter broadcast x");
    EXPECT_THROW(oar::put(x, make_tensor({-13}, {1}, DType::i64, dev), vals.narrow(0, 0, 1)), IndexError);
    EXPECT_THROW(oar::put(x, index, vals.narrow(0, 0, 3)), ShapeError);
    EXPECT_THROW(oar::put(x, make_tensor({12}, {1}, DType::i64, dev), vals.narrow(0, 0, 1)), IndexError);
    EXPECT_THROW(oar::vander(x), ShapeError);
    EXPECT_THROW(oar::repeat_interleave_counts(p, make_tensor({1, -1, 0}, {3}, DType::i64, dev)), ValueError);
    EXPECT_THROW(oar::repeat_interleave_counts(p, counts.narrow(0, 0, 2)), ShapeError);
    EXPECT_THROW(oar::repeat_interleave_counts(p, make_tensor({1, 1, 1}, {3}, DType::f32, dev)), ShapeError);
  }
}
