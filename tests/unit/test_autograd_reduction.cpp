// Gradient rules of reductions (sum, mean, prod, var, max, min): gradchecks
// against central finite differences in f64 over dims/keepdim combinations,
// negative dims, 0-d, non-contiguous and broadcast (expanded) inputs;
// second-order gradchecks; analytic values where finite differences cannot
// judge (ties split evenly, zeros in prod) or in f32; arg-reductions carry no
// gradient.
#include "gradcheck.h"

using namespace oar;
using namespace oar::testing;

namespace {

using Dims = std::vector<int64_t>;

Tensor rnd(const Shape& shape, uint32_t seed, Device dev, double lo = -1, double hi = 1) {
  return make_tensor(random_values(numel_of(shape), lo, hi, seed, DType::f64), shape, DType::f64, dev);
}

Attrs red(const Dims& dims, bool keepdim) { return {{"dims", dims}, {"keepdim", keepdim}}; }

// A one-input function: `view` picks the layout the reduction sees.
TensorFn reduce_fn(const std::string& name, const Attrs& attrs, std::function<Tensor(const Tensor&)> view = nullptr,
                   bool squared = false) {
  return [=](const std::vector<Tensor>& in) {
    Tensor x = view ? view(in[0]) : in[0];
    Tensor y = call1(name, {x}, attrs);
    return std::vector<Tensor>{squared ? call1("square", {y}) : y};
  };
}

std::string label(const std::string& name, const Dims& dims, bool keepdim) {
  std::string s = name + " dims=[";
  for (int64_t d : dims) s += std::to_string(d) + ",";
  return s + "] keepdim=" + (keepdim ? "1" : "0");
}

const std::vector<Dims> kDimSets = {{}, {1}, {-1}, {0, 2}, {-3, -1}, {2, 0, 1}};

// Per-group reference for a [R, C] input reduced over dim 1: fn(row) -> d/d row.
using RowGrad = std::function<std::vector<double>(const std::vector<double>&)>;
std::vector<double> rowwise(const std::vector<double>& x, int64_t rows, int64_t cols, const RowGrad& fn) {
  std::vector<double> out;
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> row(x.begin() + r * cols, x.begin() + (r + 1) * cols);
    auto g = fn(row);
    out.insert(out.end(), g.begin(), g.end());
  }
  return out;
}

std::vector<double> grad_of_sum(const Tensor& y, const Tensor& x) {
  return host_values(autograd::grad({call1("sum", {y})}, {x})[0]);
}

}  // namespace

TEST(AutogradReduction, SumAndMeanGradcheck) {
  for (Device dev : devices()) {
    Tensor x = rnd({2, 3, 4}, 1, dev);
    for (const char* name : {"sum", "mean"})
      for (const auto& dims : kDimSets)
        for (bool keepdim : {false, true})
          gradcheck(reduce_fn(name, red(dims, keepdim)), {x}, {true}, label(name, dims, keepdim));
    // non-contiguous and broadcast inputs; 0-d input
    Tensor w = rnd({4, 3, 2}, 2, dev);
    auto permuted = [](const Tensor& t) { return t.permute({2, 1, 0}); };
    auto strided = [](const Tensor& t) { return t.slice(2, 0, 4, 2); };
    Tensor b = rnd({3, 1}, 3, dev);
    auto expanded = [](const Tensor& t) { return t.expand({2, 3, 4}); };
    for (const char* name : {"sum", "mean"}) {
      gradcheck(reduce_fn(name, red({0, -1}, false), permuted), {w}, {true}, std::string(name) + " permuted");
      gradcheck(reduce_fn(name, red({1}, true), strided), {x}, {true}, std::string(name) + " sliced");
      gradcheck(reduce_fn(name, red({-1}, false), expanded), {b}, {true}, std::string(name) + " expanded");
      gradcheck(reduce_fn(name, red({}, false)), {rnd({}, 4, dev)}, {true}, std::string(name) + " 0-d");
    }
  }
}

