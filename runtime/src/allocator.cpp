#include "oar/allocator.h"

#include "oar/error.h"
#include "oar/flags.h"
#include "oar/runtime.h"

namespace oar {

CachingAllocator::CachingAllocator(Device device, const oar_plugin_api* api,
                                   const std::string& plugin_name)
    : device_(device),
      api_(api),
      plugin_name_(plugin_name),
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
  oar_status_t st = api_->memory_allocate(device_.index, size, &ptr);
  if (st != OAR_STATUS_OK) {
    std::string msg = Runtime::take_last_error();
    throw DeviceError(str("out of memory on ", device_.str(), ": failed to allocate ", size,
                          " bytes (allocated ", stats_.allocated, ", reserved ",
                          stats_.reserved, "): ", msg));
  }
  ++stats_.num_plugin_allocs;
  stats_.reserved += size;
  return ptr;
}

DataPtr CachingAllocator::allocate(size_t nbytes, oar_stream_t stream) {
  size_t size = round_size(nbytes == 0 ? 1 : nbytes);
  std::lock_guard<std::mutex> lock(mutex_);
  void* ptr = nullptr;
  auto it = free_.lower_bound({stream, size});
  // Reuse a cached block on the same stream unless it would waste over half of it.
  if (it != free_.end() && it->first.first == stream && it->first.second <= 2 * size) {
    ptr = it->second;
    size = it->first.second;
    spare_free_nodes_.push_back(free_.extract(it));
    ++stats_.num_cache_hits;
  } else {
    try {
      ptr = plugin_allocate(size);
    } catch (const DeviceError&) {
      // Give the cache back and try once more before failing.
      for (auto& [key, p] : free_) {
        api_->memory_free(device_.index, p);
        stats_.reserved -= key.second;
      }
      free_.clear();
      ptr = plugin_allocate(size);
    }
  }
  // Reuse map nodes from earlier frees so steady-state allocation does no malloc.
  if (!spare_in_use_nodes_.empty()) {
    auto node = std::move(spare_in_use_nodes_.back());
    spare_in_use_nodes_.pop_back();
    node.key() = ptr;
    node.mapped() = Block{size, stream};
    in_use_.insert(std::move(node));
  } else {
    in_use_[ptr] = Block{size, stream};
  }
  stats_.allocated += size;
  if (stats_.allocated > stats_.peak_allocated) stats_.peak_allocated = stats_.allocated;
  return DataPtr{ptr, this, &CachingAllocator::free_block};
}

void CachingAllocator::free_block(void* ctx, void* ptr) {
  static_cast<CachingAllocator*>(ctx)->give_back(ptr);
}

void CachingAllocator::give_back(void* ptr) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = in_use_.find(ptr);
  if (it == in_use_.end()) return;
  Block b = it->second;
  spare_in_use_nodes_.push_back(in_use_.extract(it));
  stats_.allocated -= b.size;
  if (caching_) {
    if (!spare_free_nodes_.empty()) {
      auto node = std::move(spare_free_nodes_.back());
      spare_free_nodes_.pop_back();
      node.key() = {b.stream, b.size};
      node.mapped() = ptr;
      free_.insert(std::move(node));
    } else {
      free_.emplace(std::make_pair(b.stream, b.size), ptr);
    }
  } else {
    api_->memory_free(device_.index, ptr);
    stats_.reserved -= b.size;
  }
}

void CachingAllocator::release_cached() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [key, p] : free_) {
    api_->memory_free(device_.index, p);
    stats_.reserved -= key.second;
  }
  free_.clear();
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
  return std::make_shared<StorageImpl>(device, data, nbytes);
}

}  // namespace oar
