// Storage: a refcounted block of device memory shared by every tensor view
// into it. Who frees it is recorded with the pointer (the caching allocator,
// or a DLPack producer's deleter), so storages from any source mix freely.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "oar/device.h"

namespace oar {

struct DataPtr {
  void* ptr = nullptr;  // device handle/pointer as the plugin returned it
  void* context = nullptr;
  void (*deleter)(void* context, void* ptr) = nullptr;
};

class StorageImpl {
 public:
  StorageImpl(Device device, DataPtr data, size_t nbytes)
      : device_(device), data_(data), nbytes_(nbytes) {}
  ~StorageImpl() {
    if (data_.deleter) data_.deleter(data_.context, data_.ptr);
  }
  StorageImpl(const StorageImpl&) = delete;
  StorageImpl& operator=(const StorageImpl&) = delete;

  void* data() const { return data_.ptr; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }

  // Version counter, shared by every view: bumped by each in-place write, so a
  // gradient rule can tell that a tensor it saved was overwritten since.
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }
  // How many references to this storage the runtime holds for itself
  // (tensors saved by autograd nodes, a tracer keeping what it saw alive);
  // the rest (use_count minus these) are the ones a user can observe.
  void add_internal_ref(int delta) { internal_refs_.fetch_add(delta, std::memory_order_relaxed); }
  int internal_refs() const { return internal_refs_.load(std::memory_order_relaxed); }
  // Memory another library also holds (DLPack import): its address is shared
  // beyond oar's reference counts, so it is never swapped for other memory.
  void mark_external() { external_ = true; }
  bool external() const { return external_; }

 private:
  Device device_;
  DataPtr data_;
  size_t nbytes_;
  std::atomic<uint32_t> version_{0};
  std::atomic<int> internal_refs_{0};
  bool external_ = false;
};

using Storage = std::shared_ptr<StorageImpl>;

// Allocates through the device's caching allocator.
Storage allocate_storage(Device device, size_t nbytes);

}  // namespace oar
