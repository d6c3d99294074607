// liboar_plugin_cpu.so: the CPU device. Its device, memory, stream and event
// entries are the SDK's host-memory device (plugin_sdk/host_device.hpp: 64-byte
// aligned allocations with in-use/peak stats; kernels run synchronously on
// the calling thread with OpenMP inside, so a stream is an ordering token and
// events record host timestamps); this file adds the CPU's identity and
// threads, and registers the kernels of ops/.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <dlpack/dlpack.h>
#include <dnnl.hpp>

#include "oar/abi/oar_plugin.h"
#include "oar/plugin_sdk/host_device.hpp"
#include "oar/plugin_sdk/plugin_entry.h"
#include "ops/ops.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

namespace hd = oar::sdk::host_device;

const oar_host_api* g_host = nullptr;

oar_status_t device_get_properties(int32_t device, oar_device_properties* out) {
  if (auto st = hd::device_get_properties(device, out)) return st;
  std::snprintf(out->name, sizeof(out->name), "host CPU (%u threads)", std::thread::hardware_concurrency());
  std::snprintf(out->vendor, sizeof(out->vendor), "oneDNN %d.%d.%d", dnnl_version()->major,
                dnnl_version()->minor, dnnl_version()->patch);
  out->compute_units = static_cast<int32_t>(std::thread::hardware_concurrency());
  return OAR_STATUS_OK;
}

oar_status_t register_kernels(const oar_kernel_registrar* registrar) {
  if (!registrar || registrar->struct_size < sizeof(oar_kernel_registrar))
    return hd::error(OAR_STATUS_INVALID_ARGUMENT, "register_kernels: bad registrar");
  return oar_cpu::register_all_kernels(registrar);
}

void shutdown() {}

// The flags this plugin reads, declared to the core through the ABI.
const oar_flag_definition kConvLayoutDefinition = {
    sizeof(oar_flag_definition), "OAR_CPU_MKLDNN_CONV_LAYOUT", OAR_FLAG_TYPE_CHOICE, "auto",
    "Memory layout of oneDNN convolutions: auto picks per shape, blocked reorders into the layouts "
    "oneDNN's direct kernels prefer, plain runs on NCHW memory. Read at every convolution.",
    "auto,blocked,plain"};
const oar_flag_definition* const kFlags[] = {&kConvLayoutDefinition};

std::string g_version;

oar_plugin_api g_api;

// Called by the SDK's entry once the host's ABI version is accepted.
oar_status_t fill_api(const oar_host_api* host, oar_plugin_api* table) {
  g_host = host;
#ifdef _OPENMP
  char buf[32] = {0};
  if (host->get_flag("OAR_NUM_THREADS", buf, sizeof(buf)) && std::atoi(buf) > 0)
    omp_set_num_threads(std::atoi(buf));
#endif
  oar_plugin_api& api = *table;
  g_version = "1.0.0 (oneDNN " + std::to_string(dnnl_version()->major) + "." +
              std::to_string(dnnl_version()->minor) + "." + std::to_string(dnnl_version()->patch) + ")";
  api.plugin_version = g_version.c_str();
  api.device_type = "cpu";
  api.shutdown = shutdown;
  hd::fill(api, host, "cpu", kDLCPU);
  api.device_get_properties = device_get_properties;
  api.register_kernels = register_kernels;
  api.collectives = nullptr;
  api.flag_count = sizeof(kFlags) / sizeof(kFlags[0]);
  api.flags = kFlags;
  return OAR_STATUS_OK;
}

}  // namespace

const oar_host_api* oar_cpu::host() { return g_host; }

OAR_PLUGIN_DEFINE_ENTRY("cpu_mkldnn", &g_api, fill_api)
