// The device, memory, stream and event entries of every plugin whose memory
// is not host memory (OpenCL, CUDA, HIP), called on the plugin's raw table
// (the internal oar/plugin_table.h, as the core reaches it): buffers with byte offsets, overlapping device
// copies (memmove semantics), fills, pinned host memory with async copies on
// a created stream, timed events, and typed errors for bad requests. A device
// type with no device skips and prints why (e.g. no GPU on this machine).
#include <cstring>
#include <numeric>

#include "oar/plugin_table.h"
#include "oar/runtime.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

// Why a device type has no device here: its plugin was skipped (with the
// loader's reason), has zero devices (its version string carries the
// runtime's reason), or was not built.
std::string why_absent(const std::string& type) {
  const Runtime& rt = Runtime::get();
  for (const auto& p : rt.plugins())
    if (p->device_type == type) return "the " + type + " plugin has no device: " + p->version;
  for (const auto& s : rt.skipped())
    if (s.path.find("oar_plugin_" + type) != std::string::npos) return "the " + type + " plugin was skipped: " + s.reason;
  return "no " + type + " plugin is built or loaded";
}

class NonHostDevice : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    const std::string type = GetParam();
    for (Device d : Runtime::get().devices())
      if (d.str().rfind(type + ":", 0) == 0) {
        dev_ = d;
        found_ = true;
        break;
      }
    if (!found_) GTEST_SKIP() << why_absent(type);
    api_ = &plugin_table(Runtime::get().plugin_for(dev_)).entries;
  }
  void ok(oar_status_t st, const char* what) { ASSERT_EQ(st, OAR_STATUS_OK) << what << ": " << Runtime::take_last_error(); }
  Device dev_;
  bool found_ = false;
  const oar_plugin_api* api_ = nullptr;
};

TEST_P(NonHostDevice, CapabilitiesDescribeANonHostDevice) {
  const oar_device_capabilities& caps = Runtime::get().capabilities(dev_);
  EXPECT_TRUE(caps.dtype_mask & (1u << OAR_DTYPE_F32));
  EXPECT_TRUE(caps.flags & OAR_CAPABILITY_ASYNC_COPY);
  EXPECT_TRUE(caps.flags & OAR_CAPABILITY_EVENT_TIMING);
  EXPECT_FALSE(caps.flags & OAR_CAPABILITY_HOST_ACCESSIBLE_MEMORY) << "device handles are not host pointers";
  EXPECT_GE(caps.alloc_alignment, 64u);
  oar_device_properties props{};
  props.struct_size = sizeof(props);
  ok(api_->device_get_properties(dev_.index, &props), "properties");
  EXPECT_GT(std::strlen(props.name), 0u);
}

TEST_P(NonHostDevice, CopiesWithOffsetsAndOverlap) {
  void* buf = nullptr;
  ok(api_->memory_allocate(dev_.index, 1024, &buf), "allocate");
  ASSERT_NE(buf, nullptr);
  std::vector<uint8_t> src(256);
  std::iota(src.begin(), src.end(), 0);
  ok(api_->memory_copy_h2d(dev_.index, buf, 100, src.data(), 256), "h2d");
  // Overlapping move inside one buffer: [100, 356) -> [110, 366).
  ok(api_->memory_copy_d2d(dev_.index, buf, 110, buf, 100, 256), "d2d overlap");
  std::vector<uint8_t> back(256);
  ok(api_->memory_copy_d2h(dev_.index, back.data(), buf, 110, 256), "d2h");
  EXPECT_EQ(back, src);
  ok(api_->memory_set(dev_.index, nullptr, buf, 0, 0xAB, 16), "memset");
  ok(api_->memory_copy_d2h(dev_.index, back.data(), buf, 0, 16), "d2h");
  for (int i = 0; i < 16; ++i) EXPECT_EQ(back[size_t(i)], 0xAB);
  oar_memory_stats stats{};
  stats.struct_size = sizeof(stats);
  ok(api_->memory_get_stats(dev_.index, &stats), "stats");
  EXPECT_GE(stats.in_use, 1024u);
  ok(api_->memory_free(dev_.index, buf), "free");
  void* none = reinterpret_cast<void*>(1);
  ok(api_->memory_allocate(dev_.index, 0, &none), "allocate 0");
  EXPECT_EQ(none, nullptr);
}

