// Reductions over any axes (keepdim or not) against plain loops, on every
// device and dtype, including non-contiguous inputs and full reductions large
// enough to take the multi-threaded path.
#include <set>

#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

enum class R { kSum, kProd, kMean, kVar, kMax, kMin, kArgMax, kArgMin };

// Reference: reduce `x` (row-major values of `shape`) over `axes`.
std::vector<double> reference(const std::vector<double>& x, const Shape& shape, std::set<int64_t> axes, R kind,
                              int64_t correction = 1) {
  if (axes.empty())
    for (int64_t i = 0; i < int64_t(shape.size()); ++i) axes.insert(i);
  Shape out_shape;
  for (int64_t i = 0; i < int64_t(shape.size()); ++i)
    if (!axes.count(i)) out_shape.push_back(shape[i]);
  int64_t n_out = numel_of(out_shape);
  std::vector<std::vector<std::pair<double, int64_t>>> groups(size_t(std::max<int64_t>(n_out, 1)));
  std::vector<int64_t> idx(shape.size(), 0);
  for (size_t flat = 0; flat < x.size(); ++flat) {
    int64_t o = 0, r = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (axes.count(int64_t(d))) r = r * shape[d] + idx[d];
      else o = o * shape[d] + idx[d];
    }
    groups[size_t(o)].push_back({x[flat], r});
    next_index(idx, shape);
  }
  std::vector<double> out;
  for (auto& g : groups) {
    double v = 0;
    switch (kind) {
      case R::kSum: for (auto& e : g) v += e.first; break;
      case R::kProd: v = 1; for (auto& e : g) v *= e.first; break;
      case R::kMean: for (auto& e : g) v += e.first; v /= double(g.size()); break;
      case R::kVar: {
        double m = 0;
        for (auto& e : g) m += e.first;
        m /= double(g.size());
        for (auto& e : g) v += (e.first - m) * (e.first - m);
        v /= double(int64_t(g.size()) - correction);
        break;
      }
      case R::kMax: v = -INFINITY; for (auto& e : g) v = std::max(v, e.first); break;
      case R::kMin: v = INFINITY; for (auto& e : g) v = std::min(v, e.first); break;
      case R::kArgMax:
      case R::kArgMin: {
        auto best = g[0];
        for (auto& e : g)
          if (kind == R::kArgMax ? e.first > best.first : e.first < best.first) best = e;
        v = double(best.second);
        break;
      }
    }
    out.push_back(v);
  }
  return out;
}

struct Case {
  const char* op;
  R kind;
  bool floating_only;
};
const Case kCases[] = {{"sum", R::kSum, false},       {"prod", R::kProd, false}, {"mean", R::kMean, true},
                       {"var", R::kVar, true},        {"max", R::kMax, false},   {"min", R::kMin, false},
                       {"argmax", R::kArgMax, false}, {"argmin", R::kArgMin, false}};

}  // namespace

TEST(Reductions, AnyAxesKeepdimEveryDtype) {
  const Shape shape{3, 4, 5};
  const std::vector<std::vector<int64_t>> axis_sets = {{}, {0}, {1}, {2}, {-1}, {0, 2}, {1, 2}, {0, 1, 2}};
  for (Device dev : devices()) {
    for (const auto& c : kCases) {
      for (DType dt : all_dtypes) {
        if (c.floating_only && !is_floating(dt)) continue;
        if (dt == DType::boolean && (c.kind == R::kArgMax || c.kind == R::kArgMin)) continue;
        bool arg = c.kind == R::kArgMax || c.kind == R::kArgMin;
        // prod values near 1 so f16 keeps its precision; distinct values for arg*
        auto values = c.kind == R::kProd ? random_values(60, 0.8, 1.25, 3, dt) : random_values(60, -20, 20, 3, dt);
        if (c.kind == R::kProd && !is_floating(dt)) values = random_values(60, 0, 2, 3, dt);
        for (auto& v : values) v = round_to(v, dt);
        if (arg && !is_floating(dt))
          for (size_t i = 0; i < values.size(); ++i) values[i] = double((i * 37) % 61) - 30;
        if (dt == DType::u8)
          for (auto& v : values) v = std::abs(v);
        if (dt == DType::u8 && arg)
          for (size_t i = 0; i < values.size(); ++i) values[i] = double((i * 37) % 61);
        Tensor x = make_tensor(values, shape, dt, dev);
        for (const auto& axes : axis_sets) {
          if (arg && axes.size() > 1) continue;
          for (bool keep : {false, true}) {
            SCOPED_TRACE(str(c.op, " ", dtype_name(dt), " dims=", shape_str(axes), " keepdim=", keep));
            Tensor y = call1(c.op, {x}, {{"dims", axes}, {"keepdim", keep}});
            std::set<int64_t> ax;
            for (int64_t a : axes) ax.insert(a < 0 ? a + 3 : a);
            auto want = reference(values, shape, ax, c.kind);
            Shape expect_shape;
            for (int64_t d = 0; d < 3; ++d) {
              bool red = ax.empty() || ax.count(d);
              if (!red) expect_shape.push_back(shape[d]);
              else if (keep) expect_shape.push_back(1);
            }
            EXPECT_EQ(y.shape(), expect_shape);
            if (arg) {
              EXPECT_EQ(y.dtype(), DType::i64);
            }
            if ((c.kind == R::kSum || c.kind == R::kProd) && !is_floating(dt)) {
              EXPECT_EQ(y.dtype(), DType::i64);
            }
            double tol = arg ? 0 : (is_floating(dt) ? 4 * tolerance(dt) : 0);
            if (c.kind == R::kProd && is_floating(dt)) tol *= 8;
            expect_close(host_values(y), want, tol, tol * 10, c.op);
          }
        }
      }
    }
  }
}

