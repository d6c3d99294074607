// Two device types at once: the CPU plugin and the C99 "testdev" plugin
// (which registers only neg f32). Shows that tensors on two devices are
// refused with a typed error, that data moves between devices, and that a
// missing kernel falls back to the CPU only visibly: a counter, a warning
// once, and an error under OAR_FALLBACK=error.
#include "abi_test_util.h"
#include "oar/core.h"

using namespace oar;
using namespace oar::abi_testing;

namespace {
Tensor on(Device d, std::vector<float> v) {
  return Tensor::from_vector<float>(v, {int64_t(v.size())}, d);
}
}  // namespace

TEST(TwoDevices, BothLoaded) {
  EXPECT_GE(Runtime::get().find_device_type("cpu"), 0);
  EXPECT_GE(Runtime::get().find_device_type("testdev"), 0);
  int cpu_or_testdev = 0;  // the default directory may also hold other plugins (opencl)
  for (Device d : Runtime::get().devices())
    cpu_or_testdev += d.str() == "cpu:0" || d.str() == "testdev:0";
  EXPECT_EQ(cpu_or_testdev, 2);
}

TEST(TwoDevices, MixedDeviceInputsAreRefused) {
  Tensor a = on(Device::parse("cpu"), {1, 2});
  Tensor b = on(Device::parse("testdev:0"), {1, 2});
  try {
    call1("add", {a, b});
    FAIL() << "expected DeviceError";
  } catch (const DeviceError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("cpu:0"), std::string::npos) << m;
    EXPECT_NE(m.find("testdev:0"), std::string::npos) << m;
  }
}

TEST(TwoDevices, TransfersRoundTrip) {
  Device t = Device::parse("testdev");
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}, Device::cpu()).t();
  Tensor y = x.to(t);  // [3, 2] contiguous on testdev: [[1, 4], [2, 5], [3, 6]]
  EXPECT_EQ(y.device(), t);
  EXPECT_EQ(y.to(Device::cpu()).to_vector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  // A strided view on a device without a copy kernel still leaves it (raw span,
  // gathered on the CPU): no fallback, no recursion through the fallback path.
  int64_t before = fallback_count_total();
  Tensor back = y.t().slice(1, 0, 3, 2).to(Device::cpu());  // columns 0 and 2 of [[1, 2, 3], [4, 5, 6]]
  EXPECT_EQ(back.shape(), (Shape{2, 2}));
  EXPECT_EQ(back.to_vector<float>(), (std::vector<float>{1, 3, 4, 6}));
  EXPECT_EQ(fallback_count_total(), before);
}

TEST(TwoDevices, NativeKernelDoesNotFallBack) {
  Device t = Device::parse("testdev");
  int64_t before = fallback_count_total();
  Tensor y = call1("neg", {on(t, {1, -2})});
  EXPECT_EQ(y.device(), t);
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{-1, 2}));
  EXPECT_EQ(fallback_count_total(), before);
}

TEST(TwoDevices, ShutdownIsCalledAtExit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child re-runs this test from main
  EXPECT_EXIT(
      {
        Runtime::get();  // loads the plugins
        setenv("OAR_TESTDEV_REPORT_SHUTDOWN", "1", 1);
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "testdev: shutdown called");
}

TEST(TwoDevices, FallbackIsVisibleAndCanBeForbidden) {
  Device t = Device::parse("testdev");
  Flags::instance().set("OAR_FALLBACK", "error");
  try {
    call1("add", {on(t, {1, 2}), on(t, {10, 20})});
    FAIL() << "expected NotImplementedError";
  } catch (const NotImplementedError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("'add'"), std::string::npos) << m;
    EXPECT_NE(m.find("testdev"), std::string::npos) << m;
    EXPECT_NE(m.find("OAR_FALLBACK=error"), std::string::npos) << m;
  }
  EXPECT_EQ(fallback_count("add", "testdev"), 0);

  Flags::instance().set("OAR_FALLBACK", "warn");
  ::testing::internal::CaptureStderr();
  Tensor y = call1("add", {on(t, {1, 2}), on(t, {10, 20})});
  Tensor z = call1("add", {y, y});
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(y.device(), t);  // the result comes back to the tensor's device
  EXPECT_EQ(z.to_vector<float>(), (std::vector<float>{22, 44}));
  EXPECT_EQ(fallback_count("add", "testdev"), 2);
  // warned once per (op, device), not per call
  size_t first = err.find("'add' has no kernel");
  EXPECT_NE(first, std::string::npos) << err;
  EXPECT_EQ(err.find("'add' has no kernel", first + 1), std::string::npos) << err;
  Flags::instance().set("OAR_FALLBACK", "error");
}

int main(int argc, char** argv) {
  set_plugin_environment(plugin_dir("newer_minor"), /*default_dir=*/true);
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}

// testdev has no linear kernel: dispatch runs linear's decomposition on testdev
// (its matmul and add then fall back one by one), never linear itself on the CPU,
// and the composite's own gradient rule still applies to the result.
TEST(TwoDevices, CompositeOpRunsItsDecompositionOnTheDevice) {
  Device t = Device::parse("testdev");
  Flags::instance().set("OAR_FALLBACK", "silent");
  int64_t matmul_before = fallback_count("matmul", "testdev");
  Tensor x = Tensor::from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3}, Device::cpu());
  Tensor w = Tensor::from_vector<float>({1, 0, -1, 2, 1, 0}, {2, 3}, Device::cpu());
  Tensor b = Tensor::from_vector<float>({10, 20}, {2}, Device::cpu());
  Tensor xt = x.to(t);
  xt.set_requires_grad(true);
  Tensor y = call1("linear", {xt, w.to(t), b.to(t)});
  Flags::instance().set("OAR_FALLBACK", "error");
  EXPECT_EQ(y.device(), t);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(y.to(Device::cpu()).to_vector<float>(), (std::vector<float>{8, 24, 8, 33}));
  EXPECT_EQ(fallback_count("linear", "testdev"), 0);
  EXPECT_EQ(fallback_count("matmul", "testdev"), matmul_before + 1);
  EXPECT_EQ(y.grad_fn_name(), "linearBackward");
}
