// The OpenCL plugin's kernel registration: one call per ops/ file.
#include "ops/ops.h"

namespace oar_ocl {

oar_status_t register_all_kernels(const oar_kernel_registrar* r) {
  oar_status_t (*all[])(const oar_kernel_registrar*) = {
      register_elementwise_kernels, register_reduction_kernels,
      register_matmul_kernels,      register_conv_kernels,      register_family_kernels,
  };
  for (auto fn : all)
    if (oar_status_t st = fn(r)) return st;
  return OAR_STATUS_OK;
}

}  // namespace oar_ocl
