// cuBLAS, opened on first use instead of linked. libcublasLt (which cuBLAS
// loads) carries its own LLVM, and with it in the process PoCL's kernel
// compiler aborts ("Failed to create kernel compiler pass inline-kernels"):
// linking it would break every OpenCL process on a machine where the CUDA
// plugin merely loads. Opening it at the first cuda matmul keeps processes
// that never run one (all of them on a machine without a GPU) free of it.
#pragma once

#include <cublas_v2.h>

namespace oar_gpu {

// The entry points the plugin calls; names as cublas_v2.h maps them.
struct CublasApi {
  decltype(&cublasCreate) create;
  decltype(&cublasDestroy) destroy;
  decltype(&cublasSetStream) set_stream;
  decltype(&cublasSetWorkspace) set_workspace;
  decltype(&cublasSetMathMode) set_math_mode;
  decltype(&cublasGetStatusName) status_name;
  decltype(&cublasGetStatusString) status_string;
  decltype(&cublasGemmStridedBatchedEx_64) gemm_strided_batched_ex;
  decltype(&cublasDgemmStridedBatched_64) dgemm_strided_batched;
};

// Loads libcublas.so.<major> once; throws DEVICE_ERROR naming the library
// and dlerror() when it or an entry point is missing.
const CublasApi& cublas();

}  // namespace oar_gpu
