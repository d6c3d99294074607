// Every kernel the CPU gets from kernel_primitives/ without writing it: the
// elementwise functors, the reductions and the single-source op families
// (softmax, losses, normalisation, pooling, indexing, shape, creation). Files
// of this folder register oneDNN kernels above them where oneDNN is faster.
#include "oar/kp/cpu/elementwise_kernels.h"
#include "oar/kp/cpu/family.h"
#include "oar/kp/cpu/reduction_kernels.h"
#include "oar/kp/family/families.h"
#include "ops/ops.h"

namespace oar_cpu {

oar_status_t register_primitive_kernels(const oar_kernel_registrar* r) {
  if (oar_status_t st = oar::kp::cpu::register_elementwise_kernels(r, "kp-cpu")) return st;
  if (oar_status_t st = oar::kp::cpu::register_reduction_kernels(r, "kp-cpu")) return st;
  oar::kp::family::Registrar reg(r, "kp-cpu");
  return oar::kp::family::register_families<oar::kp::cpu::FamilyBackend>(reg);
}

}  // namespace oar_cpu
