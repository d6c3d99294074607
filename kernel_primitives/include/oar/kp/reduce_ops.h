// The reduction ops of the catalog, listed once for every backend: their
// kind (what a backend instantiates) and the dtypes each takes. A backend
// registers them all with register_reduction_ops and a function from kind
// to kernel.
#pragma once

#include <span>

#include "oar/plugin_sdk/kernel_api.hpp"

namespace oar::kp {

enum class ReduceKind { kSum, kProd, kMean, kVar, kMax, kMin, kArgMax, kArgMin };

// Registers kernel_for.template operator()<K>() (an oar_kernel_fn) for every
// reduction op, once per dtype it takes.
template <class KernelFor>
oar_status_t register_reduction_ops(const oar_kernel_registrar* r, const char* impl, KernelFor&& kernel_for) {
  oar_status_t status = OAR_STATUS_OK;
  auto add = [&]<ReduceKind K>(const char* op, std::span<const oar_dtype_t> dtypes) {
    if (!status) status = sdk::register_same_dtype(r, op, dtypes, 1, kernel_for.template operator()<K>(), impl);
  };
  add.template operator()<ReduceKind::kSum>("sum", sdk::kAllDTypes);
  add.template operator()<ReduceKind::kProd>("prod", sdk::kAllDTypes);
  add.template operator()<ReduceKind::kMean>("mean", sdk::kFloatDTypes);
  add.template operator()<ReduceKind::kVar>("var", sdk::kFloatDTypes);
  add.template operator()<ReduceKind::kMax>("max", sdk::kAllDTypes);
  add.template operator()<ReduceKind::kMin>("min", sdk::kAllDTypes);
  add.template operator()<ReduceKind::kArgMax>("argmax", sdk::kNumericDTypes);
  add.template operator()<ReduceKind::kArgMin>("argmin", sdk::kNumericDTypes);
  return status;
}

}  // namespace oar::kp
