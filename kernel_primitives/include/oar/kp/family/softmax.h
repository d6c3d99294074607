// The softmax family: softmax, log_softmax and their backward ops along any
// dim, written once (softmax.kp) and run by every backend. Launch shape: a
// thread group per lane when lanes are contiguous rows (inner == 1) or too few
// to fill a device one thread each; a thread per lane otherwise, so
// neighbouring threads read neighbouring elements.
#pragma once

#include "oar/kp/family/register.h"
#include "oar/plugin_sdk/op_geometry.hpp"

namespace oar::kp::family {

template <class TT, class IT, class ACC>
struct SoftmaxKernels {
  OAR_KP_FAMILY_TYPES(TT, IT, ACC)
#include "oar/kp/family/softmax.kp"
};

template <class B>
struct Softmax {
  template <bool kLog, bool kBackward>
  static void run(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view& y = a.output(0);
    if (sdk::numel(y) == 0) return;
    sdk::AxisExtents e = sdk::axis_extents(a.input(0), a.attr_int("dim"));
    Launch L;
    L.family = "softmax";
    L.t = y.dtype;
    L.lanes = e.outer * e.inner;
    L.groups = e.inner == 1 || (L.lanes < 1024 && e.d > 16);
    L.work_per_lane = e.d * 3;
    L.p[0] = operand(y);
    L.p[1] = operand(a.input(0));
    if (kBackward) L.p[2] = operand(a.input(1));
    L.A.i[0] = e.d, L.A.i[1] = e.inner, L.A.i[2] = kLog;
    if (kBackward) OAR_KP_LAUNCH(SoftmaxKernels, kFloat, b, L, softmax_backward);
    else OAR_KP_LAUNCH(SoftmaxKernels, kFloat, b, L, softmax_forward);
  }

  static oar_status_t register_ops(Registrar& r) {
    r.add("softmax", "T", DTypeSet::kFloat, entry<B, &run<false, false>>);
    r.add("softmax_backward", "TT", DTypeSet::kFloat, entry<B, &run<false, true>>);
    r.add("log_softmax", "T", DTypeSet::kFloat, entry<B, &run<true, false>>);
    return r.add("log_softmax_backward", "TT", DTypeSet::kFloat, entry<B, &run<true, true>>);
  }
};

}  // namespace oar::kp::family
