// DType rules, device strings, the flags registry and cross-device checks.
#include <cstdlib>

#include "test_util.h"

using namespace oar;
using namespace oar::testing;

TEST(DTypes, SizesNamesAndPromotion) {
  EXPECT_EQ(dtype_size(DType::bf16), 2u);
  EXPECT_EQ(dtype_size(DType::boolean), 1u);
  EXPECT_EQ(dtype_from_name("float32"), DType::f32);
  EXPECT_EQ(dtype_from_name("long"), DType::i64);
  EXPECT_THROW(dtype_from_name("float8"), DTypeError);
  struct P { DType a, b, want; };
  const P table[] = {
      {DType::boolean, DType::i8, DType::i8},  {DType::u8, DType::i8, DType::i32},
      {DType::i32, DType::i64, DType::i64},    {DType::i64, DType::f16, DType::f16},
      {DType::f16, DType::bf16, DType::f32},   {DType::bf16, DType::f32, DType::f32},
      {DType::f32, DType::f64, DType::f64},    {DType::boolean, DType::boolean, DType::boolean},
      {DType::u8, DType::i32, DType::i32},     {DType::i8, DType::bf16, DType::bf16},
  };
  for (const auto& p : table) {
    EXPECT_EQ(promote_types(p.a, p.b), p.want) << p.a << "+" << p.b;
    EXPECT_EQ(promote_types(p.b, p.a), p.want) << p.b << "+" << p.a;
  }
  // promotion is commutative and idempotent over all pairs
  for (DType a : all_dtypes)
    for (DType b : all_dtypes) EXPECT_EQ(promote_types(a, b), promote_types(b, a));
}

TEST(DTypes, ScalarOperandsDoNotWidenTensors) {
  using K = ScalarKind;
  EXPECT_EQ(scalar_operand_dtype(DType::f16, K::kFloat), DType::f16);
  EXPECT_EQ(scalar_operand_dtype(DType::i32, K::kFloat), DType::f32);
  EXPECT_EQ(scalar_operand_dtype(DType::boolean, K::kFloat), DType::f32);
  EXPECT_EQ(scalar_operand_dtype(DType::u8, K::kInteger), DType::u8);
  EXPECT_EQ(scalar_operand_dtype(DType::boolean, K::kInteger), DType::i64);
  EXPECT_EQ(scalar_operand_dtype(DType::boolean, K::kBool), DType::boolean);
  EXPECT_EQ(scalar_operand_dtype(DType::bf16, K::kInteger), DType::bf16);
}

TEST(DTypes, DefaultFloatDTypeDecidesWhereIntegersBecomeFloat) {
  EXPECT_EQ(default_float_dtype(), DType::f32);
  set_default_float_dtype(DType::f64);
  EXPECT_EQ(scalar_operand_dtype(DType::i32, ScalarKind::kFloat), DType::f64);
  EXPECT_EQ(scalar_operand_dtype(DType::f16, ScalarKind::kFloat), DType::f16);  // floats keep theirs
  EXPECT_THROW(set_default_float_dtype(DType::i64), DTypeError);
  EXPECT_EQ(default_float_dtype(), DType::f64);
  set_default_float_dtype(DType::f32);
}

TEST(Devices, ParsingAndErrors) {
  Device cpu = Device::parse("cpu");
  EXPECT_EQ(cpu, Device::parse("cpu:0"));
  EXPECT_EQ(cpu.str(), "cpu:0");
  EXPECT_THROW(Device::parse("cpu:1"), DeviceError);
  EXPECT_THROW(Device::parse("cpu:-1"), DeviceError);
  EXPECT_THROW(Device::parse("cpu:x"), DeviceError);
  EXPECT_THROW(Device::parse(""), DeviceError);
  EXPECT_THROW(Device::parse(":0"), DeviceError);
  try {
    Device::parse("tpu:0");
    FAIL();
  } catch (const DeviceError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("unknown device 'tpu:0'"), std::string::npos) << m;
    EXPECT_NE(m.find("cpu"), std::string::npos) << m;  // lists what is available
  }
}

TEST(Flags, TypedRegistry) {
  Flags& f = Flags::instance();
  EXPECT_TRUE(f.is_defined("OAR_DEVICE"));
  const char* env = std::getenv("OAR_FALLBACK");  // ctest sets "error"; its default is "warn"
  EXPECT_EQ(f.get("OAR_FALLBACK"), env ? std::string(env) : std::string("warn"));
  EXPECT_THROW(f.set("OAR_FALLBACK", "sometimes"), ValueError);
  EXPECT_THROW(f.set("OAR_NUM_THREADS", "four"), ValueError);
  EXPECT_THROW(f.set("OAR_NO_SUCH_FLAG", "1"), ValueError);
  EXPECT_THROW(f.get("OAR_NO_SUCH_FLAG"), ValueError);
  f.set("OAR_CACHING_ALLOCATOR", "true");
  EXPECT_EQ(f.get("OAR_CACHING_ALLOCATOR"), "1");
  EXPECT_TRUE(f.get_bool("OAR_CACHING_ALLOCATOR"));
  bool listed = false;
  for (const auto& v : f.list()) listed |= v.definition.name == "OAR_PLUGIN_PATH" && !v.definition.help.empty();
  EXPECT_TRUE(listed);
  f.set("OAR_DEVICE", "nope");
  EXPECT_THROW(Tensor::zeros({1}), DeviceError);  // the default device is validated on use
  f.set("OAR_DEVICE", "cpu");
  EXPECT_EQ(Tensor::zeros({1}).device(), Device::cpu());
}

// Tensors on two devices: tests/abi/test_abi_two_devices.cpp (needs a second plugin).
