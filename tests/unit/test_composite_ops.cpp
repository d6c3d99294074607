// Tests of the catalog's composite ops (runtime/src/catalog/composites_*.cpp:
// flip, roll, movedim, repeat_interleave, diagonal, diag_embed, diag,
// meshgrid, take_along_dim, logsumexp, nan_to_num, isclose, outer, addmm,
// baddbmm, cdist, median, nanmedian, mode, searchsorted, bucketize, histc)
// against plain double loops on every device, with finite-difference
// gradients, the typed errors, and a trace that records their parts.
#include <algorithm>
#include <limits>

#include "gradcheck.h"
#include "oar/dispatch.h"
#include "oar/graph/executor.h"
#include "oar/graph/trace.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
using Ints = std::vector<int64_t>;

// Values of x read at the multi-index `at(out_index)` for every out index.
template <class F>
std::vector<double> gather_ref(const std::vector<double>& x, const Shape& xs, const Shape& out, F at) {
  std::vector<double> y;
  std::vector<int64_t> idx(out.size(), 0);
  if (numel_of(out) == 0) return y;
  do y.push_back(x[size_t(flat_index(at(idx), xs))]);
  while (next_index(idx, out));
  return y;
}

int64_t wrap(int64_t i, int64_t n) { return ((i % n) + n) % n; }

}  // namespace

TEST(CompositeShape, FlipRollMovedimMatchLoops) {
  const Shape s{3, 4, 5};
  const auto x = random_values(60, -5, 5, 1, DType::f64);
  for (Device dev : devices())
    for (DType d : {DType::f32, DType::i64}) {
      SCOPED_TRACE(dev.str() + " " + dtype_name(d));
      std::vector<double> xv = x;
      for (auto& v : xv) v = round_to(std::round(v * 4) / 4, d);
      if (is_integral(d))
        for (auto& v : xv) v = std::round(v);
      Tensor t = make_tensor(xv, s, d, dev);
      Tensor f = call1("flip", {t}, {{"dims", Ints{0, -1}}});
      EXPECT_EQ(f.dtype(), d);
      expect_close(host_values(f), gather_ref(xv, s, s, [](Ints i) { return Ints{2 - i[0], i[1], 4 - i[2]}; }), 0, 0,
                   "flip");
      Tensor r = call1("roll", {t}, {{"shifts", Ints{1, -2}}, {"dims", Ints{0, 2}}});
      expect_close(host_values(r),
                   gather_ref(xv, s, s, [](Ints i) { return Ints{wrap(i[0] - 1, 3), i[1], wrap(i[2] + 2, 5)}; }), 0, 0,
                   "roll");
      // Flattened: element k of the result is element k - 7 of the input.
      auto flat = host_values(call1("roll", {t}, {{"shifts", Ints{7}}}));
      for (int64_t k = 0; k < 60; ++k) EXPECT_EQ(flat[size_t(k)], xv[size_t(wrap(k - 7, 60))]) << k;
      Tensor m = call1("movedim", {t}, {{"source", Ints{0}}, {"destination", Ints{2}}});
      EXPECT_EQ(m.shape(), (Shape{4, 5, 3}));
      EXPECT_EQ(m.storage().get(), t.storage().get()) << "movedim is a view";
      expect_close(host_values(m), gather_ref(xv, s, {4, 5, 3}, [](Ints i) { return Ints{i[2], i[0], i[1]}; }), 0, 0,
                   "movedim");
      Tensor ri = call1("repeat_interleave", {t}, {{"repeats", int64_t(2)}, {"dim", Ints{1}}});
      EXPECT_EQ(ri.shape(), (Shape{3, 8, 5}));
      expect_close(host_values(ri), gather_ref(xv, s, {3, 8, 5}, [](Ints i) { return Ints{i[0], i[1] / 2, i[2]}; }), 0,
                   0, "repeat_interleave");
      EXPECT_EQ(call1("repeat_interleave", {t}, {{"repeats", int64_t(3)}}).shape(), (Shape{180}));
    }
}

