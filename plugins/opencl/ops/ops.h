// Kernel registration entry points of the OpenCL plugin, one per ops/ file.
#pragma once

#include "oar/abi/oar_plugin.h"

namespace oar_ocl {

const oar_host_api* host();

oar_status_t register_elementwise_kernels(const oar_kernel_registrar* r);
oar_status_t register_reduction_kernels(const oar_kernel_registrar* r);
oar_status_t register_matmul_kernels(const oar_kernel_registrar* r);
oar_status_t register_conv_kernels(const oar_kernel_registrar* r);
oar_status_t register_family_kernels(const oar_kernel_registrar* r);

oar_status_t register_all_kernels(const oar_kernel_registrar* r);

}  // namespace oar_ocl
