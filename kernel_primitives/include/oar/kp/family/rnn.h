// The rnn family: one layer, one direction of a recurrent network (Elman
// tanh/relu, LSTM, GRU) as fused kernels, forward and backward, written once
// (rnn.kp). The matrix products go to the backend's gemm where it has one
// (launch.h), else to a lane kernel; a time step's gate arithmetic is one
// launch in which a lane owns one hidden unit of one sequence. The backward
// recomputes the forward (no reserve space crosses the op boundary, so every
// device agrees on what the ops take). The catalog (runtime/src/catalog/rnn.cpp) validated shapes and
// dtypes: x [T, N, I], hx/cx [N, H], w_ih [G*H, I], w_hh [G*H, H], biases
// [G*H], lengths [N] (i64/i32) or absent.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "oar/kp/family/register.h"
#include "oar/plugin_sdk/op_geometry.hpp"

namespace oar::kp::family {

template <class TT, class IT, class ACC>
struct RnnKernels {
  OAR_KP_FAMILY_TYPES(TT, IT, ACC)
#include "oar/kp/family/rnn.kp"
};

// The mode attribute (PyTorch's RNNBase.mode) as rnn.kp's RNN_* number, and its gate count.
struct RnnMode {
  int64_t id, gates;
};
inline RnnMode rnn_mode(const std::string& mode) {
  if (mode == "RNN_TANH") return {0, 1};
  if (mode == "RNN_RELU") return {1, 1};
  if (mode == "LSTM") return {2, 4};
  if (mode == "GRU") return {3, 3};
  sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "rnn_layer: mode must be RNN_TANH, RNN_RELU, LSTM or GRU, got '" + mode + "'");
}

template <class B>
struct Rnn {
  // Input slots shared by rnn_layer and rnn_layer_backward.
  enum { kX, kH0, kWih, kWhh, kC0, kBih, kBhh, kLengths, kGradY, kGradH, kGradC };

  static bool has(const sdk::KernelArgs& a, int k) { return k < a.context().num_inputs && a.input(k).data; }

  // The scalars every rnn kernel reads (rnn.kp's header).
  static Launch sizes(const sdk::KernelArgs& a) {
    const oar_tensor_view &x = a.input(kX), &whh = a.input(kWhh);
    const RnnMode m = rnn_mode(a.attr_string("mode"));
    Launch L;
    L.family = "rnn";
    L.t = x.dtype;
    if (has(a, kLengths)) L.i = a.input(kLengths).dtype;
    L.A.i[0] = x.shape[0];
    L.A.i[1] = x.shape[1];
    L.A.i[2] = x.shape[2];
    L.A.i[3] = whh.shape[1];
    L.A.i[4] = m.id;
    L.A.i[5] = a.attr_bool("reverse");
    const int flags[][2] = {{kBih, 1}, {kBhh, 2}, {kLengths, 4}, {kC0, 8}, {kGradY, 16}, {kGradH, 32}, {kGradC, 64}};
    for (auto [slot, bit] : flags)
      if (has(a, slot)) L.A.i[7] |= bit;
    L.A.i[8] = m.gates;
    return L;
  }

  static Operand at(Operand o, int64_t bytes) {
    o.offset += bytes;
    return o;
  }

  // C = op(A) op(B) (+ C): the backend's BLAS when it has one, else rnn_gemm.
  static void gemm(B& b, const Gemm& g) {
    if (g.M * g.N == 0) return;
    if (g.K == 0) {  // an empty sum (ldc == N in every product here)
      if (!g.accumulate) {
        std::vector<char> zeros(uint64_t(g.M * g.N) * sdk::dtype_size(g.t), 0);
        b.write(g.c, zeros.data(), zeros.size());
      }
      return;
    }
    if constexpr (requires { b.gemm(g); }) {
      b.gemm(g);
    } else {
      Launch L;
      L.family = "rnn";
      L.t = g.t;
      L.lanes = g.M * g.N;
      L.work_per_lane = g.K;
      L.p[0] = g.c;
      L.p[1] = g.a;
      L.p[2] = g.b;
      L.A.i[0] = g.M;
      L.A.i[1] = g.N;
      L.A.i[2] = g.K;
      L.A.i[3] = g.trans_a ? 1 : g.lda;
      L.A.i[4] = g.trans_a ? g.lda : 1;
      L.A.i[5] = g.trans_b ? 1 : g.ldb;
      L.A.i[6] = g.trans_b ? g.ldb : 1;
      L.A.i[7] = g.ldc;
      L.A.i[8] = g.accumulate;
      OAR_KP_LAUNCH(RnnKernels, kFloat, b, L, rnn_gemm);
    }
  }
  static Gemm product(oar_dtype_t t, int64_t M, int64_t N, int64_t K, Operand a, int64_t lda, bool ta, Operand b_,
                      int64_t ldb, bool tb, Operand c, int64_t ldc, bool accumulate = false) {
    Gemm g;
    g.t = t;
    g.M = M, g.N = N, g.K = K;
    g.a = a, g.lda = lda, g.trans_a = ta;
    g.b = b_, g.ldb = ldb, g.trans_b = tb;
    g.c = c, g.ldc = ldc, g.accumulate = accumulate;
    return g;
  }

