// DLPack exchange: zero-copy export of an oar tensor as a DLManagedTensor
// (the tensor's storage stays alive until the consumer calls the deleter)
// and zero-copy import of a producer's tensor (the producer's deleter runs
// when the last oar view of it dies). Device codes come from one place, the
// plugin's device description (oar_device_properties.dlpack_device_type, ABI
// 1.2): the core names no device type here, and Python's __dlpack_device__
// asks the same functions.
#pragma once

#include <dlpack/dlpack.h>

#include "oar/tensor.h"

namespace oar {

DLManagedTensor* to_dlpack(const Tensor& tensor);
// Takes ownership of `managed` (its deleter is called exactly once, also
// when the import fails with a typed error).
Tensor from_dlpack(DLManagedTensor* managed);

// The DLPack device type of `device`'s memory as its plugin declares it;
// kDLExtDev for a plugin that declares none (built for ABI < 1.2, or 0).
DLDeviceType dlpack_device_type(Device device);
// The oar device holding memory of a DLPack device: the loaded device whose
// plugin declares that code, with the same index. Pinned host memory
// (kDLCUDAHost, kDLROCMHost) is host memory and maps to the device declaring
// kDLCPU. Throws DeviceError when no loaded device matches.
Device device_from_dlpack(DLDevice device);

DLDataType to_dlpack_dtype(DType dtype);
DType from_dlpack_dtype(DLDataType dtype);  // throws DTypeError

}  // namespace oar
