// The single-source op families of kernel_primitives/ (softmax, losses,
// normalisation, pooling, indexing, shape ops) on CUDA and HIP. Files of this
// folder register cuDNN kernels above them where cuDNN is faster.
#include "gpu_device.h"
#include "oar/kp/family/families.h"
#include "oar/kp/gpu/family.cuh"
#include "ops/ops.h"

namespace oar_gpu {

namespace {

// The kernel call's device is current while the family runs.
struct CurrentDevice {
  explicit CurrentDevice(const oar::sdk::KernelArgs& a) : guard(a.context().device_index) {}
  DeviceGuard guard;
};

struct GpuFamilyBackend : private CurrentDevice, oar::kp::gpu::FamilyBackend {
  explicit GpuFamilyBackend(const oar::sdk::KernelArgs& a)
      : CurrentDevice(a), oar::kp::gpu::FamilyBackend(a, to_stream(a.context().stream)) {}
#if !defined(OAR_GPU_HIP)
  // The families' matrix products on cuBLAS (HIP builds use the lane kernel),
  // all of one kernel call on one cuBLAS workspace: an RNN's thousands of
  // steps must not each hold their own until the call returns.
  void gemm(const oar::kp::family::Gemm& g) {
    family_gemm(args(), to_stream(args().context().stream), g, &blas_workspace_);
  }

 private:
  void* blas_workspace_ = nullptr;
#endif
};

}  // namespace

oar_status_t register_family_kernels(const oar_kernel_registrar* r) {
  oar::kp::family::Registrar reg(r, "kp-" OAR_GPU_BACKEND_NAME);
  return oar::kp::family::register_families<GpuFamilyBackend>(reg);
}

}  // namespace oar_gpu
