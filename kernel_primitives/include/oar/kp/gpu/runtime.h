// The GPU runtime spelled once for CUDA and HIP: OAR_GPU(Malloc) is
// cudaMalloc under nvcc and hipMalloc under hipcc, OAR_GPU(Stream_t) the
// stream type, and so on. HIP mirrors the CUDA runtime API name for name, so
// one token-pasting macro lets the CUDA plugin's device layer and every
// primitive-based kernel compile for both; vendor libraries (cuBLAS, cuDNN,
// NCCL) stay in CUDA-only files.
#pragma once

#if defined(__HIPCC__)
#include <hip/hip_runtime.h>
#define OAR_GPU(sym) hip##sym
#define OAR_GPU_BACKEND_NAME "hip"
#else
#include <cuda_runtime.h>
#define OAR_GPU(sym) cuda##sym
#define OAR_GPU_BACKEND_NAME "cuda"
#endif

namespace oar::kp::gpu {

using Stream = OAR_GPU(Stream_t);
using Event = OAR_GPU(Event_t);
using Error = OAR_GPU(Error_t);

// The few calls whose names differ between the two runtimes.
#if defined(__HIPCC__)
using DeviceProp = hipDeviceProp_t;
inline Error host_alloc(void** ptr, size_t size) { return hipHostMalloc(ptr, size, hipHostMallocPortable); }
inline Error host_free(void* ptr) { return hipHostFree(ptr); }
#else
using DeviceProp = cudaDeviceProp;
inline Error host_alloc(void** ptr, size_t size) { return cudaHostAlloc(ptr, size, cudaHostAllocPortable); }
inline Error host_free(void* ptr) { return cudaFreeHost(ptr); }
#endif

// Threads per block of the 1-D primitives; a multiple of both warp sizes (32, 64).
constexpr int kBlock = 256;

inline unsigned grid_for(int64_t n, int block = kBlock, int64_t max_blocks = 65535LL * 32) {
  int64_t g = (n + block - 1) / block;
  if (g < 1) g = 1;
  return unsigned(g < max_blocks ? g : max_blocks);
}

}  // namespace oar::kp::gpu
