// The pretend device's plugin: what its files share. Rename `tmpl` and the
// device type "template" when you copy this folder (docs/vendor-guide.md).
#pragma once

#include <string>

#include "oar/abi/oar_plugin.h"

namespace tmpl {

// Reports an error through the core (every failing entry must) and returns `code`.
oar_status_t fail(oar_status_t code, const std::string& message);

// device.cpp: devices, memory, streams, events.
void fill_runtime_entries(oar_plugin_api& api);
// gemm_conv.cpp: the kernels the primitives do not give (matmul, conv2d).
oar_status_t register_gemm_conv_kernels(const oar_kernel_registrar* registrar);

}  // namespace tmpl
