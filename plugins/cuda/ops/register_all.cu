// Registers every kernel group of the plugin; vendor-library groups only in the CUDA build.
#include "ops/ops.h"

namespace oar_gpu {

oar_status_t register_all_kernels(const oar_kernel_registrar* r) {
  oar_status_t (*groups[])(const oar_kernel_registrar*) = {
      register_elementwise_kernels, register_reduction_kernels,
      register_family_kernels,
#if !defined(OAR_GPU_HIP)
      register_matmul_kernels,      register_conv_kernels,      register_softmax_kernels,
      register_linalg_kernels,      register_rnn_kernels,
#endif
  };
  for (auto group : groups)
    if (oar_status_t st = group(r)) return st;
  return OAR_STATUS_OK;
}

}  // namespace oar_gpu
