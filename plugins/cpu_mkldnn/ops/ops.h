// Kernel registration entry points of the CPU plugin, one per ops/ file.
#pragma once

#include "oar/abi/oar_plugin.h"

namespace oar_cpu {

const oar_host_api* host();

oar_status_t register_matmul_kernels(const oar_kernel_registrar* r);
oar_status_t register_linear_kernels(const oar_kernel_registrar* r);
oar_status_t register_conv_kernels(const oar_kernel_registrar* r);
oar_status_t register_norm_kernels(const oar_kernel_registrar* r);
oar_status_t register_batch_norm_kernels(const oar_kernel_registrar* r);  // batch_norm.cpp
oar_status_t register_softmax_kernels(const oar_kernel_registrar* r);
oar_status_t register_fused_elementwise_kernels(const oar_kernel_registrar* r);
oar_status_t register_primitive_kernels(const oar_kernel_registrar* r);  // primitives.cpp
oar_status_t register_lapack_kernels(const oar_kernel_registrar* r);
oar_status_t register_rnn_kernels(const oar_kernel_registrar* r);  // rnn.cpp

inline oar_status_t register_all_kernels(const oar_kernel_registrar* r) {
  oar_status_t (*all[])(const oar_kernel_registrar*) = {
      register_matmul_kernels,      register_linear_kernels,
      register_conv_kernels,        register_norm_kernels,             register_batch_norm_kernels,
      register_softmax_kernels,     register_fused_elementwise_kernels, register_primitive_kernels,
      register_lapack_kernels,      register_rnn_kernels};
  for (auto fn : all)
    if (oar_status_t st = fn(r)) return st;
  return OAR_STATUS_OK;
}

}  // namespace oar_cpu
