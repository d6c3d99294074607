// CachingAllocator: one per device, on top of the plugin's raw
// memory_allocate/memory_free. Freed blocks are kept per stream and reused for
// requests of similar size, so steady-state training does no plugin calls.
// Stats report what tensors hold (allocated), what the plugin lent (reserved),
// and the peak of allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "oar/abi/oar_plugin.h"
#include "oar/device.h"
#include "oar/storage.h"

namespace oar {

struct AllocatorStats {
  uint64_t allocated = 0;
  uint64_t reserved = 0;
  uint64_t peak_allocated = 0;
  uint64_t num_plugin_allocs = 0;
  uint64_t num_cache_hits = 0;
};

class CachingAllocator {
 public:
  CachingAllocator(Device device, const oar_plugin_api* api, const std::string& plugin_name);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  DataPtr allocate(size_t nbytes, oar_stream_t stream = nullptr);
  void release_cached();  // return every free block to the plugin
  AllocatorStats stats() const;
  void reset_peak();

  static size_t round_size(size_t nbytes);

 private:
  static void free_block(void* ctx, void* ptr);
  void give_back(void* ptr);
  void* plugin_allocate(size_t size);

  struct Block {
    size_t size;
    oar_stream_t stream;
  };
  Device device_;
  const oar_plugin_api* api_;
  std::string plugin_name_;
  bool caching_;
  mutable std::mutex mutex_;
  std::unordered_map<void*, Block> in_use_;
  using FreeMap = std::multimap<std::pair<oar_stream_t, size_t>, void*>;  // (stream, size) -> block
  FreeMap free_;
  std::vector<std::unordered_map<void*, Block>::node_type> spare_in_use_nodes_;
  std::vector<FreeMap::node_type> spare_free_nodes_;
  AllocatorStats stats_;
};

}  // namespace oar