TEST(CompositeShape, DiagonalDiagEmbedDiagMeshgridTakeAlongDim) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const auto x = random_values(60, -3, 3, 2, DType::f64);
    Tensor t = make_tensor(x, {3, 4, 5}, DType::f64, dev);
    for (int64_t off : {-2, 0, 1, 3}) {
      Tensor d = call1("diagonal", {t}, {{"offset", off}, {"dim1", int64_t(2)}, {"dim2", int64_t(0)}});
      // Rows along dim 2 (size 5), columns along dim 0 (size 3).
      const int64_t n = std::max<int64_t>(off >= 0 ? std::min<int64_t>(5, 3 - off) : std::min<int64_t>(5 + off, 3), 0);
      ASSERT_EQ(d.shape(), (Shape{4, n})) << off;
      expect_close(host_values(d), gather_ref(x, {3, 4, 5}, {4, n}, [&](Ints i) {
                     const int64_t row = off >= 0 ? i[1] : i[1] - off, col = off >= 0 ? i[1] + off : i[1];
                     return Ints{col, i[0], row};
                   }),
                   0, 0, "diagonal offset " + std::to_string(off));
    }
    Tensor v = make_tensor({1, 2, 3}, {3}, DType::f32, dev);
    for (int64_t off : {-1, 0, 2}) {
      auto e = host_values(call1("diag_embed", {v}, {{"offset", off}}));
      const int64_t m = 3 + std::abs(off);
      ASSERT_EQ(int64_t(e.size()), m * m);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < m; ++j) {
          const int64_t k = off >= 0 ? i : j;
          const double want = j - i == off ? k + 1.0 : 0.0;
          EXPECT_EQ(e[size_t(i * m + j)], want) << "diag_embed offset " << off << " at " << i << "," << j;
        }
      EXPECT_EQ(host_values(call1("diag", {v}, {{"diagonal", off}})), e) << "diag of a vector";
    }
    Tensor sq = make_tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::f32, dev);
    EXPECT_EQ(host_values(call1("diag", {sq}, {{"diagonal", int64_t(1)}})), (std::vector<double>{2, 6}));
    EXPECT_EQ(host_values(call1("diag", {sq}, {{"diagonal", int64_t(-1)}})), (std::vector<double>{4}));
    Tensor a = make_tensor({1, 2}, {2}, DType::f32, dev), b = make_tensor({10, 20, 30}, {3}, DType::f32, dev);
    auto ij = call("meshgrid", {a, b});
    ASSERT_EQ(ij.size(), 2u);
    EXPECT_EQ(ij[0].shape(), (Shape{2, 3}));
    EXPECT_EQ(host_values(ij[0]), (std::vector<double>{1, 1, 1, 2, 2, 2}));
    EXPECT_EQ(host_values(ij[1]), (std::vector<double>{10, 20, 30, 10, 20, 30}));
    auto xy = call("meshgrid", {a, b}, {{"indexing", std::string("xy")}});
    EXPECT_EQ(xy[0].shape(), (Shape{3, 2}));
    EXPECT_EQ(host_values(xy[0]), (std::vector<double>{1, 2, 1, 2, 1, 2}));
    EXPECT_EQ(host_values(xy[1]), (std::vector<double>{10, 10, 20, 20, 30, 30}));
    // take_along_dim: indices [3,2] against x [3,4] along dim 1, and broadcast [1,4] along dim 0.
    const auto xv = random_values(12, -3, 3, 3, DType::f64);
    Tensor xt = make_tensor(xv, {3, 4}, DType::f64, dev);
    const std::vector<double> iv{3, 0, 1, 1, 2, 3};
    auto y = host_values(call1("take_along_dim", {xt, make_tensor(iv, {3, 2}, DType::i64, dev)}, {{"dim", Ints{1}}}));
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 2; ++c) EXPECT_EQ(y[size_t(r * 2 + c)], xv[size_t(r * 4 + int64_t(iv[size_t(r * 2 + c)]))]);
    auto yb = host_values(call1("take_along_dim", {xt, make_tensor({2, 0, 1, 2}, {1, 4}, DType::i64, dev)},
                                {{"dim", Ints{0}}}));
    const std::vector<double> rows{2, 0, 1, 2};
    for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(yb[size_t(c)], xv[size_t(int64_t(rows[size_t(c)]) * 4 + c)]);
  }
}

TEST(CompositeMath, LogsumexpNanToNumIscloseMatchLoops) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    // Large magnitudes (exp overflows without the shift), a row of -inf, a row holding +inf.
    std::vector<double> x{1000, 999, 998, -kInf, -kInf, -kInf, 1, kInf, 2, -3, 0.5, 7};
    Tensor t = make_tensor(x, {4, 3}, DType::f32, dev);
    auto y = host_values(call1("logsumexp", {t}, {{"dims", Ints{1}}}));
    ASSERT_EQ(y.size(), 4u);
    for (size_t r = 0; r < 4; ++r) {
      double m = -kInf, s = 0;
      for (size_t c = 0; c < 3; ++c) m = std::max(m, x[r * 3 + c]);
      for (size_t c = 0; c < 3; ++c) s += std::isinf(m) ? std::exp(x[r * 3 + c]) : std::exp(x[r * 3 + c] - m);
      const double want = std::isinf(m) ? std::log(s) : std::log(s) + m;
      if (std::isinf(want)) EXPECT_EQ(y[r], want) << r;
      else EXPECT_NEAR(y[r], want, 1e-4 * std::max(1.0, std::abs(want))) << r;
    }
    EXPECT_EQ(call1("logsumexp", {make_tensor({1, 2}, {2}, DType::i64, dev)}).dtype(), DType::f32);
    EXPECT_NEAR(call1("logsumexp", {make_tensor({1, 2}, {2}, DType::i64, dev)}).item(), std::log(std::exp(1.0) + std::exp(2.0)), 1e-5);
    EXPECT_EQ(call1("logsumexp", {t}, {{"dims", Ints{0}}, {"keepdim", true}}).shape(), (Shape{1, 3}));

    Tensor bad = make_tensor({kNaN, kInf, -kInf, 1.5}, {4}, DType::f32, dev);
    EXPECT_EQ(host_values(call1("nan_to_num", {bad})),
              (std::vector<double>{0, double(std::numeric_limits<float>::max()), -double(std::numeric_limits<float>::max()), 1.5}));
    EXPECT_EQ(host_values(call1("nan_to_num", {bad}, {{"nan", 2.0}, {"posinf", std::vector<double>{9}},
                                                       {"neginf", std::vector<double>{-9}}})),
              (std::vector<double>{2, 9, -9, 1.5}));

    const std::vector<double> a{1, 1, kNaN, kInf, kInf, 0, 100};
    const std::vector<double> b{1.000001, 1.1, kNaN, kInf, -kInf, 1e-9, 100.0005};
    for (bool equal_nan : {false, true}) {
      auto got = host_values(call1("isclose", {make_tensor(a, {7}, DType::f64, dev), make_tensor(b, {7}, DType::f64, dev)},
                                   {{"rtol", 1e-5}, {"atol", 1e-8}, {"equal_nan", equal_nan}}));
      for (size_t i = 0; i < a.size(); ++i) {
        bool want = a[i] == b[i] || (equal_nan && std::isnan(a[i]) && std::isnan(b[i])) ||
                    (std::isfinite(a[i] - b[i]) && std::abs(a[i] - b[i]) <= 1e-8 + 1e-5 * std::abs(b[i]));
        EXPECT_EQ(got[i] != 0, want) << "isclose at " << i << " equal_nan " << equal_nan;
      }
    }
    Tensor ints = call1("isclose", {make_tensor({5, 7}, {2}, DType::i32, dev), make_tensor({5, 8}, {2}, DType::i32, dev)});
    EXPECT_EQ(ints.dtype(), DType::boolean);
    EXPECT_EQ(host_values(ints), (std::vector<double>{1, 0}));
  }
}

