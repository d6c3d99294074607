// The normalisation family: batch_norm, layer_norm and their backward ops,
// written once (norm.kp). Statistics of a group (a channel, a row) are
// reduced by one thread group on devices that have groups, so a channel of
// N * H * W elements is not one thread's serial loop there.
#pragma once

#include "oar/kp/family/register.h"
#include "oar/plugin_sdk/op_geometry.hpp"

namespace oar::kp::family {

template <class TT, class IT, class ACC>
struct NormKernels {
  OAR_KP_FAMILY_TYPES(TT, IT, ACC)
#include "oar/kp/family/norm.kp"
};

template <class B>
struct Norm {
  template <bool kBatch, bool kBackward>
  static void run(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view& x = a.input(kBackward ? 1 : 0);
    sdk::NormExtents e = sdk::norm_extents(x, kBatch, kBatch ? 0 : a.attr_int("normalized_ndim"));
    Launch L;
    L.family = "norm";
    L.t = x.dtype;
    L.groups = true;
    L.lanes = e.channels;
    const int64_t n = kBatch ? e.outer * e.inner : e.inner;
    L.work_per_lane = 3 * n;
    L.A.i[0] = e.outer, L.A.i[1] = e.channels, L.A.i[2] = e.inner, L.A.i[3] = kBatch;
    L.A.f[0] = param_bits(a.attr_float("eps"));
    const int weight = kBackward ? 2 : 1;
    L.A.i[4] = a.has_input(weight);
    if (!kBackward) {
      L.A.i[5] = a.has_input(2);
      L.A.i[6] = kBatch && !a.attr_bool("training");
      for (int k = 0; k < 3; ++k) L.p[k] = operand(a.output(k));
      for (int k = 0; k < 5; ++k)
        if (a.has_input(k)) L.p[3 + k] = operand(a.input(k));
      if (L.A.i[6] && !(a.has_input(3) && a.has_input(4)))
        sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "batch_norm: eval mode needs running_mean and running_var");
      OAR_KP_LAUNCH(NormKernels, kFloat, b, L, norm_forward);
      return;
    }
    L.p[0] = operand(a.output(0));
    for (int k = 0; k < 5; ++k)
      if (a.has_input(k)) L.p[1 + k] = operand(a.input(k));
    OAR_KP_LAUNCH(NormKernels, kFloat, b, L, norm_backward);
    Launch P = L;
    P.lanes = kBatch ? e.channels : e.inner;
    P.work_per_lane = 2 * (kBatch ? n : e.channels);
    P.p[0] = operand(a.output(1)), P.p[1] = operand(a.output(2));
    for (int k = 0; k < 4; ++k) P.p[2 + k] = operand(a.input(k == 0 ? 0 : k == 1 ? 1 : k + 1));
    OAR_KP_LAUNCH(NormKernels, kFloat, b, P, norm_param_grads);
  }

  static oar_status_t register_ops(Registrar& r) {
    // Signatures hold the required inputs only (optional ones are not part of the key).
    r.add("batch_norm", "T", DTypeSet::kFloat, entry<B, &run<true, false>>);
    r.add("batch_norm_backward", "TTTT", DTypeSet::kFloat, entry<B, &run<true, true>>);
    r.add("layer_norm", "T", DTypeSet::kFloat, entry<B, &run<false, false>>);
    return r.add("layer_norm_backward", "TTTT", DTypeSet::kFloat, entry<B, &run<false, true>>);
  }
};

}  // namespace oar::kp::family
