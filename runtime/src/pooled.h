// Pooled allocation of the small objects every eager op creates (TensorImpl,
// StorageImpl and their shared_ptr control blocks). A per-thread free list of
// fixed-size blocks replaces a malloc/free pair per object on the dispatch hot
// path. A block freed on another thread simply joins that thread's list; each
// list is capped and gives its blocks back to the heap when its thread exits.
#pragma once

#include <cstddef>
#include <memory>
#include <new>

namespace oar::detail {

template <size_t kSize>
class BlockFreeList {
 public:
  static void* take() {
    State& s = state();
    Node* n = s.head;
    if (n == nullptr) return ::operator new(kSize);
    s.head = n->next;
    --s.count;
    return n;
  }
  static void give(void* p) {
    State& s = state();
    if (s.exited || s.count >= kMaxCached) return ::operator delete(p);
    if (!s.reaper_armed) arm_reaper(s);
    auto* n = static_cast<Node*>(p);
    n->next = s.head;
    s.head = n;
    ++s.count;
  }

 private:
  static constexpr size_t kMaxCached = 4096;
  struct Node {
    Node* next;
  };
  // Trivially destructible, so one TLS access with no guard on the hot path,
  // and still readable after the thread's destructors ran (statics freed late).
  struct State {
    Node* head;
    size_t count;
    bool exited;
    bool reaper_armed;
  };
  static State& state() {
    thread_local State s{};
    return s;
  }
  // Frees the cached blocks when the thread exits.
  struct Reaper {
    ~Reaper() {
      State& s = state();
      s.exited = true;
      while (s.head) {
        Node* n = s.head;
        s.head = n->next;
        ::operator delete(n);
      }
      s.count = 0;
    }
  };
  static void arm_reaper(State& s) {
    s.reaper_armed = true;
    thread_local Reaper reaper;
    (void)reaper;
  }
};

// Allocator for std::allocate_shared: single-object requests come from the
// free list of their (rounded) size; anything else goes to the heap.
template <class T>
struct PooledAllocator {
  using value_type = T;
  PooledAllocator() = default;
  template <class U>
  PooledAllocator(const PooledAllocator<U>&) noexcept {}

  static constexpr size_t kBlock = (sizeof(T) + 15) / 16 * 16;

  T* allocate(size_t n) {
    if (n != 1 || alignof(T) > alignof(std::max_align_t)) return static_cast<T*>(::operator new(n * sizeof(T)));
    return static_cast<T*>(BlockFreeList<kBlock>::take());
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n != 1 || alignof(T) > alignof(std::max_align_t)) return ::operator delete(p);
    BlockFreeList<kBlock>::give(p);
  }
  template <class U>
  bool operator==(const PooledAllocator<U>&) const noexcept { return true; }
};

template <class T, class... Args>
std::shared_ptr<T> make_pooled(Args&&... args) {
  return std::allocate_shared<T>(PooledAllocator<T>{}, std::forward<Args>(args)...);
}

}  // namespace oar::detail
