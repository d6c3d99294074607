// Tests of the scan family (cumsum, cumprod, cummax, cummin, logcumsumexp,
// their backward kernels) and sort/topk/kthvalue against plain double
// reference loops on every device: numeric dtypes, every dim of a 3-D
// tensor, NaN and ties, reverse scans, stability of equal keys, zeros in
// cumprod's gradient, finite-difference gradients, and the typed errors.
#include <algorithm>
#include <numeric>

#include "gradcheck.h"
#include "oar/dispatch.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

struct Rows {
  int64_t outer, d, inner;
};
Rows rows_of(const Shape& s, int64_t dim) {
  Rows r{1, s[size_t(dim)], 1};
  for (int64_t k = 0; k < dim; ++k) r.outer *= s[size_t(k)];
  for (size_t k = size_t(dim) + 1; k < s.size(); ++k) r.inner *= s[k];
  return r;
}

// Applies f(row values) -> row results to every row along dim.
template <class F>
std::vector<double> per_row(const std::vector<double>& x, const Shape& s, int64_t dim, F f) {
  Rows r = rows_of(s, dim);
  std::vector<double> out(x.size());
  for (int64_t o = 0; o < r.outer; ++o)
    for (int64_t i = 0; i < r.inner; ++i) {
      std::vector<double> row(size_t(r.d));
      for (int64_t j = 0; j < r.d; ++j) row[size_t(j)] = x[size_t((o * r.d + j) * r.inner + i)];
      std::vector<double> res = f(row);
      for (int64_t j = 0; j < r.d; ++j) out[size_t((o * r.d + j) * r.inner + i)] = res[size_t(j)];
    }
  return out;
}

std::vector<double> ref_cumsum(const std::vector<double>& row, bool reverse) {
  std::vector<double> out(row.size());
  double acc = 0;
  for (size_t k = 0; k < row.size(); ++k) {
    size_t j = reverse ? row.size() - 1 - k : k;
    out[j] = acc += row[j];
  }
  return out;
}

// PyTorch's cummax/cummin: ties and NaNs move the index to the later position.
std::pair<std::vector<double>, std::vector<double>> ref_cumext(const std::vector<double>& row, bool max) {
  std::vector<double> v(row.size()), idx(row.size());
  double cur = 0;
  size_t at = 0;
  for (size_t j = 0; j < row.size(); ++j) {
    bool better = max ? row[j] >= cur : row[j] <= cur;
    if (j == 0 || std::isnan(row[j]) || (!std::isnan(cur) && better)) cur = row[j], at = j;
    v[j] = cur;
    idx[j] = double(at);
  }
  return {v, idx};
}

const std::vector<DType> kNumeric = {DType::f32, DType::f64, DType::i32, DType::i64};

}  // namespace

TEST(Cumsum, MatchesReferenceEveryDimDTypeAndReverse) {
  const Shape s{3, 4, 5};
  for (Device dev : devices())
    for (DType d : kNumeric) {
      auto x = random_values(60, -9, 9, 11, d);
      if (is_integral(d))
        for (auto& v : x) v = std::round(v);
      Tensor t = make_tensor(x, s, d, dev);
      for (int64_t dim = 0; dim < 3; ++dim)
        for (bool reverse : {false, true}) {
          Tensor y = call1("cumsum", {t}, {{"dim", dim - 3}, {"reverse", reverse}});
          EXPECT_EQ(y.dtype(), d);
          auto want = per_row(x, s, dim, [&](const std::vector<double>& r) { return ref_cumsum(r, reverse); });
          expect_close(host_values(y), want, tolerance(d) * 10, tolerance(d) * 10,
                       dev.str() + " " + dtype_name(d) + " dim " + std::to_string(dim));
        }
    }
}

