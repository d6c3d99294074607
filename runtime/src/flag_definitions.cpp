// Every OAR_* flag the project knows, in one table. docs/flags.md and
// `oar-info` list these; adding a flag means adding a row here.
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
      {"OAR_OPENCL_CACHE_DIR", FlagType::kString, "",
       "Directory of the OpenCL plugin's compiled-program cache; empty means "
       "$XDG_CACHE_HOME/oar/opencl (or ~/.cache/oar/opencl), 'off' disables the disk cache.", {}},
      {"OAR_CACHING_ALLOCATOR", FlagType::kBool, "1",
       "Reuse freed device blocks instead of returning them to the plugin.", {}},
      {"OAR_ALLOW_TF32", FlagType::kBool, "0",
       "Let CUDA f32 matmul and convolution round inputs to TF32 on tensor cores (faster, ~1e-3 "
       "relative error).", {}},
      {"OAR_CUDNN_EXHAUSTIVE_SEARCH", FlagType::kBool, "0",
       "Pick each cuDNN convolution algorithm by timing every candidate (once per problem) "
       "instead of by cuDNN's heuristics.", {}},
      {"OAR_CUDNN_WORKSPACE_LIMIT_MB", FlagType::kInt, "1024",
       "Largest workspace, in MiB, a cuDNN convolution algorithm may use; algorithms needing more "
       "are skipped.", {}},
  };
}

}  // namespace oar
