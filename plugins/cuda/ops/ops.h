// Kernel registration entry points of the CUDA plugin, one per ops/ file.
// The primitive-based groups compile for HIP too; the vendor-library groups
// (cuBLAS, cuDNN) exist only in the CUDA build.
#pragma once

#include "oar/abi/oar_plugin.h"
#include "oar/kp/gpu/runtime.h"  // OAR_GPU_HIP
#include "oar/plugin_sdk/kernel_api.hpp"

namespace oar::kp::family {
struct Gemm;  // kp/family/launch.h
}

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
oar_status_t register_linalg_kernels(const oar_kernel_registrar* r);
oar_status_t register_rnn_kernels(const oar_kernel_registrar* r);
// The families' matrix products (kp/family/launch.h's optional gemm) on cuBLAS (matmul.cu).
// *workspace is the call's cuBLAS workspace, taken from the core at the first product.
void family_gemm(const oar::sdk::KernelArgs& a, oar::kp::gpu::Stream stream, const oar::kp::family::Gemm& g,
                 void** workspace);
#endif

oar_status_t register_all_kernels(const oar_kernel_registrar* r);

}  // namespace oar_gpu
