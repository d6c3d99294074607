// NVIDIA's libraries (cuBLAS, cuDNN, cuSOLVER, NCCL), opened on first use instead of
// linked. libcublasLt (which cuBLAS loads) carries its own LLVM, and with it
// in the process PoCL's kernel compiler aborts ("Failed to create kernel
// compiler pass inline-kernels"); cuDNN's runtime-compiled engines and NCCL
// are large enough to carry the same risk. Linking any of them would put it
// in every process where the CUDA plugin merely loads, on machines without a
// GPU too. Opened at the first cuda matmul, conv/softmax or collective, they
// stay out of every process that never runs one.
//
// Each library is a struct of entry points named as in its header without
// the prefix (cudnn().ConvolutionForward is cudnnConvolutionForward), filled
// from one list so the declaration and the lookup cannot drift apart.
#pragma once

#include <cublas_v2.h>
#include <cudnn.h>
#include <cusolverDn.h>
#include <nccl.h>

namespace oar_gpu {

#define OAR_CUBLAS_ENTRY_POINTS(X)                                                                          \
  X(cublas, Create) X(cublas, Destroy) X(cublas, SetStream) X(cublas, SetWorkspace) X(cublas, SetMathMode) \
  X(cublas, GetStatusName) X(cublas, GetStatusString) X(cublas, GemmStridedBatchedEx_64)                   \
  X(cublas, DgemmStridedBatched_64) X(cublas, Strsm) X(cublas, Dtrsm)

#define OAR_CUDNN_ENTRY_POINTS(X)                                                                            \
  X(cudnn, Create) X(cudnn, Destroy) X(cudnn, SetStream) X(cudnn, GetErrorString) X(cudnn, GetLastErrorString) \
  X(cudnn, CreateTensorDescriptor) X(cudnn, SetTensor4dDescriptorEx) X(cudnn, DestroyTensorDescriptor)         \
  X(cudnn, CreateFilterDescriptor) X(cudnn, SetFilter4dDescriptor) X(cudnn, DestroyFilterDescriptor)           \
  X(cudnn, CreateConvolutionDescriptor) X(cudnn, SetConvolution2dDescriptor)                                   \
  X(cudnn, SetConvolutionGroupCount) X(cudnn, SetConvolutionMathType) X(cudnn, DestroyConvolutionDescriptor)   \
  X(cudnn, GetConvolutionForwardAlgorithmMaxCount) X(cudnn, GetConvolutionForwardAlgorithm_v7)                 \
  X(cudnn, FindConvolutionForwardAlgorithmEx) X(cudnn, GetConvolutionForwardWorkspaceSize)                     \
  X(cudnn, ConvolutionForward) X(cudnn, GetConvolutionBackwardDataAlgorithmMaxCount)                           \
  X(cudnn, GetConvolutionBackwardDataAlgorithm_v7) X(cudnn, FindConvolutionBackwardDataAlgorithmEx)            \
  X(cudnn, GetConvolutionBackwardDataWorkspaceSize) X(cudnn, ConvolutionBackwardData)                          \
  X(cudnn, GetConvolutionBackwardFilterAlgorithmMaxCount) X(cudnn, GetConvolutionBackwardFilterAlgorithm_v7)   \
  X(cudnn, FindConvolutionBackwardFilterAlgorithmEx) X(cudnn, GetConvolutionBackwardFilterWorkspaceSize)       \
  X(cudnn, ConvolutionBackwardFilter) X(cudnn, SoftmaxForward) X(cudnn, SoftmaxBackward)                       \
  X(cudnn, SetTensorNdDescriptor) X(cudnn, CreateDropoutDescriptor) X(cudnn, SetDropoutDescriptor)             \
  X(cudnn, DestroyDropoutDescriptor) X(cudnn, CreateRNNDescriptor) X(cudnn, SetRNNDescriptor_v8)               \
  X(cudnn, DestroyRNNDescriptor) X(cudnn, CreateRNNDataDescriptor) X(cudnn, SetRNNDataDescriptor)              \
  X(cudnn, DestroyRNNDataDescriptor) X(cudnn, GetRNNWeightSpaceSize) X(cudnn, GetRNNTempSpaceSizes)            \
  X(cudnn, GetRNNWeightParams) X(cudnn, RNNForward) X(cudnn, RNNBackwardData_v8) X(cudnn, RNNBackwardWeights_v8)

// The dense LAPACK-style solvers, one entry per precision (S, D).
#define OAR_CUSOLVER_ENTRY_POINTS(X)                                                                         \
  X(cusolverDn, Create) X(cusolverDn, Destroy) X(cusolverDn, SetStream)                                      \
  X(cusolverDn, Spotrf_bufferSize) X(cusolverDn, Dpotrf_bufferSize) X(cusolverDn, Spotrf) X(cusolverDn, Dpotrf) \
  X(cusolverDn, Sgetrf_bufferSize) X(cusolverDn, Dgetrf_bufferSize) X(cusolverDn, Sgetrf) X(cusolverDn, Dgetrf) \
  X(cusolverDn, Sgetrs) X(cusolverDn, Dgetrs)                                                                \
  X(cusolverDn, Sgeqrf_bufferSize) X(cusolverDn, Dgeqrf_bufferSize) X(cusolverDn, Sgeqrf) X(cusolverDn, Dgeqrf) \
  X(cusolverDn, Sorgqr_bufferSize) X(cusolverDn, Dorgqr_bufferSize) X(cusolverDn, Sorgqr) X(cusolverDn, Dorgqr) \
  X(cusolverDn, Ssyevd_bufferSize) X(cusolverDn, Dsyevd_bufferSize) X(cusolverDn, Ssyevd) X(cusolverDn, Dsyevd) \
  X(cusolverDn, Sgesvd_bufferSize) X(cusolverDn, Dgesvd_bufferSize) X(cusolverDn, Sgesvd) X(cusolverDn, Dgesvd)

#define OAR_NCCL_ENTRY_POINTS(X)                                                                         \
  X(nccl, GetErrorString) X(nccl, GetLastError) X(nccl, GetUniqueId) X(nccl, CommInitRankConfig)         \
  X(nccl, CommGetAsyncError) X(nccl, CommFinalize) X(nccl, CommDestroy) X(nccl, CommAbort)               \
  X(nccl, AllReduce) X(nccl, Broadcast) X(nccl, AllGather) X(nccl, ReduceScatter) X(nccl, Send)          \
  X(nccl, Recv) X(nccl, GroupStart) X(nccl, GroupEnd)

// prefix##name is rescanned, so decltype sees what a header macro maps the
// name to (cublasCreate -> cublasCreate_v2).
#define OAR_VENDOR_ENTRY_FIELD(prefix, name) decltype(&prefix##name) name;
struct CublasApi {
  OAR_CUBLAS_ENTRY_POINTS(OAR_VENDOR_ENTRY_FIELD)
};
struct CudnnApi {
  OAR_CUDNN_ENTRY_POINTS(OAR_VENDOR_ENTRY_FIELD)
};
struct CusolverApi {
  OAR_CUSOLVER_ENTRY_POINTS(OAR_VENDOR_ENTRY_FIELD)
};
struct NcclApi {
  OAR_NCCL_ENTRY_POINTS(OAR_VENDOR_ENTRY_FIELD)
};
#undef OAR_VENDOR_ENTRY_FIELD

// Each loads lib<name>.so.<major of the header compiled against> once and
// throws sdk::KernelError(DEVICE_ERROR) naming the library, what it is needed
// for and dlerror() when it or an entry point is missing. A failed load is
// tried again on the next call.
const CublasApi& cublas();
const CudnnApi& cudnn();
const CusolverApi& cusolver();
const NcclApi& nccl();

}  // namespace oar_gpu
