// Device discovery, typed runtime errors and allocation bookkeeping for the
// CUDA plugin (and, compiled by hipcc, the HIP plugin).
#include <memory>
#include <vector>

#include "gpu_device.h"

namespace oar_gpu {

namespace {
const oar_host_api* g_host = nullptr;

struct Discovery {
  int32_t count = 0;
  std::string reason;
};

const Discovery& discovery() {
  static const Discovery d = [] {
    Discovery r;
    int n = 0;
    gpu::Error e = OAR_GPU(GetDeviceCount)(&n);
    if (e != OAR_GPU(Success)) {
      // No driver, no device, or a driver older than the runtime: zero devices, with the reason kept.
      r.reason = std::string(OAR_GPU(GetErrorName)(e)) + ": " + OAR_GPU(GetErrorString)(e);
      (void)OAR_GPU(GetLastError)();  // clear the sticky-free error so later calls start clean
      return r;
    }
    r.count = n;
    if (n == 0) r.reason = "the " OAR_GPU_BACKEND_NAME " runtime reports no device";
    return r;
  }();
  return d;
}
}  // namespace

const oar_host_api* host() { return g_host; }
void set_host(const oar_host_api* h) { g_host = h; }

void fail_gpu(gpu::Error error, const std::string& what) {
  (void)OAR_GPU(GetLastError)();  // clear non-sticky errors so the next call is not blamed
  std::string msg = what + " failed: " + OAR_GPU(GetErrorName)(error) + " (" + OAR_GPU(GetErrorString)(error) + ")";
  oar::sdk::fail(error == OAR_GPU(ErrorMemoryAllocation) ? OAR_STATUS_OUT_OF_MEMORY : OAR_STATUS_DEVICE_ERROR, msg);
}

int32_t device_count() { return discovery().count; }
const std::string& no_device_reason() { return discovery().reason; }

void require_device(int32_t device) {
  if (device < 0 || device >= device_count())
    oar::sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "device index " + std::to_string(device) + " out of range (" +
                                                    std::to_string(device_count()) + " " OAR_GPU_BACKEND_NAME
                                                    " device(s))");
}

DeviceGuard::DeviceGuard(int32_t device) {
  require_device(device);
  check(OAR_GPU(GetDevice)(&previous_), "GetDevice");
  if (previous_ != device) {
    check(OAR_GPU(SetDevice)(device), "SetDevice");
    changed_ = true;
  }
}

DeviceGuard::~DeviceGuard() {
  if (changed_) (void)OAR_GPU(SetDevice)(previous_);
}

void AllocationTable::add(void* ptr, uint64_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  sizes_[ptr] = size;
  in_use_ += size;
  if (in_use_ > peak_) peak_ = in_use_;
}

uint64_t AllocationTable::remove(void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = sizes_.find(ptr);
  if (it == sizes_.end())
    oar::sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "memory_free: the pointer is not a buffer this device allocated");
  uint64_t size = it->second;
  in_use_ -= size;
  sizes_.erase(it);
  return size;
}

uint64_t AllocationTable::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_use_;
}

uint64_t AllocationTable::peak() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return peak_;
}

AllocationTable& allocations(int32_t device) {
  // Never destroyed (as the host's Runtime): memory given back by a static
  // destructor at exit, after this function's own static would be gone, must
  // still find its table.
  static const auto* tables = [] {
    auto* t = new std::vector<std::unique_ptr<AllocationTable>>();
    for (int32_t i = 0; i < device_count(); ++i) t->push_back(std::make_unique<AllocationTable>());
    return t;
  }();
  require_device(device);
  return *(*tables)[size_t(device)];
}

}  // namespace oar_gpu
