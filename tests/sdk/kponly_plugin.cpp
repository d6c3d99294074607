// liboar_plugin_kponly.so: a device built only from the plugin SDK and the
// kernel primitives, with no kernel of its own. Its memory layer is the
// SDK's host-memory device; its kernels are every elementwise functor, every
// reduction and every single-source op family (softmax, losses,
// normalisation, pooling, indexing, shape, creation) instantiated for the
// CPU backend. The cross-device op suites run on it (CMakeLists.txt): what a
// vendor gets before writing a single kernel.
#include "oar/kp/cpu/elementwise_kernels.h"
#include "oar/kp/cpu/family.h"
#include "oar/kp/cpu/reduction_kernels.h"
#include "oar/kp/family/families.h"
#include "oar/plugin_sdk/host_device.hpp"
#include "oar/plugin_sdk/plugin_entry.h"

namespace {

oar_plugin_api g_api;

oar_status_t register_kernels(const oar_kernel_registrar* r) {
  if (oar_status_t st = oar::kp::cpu::register_elementwise_kernels(r, "kp-cpu")) return st;
  if (oar_status_t st = oar::kp::cpu::register_reduction_kernels(r, "kp-cpu")) return st;
  oar::kp::family::Registrar reg(r, "kp-cpu");
  return oar::kp::family::register_families<oar::kp::cpu::FamilyBackend>(reg);
}

oar_status_t fill(const oar_host_api* host, oar_plugin_api* api) {
  api->plugin_version = "1.0.0";
  api->device_type = "kponly";
  oar::sdk::host_device::fill(*api, host, "kponly");
  api->register_kernels = register_kernels;
  return OAR_STATUS_OK;
}

}  // namespace

OAR_PLUGIN_DEFINE_ENTRY("kponly", &g_api, fill)