TEST(Reductions, NonContiguousAndLargeInputs) {
  for (Device dev : devices()) {
    auto values = random_values(300 * 200, -1, 1, 9, DType::f64);
    Tensor x = make_tensor(values, {300, 200}, DType::f64, dev);
    Tensor xt = x.t();  // [200, 300], strided
    auto want_rows = reference(host_values(xt), {200, 300}, {1}, R::kSum);
    expect_close(host_values(call1("sum", {xt}, {{"dims", std::vector<int64_t>{1}}})), want_rows, 1e-12, 1e-12,
                 "sum over strided rows");
    // full reduction of a large tensor takes the split-across-threads path
    auto big = random_values(1 << 20, 0, 1, 10, DType::f32);
    for (auto& v : big) v = round_to(v, DType::f32);
    Tensor b = make_tensor(big, {1 << 20}, DType::f32, dev);
    double s = 0;
    for (double v : big) s += v;
    EXPECT_NEAR(call1("sum", {b}).item(), s, 1e-5 * s);
    EXPECT_NEAR(call1("mean", {b}).item(), s / double(1 << 20), 1e-6);
    auto want_var = reference(big, {1 << 20}, {}, R::kVar);
    EXPECT_NEAR(call1("var", {b}).item(), want_var[0], 1e-5 * want_var[0]);
    big[777777] = 5.0;
    Tensor b2 = make_tensor(big, {1 << 20}, DType::f32, dev);
    EXPECT_EQ(call1("argmax", {b2}).item(), 777777);
    EXPECT_EQ(call1("max", {b2}).item(), 5.0);
    // reducing an expanded (stride 0) tensor
    Tensor e = make_tensor({1, 2, 3}, {3}, DType::f32, dev).expand({4, 3});
    EXPECT_EQ(host_values(call1("sum", {e}, {{"dims", std::vector<int64_t>{0}}})), (std::vector<double>{4, 8, 12}));
  }
}

TEST(Reductions, NanAndCorrectionAndEmpty) {
  for (Device dev : devices()) {
    Tensor x = make_tensor({1, NAN, 3, 4}, {2, 2}, DType::f32, dev);
    auto mx = host_values(call1("max", {x}, {{"dims", std::vector<int64_t>{1}}}));
    EXPECT_TRUE(std::isnan(mx[0]));
    EXPECT_EQ(mx[1], 4);
    EXPECT_EQ(call1("argmax", {x}).item(), 1);  // NaN counts as the maximum
    Tensor v = make_tensor({1, 2, 3, 4}, {4}, DType::f64, dev);
    EXPECT_NEAR(call1("var", {v}, {{"correction", int64_t(0)}}).item(), 1.25, 1e-12);
    EXPECT_NEAR(call1("var", {v}).item(), 5.0 / 3.0, 1e-12);
    Tensor empty = Tensor::zeros({0, 3}, DType::f32, dev);
    EXPECT_EQ(host_values(call1("sum", {empty}, {{"dims", std::vector<int64_t>{0}}})), (std::vector<double>{0, 0, 0}));
    EXPECT_THROW(call1("max", {empty}, {{"dims", std::vector<int64_t>{0}}}), ValueError);
  }
}

TEST(Reductions, TypedErrors) {
  for (Device dev : devices()) {
    Tensor x = Tensor::zeros({2, 3}, DType::f32, dev);
    EXPECT_THROW(call1("sum", {x}, {{"dims", std::vector<int64_t>{2}}}), IndexError);
    EXPECT_THROW(call1("sum", {x}, {{"dims", std::vector<int64_t>{-3}}}), IndexError);
    EXPECT_THROW(call1("sum", {x}, {{"dims", std::vector<int64_t>{0, 0}}}), ValueError);
    EXPECT_THROW(call1("mean", {Tensor::zeros({2}, DType::i32, dev)}), DTypeError);
    EXPECT_THROW(call1("argmax", {x}, {{"dims", std::vector<int64_t>{0, 1}}}), ValueError);
    EXPECT_THROW(call1("var", {x}, {{"correction", int64_t(-1)}}), ValueError);
    EXPECT_THROW(call1("sum", {x}, {{"dims", std::string("all")}}), ValueError);
  }
}
