#include "oar/allocator.h"

#include "pooled.h"

#include "oar/error.h"
#include "oar/flags.h"
#include "oar/log.h"
#include "oar/plugin_table.h"

namespace oar {

CachingAllocator::CachingAllocator(Device device, const LoadedPlugin& plugin)
    : device_(device),
      plugin_(plugin),
      caching_(Flags::instance().get_bool("OAR_CACHING_ALLOCATOR")) {}

CachingAllocator::~CachingAllocator() { release_cached(); }

size_t CachingAllocator::round_size(size_t nbytes) {
  // Small blocks round to 512 B, large ones to 1 MiB, so a cached block fits
  // requests that differ a little (a batch of a different size, a new shape).
  constexpr size_t kSmall = 512, kLarge = size_t(1) << 20;
  if (nbytes <= kLarge) return ((nbytes + kSmall - 1) / kSmall) * kSmall;
  return ((nbytes + kLarge - 1) / kLarge) * kLarge;
}

void* CachingAllocator::plugin_allocate(size_t size) {
  void* ptr = nullptr;
  try {
    call_plugin(plugin_, &oar_plugin_api::memory_allocate, "memory_allocate", device_.index, uint64_t(size), &ptr);
  } catch (const Error& e) {
    // Adds what the allocator holds, so a reader sees whether the cache is the cause.
    throw DeviceError(str("out of memory on ", device_.str(), ": failed to allocate ", size, " bytes (allocated ",
                          stats_.allocated, ", reserved ", stats_.reserved, "): ", e.what()));
  }
  ++stats_.num_plugin_allocs;
  stats_.reserved += size;
  return ptr;
}

void CachingAllocator::plugin_free(void* ptr) {
  // Called from deleters, which must not throw: a failed free is logged.
  try {
    call_plugin(plugin_, &oar_plugin_api::memory_free, "memory_free", device_.index, ptr);
  } catch (const Error& e) {
    log_message(LogLevel::kWarning, e.what());
  }
}

CachingAllocator::Block* CachingAllocator::new_record() {
  if (spare_records_ == nullptr) {  // a chunk of records at a time: no malloc per block
    constexpr size_t kChunk = 256;
    record_chunks_.push_back(std::make_unique<Block[]>(kChunk));
    Block* chunk = record_chunks_.back().get();
    for (size_t i = 0; i < kChunk; ++i) {
      chunk[i].next = spare_records_;
      spare_records_ = &chunk[i];
    }
  }
  Block* b = spare_records_;
  spare_records_ = b->next;
  return b;
}

DataPtr CachingAllocator::allocate(size_t nbytes, oar_stream_t stream) {
  size_t size = round_size(nbytes == 0 ? 1 : nbytes);
  size_t bin = size / kBinQuantum;
  bool binned = stream == nullptr && bin < kNumBins;
  std::lock_guard<std::mutex> lock(mutex_);
  Block* b = nullptr;
  if (binned && bins_[bin] != nullptr) {
    b = bins_[bin];
    bins_[bin] = b->next;
    ++stats_.num_cache_hits;
  } else if (!binned) {
    auto it = free_.lower_bound({stream, size});
    // Reuse a cached block on the same stream unless it would waste over half of it.
    if (it != free_.end() && it->first.first == stream && it->first.second <= 2 * size) {
      b = it->second;
      spare_free_nodes_.push_back(free_.extract(it));
      ++stats_.num_cache_hits;
    }
  }
  if (b == nullptr) {
    void* ptr;
    try {
      ptr = plugin_allocate(size);
    } catch (const DeviceError&) {
      release_cached_locked();  // give the cache back and try once more before failing
      ptr = plugin_allocate(size);
    }
    b = new_record();
    *b = Block{this, ptr, size, stream, nullptr};
  }
  stats_.allocated += b->size;
  if (stats_.allocated > stats_.peak_allocated) stats_.peak_allocated = stats_.allocated;
  return DataPtr{b->ptr, b, &CachingAllocator::free_block};
}

void CachingAllocator::free_block(void* ctx, void* /*ptr*/) {
  auto* b = static_cast<Block*>(ctx);
  b->owner->give_back(b);
}

void CachingAllocator::give_back(Block* b) {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.allocated -= b->size;
  size_t bin = b->size / kBinQuantum;
  if (!caching_) {
    plugin_free(b->ptr);
    stats_.reserved -= b->size;
    b->next = spare_records_;
    spare_records_ = b;
  } else if (b->stream == nullptr && bin < kNumBins) {
    b->next = bins_[bin];
    bins_[bin] = b;
  } else if (!spare_free_nodes_.empty()) {
    auto node = std::move(spare_free_nodes_.back());
    spare_free_nodes_.pop_back();
    node.key() = {b->stream, b->size};
    node.mapped() = b;
    free_.insert(std::move(node));
  } else {
    free_.emplace(std::make_pair(b->stream, b->size), b);
  }
}

void CachingAllocator::release_cached_locked() {
  auto release = [&](Block* b) {
    plugin_free(b->ptr);
    stats_.reserved -= b->size;
    b->next = spare_records_;
    spare_records_ = b;
  };
  for (auto& [key, b] : free_) release(b);
  free_.clear();
  for (Block*& head : bins_) {
    while (head) {
      Block* b = head;
      head = b->next;
      release(b);
    }
  }
}

void CachingAllocator::release_cached() {
  std::lock_guard<std::mutex> lock(mutex_);
  release_cached_locked();
}

AllocatorStats CachingAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void CachingAllocator::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_allocated = stats_.allocated;
}

Storage allocate_storage(Device device, size_t nbytes) {
  DataPtr data = Runtime::get().allocator(device).allocate(nbytes);
  return detail::make_pooled<StorageImpl>(device, data, nbytes);
}

}  // namespace oar
