// DLPack exchange: zero-copy export of an oar tensor as a DLManagedTensor
// (the tensor's storage stays alive until the consumer calls the deleter)
// and zero-copy import of a producer's tensor (the producer's deleter runs
// when the last oar view of it dies). Devices map by type name: cpu <->
// kDLCPU, cuda <-> kDLCUDA, opencl <-> kDLOpenCL.
#pragma once

#include <dlpack/dlpack.h>

#include "oar/tensor.h"

namespace oar {

DLManagedTensor* to_dlpack(const Tensor& tensor);
// Takes ownership of `managed` (its deleter is called exactly once, also
// when the import fails with a typed error).
Tensor from_dlpack(DLManagedTensor* managed);

DLDataType to_dlpack_dtype(DType dtype);
DType from_dlpack_dtype(DLDataType dtype);  // throws DTypeError

}  // namespace oar