TEST(CompositeMath, OuterAddmmBaddbmmCdistMatchLoops) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const auto av = random_values(4, -2, 2, 4, DType::f64), bv = random_values(3, -2, 2, 5, DType::f64);
    auto o = host_values(call1("outer", {make_tensor(av, {4}, DType::f64, dev), make_tensor(bv, {3}, DType::f64, dev)}));
    for (size_t i = 0; i < 4; ++i)
      for (size_t j = 0; j < 3; ++j) EXPECT_DOUBLE_EQ(o[i * 3 + j], av[i] * bv[j]);

    const auto m1 = random_values(2 * 3 * 4, -1, 1, 6, DType::f64), m2 = random_values(2 * 4 * 5, -1, 1, 7, DType::f64);
    const auto xv = random_values(5, -1, 1, 8, DType::f64);
    auto product = [&](size_t b, size_t i, size_t j) {
      double s = 0;
      for (size_t k = 0; k < 4; ++k) s += m1[b * 12 + i * 4 + k] * m2[b * 20 + k * 5 + j];
      return s;
    };
    Tensor x = make_tensor(xv, {5}, DType::f64, dev);
    auto bm = host_values(call1("baddbmm", {x, make_tensor(m1, {2, 3, 4}, DType::f64, dev), make_tensor(m2, {2, 4, 5}, DType::f64, dev)},
                                {{"beta", 0.5}, {"alpha", -2.0}}));
    for (size_t b = 0; b < 2; ++b)
      for (size_t i = 0; i < 3; ++i)
        for (size_t j = 0; j < 5; ++j) EXPECT_NEAR(bm[b * 15 + i * 5 + j], 0.5 * xv[j] - 2 * product(b, i, j), 1e-12);
    // beta = 0 ignores x, NaN included.
    Tensor nan_x = make_tensor(std::vector<double>(15, kNaN), {3, 5}, DType::f64, dev);
    auto mm = host_values(call1("addmm", {nan_x, make_tensor(m1, {2, 3, 4}, DType::f64, dev).select(0, 1),
                                          make_tensor(m2, {2, 4, 5}, DType::f64, dev).select(0, 1)},
                                {{"beta", 0.0}}));
    for (size_t i = 0; i < 3; ++i)
      for (size_t j = 0; j < 5; ++j) EXPECT_NEAR(mm[i * 5 + j], product(1, i, j), 1e-12);

    // cdist at p = 0, 1, 2 (both the direct and the matmul path), 3 and inf.
    const int64_t P = 30, R = 27, M = 3;
    const auto pv = random_values(P * M, -2, 2, 9, DType::f64), rv = random_values(R * M, -2, 2, 10, DType::f64);
    Tensor p1 = make_tensor(pv, {P, M}, DType::f64, dev), p2 = make_tensor(rv, {R, M}, DType::f64, dev);
    for (double p : {0.0, 1.0, 2.0, 3.0, kInf})
      for (const char* mode : {"use_mm_for_euclid_dist_if_necessary", "donot_use_mm_for_euclid_dist"}) {
        auto got = host_values(call1("cdist", {p1, p2}, {{"p", p}, {"compute_mode", std::string(mode)}}));
        ASSERT_EQ(int64_t(got.size()), P * R);
        for (int64_t i = 0; i < P; ++i)
          for (int64_t j = 0; j < R; ++j) {
            double acc = 0;
            for (int64_t k = 0; k < M; ++k) {
              const double d = std::abs(pv[size_t(i * M + k)] - rv[size_t(j * M + k)]);
              acc = p == 0 ? acc + (d != 0) : std::isinf(p) ? std::max(acc, d) : acc + std::pow(d, p);
            }
            const double want = p == 0 || std::isinf(p) ? acc : std::pow(acc, 1 / p);
            EXPECT_NEAR(got[size_t(i * R + j)], want, 1e-9) << "p " << p << " " << mode << " at " << i << "," << j;
          }
      }
  }
}

