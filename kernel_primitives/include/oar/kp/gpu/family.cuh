// CUDA/HIP backend of the single-source op families (kp/family/launch.h): a
// lane kernel runs a thread per lane (grid-stride), or a block per lane whose
// threads share the lane and combine partials in shared memory (the .kp
// file's KP_GROUP_SUM / KP_GROUP_MAX). Kernels accumulate in
// kp::accumulate_t (float for 16-bit floats). Host <-> device transfers are
// ordered on the kernel call's stream.
#pragma once

#include <cstdint>
#include <string>

#include "oar/kp/family/launch.h"
#include "oar/kp/gpu/runtime.h"

namespace oar::kp::gpu {

template <class K>
OAR_GPU_KERNEL void family_lanes(int64_t n, char* p0, char* p1, char* p2, char* p3, char* p4, char* p5, char* p6,
                             char* p7, family::kp_args A) {
  K k;
  for (int64_t lane = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; lane < n;
       lane += int64_t(gridDim.x) * blockDim.x)
    k(lane, 0, 1, nullptr, p0, p1, p2, p3, p4, p5, p6, p7, A);
}

// Every thread of a block walks the same lanes, so the group reductions'
// barriers are reached by all of them.
template <class K>
OAR_GPU_KERNEL void family_groups(int64_t n, char* p0, char* p1, char* p2, char* p3, char* p4, char* p5, char* p6,
                              char* p7, family::kp_args A) {
  __shared__ typename K::acc_type scratch[kBlock];
  K k;
  for (int64_t lane = blockIdx.x; lane < n; lane += gridDim.x)
    k(lane, threadIdx.x, blockDim.x, scratch, p0, p1, p2, p3, p4, p5, p6, p7, A);
}

class FamilyBackend {
 public:
  FamilyBackend(const sdk::KernelArgs& a, Stream stream) : args_(a), stream_(stream) {}
  const sdk::KernelArgs& args() const { return args_; }

  template <class T> using acc = accumulate_t<T>;
  uint64_t acc_bytes(oar_dtype_t t) const {
    return sdk::visit_dtype(t, []<class T>() { return uint64_t(sizeof(acc<T>)); });
  }

  template <class K>
  void launch(const family::Launch& L) {
    if (L.lanes <= 0) return;
    char* p[family::kOperands];
    for (int k = 0; k < family::kOperands; ++k)
      p[k] = L.p[k].mem ? static_cast<char*>(L.p[k].mem) + L.p[k].offset : nullptr;
    if (L.groups)
      gpu::launch(family_groups<K>, grid_for(L.lanes, 1), kBlock, 0, stream_, L.lanes, p[0], p[1], p[2], p[3], p[4],
                  p[5], p[6], p[7], L.A);  // gpu::: this class has a launch of its own
    else
      gpu::launch(family_lanes<K>, grid_for(L.lanes), kBlock, 0, stream_, L.lanes, p[0], p[1], p[2], p[3], p[4], p[5],
                  p[6], p[7], L.A);
    check(OAR_GPU(GetLastError)(), K::kName);
  }

  family::Operand temp(uint64_t bytes) { return {bytes ? args_.workspace(bytes) : nullptr, 0}; }
  void read(const family::Operand& o, void* dst, uint64_t bytes) {
    if (!bytes) return;
    check(OAR_GPU(MemcpyAsync)(dst, static_cast<const char*>(o.mem) + o.offset, bytes, OAR_GPU(MemcpyDeviceToHost),
                               stream_),
          "family read");
    check(OAR_GPU(StreamSynchronize)(stream_), "family read");
  }
  void write(const family::Operand& o, const void* src, uint64_t bytes) {
    if (!bytes) return;
    // Pageable source: the copy has consumed it when the call returns.
    check(OAR_GPU(MemcpyAsync)(static_cast<char*>(o.mem) + o.offset, src, bytes, OAR_GPU(MemcpyHostToDevice),
                               stream_),
          "family write");
    check(OAR_GPU(StreamSynchronize)(stream_), "family write");
  }

 private:
  static void check(Error e, const char* what) {
    if (e != OAR_GPU(Success))
      sdk::fail(OAR_STATUS_DEVICE_ERROR, std::string(what) + ": " + OAR_GPU(GetErrorString)(e));
  }
  const sdk::KernelArgs& args_;
  Stream stream_;
};

}  // namespace oar::kp::gpu
