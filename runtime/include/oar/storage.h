// Storage: a refcounted block of device memory shared by every tensor view
// into it. Who frees it is recorded with the pointer (the caching allocator,
// or a DLPack producer's deleter), so storages from any source mix freely.
#pragma once

#include <cstddef>
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

 private:
  Device device_;
  DataPtr data_;
  size_t nbytes_;
};

using Storage = std::shared_ptr<StorageImpl>;

// Allocates through the device's caching allocator.
Storage allocate_storage(Device device, size_t nbytes);

}  // namespace oar