TEST(Cumprod, MatchesReferenceAndExactGradientWithZeros) {
  const Shape s{2, 6};
  std::vector<double> x{0.5, -2, 0, 1.5, 0, 3, 1.25, 2, -0.5, 0.75, 4, -1};
  for (Device dev : devices()) {
    Tensor t = make_tensor(x, s, DType::f64, dev);
    auto want = per_row(x, s, 1, [](const std::vector<double>& r) {
      std::vector<double> out(r.size());
      double p = 1;
      for (size_t j = 0; j < r.size(); ++j) out[j] = p *= r[j];
      return out;
    });
    expect_close(host_values(call1("cumprod", {t}, {{"dim", 1}})), want, 1e-12, 0, dev.str());
    // d/dx_j sum_k w_k prod_{i<=k} x_i by a product loop that skips x_j (no division: zeros stay exact)
    std::vector<double> w{1, -2, 0.5, 3, 1, -1, 2, 1, -1, 0.5, 2, 1};
    Tensor g = call1("cumprod_backward", {make_tensor(w, s, DType::f64, dev), t}, {{"dim", 1}});
    std::vector<double> want_g(12, 0.0);
    for (int r = 0; r < 2; ++r)
      for (int j = 0; j < 6; ++j)
        for (int k = j; k < 6; ++k) {
          double p = 1;
          for (int i = 0; i <= k; ++i)
            if (i != j) p *= x[size_t(r * 6 + i)];
          want_g[size_t(r * 6 + j)] += w[size_t(r * 6 + k)] * p;
        }
    expect_close(host_values(g), want_g, 1e-12, 1e-12, dev.str() + " cumprod_backward");
  }
}

TEST(CumMaxMin, ValuesAndIndicesWithTiesAndNaN) {
  const Shape s{2, 7};
  const double nan = std::nan("");
  std::vector<double> x{1, 3, 3, 2, 5, 5, 0, 4, nan, 1, 9, nan, 2, 2};
  for (Device dev : devices())
    for (bool max : {true, false}) {
      auto outs = call(max ? "cummax" : "cummin", {make_tensor(x, s, DType::f32, dev)}, {{"dim", 1}});
      ASSERT_EQ(outs.size(), 2u);
      EXPECT_EQ(outs[1].dtype(), DType::i64);
      std::vector<double> wv, wi;
      for (int r = 0; r < 2; ++r) {
        auto [v, i] = ref_cumext(std::vector<double>(x.begin() + r * 7, x.begin() + r * 7 + 7), max);
        wv.insert(wv.end(), v.begin(), v.end());
        wi.insert(wi.end(), i.begin(), i.end());
      }
      expect_close(host_values(outs[0]), wv, 0, 0, dev.str() + (max ? " cummax" : " cummin"));
      expect_close(host_values(outs[1]), wi, 0, 0, dev.str() + " indices");
    }
}

TEST(Logcumsumexp, OverflowFreeAndMinusInfinity) {
  const Shape s{3, 4};
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> x{1000, 1000, -3, 2, -inf, -inf, 0, 1, 0.5, -1, 2, -inf};
  for (Device dev : devices()) {
    auto want = per_row(x, s, 1, [](const std::vector<double>& r) {
      std::vector<double> out(r.size());
      double acc = -std::numeric_limits<double>::infinity();
      for (size_t j = 0; j < r.size(); ++j) {
        double hi = std::max(acc, r[j]), lo = std::min(acc, r[j]);
        acc = std::isinf(hi) ? hi : hi + std::log1p(std::exp(lo - hi));
        out[j] = acc;
      }
      return out;
    });
    expect_close(host_values(call1("logcumsumexp", {make_tensor(x, s, DType::f64, dev)}, {{"dim", 1}})), want,
                 1e-12, 1e-12, dev.str());
  }
}

