// The loss family: nll_loss and cross_entropy with their backward ops,
// written once (loss.kp). Targets are validated on the device before any
// loss is computed (kp/family/index_scan.h), per-position losses are
// computed in parallel and reduced in position order, so every device gives
// the same deterministic result.
#pragma once

#include <string>

#include "oar/kp/family/index_scan.h"
#include "oar/kp/family/register.h"
#include "oar/plugin_sdk/op_geometry.hpp"

namespace oar::kp::family {

template <class TT, class IT, class ACC>
struct LossKernels {
  OAR_KP_FAMILY_TYPES(TT, IT, ACC)
#include "oar/kp/family/loss.kp"
};

template <class B>
struct Loss {
  // Validates the targets; returns the count of those not ignored.
  static int64_t check_targets(B& b, const char* op, const oar_tensor_view& t, int64_t C, int64_t ignore) {
    IndexScan s = scan_indices(b, t, C, &ignore);
    if (s.first >= 0)
      sdk::fail(OAR_STATUS_OUT_OF_RANGE, std::string(op) + ": target " + std::to_string(s.value) + " at position " +
                                             std::to_string(s.first) + " is out of range for " + std::to_string(C) +
                                             " classes (valid range [0, " + std::to_string(C) +
                                             "), or ignore_index " + std::to_string(ignore) + ")");
    return s.count;
  }

  static Launch launch_for(const sdk::KernelArgs& a, const oar_tensor_view& x, const oar_tensor_view& t, bool fused) {
    sdk::LossShape sh(x);
    Launch L;
    L.family = "loss";
    L.t = x.dtype;
    L.i = t.dtype;
    L.lanes = sh.positions();
    L.work_per_lane = sh.C * 3;
    L.A.i[0] = sh.C, L.A.i[1] = sh.S, L.A.i[2] = a.attr_int("ignore_index"), L.A.i[3] = fused;
    L.A.f[0] = param_bits(fused ? a.attr_float("label_smoothing") : 0.0);
    return L;
  }

  template <bool kFused>
  static void forward(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view &x = a.input(0), &t = a.input(1), &y = a.output(0);
    Launch L = launch_for(a, x, t, kFused);
    int64_t count = check_targets(b, kFused ? "cross_entropy" : "nll_loss", t, L.A.i[0], L.A.i[2]);
    const Operand losses = b.temp(uint64_t(L.lanes) * b.acc_bytes(x.dtype));
    L.p[0] = losses, L.p[1] = operand(x), L.p[2] = operand(t);
    OAR_KP_LAUNCH(LossKernels, kFloat, b, L, loss_forward);
    sdk::LossReduction red = sdk::loss_reduction(a);
    Launch R;
    R.family = "loss";
    R.t = x.dtype;
    R.i = t.dtype;
    R.p[0] = operand(y);
    R.p[1] = losses;
    if (red == sdk::LossReduction::kNone) {
      R.lanes = L.lanes;
      OAR_KP_LAUNCH(LossKernels, kFloat, b, R, loss_store);
    } else {
      R.lanes = 1;
      R.groups = true;
      R.A.i[0] = L.lanes, R.A.i[1] = count, R.A.i[2] = red == sdk::LossReduction::kMean;
      OAR_KP_LAUNCH(LossKernels, kFloat, b, R, loss_sum);
    }
  }

  template <bool kFused>
  static void backward(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view &g = a.input(0), &x = a.input(1), &t = a.input(2), &dx = a.output(0);
    Launch L = launch_for(a, x, t, kFused);
    int64_t count =
        check_targets(b, kFused ? "cross_entropy_backward" : "nll_loss_backward", t, L.A.i[0], L.A.i[2]);
    sdk::LossReduction red = sdk::loss_reduction(a);
    L.p[0] = operand(dx), L.p[1] = operand(g), L.p[2] = operand(x), L.p[3] = operand(t);
    L.A.i[4] = red == sdk::LossReduction::kNone;
    L.A.i[5] = red == sdk::LossReduction::kMean ? count : 0;
    OAR_KP_LAUNCH(LossKernels, kFloat, b, L, loss_backward);
  }

  static oar_status_t register_ops(Registrar& r) {
    r.add("nll_loss", "TI", DTypeSet::kFloat, entry<B, &forward<false>>);
    r.add("cross_entropy", "TI", DTypeSet::kFloat, entry<B, &forward<true>>);
    r.add("nll_loss_backward", "TTI", DTypeSet::kFloat, entry<B, &backward<false>>);
    return r.add("cross_entropy_backward", "TTI", DTypeSet::kFloat, entry<B, &backward<true>>);
  }
};

}  // namespace oar::kp::family
