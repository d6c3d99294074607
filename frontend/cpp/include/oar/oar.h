// The whole oar C++ API in one include (torch/torch.h's counterpart): the
// core (tensors, devices, dispatch, runtime), autograd, tensor operators,
// oar::<op> for every public catalog op (oar/ops.h, generated) and the
// hand-written tensor functions and in-place forms (oar/tensor_functions.h),
// oar::nn, oar::optim and state_dict serialization.
#pragma once

#include "oar/autograd.h"
#include "oar/grad_fn.h"
#include "oar/core.h"
#include "oar/functional.h"
#include "oar/inference.h"
#include "oar/inplace.h"
#include "oar/jit.h"
#include "oar/nn.h"
#include "oar/ops.h"
#include "oar/optim.h"
#include "oar/ordered_dict.h"
#include "oar/serialize.h"
#include "oar/tensor_functions.h"
#include "oar/tensor_ops.h"
