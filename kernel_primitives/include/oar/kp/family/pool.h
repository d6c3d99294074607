// The pooling family: max_pool2d, avg_pool2d and their backward ops on NCHW
// tensors, written once (pool.kp). Output sizes (ceil_mode) come from the
// catalog's shape inference; kernels only clip windows.
#pragma once

#include "oar/kp/family/register.h"

namespace oar::kp::family {

template <class TT, class IT, class ACC>
struct PoolKernels {
  OAR_KP_FAMILY_TYPES(TT, IT, ACC)
#include "oar/kp/family/pool.kp"
};

template <class B>
struct Pool {
  template <bool kMax, bool kBackward>
  static void run(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view& x = a.input(kBackward ? 1 : 0);
    const oar_tensor_view& y = kBackward ? a.input(0) : a.output(0);
    if (x.ndim != 4) sdk::fail(OAR_STATUS_INVALID_ARGUMENT, std::string(a.context().op_name) + ": input must be NCHW");
    auto k = a.attr_ints("kernel_size"), s = a.attr_ints("stride"), p = a.attr_ints("padding");
    if (s.empty()) s = k;
    if (k.empty() || p.empty()) sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "pool: kernel_size and padding are required");
    Launch L;
    L.family = "pool";
    L.t = x.dtype;
    const int64_t planes = x.shape[0] * x.shape[1];
    int64_t* i = L.A.i;
    i[0] = x.shape[2], i[1] = x.shape[3], i[2] = y.shape[2], i[3] = y.shape[3];
    i[4] = k.front(), i[5] = k.back(), i[6] = s.front(), i[7] = s.back(), i[8] = p.front(), i[9] = p.back();
    i[10] = kMax ? 0 : a.attr_bool("count_include_pad");
    i[11] = kMax;
    L.p[0] = operand(a.output(0));
    L.p[1] = operand(a.input(0));
    if (kBackward) {
      L.p[2] = operand(a.input(1));
      L.lanes = planes;
      L.work_per_lane = i[2] * i[3] * i[4] * i[5] + i[0] * i[1];
      OAR_KP_LAUNCH(PoolKernels, kFloat, b, L, pool_backward);
    } else {
      L.lanes = planes * i[2];
      L.work_per_lane = i[3] * i[4] * i[5];
      OAR_KP_LAUNCH(PoolKernels, kFloat, b, L, pool_forward);
    }
  }

  static oar_status_t register_ops(Registrar& r) {
    r.add("max_pool2d", "T", DTypeSet::kFloat, entry<B, &run<true, false>>);
    r.add("max_pool2d_backward", "TT", DTypeSet::kFloat, entry<B, &run<true, true>>);
    r.add("avg_pool2d", "T", DTypeSet::kFloat, entry<B, &run<false, false>>);
    return r.add("avg_pool2d_backward", "TT", DTypeSet::kFloat, entry<B, &run<false, true>>);
  }
};

}  // namespace oar::kp::family