TEST(CompositeSelect, MedianModeSearchsortedBucketizeHistcMatchLoops) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    // Rows: plain, with a NaN, all NaN, with ties.
    const std::vector<double> x{5, 1, 4, 2, 3, 0, 2, kNaN, 7, 1, kNaN, kNaN, kNaN, kNaN, 4, 4, 1, 1, 1, 9};
    Tensor t = make_tensor(x, {4, 5}, DType::f32, dev);
    auto med = call("median", {t}, {{"dim", int64_t(1)}});
    auto nmed = call("nanmedian", {t}, {{"dim", int64_t(1)}});
    auto mv = host_values(med[0]), mi = host_values(med[1]);
    auto nv = host_values(nmed[0]), ni = host_values(nmed[1]);
    const std::vector<double> want_median{3, kNaN, kNaN, 1}, want_nanmedian{3, 1, 4, 1};
    expect_close(mv, want_median, 0, 0, "median");
    expect_close(nv, want_nanmedian, 0, 0, "nanmedian");
    for (size_t r = 0; r < 4; ++r) {
      const double at_m = x[r * 5 + size_t(mi[r])], at_n = x[r * 5 + size_t(ni[r])];
      EXPECT_TRUE(at_m == mv[r] || (std::isnan(at_m) && std::isnan(mv[r]))) << "median index, row " << r;
      EXPECT_TRUE(at_n == nv[r] || (std::isnan(at_n) && std::isnan(nv[r]))) << "nanmedian index, row " << r;
    }
    // mode: the smallest of the most frequent values, at its last position.
    Tensor ints = make_tensor({3, 1, 3, 1, 2, 7, 7, 7, 0, 0}, {2, 5}, DType::i64, dev);
    auto md = call("mode", {ints}, {{"dim", int64_t(1)}});
    EXPECT_EQ(host_values(md[0]), (std::vector<double>{1, 7}));
    EXPECT_EQ(host_values(md[1]), (std::vector<double>{3, 2}));
    EXPECT_EQ(md[0].dtype(), DType::i64);

    Tensor seq = make_tensor({1, 3, 3, 5, 7}, {5}, DType::f32, dev);
    Tensor vals = make_tensor({0, 3, 4, 7, 8, 3.5}, {2, 3}, DType::f32, dev);
    EXPECT_EQ(host_values(call1("searchsorted", {seq, vals})), (std::vector<double>{0, 1, 3, 4, 5, 3}));
    EXPECT_EQ(host_values(call1("searchsorted", {seq, vals}, {{"right", true}})), (std::vector<double>{0, 3, 3, 5, 5, 3}));
    EXPECT_EQ(host_values(call1("bucketize", {vals, seq})), (std::vector<double>{0, 1, 3, 4, 5, 3}));
    // An integer sequence against float values: promoted, as PyTorch.
    EXPECT_EQ(host_values(call1("searchsorted", {make_tensor({1, 2, 3}, {3}, DType::i64, dev),
                                                 make_tensor({2.5}, {1}, DType::f32, dev)})),
              (std::vector<double>{2}));

    // histc: bins over [0, 4]; the edges 0 and 4 count, values outside and NaN do not.
    Tensor h = make_tensor({0, 0.5, 1, 1.99, 2, 3.999, 4, 4.01, -0.1, kNaN}, {10}, DType::f32, dev);
    EXPECT_EQ(host_values(call1("histc", {h}, {{"bins", int64_t(4)}, {"min", 0.0}, {"max", 4.0}})),
              (std::vector<double>{2, 2, 1, 2}));
    // min == max: the finite data's range.
    EXPECT_EQ(host_values(call1("histc", {make_tensor({1, 2, 2, 3}, {4}, DType::f32, dev)}, {{"bins", int64_t(2)}})),
              (std::vector<double>{1, 3}));
  }
}

