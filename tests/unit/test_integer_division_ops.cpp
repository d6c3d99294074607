// Tests of the integer division ops (kernel_primitives' INTEGRAL functors
// int_floor_divide, int_trunc_divide, int_remainder, int_fmod) against plain
// integer loops on every device, in every integer dtype: values at the type's
// limits (where a float64 round trip would round), MIN / -1 (which traps in a
// bare x86 division), a zero divisor (0, not a crash), broadcasting, and the
// typed errors for floating and bool inputs.
#include <limits>

#include "oar/dispatch.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

// The references, written with the sign rules spelled out instead of the kernels' expressions.
template <class T> T floor_div(T a, T b) {
  if (b == T(0)) return T(0);
  if (std::is_signed_v<T> && b == T(-1)) return T(T(0) - a);
  T q = T(a / b);
  const bool inexact = T(q * b) != a;
  return (inexact && ((a < T(0)) != (b < T(0)))) ? T(q - 1) : q;
}
template <class T> T trunc_div(T a, T b) {
  if (b == T(0)) return T(0);
  if (std::is_signed_v<T> && b == T(-1)) return T(T(0) - a);
  return T(a / b);
}
template <class T> T python_mod(T a, T b) {
  if (b == T(0) || (std::is_signed_v<T> && b == T(-1))) return T(0);
  return T(a - T(floor_div(a, b) * b));
}
template <class T> T c_mod(T a, T b) {
  if (b == T(0) || (std::is_signed_v<T> && b == T(-1))) return T(0);
  return T(a - T(trunc_div(a, b) * b));
}

template <class T> void check_dtype(Device dev, DType d) {
  SCOPED_TRACE(dev.str() + " " + dtype_name(d));
  const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  const std::vector<T> values{lo, T(lo + 1), hi, T(hi - 2), T(0), T(1), T(7), T(-7), T(-1), T(100), T(-100), T(3)};
  std::vector<T> a, b;  // every pair of values
  for (T x : values)
    for (T y : values) a.push_back(x), b.push_back(y);
  const int64_t n = int64_t(a.size());
  Tensor ta = Tensor::from_vector<T>(a, {n}, dev), tb = Tensor::from_vector<T>(b, {n}, dev);
  ASSERT_EQ(ta.dtype(), d);
  std::vector<T> want_floor, want_trunc, want_mod, want_fmod;
  for (int64_t i = 0; i < n; ++i) {
    want_floor.push_back(floor_div(a[i], b[i]));
    want_trunc.push_back(trunc_div(a[i], b[i]));
    want_mod.push_back(python_mod(a[i], b[i]));
    want_fmod.push_back(c_mod(a[i], b[i]));
  }
  auto values_of = [](const Tensor& t) { return t.to_vector<T>(); };  // exact: no double round trip
  EXPECT_EQ(values_of(call1("int_floor_divide", {ta, tb})), want_floor);
  EXPECT_EQ(values_of(call1("int_trunc_divide", {ta, tb})), want_trunc);
  EXPECT_EQ(values_of(call1("int_remainder", {ta, tb})), want_mod);
  EXPECT_EQ(values_of(call1("int_fmod", {ta, tb})), want_fmod);
  EXPECT_EQ(call1("int_remainder", {ta, tb}).dtype(), d);
  // A 0-d divisor broadcast against the vector, and a strided dividend.
  Tensor three = Tensor::from_vector<T>({T(3)}, {}, dev);
  std::vector<T> floor3, every_other_mod3;
  for (T v : a) floor3.push_back(floor_div(v, T(3)));
  for (size_t i = 0; i < a.size(); i += 2) every_other_mod3.push_back(python_mod(a[i], T(3)));
  EXPECT_EQ(values_of(call1("int_floor_divide", {ta, three})), floor3);
  EXPECT_EQ(values_of(call1("int_remainder", {ta.slice(0, 0, n, 2), three})), every_other_mod3);
}

}  // namespace

TEST(IntegerDivision, MatchesIntegerLoopsInEveryDTypeOnEveryDevice) {
  for (Device dev : devices()) {
    check_dtype<int8_t>(dev, DType::i8);
    check_dtype<uint8_t>(dev, DType::u8);
    check_dtype<int32_t>(dev, DType::i32);
    check_dtype<int64_t>(dev, DType::i64);
  }
}

TEST(IntegerDivision, ExactPastTwoToThe53) {
  // (2^62 + 3) and friends: a float64 quotient would round these.
  const int64_t big = (int64_t(1) << 62) + 3;
  for (Device dev : devices()) {
    SCOPED_TRACE(dev.str());
    Tensor a = Tensor::from_vector<int64_t>({big, -big, big}, {3}, dev);
    Tensor b = Tensor::from_vector<int64_t>({2, 2, 1000000007}, {3}, dev);
    EXPECT_EQ(call1("int_remainder", {a, b}).to_vector<int64_t>(),
              (std::vector<int64_t>{1, 1, big % 1000000007}));
    EXPECT_EQ(call1("int_floor_divide", {a, b}).to_vector<int64_t>(),
              (std::vector<int64_t>{big / 2, -(big / 2) - 1, big / 1000000007}));
  }
}

TEST(IntegerDivision, MixedIntegerDTypesPromote) {
  for (Device dev : devices()) {
    Tensor a = make_tensor({-7, 200}, {2}, DType::i32, dev);
    Tensor b = make_tensor({2, 7}, {2}, DType::u8, dev);
    Tensor y = call1("int_floor_divide", {a, b});
    EXPECT_EQ(y.dtype(), DType::i32);
    EXPECT_EQ(host_values(y), (std::vector<double>{-4, 28}));
  }
}

TEST(IntegerDivision, FloatingAndBoolInputsAreTypedErrors) {
  for (Device dev : devices()) {
    Tensor f = make_tensor({1, 2}, {2}, DType::f32, dev);
    Tensor t = make_tensor({1, 0}, {2}, DType::boolean, dev);
    EXPECT_THROW(call1("int_floor_divide", {f, f}), DTypeError);
    EXPECT_THROW(call1("int_remainder", {t, t}), DTypeError);
  }
}
