// CachingAllocator: one per device, on top of the plugin's raw
// memory_allocate/memory_free. Freed blocks are kept per stream and reused for
// requests of similar size, so steady-state training does no plugin calls.
// Stats report what tensors hold (allocated), what the plugin lent (reserved),
// and the peak of allocated.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "oar/abi/oar_plugin.h"
#include "oar/device.h"
#include "oar/storage.h"

namespace oar {

struct LoadedPlugin;  // oar/runtime.h

struct AllocatorStats {
  uint64_t allocated = 0;
  uint64_t reserved = 0;
  uint64_t peak_allocated = 0;
  uint64_t num_plugin_allocs = 0;
  uint64_t num_cache_hits = 0;
};

class CachingAllocator {
 public:
  CachingAllocator(Device device, const LoadedPlugin& plugin);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  DataPtr allocate(size_t nbytes, oar_stream_t stream = nullptr);
  void release_cached();  // return every free block to the plugin
  AllocatorStats stats() const;
  void reset_peak();

  static size_t round_size(size_t nbytes);

 private:
  // One record per block the plugin lent; an in-use block's record rides in its
  // DataPtr's context, so freeing needs no lookup. Records are recycled.
  struct Block {
    CachingAllocator* owner;
    void* ptr;
    size_t size;
    oar_stream_t stream;
    Block* next;  // in a small bin or the spare-record list
  };
  // Small blocks on the default stream are cached in exact-size bins (the hot
  // path of eager ops); others in a (stream, size) map that reuses a block up to
  // twice the request.
  static constexpr size_t kBinQuantum = 512, kNumBins = 128;  // sizes up to 64 KiB

  static void free_block(void* ctx, void* ptr);
  void give_back(Block* b);
  void* plugin_allocate(size_t size);
  void plugin_free(void* ptr);
  Block* new_record();
  void release_cached_locked();

  Device device_;
  const LoadedPlugin& plugin_;  // owned by the Runtime, which outlives every allocator
  bool caching_;
  mutable std::mutex mutex_;
  Block* bins_[kNumBins] = {};
  using FreeMap = std::multimap<std::pair<oar_stream_t, size_t>, Block*>;  // (stream, size) -> block
  FreeMap free_;
  std::vector<FreeMap::node_type> spare_free_nodes_;
  Block* spare_records_ = nullptr;
  std::vector<std::unique_ptr<Block[]>> record_chunks_;
  AllocatorStats stats_;
};

}  // namespace oar