  struct Temps {
    Operand states, ws;
  };

  // The forward pass into temporaries (and y, h_n, c_n when given).
  static Temps run_forward(B& b, const Launch& L, const oar_tensor_view* y, const oar_tensor_view* hn,
                           const oar_tensor_view* cn) {
    const sdk::KernelArgs& a = b.args();
    const int64_t T = L.A.i[0], N = L.A.i[1], I = L.A.i[2], H = L.A.i[3], GH = L.A.i[8] * H;
    const uint64_t acc = sdk::dtype_size(L.t);  // temporaries are T_t (rnn.kp)
    auto scratch = [&](int64_t n) { return b.temp(uint64_t(std::max<int64_t>(n, 1)) * acc); };
    Temps tmp;
    tmp.states = scratch(2 * (T + 1) * N * H);
    tmp.ws = scratch(T * N * 4 * H);
    if (N * H == 0) return tmp;
    const Operand none{};
    auto opt = [&](int k) { return has(a, k) ? operand(a.input(k)) : none; };
    Launch P = L;
    P.lanes = N * H;
    P.p[0] = tmp.states;
    P.p[1] = operand(a.input(kH0));
    P.p[2] = opt(kC0);
    OAR_KP_LAUNCH(RnnKernels, kFloat, b, P, rnn_init);
    const Operand xg = scratch(T * N * GH), hw = scratch(N * GH);
    gemm(b, product(L.t, T * N, GH, I, operand(a.input(kX)), I, false, operand(a.input(kWih)), I, true, xg, GH));
    // Without an output to write (the backward's recompute), steps write y to a scratch.
    const Operand yout = y ? operand(*y) : scratch(T * N * H);
    Launch St = L;
    St.lanes = N * H;
    St.work_per_lane = 4 * L.A.i[8];
    St.p[0] = tmp.states;
    St.p[1] = xg;
    St.p[2] = hw;
    St.p[3] = opt(kBih);
    St.p[4] = opt(kBhh);
    St.p[5] = opt(kLengths);
    St.p[6] = tmp.ws;
    St.p[7] = yout;
    const bool rev = L.A.i[5] != 0;
    for (int64_t k = 0; k < T; ++k) {
      const int64_t t = rev ? T - 1 - k : k, before = rev ? t + 1 : t;
      gemm(b, product(L.t, N, GH, H, at(tmp.states, before * N * H * int64_t(acc)), H, false,
                      operand(a.input(kWhh)), H, true, hw, GH));
      St.A.i[6] = t;
      OAR_KP_LAUNCH(RnnKernels, kFloat, b, St, rnn_step);
    }
    if (hn) {
      Launch F = L;
      F.lanes = N * H;
      F.p[0] = operand(*hn);
      F.p[1] = operand(*cn);
      F.p[2] = tmp.states;
      OAR_KP_LAUNCH(RnnKernels, kFloat, b, F, rnn_final);
    }
    return tmp;
  }

  // rnn_layer(x, hx, w_ih, w_hh, cx?, b_ih?, b_hh?, lengths?) -> y, h_n, c_n
  static void forward(B& b) {
    const sdk::KernelArgs& a = b.args();
    const Launch L = sizes(a);
    run_forward(b, L, &a.output(0), &a.output(1), &a.output(2));
  }

