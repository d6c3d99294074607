// The OpenCL backend of the single-source op families (kp/family/launch.h):
// a family's .kp text compiled per (data dtype, index dtype) through the
// program cache, launched with a work-item or a work-group per lane, and
// transfers ordered on the kernel call's queue. Everything an op means is in
// kernel_primitives/; this file only runs it.
#pragma once

#include <string>

#include "launch.h"
#include "oar/kp/family/launch.h"
#include "oar/kp/family_sources.h"
#include "oar/kp/opencl/family.h"

namespace oar_ocl {

class FamilyBackend {
 public:
  explicit FamilyBackend(const oar::sdk::KernelArgs& a) : args_(a), c_(op_context(a)) {}
  const oar::sdk::KernelArgs& args() const { return args_; }

  template <class T> using acc = oar::kp::accumulate_t<T>;  // unused: kernels compile at run time
  uint64_t acc_bytes(oar_dtype_t t) const {
    return oar::kp::opencl::type_info(t).floating ? (c_.dev.fp64 ? 8 : 4) : 8;
  }

  template <class K>
  void launch(const oar::kp::family::Launch& L) {
    run(L, K::kName);
  }
  void run(const oar::kp::family::Launch& L, const char* kernel);

  oar::kp::family::Operand temp(uint64_t bytes) { return {bytes ? args_.workspace(bytes) : nullptr, 0}; }
  void read(const oar::kp::family::Operand& o, void* dst, uint64_t bytes);
  void write(const oar::kp::family::Operand& o, const void* src, uint64_t bytes);

 private:
  const oar::sdk::KernelArgs& args_;
  OpContext c_;
};

}  // namespace oar_ocl
