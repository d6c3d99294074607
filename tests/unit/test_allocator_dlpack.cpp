// The caching allocator's reuse and stats, and zero-copy DLPack exchange in
// both directions with ownership handed over correctly.
#include "oar/dlpack.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

TEST(CachingAllocator, ReusesBlocksAndTracksStats) {
  for (Device dev : devices()) {
    CachingAllocator& alloc = Runtime::get().allocator(dev);
    alloc.release_cached();
    AllocatorStats s0 = alloc.stats();
    void* first;
    {
      Tensor t = Tensor::empty({1000}, DType::f32, dev);
      first = t.storage_data();
      AllocatorStats s1 = alloc.stats();
      EXPECT_EQ(s1.allocated - s0.allocated, CachingAllocator::round_size(4000));
      EXPECT_GE(s1.reserved, s1.allocated);
      EXPECT_GE(s1.peak_allocated, s1.allocated);
    }
    AllocatorStats s2 = alloc.stats();
    EXPECT_EQ(s2.allocated, s0.allocated);   // back in the cache
    EXPECT_EQ(s2.reserved, s0.reserved + CachingAllocator::round_size(4000));  // still reserved
    uint64_t hits = s2.num_cache_hits;
    Tensor again = Tensor::empty({1000}, DType::f32, dev);
    EXPECT_EQ(again.storage_data(), first);  // same block reused
    EXPECT_EQ(alloc.stats().num_cache_hits, hits + 1);
    alloc.release_cached();
    EXPECT_EQ(alloc.stats().reserved, alloc.stats().allocated);
    EXPECT_EQ(CachingAllocator::round_size(1), 512u);
    EXPECT_EQ(CachingAllocator::round_size(3u << 20), 3u << 20);
  }
}

TEST(CachingAllocator, HugeRequestGivesTypedError) {
  for (Device dev : devices()) EXPECT_THROW(Tensor::empty({int64_t(1) << 46}, DType::f64, dev), DeviceError);
}

TEST(DLPack, ExportIsZeroCopyAndKeepsStorageAlive) {
  Device cpu = Device::cpu();
  Tensor x = make_tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::f32, cpu);
  DLManagedTensor* m = to_dlpack(x.t());
  EXPECT_EQ(m->dl_tensor.ndim, 2);
  EXPECT_EQ(m->dl_tensor.shape[0], 3);
  EXPECT_EQ(m->dl_tensor.strides[0], 1);
  EXPECT_EQ(m->dl_tensor.strides[1], 3);
  EXPECT_EQ(m->dl_tensor.dtype.code, kDLFloat);
  EXPECT_EQ(m->dl_tensor.device.device_type, kDLCPU);
  EXPECT_EQ(m->dl_tensor.data, x.data_ptr());
  x = Tensor();  // the export keeps the storage alive
  float* d = static_cast<float*>(m->dl_tensor.data);
  EXPECT_EQ(d[4], 5);
  // round trip back into oar shares the memory
  Tensor back = from_dlpack(m);
  EXPECT_EQ(back.shape(), (Shape{3, 2}));
  EXPECT_EQ(host_values(back), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(back.data<float>(), d);
}

namespace {
struct Producer {
  std::vector<int64_t> data{10, 20, 30, 40};
  int64_t shape[1] = {4};
  int64_t strides[1] = {1};
  bool deleted = false;
};
DLManagedTensor* produce(Producer& p, DLDataType dt) {
  auto* m = new DLManagedTensor{};
  m->dl_tensor.data = p.data.data();
  m->dl_tensor.device = {kDLCPU, 0};
  m->dl_tensor.ndim = 1;
  m->dl_tensor.dtype = dt;
  m->dl_tensor.shape = p.shape;
  m->dl_tensor.strides = p.strides;
  m->manager_ctx = &p;
  m->deleter = [](DLManagedTensor* self) {
    static_cast<Producer*>(self->manager_ctx)->deleted = true;
    delete self;
  };
  return m;
}
}  // namespace

