// A fake NCCL (built as libnccl.so.<major>) for the CUDA plugin's collectives
// on machines without GPUs. Communicators are non-blocking as the plugin
// creates them: one finishes joining only once every rank of its world has
// called ncclCommInitRankConfig with the same id, so a peer that never comes,
// or one thread waiting on its first rank before creating the second, stays
// in progress as with the real library.
#include <nccl.h>

#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include <cuda_runtime_api.h>

#include "fake_vendor.h"

struct ncclComm {
  std::string id;
  int rank = 0, world = 0, device = 0;
  bool finalizing = false;
};

namespace {
std::recursive_mutex g_mutex;
std::string g_log;
std::map<std::string, std::set<int>> g_joined;  // unique id -> ranks that called init
std::set<ncclComm*> g_live;
int g_finalize_hangs = 0, g_operations_hang = 0, g_released = 0, g_next_id = 0;
thread_local int t_group_depth = 0;

void log(const std::string& entry) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  g_log += entry + ";";
}
std::string depth() { return ",depth=" + std::to_string(t_group_depth); }

bool joined(const ncclComm* c) {
  auto it = g_joined.find(c->id);
  return g_released || (it != g_joined.end() && int(it->second.size()) >= c->world);
}
}  // namespace

extern "C" {
void fake_nccl_reset() {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  g_log.clear();
  g_joined.clear();
  g_finalize_hangs = g_operations_hang = g_released = 0;
}
void fake_nccl_clear_log() {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  g_log.clear();
}
void fake_nccl_finalize_hangs(int hangs) { g_finalize_hangs = hangs; }
void fake_nccl_operations_hang(int hangs) { g_operations_hang = hangs; }
void fake_nccl_release_all() { g_released = 1; }
int fake_nccl_live_comms() {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  return int(g_live.size());
}
const char* fake_nccl_log() {
  static std::string copy;
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  copy = g_log;
  return copy.c_str();
}
}

const char* ncclGetErrorString(ncclResult_t r) {
  switch (r) {
    case ncclSuccess: return "no error";
    case ncclInProgress: return "NCCL operation in progress";
    case ncclInvalidArgument: return "invalid argument";
    default: return "fake NCCL error";
  }
}
const char* ncclGetLastError(ncclComm_t) { return ""; }

ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  std::memset(id, 0, sizeof(*id));
  std::snprintf(id->internal, sizeof(id->internal), "fake-%d", ++g_next_id);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* out, int nranks, ncclUniqueId id, int rank, ncclConfig_t* config) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  auto* c = new ncclComm;
  c->id = std::string(id.internal, strnlen(id.internal, sizeof(id.internal)));
  c->rank = rank;
  c->world = nranks;
  cudaGetDevice(&c->device);
  g_joined[c->id].insert(rank);
  g_live.insert(c);
  *out = c;
  log("CommInitRankConfig(rank=" + std::to_string(rank) + ",dev=" + std::to_string(c->device) + depth() +
      ",blocking=" + std::to_string(config != nullptr ? config->blocking : 1) + ")");
  return ncclInProgress;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t c, ncclResult_t* state) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  if (!g_live.count(c)) return ncclInvalidArgument;
  if (c->finalizing) *state = g_finalize_hangs ? ncclInProgress : ncclSuccess;
  else if (!joined(c)) *state = ncclInProgress;
  else *state = g_operations_hang ? ncclInProgress : ncclSuccess;
  return ncclSuccess;
}

ncclResult_t ncclGroupStart() {
  ++t_group_depth;
  log("GroupStart");
  return ncclSuccess;
}
ncclResult_t ncclGroupEnd() {
  if (t_group_depth == 0) return ncclInvalidUsage;
  --t_group_depth;
  log("GroupEnd");
  return ncclInProgress;
}

ncclResult_t ncclSend(const void*, size_t count, ncclDataType_t, int peer, ncclComm_t c, cudaStream_t) {
  log("Send(rank=" + std::to_string(c->rank) + ",peer=" + std::to_string(peer) + ",count=" + std::to_string(count) +
      depth() + ")");
  return ncclSuccess;
}
ncclResult_t ncclRecv(void*, size_t count, ncclDataType_t, int peer, ncclComm_t c, cudaStream_t) {
  log("Recv(rank=" + std::to_string(c->rank) + ",peer=" + std::to_string(peer) + ",count=" + std::to_string(count) +
      depth() + ")");
  return ncclSuccess;
}
ncclResult_t ncclAllReduce(const void*, void*, size_t count, ncclDataType_t, ncclRedOp_t, ncclComm_t c,
                           cudaStream_t) {
  log("AllReduce(rank=" + std::to_string(c->rank) + ",count=" + std::to_string(count) + ")");
  return g_operations_hang ? ncclInProgress : ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t c) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  c->finalizing = true;
  log("CommFinalize(rank=" + std::to_string(c->rank) + ")");
  return ncclInProgress;
}
static ncclResult_t release(ncclComm_t c, const char* how) {
  std::lock_guard<std::recursive_mutex> lock(g_mutex);
  if (g_live.erase(c) == 0) return ncclInvalidArgument;
  log(std::string(how) + "(rank=" + std::to_string(c->rank) + ")");
  delete c;
  return ncclSuccess;
}
ncclResult_t ncclCommDestroy(ncclComm_t c) { return release(c, "CommDestroy"); }
ncclResult_t ncclCommAbort(ncclComm_t c) { return release(c, "CommAbort"); }
