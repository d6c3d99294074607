// Umbrella header of the oar core C++ API: tensors, devices, dtypes, eager
// dispatch, the runtime (plugins, allocators), flags and DLPack exchange.
#pragma once

#include "oar/allocator.h"
#include "oar/device.h"
#include "oar/dispatch.h"
#include "oar/dtype.h"
#include "oar/error.h"
#include "oar/flags.h"
#include "oar/generator.h"
#include "oar/kernel_registry.h"
#include "oar/kp/numeric.h"
#include "oar/op_registry.h"
#include "oar/runtime.h"
#include "oar/tensor.h"
#include "oar/dlpack.h"
#include "oar/op_docs.h"