TEST(CompositeSelect, NonzeroMaskedSelectBincountMatchLoops) {
  for (Device dev : devices())
    for (DType d : {DType::f32, DType::i32, DType::boolean}) {
      SCOPED_TRACE(dev.str() + " " + dtype_name(d));
      const Shape s{3, 4, 2};
      auto xv = random_values(24, -1.5, 1.5, 18, d);
      for (auto& v : xv) v = d == DType::boolean ? v : std::round(v);  // zeros among them
      Tensor t = make_tensor(xv, s, d, dev);
      std::vector<double> want_idx, want_sel;
      std::vector<int64_t> idx(3, 0);
      do {
        const double v = xv[size_t(flat_index(idx, s))];
        if (v != 0) {
          for (int64_t i : idx) want_idx.push_back(double(i));
          want_sel.push_back(v);
        }
      } while (next_index(idx, s));
      Tensor nz = call1("nonzero", {t});
      EXPECT_EQ(nz.dtype(), DType::i64);
      ASSERT_EQ(nz.shape(), (Shape{int64_t(want_sel.size()), 3}));
      EXPECT_EQ(host_values(nz), want_idx);
      Tensor mask = call1("ne", {t, make_tensor({0}, {}, d, dev)});
      Tensor sel = call1("masked_select", {t, mask});
      EXPECT_EQ(sel.dtype(), d);
      EXPECT_EQ(host_values(sel), want_sel);
      // A mask broadcast against x: the mask of the last dim picks columns of every row.
      Tensor cols = make_tensor({1, 0}, {2}, DType::boolean, dev);
      auto picked = host_values(call1("masked_select", {t, cols}));
      ASSERT_EQ(picked.size(), 12u);
      for (size_t k = 0; k < 12; ++k) EXPECT_EQ(picked[k], xv[2 * k]);
    }
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    Tensor x = make_tensor({2, 0, 2, 5, 2}, {5}, DType::i64, dev);
    EXPECT_EQ(host_values(call1("bincount", {x, Tensor()})), (std::vector<double>{1, 0, 3, 0, 0, 1}));
    EXPECT_EQ(host_values(call1("bincount", {x, Tensor()}, {{"minlength", int64_t(8)}})).size(), 8u);
    Tensor w = make_tensor({0.5, 1, 2, 4, 8}, {5}, DType::f32, dev);
    Tensor weighted = call1("bincount", {x, w});
    EXPECT_EQ(weighted.dtype(), DType::f32);
    EXPECT_EQ(host_values(weighted), (std::vector<double>{1, 0, 10.5, 0, 0, 4}));
    EXPECT_EQ(call1("nonzero", {make_tensor({3}, {}, DType::f32, dev)}).shape(), (Shape{1, 0}));
    EXPECT_EQ(call1("nonzero", {Tensor::zeros({0, 3}, DType::f32, dev)}).shape(), (Shape{0, 2}));
    EXPECT_THROW(call("bincount", {make_tensor({1, -1}, {2}, DType::i64, dev), Tensor()}), ValueError);
    EXPECT_THROW(call("bincount", {make_tensor({1, 2}, {2}, DType::f32, dev), Tensor()}), ValueError);
    EXPECT_THROW(call("masked_select", {x, x}), DTypeError);
    // masked_select's gradient reaches the selected entries only.
    Tensor leaf = make_tensor({1, 2, 3, 4}, {4}, DType::f64, dev).detach();
    leaf.set_requires_grad(true);
    Tensor picked = call1("masked_select", {leaf, make_tensor({0, 1, 0, 1}, {4}, DType::boolean, dev)});
    call1("sum", {call1("mul", {picked, make_tensor({10, 20}, {2}, DType::f64, dev)})}).backward();
    EXPECT_EQ(host_values(leaf.grad()), (std::vector<double>{0, 10, 0, 20}));
  }
}

TEST(CompositeEinsum, MatchesLoopsAndBroadcasts) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    const auto av = random_values(2 * 3 * 4, -1, 1, 19, DType::f64), bv = random_values(2 * 4 * 5, -1, 1, 20, DType::f64);
    Tensor a = make_tensor(av, {2, 3, 4}, DType::f64, dev), b = make_tensor(bv, {2, 4, 5}, DType::f64, dev);
    auto einsum = [](const std::string& eq, std::vector<Tensor> xs) {
      return host_values(call1("einsum", xs, {{"equation", eq}}));
    };
    // Batched matmul, and the same contraction with the batch summed too.
    auto bmm = einsum("bij,bjk->bik", {a, b});
    auto summed = einsum("bij,bjk->ik", {a, b});
    for (size_t i = 0; i < 3; ++i)
      for (size_t k = 0; k < 5; ++k) {
        double total = 0;
        for (size_t bb = 0; bb < 2; ++bb) {
          double s = 0;
          for (size_t j = 0; j < 4; ++j) s += av[bb * 12 + i * 4 + j] * bv[bb * 20 + j * 5 + k];
          EXPECT_NEAR(bmm[bb * 15 + i * 5 + k], s, 1e-12);
          total += s;
        }
        EXPECT_NEAR(summed[i * 5 + k], total, 1e-12);
      }
    // Trace and diagonal of a square matrix; implicit output (sorted letters: a transpose).
    const auto sq = random_values(16, -1, 1, 21, DType::f64);
    Tensor m = make_tensor(sq, {4, 4}, DType::f64, dev);
    EXPECT_NEAR(einsum("ii", {m})[0], sq[0] + sq[5] + sq[10] + sq[15], 1e-12);
    EXPECT_EQ(einsum("ii->i", {m}), (std::vector<double>{sq[0], sq[5], sq[10], sq[15]}));
    auto tr = einsum("ji", {m});
    for (size_t i = 0; i < 4; ++i)
      for (size_t j = 0; j < 4; ++j) EXPECT_EQ(tr[i * 4 + j], sq[j * 4 + i]);
    // Ellipsis broadcasting [2,3,4] . [4] over the last dim, and an outer product.
    Tensor v = make_tensor({1, -2, 0.5, 3}, {4}, DType::f64, dev);
    auto dot = einsum("...j,j->...", {a, v});
    ASSERT_EQ(dot.size(), 6u);
    for (size_t r = 0; r < 6; ++r)
      EXPECT_NEAR(dot[r], av[r * 4] - 2 * av[r * 4 + 1] + 0.5 * av[r * 4 + 2] + 3 * av[r * 4 + 3], 1e-12);
    EXPECT_EQ(call1("einsum", {v, v.narrow(0, 0, 2)}, {{"equation", std::string("i,j")}}).shape(), (Shape{4, 2}));
    // Integers contract by a broadcast product (matmul is floating only) and keep their dtype.
    Tensor ia = make_tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::i32, dev);
    Tensor ib = make_tensor({1, -1, 2, 0, -3, 1}, {3, 2}, DType::i32, dev);
    Tensor ip = call1("einsum", {ia, ib}, {{"equation", std::string("ij,jk->ik")}});
    EXPECT_EQ(ip.dtype(), DType::i32);
    EXPECT_EQ(host_values(ip), (std::vector<double>{1 * 1 + 2 * 2 + 3 * -3, 1 * -1 + 2 * 0 + 3 * 1,
                                                     4 * 1 + 5 * 2 + 6 * -3, 4 * -1 + 5 * 0 + 6 * 1}));
    // Mixed dtypes are promoted.
    EXPECT_EQ(call1("einsum", {v, v.to(DType::f32)}, {{"equation", std::string("i,i->")}}).dtype(), DType::f64);
    EXPECT_THROW(call("einsum", {a, b}, {{"equation", std::string("ij,jk->ik")}}), ShapeError);
    EXPECT_THROW(call("einsum", {a, a}, {{"equation", std::string("bij,bjk->bik")}}), ShapeError);
    EXPECT_THROW(call("einsum", {a}, {{"equation", std::string("bij->bz")}}), ValueError);
    EXPECT_THROW(call("einsum", {a}, {{"equation", std::string("b1j")}}), ValueError);
    EXPECT_THROW(call("einsum", {a, b}, {{"equation", std::string("bij")}}), ValueError);
    gradcheck([](const std::vector<Tensor>& in) { return call("einsum", in, {{"equation", std::string("bij,bjk->ik")}}); },
              {a, b}, {true, true}, "einsum");
  }
}

