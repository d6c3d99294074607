// collectives/...: for a device that declares OAR_CAPABILITY_COLLECTIVES, the
// group's entries on a communicator of one rank (one process, one device):
// every collective must then be the identity (all_reduce of any op, broadcast,
// all_gather, reduce_scatter), barrier must return, and destroy must free.
// A device without the capability gets one skipped case saying so.
#include <cstring>

#include "conformance_case.h"
#include "oar/core.h"
#include "oar/plugin_table.h"

namespace oar::conformance {

namespace {

Outcome single_rank(const Target& t) {
  const LoadedPlugin& p = Runtime::get().plugin_for(t.device);
  const oar_collectives_api* c = plugin_table(p).entries.collectives;
  const oar_plugin_api& api = plugin_table(p).entries;
  auto ok = [](oar_status_t st, const char* what) {
    if (st != OAR_STATUS_OK) {
      std::string msg = Runtime::take_last_error();
      fail(std::string(what) + " failed (" + oar::status_name(st) + "): " + (msg.empty() ? "(no message)" : msg));
    }
  };
  oar_comm_unique_id id{};
  ok(c->get_unique_id(&id), "get_unique_id");
  oar_comm_t comm = nullptr;
  ok(c->comm_init(t.device.index, &id, 1, 0, &comm), "comm_init(world 1, rank 0)");
  const uint64_t n = 1000;
  std::vector<float> host(n), back(n);
  for (uint64_t i = 0; i < n; ++i) host[i] = float(i) * 0.5f - 7;
  void *src = nullptr, *dst = nullptr;
  ok(api.memory_allocate(t.device.index, n * 4, &src), "memory_allocate");
  ok(api.memory_allocate(t.device.index, n * 4, &dst), "memory_allocate");
  ok(api.memory_copy_h2d(t.device.index, src, 0, host.data(), n * 4), "memory_copy_h2d");
  auto expect_identity = [&](const char* what) {
    ok(api.device_synchronize(t.device.index), "device_synchronize");
    ok(api.memory_copy_d2h(t.device.index, back.data(), dst, 0, n * 4), "memory_copy_d2h");
    require(std::memcmp(back.data(), host.data(), n * 4) == 0, std::string(what) + " on one rank changed the data");
    ok(api.memory_set(t.device.index, nullptr, dst, 0, 0, n * 4), "memory_set");
  };
  for (oar_reduce_op_t op : {OAR_REDUCE_SUM, OAR_REDUCE_MAX, OAR_REDUCE_MIN, OAR_REDUCE_AVG}) {
    ok(c->all_reduce(comm, src, dst, n, OAR_DTYPE_F32, op, nullptr), "all_reduce");
    expect_identity("all_reduce");
  }
  ok(c->broadcast(comm, src, dst, n, OAR_DTYPE_F32, 0, nullptr), "broadcast");
  expect_identity("broadcast");
  ok(c->all_gather(comm, src, dst, n, OAR_DTYPE_F32, nullptr), "all_gather");
  expect_identity("all_gather");
  ok(c->reduce_scatter(comm, src, dst, n, OAR_DTYPE_F32, OAR_REDUCE_SUM, nullptr), "reduce_scatter");
  expect_identity("reduce_scatter");
  ok(c->barrier(comm, nullptr), "barrier");
  ok(c->comm_destroy(comm), "comm_destroy");
  api.memory_free(t.device.index, src);
  api.memory_free(t.device.index, dst);
  return {};
}

}  // namespace

void add_collective_cases(const Target& t, std::vector<Case>& cases) {
  const bool declared = Runtime::get().capabilities(t.device).flags & OAR_CAPABILITY_COLLECTIVES;
  if (!declared) {
    cases.push_back({"collectives/declared", 10, "", "", []() -> Outcome {
                       throw NotApplicable("the device does not declare OAR_CAPABILITY_COLLECTIVES");
                     }});
    return;
  }
  cases.push_back({"collectives/single_rank", 120, "", "", [&t] { return single_rank(t); }});
}

}  // namespace oar::conformance
