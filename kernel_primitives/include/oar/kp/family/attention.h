// The attention family: fused, memory-efficient scaled-dot-product attention
// (forward and backward), written once (attention.kp). A lane is one query
// row (forward, dq) or one key row (dk, dv); no [L, S] score matrix is ever
// stored, only a log-sum-exp per query row. Shapes and dtypes were validated
// by the catalog (runtime/src/catalog/attention.cpp): q [B, L, E],
// k [B, S, E], v [B, S, F], mask [B, L, S] or absent.
#pragma once

#include <algorithm>

#include "oar/kp/family/register.h"
#include "oar/plugin_sdk/op_geometry.hpp"

namespace oar::kp::family {

template <class TT, class IT, class ACC>
struct AttentionKernels {
  OAR_KP_FAMILY_TYPES(TT, IT, ACC)
#include "oar/kp/family/attention.kp"
};

template <class B>
struct Attention {
  // Lanes and the scalars every attention kernel reads, from q, k, v.
  static Launch sizes(const sdk::KernelArgs& a, int q_at, bool has_mask) {
    const oar_tensor_view &q = a.input(q_at), &k = a.input(q_at + 1), &v = a.input(q_at + 2);
    Launch L;
    L.family = "attention";
    L.t = q.dtype;
    const int64_t Lq = q.shape[q.ndim - 2], E = q.shape[q.ndim - 1];
    L.A.i[0] = Lq;
    L.A.i[1] = k.shape[k.ndim - 2];
    L.A.i[2] = E;
    L.A.i[3] = v.shape[v.ndim - 1];
    L.A.i[4] = a.attr_bool("causal");
    L.A.i[5] = has_mask;
    L.A.i[6] = Lq == 0 ? 0 : sdk::numel(q) / E;  // B * L
    L.A.f[0] = param_bits(a.attr_float("scale"));
    return L;
  }

  // attention_fused(q, k, v, mask?) -> out, lse
  static void forward(B& b) {
    const sdk::KernelArgs& a = b.args();
    const bool has_mask = a.input(3).data != nullptr;
    Launch L = sizes(a, 0, has_mask);
    const int64_t rows = L.A.i[6], F = L.A.i[3];
    if (rows == 0) return;
    L.lanes = rows;
    L.work_per_lane = L.A.i[1] * (L.A.i[2] + F);
    L.p[0] = operand(a.output(0));
    L.p[1] = operand(a.output(1));
    for (int k = 0; k < 3; ++k) L.p[2 + k] = operand(a.input(k));
    if (has_mask) L.p[5] = operand(a.input(3));
    L.p[6] = b.temp(uint64_t(rows * std::max<int64_t>(F, 1)) * b.acc_bytes(L.t));
    OAR_KP_LAUNCH(AttentionKernels, kFloat, b, L, attention_forward);
  }

  // attention_fused_backward(g, q, k, v, mask?, out, lse, grad_lse?) -> dq, dk, dv
  static void backward(B& b) {
    const sdk::KernelArgs& a = b.args();
    const bool has_mask = a.input(4).data != nullptr;
    Launch L = sizes(a, 1, has_mask);
    const int64_t rows = L.A.i[6], S = L.A.i[1], E = L.A.i[2], F = L.A.i[3];
    const int64_t batch = L.A.i[0] == 0 ? 0 : rows / L.A.i[0];
    const Operand row_data = b.temp(uint64_t(2 * std::max<int64_t>(rows, 1)) * b.acc_bytes(L.t));
    const Operand mask = has_mask ? operand(a.input(4)) : Operand{};
    if (rows > 0) {
      Launch P = L;  // pass 0: D_i and lse_i per query row
      P.lanes = rows;
      P.work_per_lane = F;
      P.p[0] = row_data;
      P.p[1] = operand(a.input(0));
      P.p[2] = operand(a.input(5));
      P.p[3] = operand(a.input(6));
      if (a.input(7).data != nullptr) {
        P.p[4] = operand(a.input(7));
        P.A.i[7] = 1;
      }
      OAR_KP_LAUNCH(AttentionKernels, kFloat, b, P, attention_backward_rows);
      Launch Q = L;  // pass 1: dq
      Q.lanes = rows;
      Q.work_per_lane = S * (E + F);
      Q.p[0] = operand(a.output(0));
      Q.p[1] = row_data;
      for (int k = 0; k < 4; ++k) Q.p[2 + k] = operand(a.input(k));
      Q.p[6] = mask;
      OAR_KP_LAUNCH(AttentionKernels, kFloat, b, Q, attention_backward_q);
    }
    if (batch * S == 0) return;
    Launch KV = L;  // pass 2: dk, dv
    KV.lanes = batch * S;
    KV.work_per_lane = L.A.i[0] * (E + F);
    KV.p[0] = operand(a.output(1));
    KV.p[1] = operand(a.output(2));
    for (int k = 0; k < 4; ++k) KV.p[2 + k] = operand(a.input(k));
    KV.p[6] = mask;
    KV.p[7] = row_data;
    OAR_KP_LAUNCH(AttentionKernels, kFloat, b, KV, attention_backward_kv);
  }

  // float32 / float64 only: the backward accumulates dk and dv in the output's
  // dtype, too coarse in 16 bits (the frontend composes attention for those).
  static oar_status_t register_ops(Registrar& all) {
    Registrar r = all.with_floats({OAR_DTYPE_F32, OAR_DTYPE_F64});
    // The optional mask is not part of the dtype signature (the catalog gives it q's dtype).
    r.add("attention_fused", "TTT", DTypeSet::kFloat, entry<B, &forward>);
    return r.add("attention_fused_backward", "TTTTTT", DTypeSet::kFloat, entry<B, &backward>);
  }
};

}  // namespace oar::kp::family