TEST(CompositeSelect, UniqueAndUniqueConsecutiveMatchLoops) {
  for (Device dev : devices())
    for (DType d : {DType::f32, DType::i64, DType::boolean}) {
      SCOPED_TRACE(dev.str() + " " + dtype_name(d));
      std::vector<double> xv{3, 1, 2, 3, 3, 0, 1, 2, 2, 5, 0, 0};
      if (d == DType::boolean)
        for (auto& v : xv) v = v > 1.5;
      Tensor t = make_tensor(xv, {3, 4}, d, dev);
      auto u = call("unique", {t});
      std::vector<double> distinct = xv;
      std::sort(distinct.begin(), distinct.end());
      distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
      EXPECT_EQ(u[0].dtype(), d);
      EXPECT_EQ(host_values(u[0]), distinct);
      EXPECT_EQ(u[1].shape(), (Shape{3, 4}));
      auto inverse = host_values(u[1]), counts = host_values(u[2]);
      for (size_t i = 0; i < xv.size(); ++i) EXPECT_EQ(distinct[size_t(inverse[i])], xv[i]) << "inverse at " << i;
      for (size_t g = 0; g < distinct.size(); ++g)
        EXPECT_EQ(counts[g], double(std::count(xv.begin(), xv.end(), distinct[g]))) << "count of group " << g;
      // Runs: consecutive equal entries of the flattened tensor.
      auto c = call("unique_consecutive", {t});
      std::vector<double> runs, lengths;
      for (double v : xv) {
        if (runs.empty() || runs.back() != v) runs.push_back(v), lengths.push_back(0);
        ++lengths.back();
      }
      EXPECT_EQ(host_values(c[0]), runs);
      EXPECT_EQ(host_values(c[2]), lengths);
    }
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    // Distinct rows (dim 0), sorted lexicographically; and distinct columns (dim 1).
    Tensor m = make_tensor({1, 2, 0, 1, 1, 2, 1, 2, 0, 0, 5, 1}, {4, 3}, DType::f32, dev);
    auto rows = call("unique", {m}, {{"dim", Ints{0}}});
    EXPECT_EQ(rows[0].shape(), (Shape{3, 3}));
    EXPECT_EQ(host_values(rows[0]), (std::vector<double>{0, 5, 1, 1, 1, 2, 1, 2, 0}));
    EXPECT_EQ(host_values(rows[1]), (std::vector<double>{2, 1, 2, 0}));
    EXPECT_EQ(host_values(rows[2]), (std::vector<double>{1, 1, 2}));
    Tensor cols = make_tensor({1, 0, 1, 2, 9, 2}, {2, 3}, DType::i32, dev);
    auto uc = call("unique", {cols}, {{"dim", Ints{1}}});
    EXPECT_EQ(uc[0].shape(), (Shape{2, 2}));
    EXPECT_EQ(host_values(uc[0]), (std::vector<double>{0, 1, 9, 2}));
    EXPECT_EQ(host_values(uc[1]), (std::vector<double>{1, 0, 1}));
    // NaNs are distinct, as in PyTorch; an empty tensor has no groups.
    EXPECT_EQ(call("unique", {make_tensor({kNaN, 1, kNaN}, {3}, DType::f32, dev)})[0].numel(), 3);
    auto empty = call("unique", {Tensor::zeros({0}, DType::f32, dev)});
    EXPECT_EQ(empty[0].numel(), 0);
    EXPECT_EQ(empty[2].numel(), 0);
    EXPECT_THROW(call("unique", {m}, {{"dim", Ints{2}}}), IndexError);
  }
}

