// OpenCL matmul kernels (being written).
#include "ops/ops.h"

namespace oar_ocl {

oar_status_t register_matmul_kernels(const oar_kernel_registrar*) { return OAR_STATUS_OK; }

}  // namespace oar_ocl
