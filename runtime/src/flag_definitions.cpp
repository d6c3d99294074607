// Every OAR_* flag of the core, in one table. docs/flags.md and `oar-info`
// list these; adding a core flag means adding a row here. A plugin's flags
// are declared by the plugin itself (oar_plugin_api.flags, ABI 1.2).
#include "oar/flags.h"

namespace oar {

std::vector<FlagDefinition> builtin_flag_definitions() {
  return {
      {"OAR_DEVICE", FlagType::kString, "cpu",
       "Default device for new tensors and modules, e.g. cpu, cuda:0, opencl:1.", {}},
      {"OAR_PLUGIN_PATH", FlagType::kString, "",
       "Colon-separated directories searched for liboar_plugin_*.so before the default one.", {}},
      {"OAR_PLUGIN_DEFAULT_DIR", FlagType::kBool, "1",
       "Also search the plugin directory installed beside liboar_core.so.", {}},
      {"OAR_FALLBACK", FlagType::kChoice, "warn",
       "What happens when a device lacks a kernel and a CPU kernel exists: warn (run on CPU, "
       "warn once per op and device), error (raise), or silent.",
       {"warn", "error", "silent"}},
      {"OAR_LOG_LEVEL", FlagType::kChoice, "warning", "Minimum level of log messages printed.",
       {"debug", "info", "warning", "error"}},
      {"OAR_NUM_THREADS", FlagType::kInt, "0",
       "Threads used by CPU kernels; 0 means one per core.", {}},
      {"OAR_CACHING_ALLOCATOR", FlagType::kBool, "1",
       "Reuse freed device blocks instead of returning them to the plugin.", {}},
      {"OAR_ADAPTER", FlagType::kString, "",
       "Adapter driver (adapter/, docs/adapter.md) that loaded and imported graphs offload subgraphs to, "
       "e.g. openvino or fake_npu; empty: no offload.", {}},
      {"OAR_ADAPTER_PATH", FlagType::kString, "",
       "Colon-separated directories searched for liboar_adapter_*.so before the default one.", {}},
      {"OAR_ADAPTER_CACHE_DIR", FlagType::kString, "",
       "Directory of the compiled-subgraph cache (programs keyed by subgraph, weights, driver version, "
       "options and shapes); empty: no cache.", {}},
      {"OAR_ADAPTER_DENY", FlagType::kString, "",
       "Comma-separated pins kept off the adapter: op types (softmax, op:softmax) or node names (node:conv2d_3).", {}},
      {"OAR_ADAPTER_DENY_FILE", FlagType::kString, "",
       "File of pins as OAR_ADAPTER_DENY takes them, one per line (# starts a comment).", {}},
      {"OAR_ADAPTER_MIN_NODES", FlagType::kInt, "2",
       "A subgraph with fewer nodes than this and fewer than OAR_ADAPTER_MIN_MACS multiply-accumulates "
       "stays on the plugin device (copies would cost more than it saves).", {}},
      {"OAR_ADAPTER_MIN_MACS", FlagType::kFloat, "1e6",
       "See OAR_ADAPTER_MIN_NODES: the compute half of the offload threshold.", {}},
      {"OAR_KERNEL_COVERAGE_FILE", FlagType::kString, "",
       "At exit, append which kernels ran and which ops fell back to the CPU, per device type, to this file "
       "(tests of emulated devices read it; docs/hipcpu.md).", {}},
  };
}

}  // namespace oar