TEST(CompositeScatter, ScatterAndScatterReduceMatchLoops) {
  const Shape xs{3, 5}, is{3, 6};
  const std::vector<double> idx{4, 0, 4, 1, 4, 2, 3, 3, 0, 1, 2, 0, 1, 1, 1, 1, 4, 4};  // repeats in every row
  for (Device dev : devices())
    for (DType d : {DType::f32, DType::i64}) {
      SCOPED_TRACE(dev.str() + " " + dtype_name(d));
      auto xv = random_values(15, -4, 4, 22, d), sv = random_values(3 * 7, -4, 4, 23, d);
      for (auto* v : {&xv, &sv})
        for (double& e : *v) e = round_to(e, d);
      Tensor x = make_tensor(xv, xs, d, dev), src = make_tensor(sv, {3, 7}, d, dev);  // src wider than index
      Tensor index = make_tensor(idx, is, DType::i64, dev);
      // Overwrite: the last write (in index order along dim 1) wins.
      std::vector<double> want = xv;
      for (size_t r = 0; r < 3; ++r)
        for (size_t j = 0; j < 6; ++j) want[r * 5 + size_t(idx[r * 6 + j])] = sv[r * 7 + j];
      EXPECT_EQ(host_values(call1("scatter", {x, index, src}, {{"dim", int64_t(1)}})), want);
      for (const char* reduce : {"sum", "prod", "mean", "amax", "amin"})
        for (bool include_self : {true, false}) {
          std::vector<std::vector<double>> hits(15);
          for (size_t r = 0; r < 3; ++r)
            for (size_t j = 0; j < 6; ++j) hits[r * 5 + size_t(idx[r * 6 + j])].push_back(sv[r * 7 + j]);
          std::vector<double> ref(15);
          for (size_t k = 0; k < 15; ++k) {
            std::vector<double> vals = hits[k];
            if (vals.empty()) {
              ref[k] = xv[k];
              continue;
            }
            if (include_self) vals.push_back(xv[k]);
            const std::string r = reduce;
            double acc = r == "prod" ? 1 : r == "amax" ? -1e300 : r == "amin" ? 1e300 : 0;
            for (double v : vals)
              acc = r == "prod" ? acc * v : r == "amax" ? std::max(acc, v) : r == "amin" ? std::min(acc, v) : acc + v;
            if (r == "mean") acc = is_floating(d) ? acc / double(vals.size()) : std::floor(acc / double(vals.size()));
            ref[k] = acc;
          }
          auto got = host_values(call1("scatter_reduce", {x, index, src},
                                       {{"dim", int64_t(1)}, {"reduce", std::string(reduce)}, {"include_self", include_self}}));
          expect_close(got, ref, 1e-5, 1e-4, std::string(reduce) + (include_self ? " with self" : " without self"));
        }
    }
  for (Device dev : devices()) {
    Tensor x = Tensor::zeros({3, 5}, DType::f32, dev);
    EXPECT_THROW(call("scatter", {x, make_tensor({1}, {1}, DType::f32, dev), x}, {{"dim", int64_t(0)}}), DTypeError);
    EXPECT_THROW(call("scatter", {x, Tensor::zeros({4, 5}, DType::i64, dev), x}, {{"dim", int64_t(1)}}), ShapeError);
    EXPECT_THROW(call("scatter_reduce", {x, Tensor::zeros({3, 5}, DType::i64, dev), x},
                      {{"dim", int64_t(1)}, {"reduce", std::string("median")}}),
                 ValueError);
  }
}

TEST(CompositeGradients, MatchFiniteDifferences) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    Tensor x = make_tensor(random_values(24, -2, 2, 11, DType::f64), {2, 3, 4}, DType::f64, dev);
    Tensor y = make_tensor(random_values(15, -2, 2, 12, DType::f64), {5, 3}, DType::f64, dev);
    Tensor z = make_tensor(random_values(12, -2, 2, 13, DType::f64), {4, 3}, DType::f64, dev);
    auto one = [](const char* op, Attrs attrs) {
      return [op, attrs](const std::vector<Tensor>& in) { return call(op, in, attrs); };
    };
    gradcheck(one("flip", {{"dims", Ints{0, 2}}}), {x}, {true}, "flip");
    gradcheck(one("roll", {{"shifts", Ints{2, -1}}, {"dims", Ints{2, 1}}}), {x}, {true}, "roll");
    gradcheck(one("movedim", {{"source", Ints{0, 1}}, {"destination", Ints{2, 0}}}), {x}, {true}, "movedim");
    gradcheck(one("repeat_interleave", {{"repeats", int64_t(3)}, {"dim", Ints{1}}}), {x}, {true}, "repeat_interleave");
    gradcheck(one("diagonal", {{"offset", int64_t(1)}, {"dim1", int64_t(1)}, {"dim2", int64_t(2)}}), {x}, {true}, "diagonal");
    gradcheck(one("diag_embed", {{"offset", int64_t(-1)}}), {x}, {true}, "diag_embed");
    gradcheck(one("logsumexp", {{"dims", Ints{0, 2}}}), {x}, {true}, "logsumexp");
    gradcheck(one("median", {{"dim", int64_t(2)}}), {x}, {true}, "median");
    gradcheck(one("mode", {{"dim", int64_t(1)}}), {x}, {true}, "mode");
    gradcheck(one("cdist", {{"p", 2.0}}), {y, z}, {true, true}, "cdist p=2");
    gradcheck(one("cdist", {{"p", 1.5}}), {y, z}, {true, true}, "cdist p=1.5");
    gradcheck(one("baddbmm", {{"beta", 0.5}, {"alpha", 2.0}}),
              {make_tensor(random_values(4, -1, 1, 14, DType::f64), {4}, DType::f64, dev), x.narrow(1, 0, 3),
               make_tensor(random_values(32, -1, 1, 15, DType::f64), {2, 4, 4}, DType::f64, dev)},
              {true, true, true}, "baddbmm");
    gradcheck(one("take_along_dim", {{"dim", Ints{2}}}), {x, make_tensor({0, 3, 3, 1, 2, 0}, {2, 3, 1}, DType::i64, dev)},
              {true, false}, "take_along_dim");
  }
}