TEST(AutogradReduction, ProdGradcheckAndZeros) {
  for (Device dev : devices()) {
    // magnitudes away from 0 so y / x is well conditioned
    auto v = random_values(24, 0.5, 1.5, 5, DType::f64);
    for (size_t i = 0; i < v.size(); i += 3) v[i] = -v[i];
    Tensor x = make_tensor(v, {2, 3, 4}, DType::f64, dev);
    for (const auto& dims : kDimSets)
      for (bool keepdim : {false, true})
        gradcheck(reduce_fn("prod", red(dims, keepdim)), {x}, {true}, label("prod", dims, keepdim));
    gradcheck(reduce_fn("prod", red({0}, false), [](const Tensor& t) { return t.t(); }),
              {make_tensor(v, {4, 6}, DType::f64, dev)}, {true}, "prod transposed");

    // rows with no zero, one zero, two zeros, all zeros
    std::vector<double> z = {0, 2, 3, -1, 0, 0, 4, 2, 1, 2, 3, -2, 0, 0, 0, 0};
    Tensor xz = make_tensor(z, {4, 4}, DType::f64, dev);
    gradcheck(reduce_fn("prod", red({1}, false)), {xz}, {true}, "prod with zeros");
    gradcheck(reduce_fn("prod", red({}, false)), {xz}, {true}, "prod of all, several zeros");
    // reference: d/dx_i = product of the row's other elements
    auto others = [](const std::vector<double>& row) {
      std::vector<double> g(row.size(), 1.0);
      for (size_t i = 0; i < row.size(); ++i)
        for (size_t j = 0; j < row.size(); ++j)
          if (j != i) g[i] *= row[j];
      return g;
    };
    Tensor leaf = xz.clone();
    leaf.set_requires_grad(true);
    expect_close(grad_of_sum(call1("prod", {leaf}, red({1}, false)), leaf), rowwise(z, 4, 4, others), 0, 1e-12,
                 "prod zeros analytic");
    // one zero in the whole tensor: only that element gets a nonzero gradient
    std::vector<double> one = {2, 0.5, 0, 3};
    Tensor l1 = make_tensor(one, {4}, DType::f64, dev);
    l1.set_requires_grad(true);
    expect_close(grad_of_sum(call1("prod", {l1}), l1), {0, 0, 3, 0}, 0, 1e-12, "prod single zero");
  }
}

TEST(AutogradReduction, VarGradcheck) {
  for (Device dev : devices()) {
    Tensor x = rnd({2, 3, 4}, 6, dev);
    for (int64_t correction : {0, 1, 2})
      for (const auto& dims : kDimSets)
        for (bool keepdim : {false, true}) {
          Attrs a = red(dims, keepdim);
          a.set("correction", correction);
          gradcheck(reduce_fn("var", a), {x}, {true},
                    label("var", dims, keepdim) + " correction=" + std::to_string(correction));
        }
    Attrs a = red({0}, false);
    gradcheck(reduce_fn("var", a, [](const Tensor& t) { return t.slice(1, 1, 4).transpose(0, 1); }),
              {rnd({5, 4}, 7, dev)}, {true}, "var of a sliced transposed view");
    // reference: 2 (x - mean) / (N - 1)
    std::vector<double> v = {1, 2, 4, 7, -1, 0, 3, 2};
    Tensor leaf = make_tensor(v, {2, 4}, DType::f64, dev);
    leaf.set_requires_grad(true);
    auto ref = [](const std::vector<double>& row) {
      double m = 0;
      for (double e : row) m += e / double(row.size());
      std::vector<double> g;
      for (double e : row) g.push_back(2 * (e - m) / double(row.size() - 1));
      return g;
    };
    expect_close(grad_of_sum(call1("var", {leaf}, red({1}, false)), leaf), rowwise(v, 2, 4, ref), 0, 1e-12,
                 "var analytic");
  }
}

TEST(AutogradReduction, MaxMinGradcheckAndTies) {
  for (Device dev : devices()) {
    // distinct values (a shuffled grid), so no ties and no kinks within eps
    std::vector<double> v(24);
    for (size_t i = 0; i < v.size(); ++i) v[i] = double((i * 7) % 24) * 0.1 - 1.0;
    Tensor x = make_tensor(v, {2, 3, 4}, DType::f64, dev);
    for (const char* name : {"max", "min"}) {
      for (const auto& dims : kDimSets)
        for (bool keepdim : {false, true})
          gradcheck(reduce_fn(name, red(dims, keepdim)), {x}, {true}, label(name, dims, keepdim));
      gradcheck(reduce_fn(name, red({-2}, false),
                          [](const Tensor& t) {
                            return t.permute({2, 0, 1});
                          }),
                {x}, {true}, std::string(name) + " permuted");
    }
    // ties share the gradient evenly
    std::vector<double> t = {1, 3, 3, 2, 2, 2, -1, 5, -1};
    Tensor leaf = make_tensor(t, {3, 3}, DType::f64, dev);
    leaf.set_requires_grad(true);
    auto split_ties = [](bool is_max) {
      return [is_max](const std::vector<double>& row) {
        double best = row[0];
        for (double e : row) best = is_max ? std::max(best, e) : std::min(best, e);
        double n = 0;
        for (double e : row) n += e == best;
        std::vector<double> g;
        for (double e : row) g.push_back(e == best ? 1.0 / n : 0.0);
        return g;
      };
    };
    expect_close(grad_of_sum(call1("max", {leaf}, red({1}, false)), leaf), rowwise(t, 3, 3, split_ties(true)), 0, 1e-12,
                 "max ties");
    expect_close(grad_of_sum(call1("min", {leaf}, red({-1}, true)), leaf), rowwise(t, 3, 3, split_ties(false)), 0,
                 1e-12, "min ties");
    expect_close(grad_of_sum(call1("max", {leaf}), leaf), rowwise(t, 1, 9, split_ties(true)), 0, 1e-12,
                 "max over all, tie of 1");
    expect_close(grad_of_sum(call1("min", {leaf}), leaf), rowwise(t, 1, 9, split_ties(false)), 0, 1e-12,
                 "min over all, tie of 2");
  }
}