TEST(DLPack, ImportCallsProducerDeleterOnce) {
  Producer p;
  {
    Tensor t = from_dlpack(produce(p, {kDLInt, 64, 1}));
    EXPECT_EQ(t.dtype(), DType::i64);
    p.data[2] = 33;  // zero copy: the tensor sees producer writes
    EXPECT_EQ(host_values(t), (std::vector<double>{10, 20, 33, 40}));
    Tensor view = t.slice(0, 1, 3);
    t = Tensor();
    EXPECT_FALSE(p.deleted);  // a view still holds it
    EXPECT_EQ(host_values(view), (std::vector<double>{20, 33}));
  }
  EXPECT_TRUE(p.deleted);
  Producer bad;
  EXPECT_THROW(from_dlpack(produce(bad, {kDLFloat, 8, 1})), DTypeError);
  EXPECT_TRUE(bad.deleted);  // ownership was taken even on failure
  Producer lanes;
  EXPECT_THROW(from_dlpack(produce(lanes, {kDLFloat, 32, 4})), DTypeError);
  EXPECT_THROW(from_dlpack(nullptr), ValueError);
}

// Device codes come from each plugin's device description (ABI 1.2), through
// one core function that to_dlpack, from_dlpack and Python all use.
TEST(DLPack, DeviceCodesComeFromThePlugin) {
  for (const Device& d : devices()) {
    DLDeviceType want = d.type_name() == "cpu" ? kDLCPU : d.type_name() == "opencl" ? kDLOpenCL : kDLExtDev;
    if (want == kDLExtDev) continue;  // a device this test does not know
    EXPECT_EQ(dlpack_device_type(d), want) << d.str();
    Tensor x = make_tensor({1, 2, 3}, {3}, DType::f32, d);
    DLManagedTensor* m = to_dlpack(x);
    EXPECT_EQ(m->dl_tensor.device.device_type, want) << d.str();
    EXPECT_EQ(m->dl_tensor.device.device_id, d.index);
    Tensor back = from_dlpack(m);  // the code maps back to the same device
    EXPECT_EQ(back.device(), d);
    EXPECT_EQ(host_values(back), (std::vector<double>{1, 2, 3}));
    EXPECT_EQ(device_from_dlpack(DLDevice{want, d.index}), d);
  }
}

// A host-memory export is read at once, without a stream: the kernel that
// wrote the tensor must have finished (hipcpu runs kernels asynchronously).
TEST(DLPack, HostExportWaitsForTheKernelThatWroteIt) {
  for (const Device& d : devices()) {
    if (dlpack_device_type(d) != kDLCPU) continue;
    for (int round = 0; round < 20; ++round) {
      Tensor x = call1("add", {Tensor::full({4096}, 1.0, DType::f32, d), Tensor::full({4096}, 2.0, DType::f32, d)});
      DLManagedTensor* m = to_dlpack(x);
      const float* p = static_cast<const float*>(m->dl_tensor.data);
      EXPECT_EQ(p[0], 3.0f) << d.str();
      EXPECT_EQ(p[4095], 3.0f) << d.str();
      m->deleter(m);
    }
  }
}

TEST(DLPack, HostPinnedCodesMapToTheCpuAndUnknownOnesAreRefused) {
  Device cpu = device_from_dlpack(DLDevice{kDLCPU, 0});
  EXPECT_EQ(cpu.type_name(), "cpu");
  EXPECT_EQ(device_from_dlpack(DLDevice{kDLCUDAHost, 0}), cpu);
  EXPECT_EQ(device_from_dlpack(DLDevice{kDLROCMHost, 0}), cpu);
  EXPECT_THROW(device_from_dlpack(DLDevice{kDLVulkan, 0}), DeviceError);
  EXPECT_THROW(device_from_dlpack(DLDevice{kDLCPU, 7}), DeviceError);  // no cpu:7
  Producer p;
  DLManagedTensor* m = produce(p, {kDLInt, 64, 1});
  m->dl_tensor.device = {kDLMetal, 0};
  EXPECT_THROW(from_dlpack(m), DeviceError);
  EXPECT_TRUE(p.deleted);
}