TEST_P(NonHostDevice, AsyncCopiesOnAStreamWithTimedEvents) {
  oar_stream_t s = nullptr;
  ok(api_->stream_create(dev_.index, &s), "stream_create");
  const size_t n = 1 << 20;
  void *pinned = nullptr, *buf = nullptr, *pinned_back = nullptr;
  ok(api_->memory_allocate_host_pinned(dev_.index, n, &pinned), "pinned");
  ok(api_->memory_allocate_host_pinned(dev_.index, n, &pinned_back), "pinned");
  ok(api_->memory_allocate(dev_.index, n, &buf), "allocate");
  std::memset(pinned, 7, n);
  oar_event_t start = nullptr, end = nullptr;
  ok(api_->event_create(dev_.index, &start), "event_create");
  ok(api_->event_create(dev_.index, &end), "event_create");
  ok(api_->event_record(dev_.index, start, s), "record");
  ok(api_->memory_copy_h2d_async(dev_.index, s, buf, 0, pinned, n), "h2d async");
  ok(api_->memory_copy_d2h_async(dev_.index, s, pinned_back, buf, 0, n), "d2h async");
  ok(api_->event_record(dev_.index, end, s), "record");
  // The default stream waits for the copy stream's work without blocking the host.
  ok(api_->stream_wait_event(dev_.index, nullptr, end), "wait_event");
  ok(api_->event_synchronize(dev_.index, end), "event_synchronize");
  EXPECT_EQ(api_->event_query(dev_.index, end), OAR_STATUS_OK);
  EXPECT_EQ(api_->stream_query(dev_.index, s), OAR_STATUS_OK);
  float ms = -1;
  ok(api_->event_elapsed_ms(dev_.index, start, end, &ms), "elapsed");
  EXPECT_GE(ms, 0.0f);
  EXPECT_EQ(static_cast<uint8_t*>(pinned_back)[n - 1], 7);
  ok(api_->event_destroy(dev_.index, start), "destroy");
  ok(api_->event_destroy(dev_.index, end), "destroy");
  ok(api_->memory_free(dev_.index, buf), "free");
  ok(api_->memory_free_host_pinned(dev_.index, pinned), "free pinned");
  ok(api_->memory_free_host_pinned(dev_.index, pinned_back), "free pinned");
  ok(api_->stream_destroy(dev_.index, s), "stream_destroy");
}

TEST_P(NonHostDevice, BadRequestsAreTypedErrors) {
  int32_t count = 0;
  ok(api_->device_count(&count), "count");
  oar_device_properties props{};
  props.struct_size = sizeof(props);
  EXPECT_EQ(api_->device_get_properties(count, &props), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(Runtime::take_last_error().find("out of range"), std::string::npos);
  int bogus = 0;
  EXPECT_EQ(api_->memory_free(dev_.index, &bogus), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(Runtime::take_last_error().find("not a buffer"), std::string::npos);
  oar_event_t e = nullptr;
  ok(api_->event_create(dev_.index, &e), "event_create");
  float ms = 0;
  EXPECT_EQ(api_->event_elapsed_ms(dev_.index, e, e, &ms), OAR_STATUS_INVALID_ARGUMENT);
  Runtime::take_last_error();
  ok(api_->event_destroy(dev_.index, e), "destroy");
  void* huge = nullptr;
  EXPECT_EQ(api_->memory_allocate(dev_.index, uint64_t(1) << 50, &huge), OAR_STATUS_OUT_OF_MEMORY);
  EXPECT_NE(Runtime::take_last_error().find("cannot allocate"), std::string::npos);
}

TEST_P(NonHostDevice, TensorsRoundTripAndStayOnTheDevice) {
  std::vector<double> v = random_values(1000, -3, 3, 5);
  Tensor t = make_tensor(v, {10, 100}, DType::f32, dev_);
  EXPECT_EQ(t.device(), dev_);
  Tensor u = call1("add", {t, t});
  std::vector<double> want(v.size());
  for (size_t i = 0; i < v.size(); ++i) want[i] = 2 * double(float(v[i]));
  expect_close(host_values(u), want, 1e-6, 1e-6, "add on " + dev_.str());
  Tensor view = t.transpose(0, 1);  // strided: moved as a span and gathered
  Tensor host = view.to(Device::cpu());
  EXPECT_FLOAT_EQ(float(host_values(host)[1]), float(v[100]));
}

// Tensors owned by a static object built before the plugins were loaded are
// freed at exit after the plugins' own statics are destroyed: the process
// must still exit cleanly (crashes at exit were seen on an H200 and once
// under HIP-CPU; their cause is not known yet).
std::vector<Tensor> g_held_until_exit;  // built before main, so destroyed after every static of the plugins

TEST_P(NonHostDevice, TensorsFreedByStaticDestructorsAtExit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child re-runs this test from main
  const Device dev = dev_;
  EXPECT_EXIT(
      {
        for (int i = 0; i < 8; ++i)
          g_held_until_exit.push_back(Tensor::full({64, int64_t(i + 1)}, double(i), DType::f32, dev));
        g_held_until_exit.push_back(call1("add", {g_held_until_exit[0], g_held_until_exit[0]}));
        std::exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

INSTANTIATE_TEST_SUITE_P(Plugins, NonHostDevice, ::testing::Values("opencl", "cuda", "hip", "hipcpu"),
                         [](const ::testing::TestParamInfo<const char*>& info) { return std::string(info.param); });

}  // namespace
