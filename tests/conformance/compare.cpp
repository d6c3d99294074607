#include "compare.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "oar/error.h"

namespace oar::conformance {

namespace {
struct Row {
  const char* op;
  const char* dtype;
  double rtol, atol;
};
#define OAR_TOLERANCE(op, dtype, rtol, atol) {op, #dtype, rtol, atol},
constexpr Row kRows[] = {
#include "tolerances.def"
};
#undef OAR_TOLERANCE

std::string index_str(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return shape_str(idx);
}

bool same_value(double a, double b, const Tolerance& tol, bool exact) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  if (std::isinf(a) || std::isinf(b)) return a == b;
  if (exact) return a == b;
  return std::fabs(a - b) <= tol.atol + tol.rtol * std::fabs(b);
}
}  // namespace

Tolerance tolerance_for(const std::string& op, DType dtype) {
  Tolerance t;
  for (const Row& r : kRows) {
    if (std::strcmp(r.dtype, dtype_name(dtype)) != 0) continue;
    if (r.op == op) return {r.rtol, r.atol};
    if (std::strcmp(r.op, "*") == 0) t = {r.rtol, r.atol};
  }
  return t;
}

std::string compare_tensors(const Tensor& got, const Tensor& want, const Tolerance& tol) {
  if (got.defined() != want.defined())
    return got.defined() ? "an output the reference leaves undefined" : "an undefined output";
  if (!got.defined()) return "";
  if (got.shape() != want.shape())
    return "shape " + shape_str(got.shape()) + ", expected " + shape_str(want.shape());
  const bool widened = is_floating(want.dtype()) && is_floating(got.dtype()) && want.dtype() == DType::f64;
  if (got.dtype() != want.dtype() && !widened)
    return std::string("dtype ") + dtype_name(got.dtype()) + ", expected " + dtype_name(want.dtype());
  const std::vector<double> g = got.to_vector<double>();
  // The f64 reference rounded as the device's dtype holds it.
  const std::vector<double> w = (widened ? want.to(got.dtype()) : want).to_vector<double>();
  const bool exact = !is_floating(got.dtype());
  int64_t bad = 0, first = -1;
  for (size_t i = 0; i < g.size(); ++i)
    if (!same_value(g[i], w[i], tol, exact)) {
      if (first < 0) first = int64_t(i);
      ++bad;
    }
  if (bad == 0) return "";
  std::ostringstream os;
  os.precision(7);
  os << bad << " of " << g.size() << " elements differ; first at " << index_str(first, got.shape()) << ": "
     << g[size_t(first)] << ", expected " << w[size_t(first)];
  if (!exact) os << " (rtol " << tol.rtol << ", atol " << tol.atol << ")";
  return os.str();
}

std::string compare_distributions(const Tensor& got, const Tensor& want) {
  if (got.shape() != want.shape())
    return "shape " + shape_str(got.shape()) + ", expected " + shape_str(want.shape());
  if (got.dtype() != want.dtype())
    return std::string("dtype ") + dtype_name(got.dtype()) + ", expected " + dtype_name(want.dtype());
  auto stats = [](const std::vector<double>& v, double& mean, double& sd) {
    mean = 0;
    for (double x : v) mean += x;
    mean /= double(std::max<size_t>(v.size(), 1));
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    sd = std::sqrt(ss / double(std::max<size_t>(v.size(), 1)));
  };
  std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (double x : g)
    if (!std::isfinite(x)) return "a non-finite sample";
  double gm, gs, wm, ws;
  stats(g, gm, gs);
  stats(w, wm, ws);
  // Five standard errors of the mean, and 10% of the spread.
  const double se = ws / std::sqrt(double(std::max<size_t>(w.size(), 1)));
  std::ostringstream os;
  if (std::fabs(gm - wm) > 5 * se + 1e-6) os << "sample mean " << gm << ", reference " << wm << "; ";
  if (std::fabs(gs - ws) > 0.1 * ws + 1e-6) os << "sample std " << gs << ", reference " << ws;
  return os.str();
}

}  // namespace oar::conformance