TEST(Sort, StableBothDirectionsNaNLastAndEveryDim) {
  const Shape s{3, 4, 5};
  for (Device dev : devices())
    for (DType d : kNumeric) {
      auto x = random_values(60, -3, 3, 5, d);
      for (auto& v : x) v = std::round(v);  // many ties: stability shows
      if (is_floating(d)) x[7] = x[31] = std::nan("");
      Tensor t = make_tensor(x, s, d, dev);
      for (int64_t dim = 0; dim < 3; ++dim)
        for (bool desc : {false, true}) {
          auto outs = call("sort", {t}, {{"dim", dim}, {"descending", desc}});
          std::vector<double> want_i = per_row(x, s, dim, [&](const std::vector<double>& r) {
            std::vector<size_t> order(r.size());
            std::iota(order.begin(), order.end(), size_t(0));
            auto key = [&](size_t a, size_t b) {  // NaN above every number
              double u = r[a], v = r[b];
              if (desc) return std::isnan(u) ? !std::isnan(v) : (!std::isnan(v) && u > v);
              return !std::isnan(u) && (std::isnan(v) || u < v);
            };
            std::stable_sort(order.begin(), order.end(), key);
            return std::vector<double>(order.begin(), order.end());
          });
          std::vector<double> want_v = per_row(x, s, dim, [&](const std::vector<double>& r) {
            std::vector<double> v = r;
            std::stable_sort(v.begin(), v.end(), [&](double a, double b) {
              if (desc) return std::isnan(a) ? !std::isnan(b) : (!std::isnan(b) && a > b);
              return !std::isnan(a) && (std::isnan(b) || a < b);
            });
            return v;
          });
          const std::string what = dev.str() + " " + dtype_name(d) + " dim " + std::to_string(dim) +
                                   (desc ? " descending" : "");
          expect_close(host_values(outs[1]), want_i, 0, 0, what + " indices");
          expect_close(host_values(outs[0]), want_v, 0, 0, what + " values");
        }
    }
}

TEST(Topk, LargestSmallestAndKthvalue) {
  std::vector<double> x{4, -1, 7, 7, 0, 3, 9, -5};
  for (Device dev : devices()) {
    Tensor t = make_tensor(x, {2, 4}, DType::f32, dev);
    auto top = call("topk", {t}, {{"k", 2}, {"dim", 1}});
    expect_close(host_values(top[0]), {7, 7, 9, 3}, 0, 0, dev.str() + " topk values");
    expect_close(host_values(top[1]), {2, 3, 2, 1}, 0, 0, dev.str() + " topk indices");
    auto low = call("topk", {t}, {{"k", 1}, {"dim", 0}, {"largest", false}});
    expect_close(host_values(low[0]), {0, -1, 7, -5}, 0, 0, dev.str() + " smallest");
    auto kth = call("kthvalue", {t}, {{"k", 2}, {"dim", 1}, {"keepdim", true}});
    EXPECT_EQ(kth[0].shape(), (Shape{2, 1}));
    expect_close(host_values(kth[0]), {4, 0}, 0, 0, dev.str() + " kthvalue");
    expect_close(host_values(kth[1]), {0, 0}, 0, 0, dev.str() + " kthvalue index");
    EXPECT_THROW(call("topk", {t}, {{"k", 5}, {"dim", 1}}), ValueError);
    EXPECT_THROW(call("kthvalue", {t}, {{"k", 0}}), ValueError);
    EXPECT_THROW(call("sort", {make_tensor({1, 0}, {2}, DType::boolean, dev)}, {{"dim", 0}}), DTypeError);
    EXPECT_THROW(call("cumsum", {t}, {{"dim", 2}}), IndexError);
  }
}

TEST(ScanGradients, FiniteDifferences) {
  for (Device dev : devices()) {
    auto x = random_values(12, -1.5, 1.5, 3, DType::f64);
    x[4] = 0;  // cumprod through a zero
    Tensor t = make_tensor(x, {3, 4}, DType::f64, dev);
    for (const char* name : {"cumsum", "cumprod", "logcumsumexp", "cummax", "sort"})
      gradcheck([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{call(name, in, {{"dim", 1}})[0]}; },
                {t}, {true}, dev.str() + " " + name);
    gradcheck([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{call("topk", in, {{"k", 2}})[0]}; },
              {t}, {true}, dev.str() + " topk");
    // cumsum is linear (its gradient does not depend on x): square first so the second derivative is not zero.
    gradgradcheck(
        [&](const std::vector<Tensor>& in) {
          return std::vector<Tensor>{call1("cumsum", {call1("mul", {in[0], in[0]})}, {{"dim", 0}})};
        },
        {t}, {true}, dev.str() + " cumsum double grad");
  }
}
