// CPU backend of the single-source op families (kp/family/launch.h): a lane
// kernel runs one lane per iteration of an OpenMP loop (a lane's group is a
// single thread, so group reductions are identities), and device memory is
// host memory. Kernels accumulate in kp::accumulate_t (float for 16- and
// 32-bit floats, which keeps the loops vectorisable; double for f64; int64
// for integers), as the CPU's loss and pooling loops always have.
#pragma once

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "oar/kp/cpu/parallel.h"
#include "oar/kp/family/launch.h"

namespace oar::kp::cpu {

class FamilyBackend {
 public:
  explicit FamilyBackend(const sdk::KernelArgs& a) : args_(a) {}
  // A lane of a row-copying kernel takes up to this many entries (family::lane_chunk).
  static constexpr int64_t kLaneChunk = 256;
  static constexpr bool kHostMemory = true;  // family::host_memory
  const sdk::KernelArgs& args() const { return args_; }

  template <class T> using acc = accumulate_t<T>;
  uint64_t acc_bytes(oar_dtype_t t) const {
    return sdk::visit_dtype(t, []<class T>() { return uint64_t(sizeof(acc<T>)); });
  }

  template <class K>
  void launch(const family::Launch& L) {
    char* p[family::kOperands];
    for (int k = 0; k < family::kOperands; ++k)
      p[k] = L.p[k].mem ? static_cast<char*>(L.p[k].mem) + L.p[k].offset : nullptr;
    const family::kp_args A = L.A;
    parallel_for(L.lanes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(L.work_per_lane, 1)),
                 [&](int64_t b, int64_t e) {
                   K k;
                   for (int64_t lane = b; lane < e; ++lane)
                     k(lane, 0, 1, nullptr, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], A);
                 });
  }

  family::Operand temp(uint64_t bytes) { return {bytes ? args_.workspace(bytes) : nullptr, 0}; }
  void read(const family::Operand& o, void* dst, uint64_t bytes) {
    if (bytes) std::memcpy(dst, static_cast<const char*>(o.mem) + o.offset, bytes);
  }
  void write(const family::Operand& o, const void* src, uint64_t bytes) {
    if (bytes) std::memcpy(static_cast<char*>(o.mem) + o.offset, src, bytes);
  }

 private:
  const sdk::KernelArgs& args_;
};

}  // namespace oar::kp::cpu
