// The correct part of every broken fixture: the primitives' elementwise
// kernels for the CPU backend, compiled once for all five (broken_plugin.cpp
// is built per defect and stays small).
#include "oar/kp/cpu/elementwise_kernels.h"

oar_status_t oar_broken_register_primitives(const oar_kernel_registrar* r) {
  return oar::kp::cpu::register_elementwise_kernels(r, "kp-cpu");
}
