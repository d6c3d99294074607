// liboar_plugin_template.so: the vendor template's entry point. It fills the
// runtime entries (device.cpp) and registers the kernels: every elementwise
// functor, every reduction and every single-source op family of the kernel
// primitives, instantiated for the host CPU, plus its own GEMM and
// convolution (gemm_conv.cpp). Ops it has no kernel for but that decompose
// (linear, the fused ops, the optimizer updates) run as their parts.
#include "oar/kp/cpu/elementwise_kernels.h"
#include "oar/kp/cpu/family.h"
#include "oar/kp/cpu/reduction_kernels.h"
#include "oar/kp/family/families.h"
#include "oar/plugin_sdk/plugin_entry.h"
#include "template_plugin.h"

namespace tmpl {

namespace {

const oar_host_api* g_host = nullptr;
oar_plugin_api g_api;

oar_status_t register_kernels(const oar_kernel_registrar* r) {
  if (oar_status_t st = oar::kp::cpu::register_elementwise_kernels(r, "kp-cpu")) return st;
  if (oar_status_t st = oar::kp::cpu::register_reduction_kernels(r, "kp-cpu")) return st;
  oar::kp::family::Registrar families(r, "kp-cpu");
  if (oar_status_t st = oar::kp::family::register_families<oar::kp::cpu::FamilyBackend>(families)) return st;
  return register_gemm_conv_kernels(r);
}

oar_status_t fill(const oar_host_api* host, oar_plugin_api* api) {
  g_host = host;
  api->plugin_version = "0.1.0";
  api->device_type = "template";
  fill_runtime_entries(*api);
  api->register_kernels = register_kernels;
  return OAR_STATUS_OK;
}

}  // namespace

oar_status_t fail(oar_status_t code, const std::string& message) {
  if (g_host) g_host->set_error(code, message.c_str());
  return code;
}

}  // namespace tmpl

OAR_PLUGIN_DEFINE_ENTRY("template", &tmpl::g_api, tmpl::fill)