TEST(CompositeErrors, BadInputGetsTypedErrors) {
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    Tensor t = make_tensor(random_values(12, -1, 1, 16), {3, 4}, DType::f32, dev);
    EXPECT_THROW(call("flip", {t}, {{"dims", Ints{0, -2}}}), ValueError);
    EXPECT_THROW(call("flip", {t}, {{"dims", Ints{2}}}), IndexError);
    EXPECT_THROW(call("roll", {t}, {{"shifts", Ints{1, 2}}, {"dims", Ints{0}}}), ValueError);
    EXPECT_THROW(call("movedim", {t}, {{"source", Ints{0, 1}}, {"destination", Ints{1}}}), ValueError);
    EXPECT_THROW(call("repeat_interleave", {t}, {{"repeats", int64_t(-1)}}), ValueError);
    EXPECT_THROW(call("diagonal", {t}, {{"dim1", int64_t(1)}, {"dim2", int64_t(-1)}}), ValueError);
    EXPECT_THROW(call("diagonal", {t.select(0, 0)}), ShapeError);
    EXPECT_THROW(call("diag", {t.reshape({3, 2, 2})}), ShapeError);
    EXPECT_THROW(call("meshgrid", {t, t}), ShapeError);
    EXPECT_THROW(call("meshgrid", {t.select(0, 0)}, {{"indexing", std::string("yx")}}), ValueError);
    EXPECT_THROW(call("take_along_dim", {t, t}, {{"dim", Ints{1}}}), DTypeError);
    EXPECT_THROW(call("isclose", {t, t.to(DType::f64)}), DTypeError);
    EXPECT_THROW(call("isclose", {t, t}, {{"rtol", -1.0}}), ValueError);
    EXPECT_THROW(call("outer", {t, t}), ShapeError);
    EXPECT_THROW(call("addmm", {t, t, t}), ShapeError);
    EXPECT_THROW(call("cdist", {t, t.narrow(1, 0, 3)}), ShapeError);
    EXPECT_THROW(call("cdist", {t, t}, {{"p", -1.0}}), ValueError);
    EXPECT_THROW(call("cdist", {t, t}, {{"compute_mode", std::string("fast")}}), ValueError);
    EXPECT_THROW(call("median", {t.narrow(1, 0, 0)}, {{"dim", int64_t(1)}}), IndexError);
    EXPECT_THROW(call("mode", {make_tensor({1, 0}, {2}, DType::boolean, dev)}), DTypeError);
    EXPECT_THROW(call("bucketize", {t, t}), ShapeError);
    EXPECT_THROW(call("searchsorted", {t.narrow(0, 0, 2), t}), ShapeError);
    EXPECT_THROW(call("histc", {t}, {{"bins", int64_t(0)}}), ValueError);
    EXPECT_THROW(call("histc", {t}, {{"min", 2.0}, {"max", 1.0}}), ValueError);
    EXPECT_THROW(call("histc", {make_tensor({1, 2}, {2}, DType::i64, dev)}), DTypeError);
    // The checks hold under autograd too, where the parts run directly.
    Tensor leaf = t.to(DType::f32).detach();
    leaf.set_requires_grad(true);
    EXPECT_THROW(call("isclose", {leaf, t.to(DType::f64)}), DTypeError);
    EXPECT_THROW(call("cdist", {leaf, t.narrow(1, 0, 3)}), ShapeError);
  }
}

TEST(CompositeTrace, GraphRecordsTheParts) {
  Tensor x = make_tensor(random_values(12, -1, 1, 17), {3, 4}, DType::f32, Device::cpu());
  graph::Tracer tracer({x});
  Tensor y = call1("logsumexp", {call1("flip", {x}, {{"dims", Ints{1}}})}, {{"dims", Ints{1}}});
  std::shared_ptr<const graph::Graph> g = tracer.finish({y});
  std::vector<std::string> ops;
  for (const auto& n : g->nodes()) ops.push_back(n->op->name);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "flip"), 0);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "logsumexp"), 0);
  EXPECT_GE(std::count(ops.begin(), ops.end(), "index_select"), 1);
  EXPECT_GE(std::count(ops.begin(), ops.end(), "exp"), 1);
  // The graph computes what the eager call does.
  graph::Executor exec(g, Device::cpu());
  auto out = exec.run({x});
  expect_close(host_values(out[0]), host_values(y), 1e-6, 1e-6, "traced logsumexp(flip(x))");
}
