// Tests of the bitwise ops (kernel_primitives' INTEGRAL functors:
// bitwise_and/or/xor/not, bitwise_left_shift/right_shift) against plain
// integer loops on every device, in every integer dtype, with the shift
// counts at and past the width, negative values, broadcasting, and the typed
// errors for floating and bool inputs.
#include <limits>

#include "oar/dispatch.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

// PyTorch's shifts in T's width: counts < 0 or >= width give 0 (left) or the sign fill (right).
template <class T> T shift_left(T a, T b) {
  if (b < T(0) || int64_t(b) >= int64_t(8 * sizeof(T))) return T(0);
  return T(static_cast<std::make_unsigned_t<T>>(a) << b);
}
template <class T> T shift_right(T a, T b) {
  if (b < T(0) || int64_t(b) >= int64_t(8 * sizeof(T))) return a < T(0) ? T(-1) : T(0);
  return T(a >> b);
}

template <class T> void check_dtype(Device dev, DType d) {
  SCOPED_TRACE(dev.str() + " " + dtype_name(d));
  const T lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
  const int64_t width = int64_t(8 * sizeof(T));
  std::vector<T> a{lo, hi, T(0), T(1), T(-1), T(5), T(100), T(lo + 1), T(hi - 3), T(42)};
  std::vector<T> b{T(3), T(12), T(0), T(1), T(7), T(T(width - 1)), T(width), T(2), T(-1), T(T(width + 3))};
  Tensor ta = Tensor::from_vector<T>(a, {10}, dev), tb = Tensor::from_vector<T>(b, {10}, dev);
  ASSERT_EQ(ta.dtype(), d);
  auto values = [](const Tensor& t) { return t.to_vector<T>(); };  // exact: no double round trip
  std::vector<T> want_and, want_or, want_xor, want_not, want_shl, want_shr;
  for (size_t i = 0; i < a.size(); ++i) {
    want_and.push_back(T(a[i] & b[i]));
    want_or.push_back(T(a[i] | b[i]));
    want_xor.push_back(T(a[i] ^ b[i]));
    want_not.push_back(T(~a[i]));
    // Shift counts taken from b (in range or not), applied to a.
    want_shl.push_back(shift_left<T>(a[i], b[i]));
    want_shr.push_back(shift_right<T>(a[i], b[i]));
  }
  EXPECT_EQ(values(call1("bitwise_and", {ta, tb})), want_and);
  EXPECT_EQ(values(call1("bitwise_or", {ta, tb})), want_or);
  EXPECT_EQ(values(call1("bitwise_xor", {ta, tb})), want_xor);
  EXPECT_EQ(values(call1("bitwise_not", {ta})), want_not);
  EXPECT_EQ(values(call1("bitwise_left_shift", {ta, tb})), want_shl);
  EXPECT_EQ(values(call1("bitwise_right_shift", {ta, tb})), want_shr);
  EXPECT_EQ(call1("bitwise_and", {ta, tb}).dtype(), d);
  // Broadcasting a 0-d mask against the vector, and a non-contiguous input.
  Tensor mask = Tensor::from_vector<T>({T(6)}, {}, dev);
  std::vector<T> masked;
  for (T v : a) masked.push_back(T(v & T(6)));
  EXPECT_EQ(values(call1("bitwise_and", {ta, mask})), masked);
  std::vector<T> every_other_not;
  for (size_t i = 0; i < a.size(); i += 2) every_other_not.push_back(T(~a[i]));
  EXPECT_EQ(values(call1("bitwise_not", {ta.slice(0, 0, 10, 2)})), every_other_not);
}

}  // namespace

TEST(Bitwise, MatchesIntegerLoopsInEveryDTypeOnEveryDevice) {
  for (Device dev : devices()) {
    check_dtype<int8_t>(dev, DType::i8);
    check_dtype<uint8_t>(dev, DType::u8);
    check_dtype<int32_t>(dev, DType::i32);
    check_dtype<int64_t>(dev, DType::i64);
  }
}

TEST(Bitwise, MixedIntegerDTypesPromote) {
  for (Device dev : devices()) {
    Tensor a = make_tensor({255, 7}, {2}, DType::u8, dev), b = make_tensor({256 + 1, -1}, {2}, DType::i32, dev);
    Tensor y = call1("bitwise_and", {a, b});
    EXPECT_EQ(y.dtype(), DType::i32);
    EXPECT_EQ(host_values(y), (std::vector<double>{1, 7}));
  }
}

TEST(Bitwise, FloatingAndBoolInputsAreTypedErrors) {
  for (Device dev : devices()) {
    Tensor f = make_tensor({1, 2}, {2}, DType::f32, dev), t = make_tensor({1, 0}, {2}, DType::boolean, dev);
    for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "bitwise_right_shift"}) {
      EXPECT_THROW(call(op, {f, f}), DTypeError) << op;
      EXPECT_THROW(call(op, {t, t}), DTypeError) << op;
    }
    EXPECT_THROW(call("bitwise_not", {f}), DTypeError);
    EXPECT_THROW(call("bitwise_not", {t}), DTypeError);
  }
}
