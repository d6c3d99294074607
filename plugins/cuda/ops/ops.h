// Kernel registration entry points of the CUDA plugin, one per ops/ file.
// The primitive-based groups compile for HIP too; the vendor-library groups
// (cuBLAS, cuDNN) exist only in the CUDA build.
#pragma once

#include "oar/abi/oar_plugin.h"
#include "oar/kp/gpu/runtime.h"  // OAR_GPU_HIP

namespace oar_gpu {

// Built on kernel_primitives/ (CUDA and HIP).
oar_status_t register_elementwise_kernels(const oar_kernel_registrar* r);
oar_status_t register_reduction_kernels(const oar_kernel_registrar* r);
oar_status_t register_family_kernels(const oar_kernel_registrar* r);

#if !defined(OAR_GPU_HIP)
// Vendor libraries (CUDA only).
oar_status_t register_matmul_kernels(const oar_kernel_registrar* r);
oar_status_t register_conv_kernels(const oar_kernel_registrar* r);
oar_status_t register_softmax_kernels(const oar_kernel_registrar* r);
#endif

oar_status_t register_all_kernels(const oar_kernel_registrar* r);

}  // namespace oar_gpu