TEST(AutogradReduction, SecondOrder) {
  for (Device dev : devices()) {
    Tensor x = rnd({2, 3, 3}, 8, dev);
    // squared: a linear reduction's first derivative would not depend on x
    gradgradcheck(reduce_fn("sum", red({1}, false), nullptr, true), {x}, {true}, "sum");
    gradgradcheck(reduce_fn(
                      "sum", red({0, -1}, true), [](const Tensor& t) { return t.transpose(0, 2); }, true),
                  {x}, {true}, "sum of a transposed view");
    gradgradcheck(reduce_fn("mean", red({-1}, false), nullptr, true), {x}, {true}, "mean");
    gradgradcheck(reduce_fn("mean", red({}, false), nullptr, true), {x}, {true}, "mean of all");
    Attrs va = red({2}, false);
    va.set("correction", int64_t(1));
    gradgradcheck(reduce_fn("var", va), {x}, {true}, "var");
    gradgradcheck(reduce_fn("var", va, nullptr, true), {x}, {true}, "var squared");
    Tensor p = rnd({2, 3, 3}, 9, dev, 0.5, 1.5);
    gradgradcheck(reduce_fn("prod", red({1}, false)), {p}, {true}, "prod");
    gradgradcheck(reduce_fn("prod", red({}, false)), {rnd({2, 3}, 10, dev, 0.5, 1.5)}, {true}, "prod of all");
    // one zero per row: the product of the others is still differentiated exactly
    Tensor pz = make_tensor({0, 1.5, 2, 0.7, -1.2, 0, 0.9, 1.1, 1.3}, {3, 3}, DType::f64, dev);
    gradgradcheck(reduce_fn("prod", red({1}, false)), {pz}, {true}, "prod with one zero per row");
    std::vector<double> v(18);
    for (size_t i = 0; i < v.size(); ++i) v[i] = double((i * 5) % 18) * 0.1 - 0.9;
    Tensor m = make_tensor(v, {2, 3, 3}, DType::f64, dev);
    gradgradcheck(reduce_fn("max", red({1}, false), nullptr, true), {m}, {true}, "max");
    gradgradcheck(reduce_fn("min", red({}, false), nullptr, true), {m}, {true}, "min of all");
  }
}

TEST(AutogradReduction, FloatGradientsAndArgReductions) {
  for (Device dev : devices()) {
    // f32: gradients keep the input's dtype and match the closed forms
    std::vector<double> v = {0.5, -1, 2, 3, 0.25, 1.5};
    Tensor x = make_tensor(v, {2, 3}, DType::f32, dev);
    x.set_requires_grad(true);
    Tensor y = call1("add", {call1("mean", {x}, red({0}, false)), call1("prod", {x}, red({1}, true))});
    Tensor gx = autograd::grad({call1("sum", {y})}, {x})[0];
    EXPECT_EQ(gx.dtype(), DType::f32);
    std::vector<double> want(6);
    for (int r = 0; r < 2; ++r)
      for (int c = 0; c < 3; ++c) {
        double others = 1;
        for (int k = 0; k < 3; ++k)
          if (k != c) others *= v[size_t(r * 3 + k)];
        // y broadcasts to [2, 3]: each mean reaches 2 rows, each prod 3 columns
        want[size_t(r * 3 + c)] = 2 * 0.5 + 3 * others;
      }
    expect_close(host_values(gx), want, tolerance(DType::f32), tolerance(DType::f32), "f32 mean + prod");

    // argmax / argmin record nothing; differentiating through them is an error
    Tensor xd = rnd({2, 3}, 11, dev);
    xd.set_requires_grad(true);
    for (const char* name : {"argmax", "argmin"}) {
      Tensor i = call1(name, {xd}, red({1}, false));
      EXPECT_FALSE(i.requires_grad()) << name;
      EXPECT_EQ(i.grad_fn_name(), "") << name;
      EXPECT_THROW(autograd::grad({i}, {xd}, {Tensor::ones(i.shape(), DType::i64, dev)}), ValueError) << name;
    }
    // bad reduction attributes are still rejected when recording
    EXPECT_THROW(call1("sum", {xd}, red({2}, false)), IndexError);
    EXPECT_THROW(call1("var", {xd}, {{"dims", Dims{0}}, {"keepdim", false}, {"correction", int64_t(-1)}}), ValueError);
  }
}
