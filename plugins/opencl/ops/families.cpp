// The single-source op families of kernel_primitives/ (softmax, losses,
// normalisation, pooling, indexing, shape ops) on OpenCL devices, in every
// float dtype the device computes in.
#include "family_backend.h"
#include "oar/kp/family/families.h"
#include "ops/ops.h"

namespace oar_ocl {

oar_status_t register_family_kernels(const oar_kernel_registrar* r) {
  oar::kp::family::Registrar reg(r, "opencl");
  return oar::kp::family::register_families<FamilyBackend>(reg);
}

}  // namespace oar_ocl
