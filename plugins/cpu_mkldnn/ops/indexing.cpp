// CPU indexing kernels (to be filled in).
#include "ops/ops.h"

namespace oar_cpu {

oar_status_t register_indexing_kernels(const oar_kernel_registrar*) { return OAR_STATUS_OK; }

}  // namespace oar_cpu
