// The process-wide memory of which algorithm a vendor library picked for one
// problem (cuDNN convolutions): a search (heuristics, or timing every
// candidate) costs from microseconds to seconds, so it runs once per distinct
// problem and later calls reuse its answer. The key holds everything that
// can change the answer (op kind, shapes, strides, dtype, conv parameters,
// device, math flags); two threads asking for one new key at once run one
// search, the second waits for it; searches of different keys run in
// parallel. Counters (searches run, hits) can be read at any time. Host-only
// C++ with no CUDA include, so a CPU unit test can exercise it.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace oar_gpu {

// The identity of a problem: integers compared exactly, plus a readable
// form for logs (not compared). Each add() also records how many values it
// added, so [1, 2] + [3] and [1] + [2, 3] differ.
class AlgoKey {
 public:
  AlgoKey& add(const char* name, int64_t value) {
    values_.push_back(value);
    append_name(name);
    text_ += std::to_string(value);
    return *this;
  }
  AlgoKey& add(const char* name, const int64_t* v, int64_t n) {
    values_.push_back(n);
    values_.insert(values_.end(), v, v + n);
    append_name(name);
    text_ += '[';
    for (int64_t i = 0; i < n; ++i) {
      if (i) text_ += ',';
      text_ += std::to_string(v[i]);
    }
    text_ += ']';
    return *this;
  }
  AlgoKey& add(const char* name, std::initializer_list<int64_t> v) {
    return add(name, v.begin(), int64_t(v.size()));
  }
  AlgoKey& add(const char* name, const std::vector<int64_t>& v) { return add(name, v.data(), int64_t(v.size())); }
  // A word for the log only (the caller also adds the value that it names).
  AlgoKey& note(const std::string& word) {
    if (!text_.empty()) text_ += ' ';
    text_ += word;
    return *this;
  }

  const std::vector<int64_t>& values() const { return values_; }
  const std::string& text() const { return text_; }
  bool operator==(const AlgoKey& o) const { return values_ == o.values_; }

 private:
  void append_name(const char* name) {
    if (!text_.empty()) text_ += ' ';
    text_ += name;
    text_ += '=';
  }
  std::vector<int64_t> values_;
  std::string text_;
};

struct AlgoKeyHash {
  size_t operator()(const AlgoKey& k) const {
    uint64_t h = 1469598103934665603ULL;  // FNV-1a over the values
    for (int64_t x : k.values()) h = (h ^ uint64_t(x)) * 1099511628211ULL;
    return size_t(h);
  }
};

// What a search picked. `algo` and `math_type` are the library's enum values.
struct AlgoChoice {
  int64_t algo = -1;
  int64_t math_type = 0;
  uint64_t workspace_bytes = 0;
  float time_ms = -1.0f;  // measured time; negative when chosen by heuristics
};

class AlgoCache {
 public:
  struct Stats {
    uint64_t searches = 0;  // times a search callback was invoked
    uint64_t hits = 0;      // lookups answered from the cache (including after waiting for a search)
    uint64_t entries = 0;   // distinct keys with a stored answer
  };

  // The stored choice for `key`, or search()'s, stored for later calls. A
  // search that throws stores nothing: its exception reaches its caller, and
  // the next caller for that key (one waiting included) searches again.
  AlgoChoice get(const AlgoKey& key, const std::function<AlgoChoice()>& search) {
    std::shared_ptr<Entry> entry;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::shared_ptr<Entry>& slot = map_[key];
      if (!slot) slot = std::make_shared<Entry>();
      entry = slot;
    }
    // Held across the search: a second caller for this key waits here.
    std::lock_guard<std::mutex> lock(entry->mutex);
    if (entry->done.load(std::memory_order_acquire)) {
      hits_.fetch_add(1, std::memory_order_relaxed);
      return entry->choice;
    }
    searches_.fetch_add(1, std::memory_order_relaxed);
    AlgoChoice choice = search();
    entry->choice = choice;
    entry->done.store(true, std::memory_order_release);
    return choice;
  }

  // The stored choice without searching; false when there is none.
  bool peek(const AlgoKey& key, AlgoChoice* out) const {
    std::shared_ptr<Entry> entry;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = map_.find(key);
      if (it == map_.end()) return false;
      entry = it->second;
    }
    std::lock_guard<std::mutex> lock(entry->mutex);
    if (!entry->done.load(std::memory_order_acquire)) return false;
    *out = entry->choice;
    return true;
  }

  Stats stats() const {
    Stats s;
    s.searches = searches_.load(std::memory_order_relaxed);
    s.hits = hits_.load(std::memory_order_relaxed);
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& kv : map_) s.entries += kv.second->done.load(std::memory_order_acquire) ? 1 : 0;
    return s;
  }

  // Forgets every choice (a search in flight finishes into a dropped entry)
  // and zeroes the counters.
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    map_.clear();
    searches_ = 0;
    hits_ = 0;
  }

 private:
  struct Entry {
    std::mutex mutex;
    std::atomic<bool> done{false};  // also read by stats() without the entry's lock
    AlgoChoice choice;
  };
  mutable std::mutex mutex_;
  std::unordered_map<AlgoKey, std::shared_ptr<Entry>, AlgoKeyHash> map_;
  std::atomic<uint64_t> searches_{0}, hits_{0};
};

// The CUDA plugin's cache of cuDNN convolution algorithms (ops/conv.cu).
AlgoCache& conv_algo_cache();

}  // namespace oar_gpu
