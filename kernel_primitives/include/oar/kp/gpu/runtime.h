// The GPU runtime spelled once for CUDA and HIP: OAR_GPU(Malloc) is
// cudaMalloc under nvcc and hipMalloc under hipcc, OAR_GPU(Stream_t) the
// stream type, and so on. HIP mirrors the CUDA runtime API name for name, so
// one token-pasting macro lets the CUDA plugin's device layer and every
// primitive-based kernel compile for both; vendor libraries (cuBLAS, cuDNN,
// NCCL) stay in CUDA-only files. A third target is HIP-CPU (the build defines
// OAR_GPU_HIP_CPU): the host compiler against AMD's header-only HIP runtime
// that runs the same kernels on the CPU (docs/hipcpu.md). OAR_GPU_HIP is
// defined for both HIP targets.
//
// Kernels are declared OAR_GPU_KERNEL, launched with gpu::launch (no `<<<`
// anywhere else: HIP-CPU has no launch syntax) and declare dynamic shared
// memory with OAR_GPU_DYNAMIC_SHARED.
#pragma once

#include <cstddef>
#include <utility>

#if defined(__HIPCC__) || defined(OAR_GPU_HIP_CPU)
#define OAR_GPU_HIP 1
#include <hip/hip_runtime.h>
#define OAR_GPU(sym) hip##sym
#if defined(OAR_GPU_HIP_CPU)
#define OAR_GPU_BACKEND_NAME "hipcpu"
#else
#define OAR_GPU_BACKEND_NAME "hip"
#endif
#else
#include <cuda_runtime.h>
#define OAR_GPU(sym) cuda##sym
#define OAR_GPU_BACKEND_NAME "cuda"
#endif

#if defined(OAR_GPU_HIP_CPU)
// The two runtime calls the plugin uses that HIP-CPU lacks (PROVENANCE.md).
// Its one device's memory is host memory; its event query blocks until the
// event completes (emulation: a real GPU answers at once, docs/hipcpu.md).
inline hipError_t hipMemcpyPeer(void* dst, int, const void* src, int, size_t bytes) {
  return hipMemcpy(dst, src, bytes, hipMemcpyDeviceToDevice);
}
inline hipError_t hipEventQuery(hipEvent_t event) { return hipEventSynchronize(event); }
#endif

namespace oar::kp::gpu {

using Stream = OAR_GPU(Stream_t);
using Event = OAR_GPU(Event_t);
using Error = OAR_GPU(Error_t);

// The few calls whose names differ between the two runtimes.
#if defined(OAR_GPU_HIP)
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

// Launches `kernel` on `stream` with `shared_bytes` of dynamic shared memory:
// the one place that spells a launch for nvcc, hipcc and HIP-CPU.
template <class... Params, class... Args>
void launch(void (*kernel)(Params...), dim3 grid, dim3 block, size_t shared_bytes, Stream stream, Args&&... args) {
#if defined(OAR_GPU_HIP_CPU)
  hipLaunchKernelGGL(kernel, grid, block, shared_bytes, stream, std::forward<Args>(args)...);
#else
  kernel<<<grid, block, shared_bytes, stream>>>(std::forward<Args>(args)...);
#endif
}

}  // namespace oar::kp::gpu

// A kernel's declaration. HIP-CPU's __global__ asks GCC for SIMD clones,
// which a kernel taking a struct cannot have (an unsilenceable warning) and
// which HIP-CPU never calls: it runs a kernel once per fiber.
#if defined(OAR_GPU_HIP_CPU)
#define OAR_GPU_KERNEL __attribute__((flatten))
#else
#define OAR_GPU_KERNEL __global__
#endif

// A device helper defined in a header. Under HIP-CPU __forceinline__ is empty
// unless NDEBUG is defined (PROVENANCE.md), so a non-template helper would be
// defined in every file that includes it: `inline` is spelled there.
#if defined(OAR_GPU_HIP_CPU)
#define OAR_GPU_DEVICE_INLINE __device__ inline
#else
#define OAR_GPU_DEVICE_INLINE __device__ __forceinline__
#endif

// Unrolls the loop that follows (GCC spells the pragma differently).
#if defined(OAR_GPU_HIP_CPU)
#define OAR_GPU_UNROLL _Pragma("GCC unroll 8")
#else
#define OAR_GPU_UNROLL _Pragma("unroll")
#endif

// Declares `type* name`, the block's dynamic shared memory (the launch's
// shared_bytes), inside a kernel.
#if defined(OAR_GPU_HIP_CPU)
#define OAR_GPU_DYNAMIC_SHARED(type, name) HIP_DYNAMIC_SHARED(type, name)
#else
#define OAR_GPU_DYNAMIC_SHARED(type, name)            \
  extern __shared__ unsigned char oar_dynamic_shared_[]; \
  type* name = reinterpret_cast<type*>(oar_dynamic_shared_)
#endif
