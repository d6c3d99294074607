// Helpers shared by the C++ test suites: the devices to run on, host copies
// of tensors, a deterministic host random source for inputs, reference
// iteration over strided shapes, and per-dtype tolerances.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <random>
#include <vector>

#include "oar/core.h"

namespace oar::testing {

// Every present device (all loaded plugins, all indices).
// An empty list is a failure: a suite must never pass by running nothing.
// TEST_OAR_REQUIRE_DEVICES (comma-separated device types, set by
// scripts/test.sh) turns a plugin that failed to load into a failure rather
// than a suite that quietly ran on fewer devices.
inline std::vector<Device> devices() {
  auto list = Runtime::get().devices();
  if (list.empty()) ADD_FAILURE() << "no device is loaded; tests would run nothing";
  if (const char* required = std::getenv("TEST_OAR_REQUIRE_DEVICES")) {
    std::string all(required), type;
    for (size_t pos = 0; pos <= all.size(); ++pos) {
      if (pos < all.size() && all[pos] != ',') {
        type += all[pos];
        continue;
      }
      bool found = false;
      for (const Device& d : list) found |= d.str().rfind(type + ":", 0) == 0 || d.str() == type;
      if (!type.empty() && !found)
        ADD_FAILURE() << "device type '" << type << "' is required (TEST_OAR_REQUIRE_DEVICES) but no loaded plugin "
                      << "provides it; run oar-info to see why its plugin was skipped";
      type.clear();
    }
  }
  return list;
}

inline std::vector<double> host_values(const Tensor& t) { return t.to_vector<double>(); }

// Random host values in [lo, hi), rounded to be exactly representable in dtype.
inline std::vector<double> random_values(int64_t n, double lo, double hi, uint32_t seed, DType dtype = DType::f32) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) {
    x = dist(gen);
    if (is_integral(dtype)) x = std::round(x);
    if (dtype == DType::boolean) x = x > (lo + hi) / 2 ? 1 : 0;
  }
  return v;
}

// A tensor of `dtype` on `device` holding `values` (converted through f64).
inline Tensor make_tensor(const std::vector<double>& values, const Shape& shape, DType dtype, Device device) {
  return Tensor::from_host(values.data(), int64_t(values.size()), shape, DType::f64, device).to(dtype);
}

inline double tolerance(DType d) {
  switch (d) {
    case DType::f16: return 2e-3;
    case DType::bf16: return 1.6e-2;
    case DType::f32: return 1e-5;
    case DType::f64: return 1e-12;
    default: return 0;
  }
}

// Rounds a value as storing it in dtype would.
inline double round_to(double v, DType d) {
  switch (d) {
    case DType::f32: return double(float(v));
    case DType::f16: return double(float(kp::half(float(v))));
    case DType::bf16: return double(float(kp::bfloat16(float(v))));
    default: return v;
  }
}

inline void expect_close(const std::vector<double>& got, const std::vector<double>& want, double rtol,
                         double atol, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got[i])) << what << " at " << i;
      continue;
    }
    if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << what << " at " << i;
      continue;
    }
    EXPECT_NEAR(got[i], want[i], atol + rtol * std::abs(want[i])) << what << " at flat index " << i;
  }
}

// Row-major multi-index iteration over a shape.
inline bool next_index(std::vector<int64_t>& idx, const Shape& shape) {
  for (size_t d = shape.size(); d-- > 0;) {
    if (++idx[d] < shape[d]) return true;
    idx[d] = 0;
  }
  return false;
}

// Row-major flat position of a multi-index.
inline int64_t flat_index(const std::vector<int64_t>& idx, const Shape& shape) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
  return f;
}

}  // namespace oar::testing
