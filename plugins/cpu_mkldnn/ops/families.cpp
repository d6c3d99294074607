// The single-source op families of kernel_primitives/ (softmax, losses,
// normalisation, pooling, indexing, shape ops) on the CPU backend. Files of
// this folder register oneDNN kernels above them where oneDNN is faster.
#include "oar/kp/cpu/family.h"
#include "oar/kp/family/families.h"
#include "ops/ops.h"

namespace oar_cpu {

oar_status_t register_family_kernels(const oar_kernel_registrar* r) {
  oar::kp::family::Registrar reg(r, "kp-cpu");
  return oar::kp::family::register_families<oar::kp::cpu::FamilyBackend>(reg);
}

}  // namespace oar_cpu