  // rnn_layer_backward(x, hx, w_ih, w_hh, cx?, b_ih?, b_hh?, lengths?, grad_y?, grad_h_n?, grad_c_n?)
  //   -> grad_x, grad_hx, grad_cx, grad_w_ih, grad_w_hh, grad_b_ih, grad_b_hh
  static void backward(B& b) {
    const sdk::KernelArgs& a = b.args();
    Launch L = sizes(a);
    const int64_t T = L.A.i[0], N = L.A.i[1], I = L.A.i[2], H = L.A.i[3], GH = L.A.i[8] * H;
    const uint64_t acc = sdk::dtype_size(L.t);  // temporaries are T_t (rnn.kp)
    auto scratch = [&](int64_t n) { return b.temp(uint64_t(std::max<int64_t>(n, 1)) * acc); };
    const Temps tmp = run_forward(b, L, nullptr, nullptr, nullptr);
    const Operand dh = scratch(N * H), dc = scratch(N * H), dgi = scratch(T * N * GH), dgh = scratch(T * N * GH);
    const Operand none{};
    auto opt = [&](int k) { return has(a, k) ? operand(a.input(k)) : none; };
    if (N * H > 0) {
      Launch P = L;
      P.lanes = N * H;
      P.p[0] = dh;
      P.p[1] = dc;
      P.p[2] = opt(kGradH);
      P.p[3] = opt(kGradC);
      OAR_KP_LAUNCH(RnnKernels, kFloat, b, P, rnn_back_init);
      Launch Gt = L;
      Gt.lanes = N * H;
      Gt.work_per_lane = 4 * L.A.i[8];
      Gt.p[0] = dh;
      Gt.p[1] = dc;
      Gt.p[2] = opt(kGradY);
      Gt.p[3] = tmp.states;
      Gt.p[4] = tmp.ws;
      Gt.p[5] = opt(kLengths);
      Gt.p[6] = dgi;
      Gt.p[7] = dgh;
      const bool rev = L.A.i[5] != 0;
      for (int64_t k = T - 1; k >= 0; --k) {
        const int64_t t = rev ? T - 1 - k : k;
        Gt.A.i[6] = t;
        OAR_KP_LAUNCH(RnnKernels, kFloat, b, Gt, rnn_back_gates);
        // dh (now the part that skips W_hh) += dgh[t] W_hh
        gemm(b, product(L.t, N, H, GH, at(dgh, t * N * GH * int64_t(acc)), GH, false, operand(a.input(kWhh)), H,
                        false, dh, H, true));
      }
      Launch F = L;
      F.lanes = N * H;
      F.p[0] = operand(a.output(1));
      F.p[1] = operand(a.output(2));
      F.p[2] = dh;
      F.p[3] = dc;
      OAR_KP_LAUNCH(RnnKernels, kFloat, b, F, rnn_back_final);
    }
    // With no step or no sequence the gate gradients are empty sums: zeros.
    const oar_tensor_view &gx = a.output(0), &gwih = a.output(3), &gwhh = a.output(4);
    auto zero = [&](const oar_tensor_view& v) {
      std::vector<char> zeros(uint64_t(sdk::numel(v)) * sdk::dtype_size(v.dtype), 0);
      if (!zeros.empty()) b.write(operand(v), zeros.data(), zeros.size());
    };
    if (T * N == 0) {
      zero(gwih);
      zero(gwhh);
    } else {
      gemm(b, product(L.t, T * N, I, GH, dgi, GH, false, operand(a.input(kWih)), I, false, operand(gx), I));
      gemm(b, product(L.t, GH, I, T * N, dgi, GH, true, operand(a.input(kX)), I, false, operand(gwih), I));
      // The states before each step, in time order, start at slot 0 (forward) or 1 (reversed).
      const Operand before = at(tmp.states, (L.A.i[5] ? N * H : 0) * int64_t(acc));
      gemm(b, product(L.t, GH, H, T * N, dgh, GH, true, before, H, false, operand(gwhh), H));
    }
    if (GH == 0) return;
    Launch W = L;
    W.lanes = GH;
    W.work_per_lane = T * N;
    W.p[0] = operand(a.output(5));
    W.p[1] = operand(a.output(6));
    W.p[2] = dgi;
    W.p[3] = dgh;
    OAR_KP_LAUNCH(RnnKernels, kFloat, b, W, rnn_back_bias);
  }

  // float32 / float64: the state and gradients accumulate over every step.
  static oar_status_t register_ops(Registrar& all) {
    Registrar r = all.with_floats({OAR_DTYPE_F32, OAR_DTYPE_F64});
    r.add("rnn_layer", "TTTT", DTypeSet::kFloat, entry<B, &forward>);
    return r.add("rnn_layer_backward", "TTTT", DTypeSet::kFloat, entry<B, &backward>);
  }
};

}  // namespace oar::kp::family
