// abi/...: the plugin's runtime entries called directly, as the core calls
// them (oar/plugin_table.h), against the semantics oar_plugin.h writes down:
// versions, capability answers that match behaviour, memory (sizes 0 and
// huge, alignment, copies at odd sizes and offsets in every direction, fills,
// what happens after an allocation fails), streams and events (ordering,
// queries, elapsed time, waits across streams) and error messages.
#include <cmath>
#include <cstring>
#include <numeric>

#include "conformance_case.h"
#include "oar/core.h"
#include "oar/plugin_table.h"

namespace oar::conformance {

namespace {

struct Abi {
  const LoadedPlugin& plugin;
  const oar_plugin_api& api;
  int32_t dev;
  oar_device_capabilities caps;

  explicit Abi(const Target& t)
      : plugin(Runtime::get().plugin_for(t.device)),
        api(plugin_table(plugin).entries),
        dev(t.device.index),
        caps(Runtime::get().capabilities(t.device)) {}

  bool has(oar_capability_flags_t f) const { return (caps.flags & f) != 0; }
  void ok(oar_status_t st, const std::string& what) const {
    if (st != OAR_STATUS_OK) {
      std::string msg = Runtime::take_last_error();
      fail(what + " failed (" + oar::status_name(st) + "): " + (msg.empty() ? "(no message)" : msg));
    }
  }
  // A call that must fail, and say why.
  void refused(oar_status_t st, const std::string& what) const {
    std::string msg = Runtime::take_last_error();
    require(st != OAR_STATUS_OK, what + " returned OK");
    require(!msg.empty(), what + " failed (" + oar::status_name(st) + ") without a message (host->set_error)");
  }
};

// A device buffer freed when the case ends, whatever happens.
struct Buffer {
  const Abi& abi;
  void* ptr = nullptr;
  Buffer(const Abi& a, uint64_t n) : abi(a) { abi.ok(abi.api.memory_allocate(abi.dev, n, &ptr), "memory_allocate(" + std::to_string(n) + ")"); }
  ~Buffer() {
    if (ptr) abi.api.memory_free(abi.dev, ptr);
  }
};

struct Stream {
  const Abi& abi;
  oar_stream_t s = nullptr;
  explicit Stream(const Abi& a) : abi(a) {
    if (!abi.api.stream_create) throw NotApplicable("the plugin has no streams (optional since ABI 1.2)");
    abi.ok(abi.api.stream_create(abi.dev, &s), "stream_create");
  }
  ~Stream() {
    if (s) abi.api.stream_destroy(abi.dev, s);
  }
};

struct Event {
  const Abi& abi;
  oar_event_t e = nullptr;
  explicit Event(const Abi& a) : abi(a) { abi.ok(abi.api.event_create(abi.dev, &e), "event_create"); }
  ~Event() {
    if (e) abi.api.event_destroy(abi.dev, e);
  }
};

std::vector<uint8_t> pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(seed + i * 131 + (i >> 8) * 7);
  return v;
}

std::vector<uint8_t> read_back(const Abi& abi, const void* buf, uint64_t off, size_t n) {
  std::vector<uint8_t> v(n);
  abi.ok(abi.api.memory_copy_d2h(abi.dev, v.data(), buf, off, n), "memory_copy_d2h");
  return v;
}

void expect_bytes(const std::vector<uint8_t>& got, const std::vector<uint8_t>& want, size_t at, const std::string& what) {
  for (size_t i = 0; i < want.size(); ++i)
    if (got[at + i] != want[i])
      fail(what + ": byte " + std::to_string(at + i) + " is " + std::to_string(got[at + i]) + ", expected " +
           std::to_string(want[i]));
}

Outcome versions(const Abi& abi) {
  require(abi.plugin.abi_major == OAR_ABI_VERSION_MAJOR, "plugin ABI major " + std::to_string(abi.plugin.abi_major) +
                                                             " loaded by a core of major " +
                                                             std::to_string(OAR_ABI_VERSION_MAJOR));
  require(plugin_table(abi.plugin).plugin_struct_size >= offsetof(oar_plugin_api, memory_copy_peer),
          "the table's struct_size is smaller than ABI 1.0's");
  int32_t count = 0;
  abi.ok(abi.api.device_count(&count), "device_count");
  require(count == abi.plugin.device_count, "device_count changed after loading");
  std::string note = "ABI " + std::to_string(abi.plugin.abi_major) + "." + std::to_string(abi.plugin.abi_minor);
  if (abi.plugin.abi_minor < OAR_ABI_VERSION_MINOR) note += " (older minor than the core's: supported)";
  return {Status::kPass, note};
}

Outcome capabilities(const Abi& abi) {
  require(abi.caps.dtype_mask & (uint64_t(1) << OAR_DTYPE_F32), "f32 is not among the declared dtypes");
  require(abi.caps.alloc_alignment >= 64 && (abi.caps.alloc_alignment & (abi.caps.alloc_alignment - 1)) == 0,
          "alloc_alignment " + std::to_string(abi.caps.alloc_alignment) + " is not a power of two >= 64");
  const auto& api = abi.api;
  if (abi.has(OAR_CAPABILITY_ASYNC_COPY))
    require(api.memory_copy_h2d_async && api.memory_copy_d2h_async && api.memory_copy_d2d_async,
            "declares async_copy without the async copy entries");
  if (abi.has(OAR_CAPABILITY_EVENT_TIMING)) require(api.event_elapsed_ms, "declares event_timing without event_elapsed_ms");
  if (abi.has(OAR_CAPABILITY_PINNED_HOST_MEMORY))
    require(api.memory_allocate_host_pinned && api.memory_free_host_pinned,
            "declares pinned_host_memory without its entries");
  if (abi.has(OAR_CAPABILITY_COLLECTIVES)) require(api.collectives, "declares collectives without the group");
  if (abi.has(OAR_CAPABILITY_PEER_COPY)) require(api.memory_copy_peer, "declares peer_copy without memory_copy_peer");
  if (abi.has(OAR_CAPABILITY_HOST_ACCESSIBLE_MEMORY)) {
    // The core dereferences such handles: they must be the bytes themselves.
    Buffer b(abi, 256);
    auto want = pattern(256, 3);
    std::memcpy(b.ptr, want.data(), want.size());
    expect_bytes(read_back(abi, b.ptr, 0, 256), want, 0, "host_accessible_memory: bytes written through the pointer");
  }
  if (abi.caps.memory_stats_fields & OAR_MEMORY_STAT_IN_USE) {
    require(api.memory_get_stats, "declares memory stats without memory_get_stats");
    oar_memory_stats before{}, during{};
    before.struct_size = during.struct_size = sizeof(oar_memory_stats);
    abi.ok(api.memory_get_stats(abi.dev, &before), "memory_get_stats");
    {
      Buffer b(abi, 1 << 20);
      abi.ok(api.memory_get_stats(abi.dev, &during), "memory_get_stats");
    }
    require(during.in_use >= before.in_use + (1 << 20),
            "in_use did not grow by the 1 MiB just allocated (" + std::to_string(before.in_use) + " -> " +
                std::to_string(during.in_use) + ")");
    if (abi.caps.memory_stats_fields & OAR_MEMORY_STAT_PEAK)
      require(during.peak >= during.in_use, "peak below in_use");
  }
  oar_device_properties props{};
  props.struct_size = sizeof(props);
  abi.ok(api.device_get_properties(abi.dev, &props), "device_get_properties");
  require(std::strlen(props.name) > 0, "the device has no name");
  return {};
}

Outcome errors(const Abi& abi) {
  int32_t count = 0;
  abi.ok(abi.api.device_count(&count), "device_count");
  oar_device_properties props{};
  props.struct_size = sizeof(props);
  abi.refused(abi.api.device_get_properties(count, &props), "device_get_properties(index " + std::to_string(count) + ")");
  void* p = nullptr;
  abi.refused(abi.api.memory_allocate(count, 64, &p), "memory_allocate on a device index out of range");
  if (abi.has(OAR_CAPABILITY_EVENT_TIMING)) {
    Event a(abi), b(abi);
    float ms = 0;
    abi.refused(abi.api.event_elapsed_ms(abi.dev, a.e, b.e, &ms), "event_elapsed_ms on events never recorded");
  }
  return {};
}

Outcome alloc_zero(const Abi& abi) {
  void* p = reinterpret_cast<void*>(uintptr_t(1));
  abi.ok(abi.api.memory_allocate(abi.dev, 0, &p), "memory_allocate(0)");
  require(p == nullptr, "memory_allocate(0) must return NULL");
  abi.ok(abi.api.memory_free(abi.dev, nullptr), "memory_free(NULL)");
  return {};
}

Outcome alloc_huge(const Abi& abi) {
  void* p = nullptr;
  const uint64_t huge = uint64_t(1) << 56;  // 64 PiB: no device has it
  oar_status_t st = abi.api.memory_allocate(abi.dev, huge, &p);
  std::string msg = Runtime::take_last_error();
  if (st == OAR_STATUS_OK) {
    abi.api.memory_free(abi.dev, p);
    fail("memory_allocate(2^56 bytes) succeeded");
  }
  require(st == OAR_STATUS_OUT_OF_MEMORY, std::string("memory_allocate(2^56 bytes) returned ") + oar::status_name(st) +
                                              ", expected OUT_OF_MEMORY");
  require(!msg.empty(), "memory_allocate(2^56 bytes) failed without a message");
  require(p == nullptr, "a failed allocation left a non-NULL pointer");
  // After the failure the device works: allocate, copy, compute.
  Buffer b(abi, 4096);
  auto want = pattern(4096, 9);
  abi.ok(abi.api.memory_copy_h2d(abi.dev, b.ptr, 0, want.data(), want.size()), "memory_copy_h2d after a failed allocation");
  expect_bytes(read_back(abi, b.ptr, 0, 4096), want, 0, "a copy after a failed allocation");
  return {Status::kPass, "refused with: " + msg};
}

Outcome alignment(const Abi& abi) {
  if (!abi.has(OAR_CAPABILITY_HOST_ACCESSIBLE_MEMORY))
    throw NotApplicable("handles are not addresses (no host_accessible_memory): alignment is the device's business");
  std::vector<std::unique_ptr<Buffer>> keep;
  for (uint64_t n : {1, 3, 17, 63, 64, 65, 4097, 100003}) {
    keep.push_back(std::make_unique<Buffer>(abi, n));
    auto addr = reinterpret_cast<uintptr_t>(keep.back()->ptr);
    require(addr % abi.caps.alloc_alignment == 0, "an allocation of " + std::to_string(n) + " bytes is at " +
                                                      std::to_string(addr % abi.caps.alloc_alignment) +
                                                      " bytes past the declared alignment");
  }
  return {};
}

// Copies at odd sizes and offsets in every direction; the bytes around each
// copied range must stay as they were.
Outcome odd_copies(const Abi& abi) {
  const size_t cap = 3 * 1048576 + 512;
  Buffer a(abi, cap), b(abi, cap);
  for (size_t n : {size_t(1), size_t(3), size_t(7), size_t(63), size_t(65), size_t(4099), size_t(1048573)}) {
    for (size_t off : {size_t(0), size_t(1), size_t(13), size_t(4097)}) {
      const std::string at = " (" + std::to_string(n) + " bytes at offset " + std::to_string(off) + ")";
      auto fill_a = pattern(cap, 1), fill_b = pattern(cap, 2), src = pattern(n, uint8_t(n + off));
      abi.ok(abi.api.memory_copy_h2d(abi.dev, a.ptr, 0, fill_a.data(), cap), "h2d fill");
      abi.ok(abi.api.memory_copy_h2d(abi.dev, b.ptr, 0, fill_b.data(), cap), "h2d fill");
      abi.ok(abi.api.memory_copy_h2d(abi.dev, a.ptr, off, src.data(), n), "h2d" + at);
      auto got = read_back(abi, a.ptr, 0, cap);
      expect_bytes(got, src, off, "h2d" + at);
      expect_bytes(std::vector<uint8_t>(got.begin(), got.begin() + long(off)),
                   std::vector<uint8_t>(fill_a.begin(), fill_a.begin() + long(off)), 0, "bytes before an h2d" + at);
      expect_bytes(std::vector<uint8_t>(got.begin() + long(off + n), got.end()),
                   std::vector<uint8_t>(fill_a.begin() + long(off + n), fill_a.end()), 0, "bytes after an h2d" + at);
      std::vector<uint8_t> part(n);
      abi.ok(abi.api.memory_copy_d2h(abi.dev, part.data(), a.ptr, off, n), "d2h" + at);
      expect_bytes(part, src, 0, "d2h" + at);
      const size_t dst_off = off + 5;
      abi.ok(abi.api.memory_copy_d2d(abi.dev, b.ptr, dst_off, a.ptr, off, n), "d2d" + at);
      auto gb = read_back(abi, b.ptr, 0, cap);
      expect_bytes(gb, src, dst_off, "d2d" + at);
      if (dst_off > 0) require(gb[dst_off - 1] == fill_b[dst_off - 1], "d2d wrote the byte before its range" + at);
      require(gb[dst_off + n] == fill_b[dst_off + n], "d2d wrote the byte after its range" + at);
    }
  }
  // Overlapping d2d within one buffer moves like memmove, both directions.
  for (long shift : {7L, -7L}) {
    auto fill = pattern(cap, 4);
    abi.ok(abi.api.memory_copy_h2d(abi.dev, a.ptr, 0, fill.data(), cap), "h2d fill");
    const size_t n = 1048573, src_off = 100, dst_off = size_t(long(src_off) + shift);
    abi.ok(abi.api.memory_copy_d2d(abi.dev, a.ptr, dst_off, a.ptr, src_off, n), "overlapping d2d");
    auto got = read_back(abi, a.ptr, 0, cap);
    expect_bytes(got, std::vector<uint8_t>(fill.begin() + long(src_off), fill.begin() + long(src_off + n)), dst_off,
                 "overlapping d2d (memmove semantics), shift " + std::to_string(shift));
  }
  return {};
}

Outcome memset_ranges(const Abi& abi) {
  const size_t cap = 70000;
  Buffer a(abi, cap);
  for (auto [off, n] : {std::pair<size_t, size_t>{0, 1}, {3, 5}, {17, 4099}, {1, 65535}}) {
    auto fill = pattern(cap, 6);
    abi.ok(abi.api.memory_copy_h2d(abi.dev, a.ptr, 0, fill.data(), cap), "h2d fill");
    abi.ok(abi.api.memory_set(abi.dev, nullptr, a.ptr, off, 0xA5, n), "memory_set");
    abi.ok(abi.api.device_synchronize(abi.dev), "device_synchronize");
    auto got = read_back(abi, a.ptr, 0, cap);
    for (size_t i = 0; i < cap; ++i) {
      uint8_t want = (i >= off && i < off + n) ? 0xA5 : fill[i];
      if (got[i] != want)
        fail("memory_set(offset " + std::to_string(off) + ", " + std::to_string(n) + " bytes): byte " +
             std::to_string(i) + " is " + std::to_string(got[i]) + ", expected " + std::to_string(want));
    }
  }
  return {};
}

// Work queued on the default stream is finished before a synchronous copy
// reads the memory (the ABI's ordering rule for memory_copy_*).
Outcome sync_copy_after_queued_work(const Abi& abi) {
  const size_t n = 32 << 20;
  Buffer a(abi, n), b(abi, n);
  for (uint8_t v : {uint8_t(0x11), uint8_t(0x22), uint8_t(0x33)}) {
    abi.ok(abi.api.memory_set(abi.dev, nullptr, a.ptr, 0, v, n), "memory_set");
    abi.ok(abi.api.memory_copy_d2d(abi.dev, b.ptr, 0, a.ptr, 0, n), "memory_copy_d2d");
    std::vector<uint8_t> tail(64);
    abi.ok(abi.api.memory_copy_d2h(abi.dev, tail.data(), b.ptr, n - 64, 64), "memory_copy_d2h");
    for (uint8_t x : tail)
      require(x == v, "a synchronous copy read memory before the memory_set queued ahead of it had finished");
  }
  return {};
}

Outcome stream_ordering(const Abi& abi) {
  if (!abi.has(OAR_CAPABILITY_ASYNC_COPY)) throw NotApplicable("no async_copy capability");
  Stream s(abi);
  const size_t n = 16 << 20;
  Buffer a(abi, n), b(abi, n), c(abi, n);
  abi.ok(abi.api.memory_set(abi.dev, s.s, a.ptr, 0, 1, n), "memory_set on a stream");
  abi.ok(abi.api.memory_copy_d2d_async(abi.dev, s.s, b.ptr, 0, a.ptr, 0, n), "d2d_async");
  abi.ok(abi.api.memory_set(abi.dev, s.s, a.ptr, 0, 2, n), "memory_set on a stream");
  abi.ok(abi.api.memory_copy_d2d_async(abi.dev, s.s, c.ptr, 0, a.ptr, 0, n), "d2d_async");
  abi.ok(abi.api.stream_synchronize(abi.dev, s.s), "stream_synchronize");
  abi.ok(abi.api.stream_query(abi.dev, s.s), "stream_query after stream_synchronize");
  for (size_t at : {size_t(0), n / 2, n - 1}) {
    require(read_back(abi, b.ptr, at, 1)[0] == 1, "work on one stream ran out of order (b)");
    require(read_back(abi, c.ptr, at, 1)[0] == 2, "work on one stream ran out of order (c)");
  }
  return {};
}

Outcome async_pinned_copies(const Abi& abi) {
  if (!abi.has(OAR_CAPABILITY_ASYNC_COPY) || !abi.has(OAR_CAPABILITY_PINNED_HOST_MEMORY))
    throw NotApplicable("needs async_copy and pinned_host_memory");
  Stream s(abi);
  const size_t n = (4 << 20) + 3;
  void *pin = nullptr, *back = nullptr;
  abi.ok(abi.api.memory_allocate_host_pinned(abi.dev, n, &pin), "memory_allocate_host_pinned");
  abi.ok(abi.api.memory_allocate_host_pinned(abi.dev, n, &back), "memory_allocate_host_pinned");
  auto want = pattern(n, 8);
  std::memcpy(pin, want.data(), n);
  std::memset(back, 0, n);
  Buffer d(abi, n + 16);
  abi.ok(abi.api.memory_copy_h2d_async(abi.dev, s.s, d.ptr, 5, pin, n), "h2d_async");
  abi.ok(abi.api.memory_copy_d2h_async(abi.dev, s.s, back, d.ptr, 5, n), "d2h_async");
  abi.ok(abi.api.stream_synchronize(abi.dev, s.s), "stream_synchronize");
  bool same = std::memcmp(back, want.data(), n) == 0;
  abi.api.memory_free_host_pinned(abi.dev, pin);
  abi.api.memory_free_host_pinned(abi.dev, back);
  require(same, "pinned h2d_async then d2h_async on one stream did not round-trip");
  return {};
}

Outcome events(const Abi& abi) {
  Stream s(abi);
  Event start(abi), end(abi);
  const size_t n = 16 << 20;
  Buffer a(abi, n);
  abi.ok(abi.api.event_record(abi.dev, start.e, s.s), "event_record");
  abi.ok(abi.api.memory_set(abi.dev, s.s, a.ptr, 0, 3, n), "memory_set on a stream");
  abi.ok(abi.api.event_record(abi.dev, end.e, s.s), "event_record");
  abi.ok(abi.api.event_synchronize(abi.dev, end.e), "event_synchronize");
  abi.ok(abi.api.event_query(abi.dev, end.e), "event_query after event_synchronize");
  require(read_back(abi, a.ptr, n - 1, 1)[0] == 3, "event_synchronize returned before the work it recorded");
  if (!abi.has(OAR_CAPABILITY_EVENT_TIMING)) return {Status::kPass, "no event_timing: elapsed time not checked"};
  float ms = -1;
  abi.ok(abi.api.event_elapsed_ms(abi.dev, start.e, end.e, &ms), "event_elapsed_ms");
  require(std::isfinite(ms) && ms >= 0 && ms < 60000, "event_elapsed_ms gave " + std::to_string(ms) + " ms");
  return {};
}

Outcome cross_stream_wait(const Abi& abi) {
  if (!abi.has(OAR_CAPABILITY_ASYNC_COPY)) throw NotApplicable("no async_copy capability");
  Stream s1(abi), s2(abi);
  Event e(abi);
  const size_t n = 32 << 20;
  Buffer a(abi, n), b(abi, n);
  abi.ok(abi.api.memory_set(abi.dev, s1.s, a.ptr, 0, 0x5A, n), "memory_set on stream 1");
  abi.ok(abi.api.event_record(abi.dev, e.e, s1.s), "event_record on stream 1");
  abi.ok(abi.api.stream_wait_event(abi.dev, s2.s, e.e), "stream_wait_event on stream 2");
  abi.ok(abi.api.memory_copy_d2d_async(abi.dev, s2.s, b.ptr, 0, a.ptr, 0, n), "d2d_async on stream 2");
  abi.ok(abi.api.stream_synchronize(abi.dev, s2.s), "stream_synchronize(stream 2)");
  for (size_t at : {size_t(0), n / 2, n - 1})
    require(read_back(abi, b.ptr, at, 1)[0] == 0x5A, "stream 2 ran before the event it waits for");
  return {};
}

// Tensors of every declared dtype reach the device and come back unchanged.
Outcome tensor_round_trip(const Target& t) {
  const uint64_t mask = Runtime::get().capabilities(t.device).dtype_mask;
  for (DType d : all_dtypes) {
    if (!(mask & (uint64_t(1) << int(d)))) continue;
    std::vector<double> v(1001);
    for (size_t i = 0; i < v.size(); ++i) v[i] = d == DType::boolean ? double(i % 3 == 0) : double(int(i % 97) - 40);
    Tensor host = Tensor::from_host(v.data(), int64_t(v.size()), {7, 11, 13}, DType::f64, Device::cpu()).to(d);
    Tensor on = host.to(t.device);
    require(on.device() == t.device, "to() did not move the tensor");
    std::vector<double> back = on.to(Device::cpu()).to_vector<double>(), want = host.to_vector<double>();
    for (size_t i = 0; i < v.size(); ++i)
      require(back[i] == want[i], std::string(dtype_name(d)) + " element " + std::to_string(i) + " came back as " +
                                      std::to_string(back[i]) + ", sent " + std::to_string(want[i]));
  }
  return {};
}

}  // namespace

void add_abi_cases(const Target& t, std::vector<Case>& cases) {
  using Fn = Outcome (*)(const Abi&);
  const std::pair<const char*, Fn> raw[] = {
      {"abi/versions", versions},
      {"abi/capabilities", capabilities},
      {"abi/errors/messages", errors},
      {"abi/memory/alloc_zero", alloc_zero},
      {"abi/memory/alloc_huge_then_recover", alloc_huge},
      {"abi/memory/alignment", alignment},
      {"abi/memory/odd_copies", odd_copies},
      {"abi/memory/memset", memset_ranges},
      {"abi/memory/sync_copy_after_queued_work", sync_copy_after_queued_work},
      {"abi/memory/async_pinned_copies", async_pinned_copies},
      {"abi/streams/ordering", stream_ordering},
      {"abi/streams/events", events},
      {"abi/streams/cross_stream_wait", cross_stream_wait},
  };
  for (const auto& [id, fn] : raw) {
    Fn f = fn;
    cases.push_back({id, 60, "", "", [&t, f] {
                       Abi abi(t);
                       return f(abi);
                     }});
  }
  cases.push_back({"abi/tensors/round_trip", 60, "", "", [&t] { return tensor_round_trip(t); }});
}

}  // namespace oar::conformance
