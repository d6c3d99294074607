// CPU rnn_layer / rnn_layer_backward on oneDNN's RNN primitives (vanilla
// RNN, LSTM, linear-before-reset GRU, which is PyTorch's GRU), f32, above the
// rnn family of kernel_primitives/ (which serves f64 and packed batches:
// oneDNN has no per-sequence lengths, so `supports` declines them).
// PyTorch's layout maps onto oneDNN's: w_ih [G*H, I] is ldgoi with L = D = 1,
// the states are ldnc, the two biases add up (GRU keeps b_hn apart as the
// fourth "linear before reset" gate). GRU's gates are r, z, n in PyTorch and
// u(z), r, o(n) in oneDNN, so its weights are permuted on the way in and the
// gradients back on the way out. The backward reruns the forward in training
// mode for oneDNN's workspace (the op boundary carries no reserve space).
#include <algorithm>
#include <cstring>
#include <tuple>

#include "ops/dnnl_common.h"
#include "ops/ops.h"

namespace oar_cpu {

namespace {

using namespace nn;
using dnnl::memory;
using Tag = memory::format_tag;

enum Mode : int64_t { kTanh, kRelu, kLstm, kGru };
enum { kX, kH0, kWih, kWhh, kC0, kBih, kBhh, kLengths, kGradY, kGradH, kGradC };

struct RnnGeom {
  Mode mode;
  bool reverse, backward;
  int64_t T, N, I, H, G;
  int64_t bias_gates() const { return mode == kGru ? 4 : G; }
};

RnnGeom geometry(const sdk::KernelArgs& a, bool backward) {
  const std::string m = a.attr_string("mode");
  RnnGeom g;
  g.mode = m == "LSTM" ? kLstm : m == "GRU" ? kGru : m == "RNN_RELU" ? kRelu : kTanh;
  g.G = g.mode == kLstm ? 4 : g.mode == kGru ? 3 : 1;
  g.reverse = a.attr_bool("reverse");
  g.backward = backward;
  const oar_tensor_view& x = a.input(kX);
  g.T = x.shape[0], g.N = x.shape[1], g.I = x.shape[2], g.H = a.input(kWhh).shape[1];
  return g;
}

PrimitiveCache& cache() {
  static PrimitiveCache c;
  return c;
}

// User-side descs: x/y tnc, states ldnc, weights ldgoi, bias ldgo.
struct Descs {
  memory::desc src, src_iter, w_layer, w_iter, bias, dst, dst_iter;
};
Descs user_descs(const RnnGeom& g) {
  const auto f32 = memory::data_type::f32;
  return {memory::desc({g.T, g.N, g.I}, f32, Tag::tnc),        memory::desc({1, 1, g.N, g.H}, f32, Tag::ldnc),
          memory::desc({1, 1, g.I, g.G, g.H}, f32, Tag::ldgoi), memory::desc({1, 1, g.H, g.G, g.H}, f32, Tag::ldgoi),
          memory::desc({1, 1, g.bias_gates(), g.H}, f32, Tag::ldgo), memory::desc({g.T, g.N, g.H}, f32, Tag::tnc),
          memory::desc({1, 1, g.N, g.H}, f32, Tag::ldnc)};
}

// The forward (inference or training) primitive desc of mode g.mode, weights in `any` layout.
dnnl::primitive_desc forward_pd(const RnnGeom& g, const Descs& d, dnnl::prop_kind prop) {
  using namespace dnnl;
  const auto dir = g.reverse ? rnn_direction::unidirectional_right2left : rnn_direction::unidirectional_left2right;
  const memory::desc wl = memory::desc(d.w_layer.dims(), memory::data_type::f32, Tag::any);
  const memory::desc wi = memory::desc(d.w_iter.dims(), memory::data_type::f32, Tag::any);
  switch (g.mode) {
    case kLstm:
      return lstm_forward::primitive_desc(lstm_forward::desc(prop, dir, d.src, d.src_iter, d.src_iter, wl, wi, d.bias,
                                                             d.dst, d.dst_iter, d.dst_iter),
                                          engine());
    case kGru:
      return lbr_gru_forward::primitive_desc(
          lbr_gru_forward::desc(prop, dir, d.src, d.src_iter, wl, wi, d.bias, d.dst, d.dst_iter), engine());
    default:
      return vanilla_rnn_forward::primitive_desc(
          vanilla_rnn_forward::desc(prop, g.mode == kRelu ? algorithm::eltwise_relu : algorithm::eltwise_tanh, dir,
                                    d.src, d.src_iter, wl, wi, d.bias, d.dst, d.dst_iter),
          engine());
  }
}

dnnl::primitive_desc backward_pd(const RnnGeom& g, const Descs& d, const dnnl::primitive_desc& fwd) {
  using namespace dnnl;
  const auto dir = g.reverse ? rnn_direction::unidirectional_right2left : rnn_direction::unidirectional_left2right;
  const auto bwd = prop_kind::backward;
  const memory::desc wl = memory::desc(d.w_layer.dims(), memory::data_type::f32, Tag::any);
  const memory::desc wi = memory::desc(d.w_iter.dims(), memory::data_type::f32, Tag::any);
  switch (g.mode) {
    case kLstm:
      return lstm_backward::primitive_desc(
          lstm_backward::desc(bwd, dir, d.src, d.src_iter, d.src_iter, wl, wi, d.bias, d.dst, d.dst_iter, d.dst_iter,
                              d.src, d.src_iter, d.src_iter, wl, wi, d.bias, d.dst, d.dst_iter, d.dst_iter),
          engine(), lstm_forward::primitive_desc(fwd.get()));
    case kGru:
      return lbr_gru_backward::primitive_desc(
          lbr_gru_backward::desc(bwd, dir, d.src, d.src_iter, wl, wi, d.bias, d.dst, d.dst_iter, d.src, d.src_iter, wl,
                                 wi, d.bias, d.dst, d.dst_iter),
          engine(), lbr_gru_forward::primitive_desc(fwd.get()));
    default:
      return vanilla_rnn_backward::primitive_desc(
          vanilla_rnn_backward::desc(bwd, g.mode == kRelu ? algorithm::eltwise_relu : algorithm::eltwise_tanh, dir,
                                     d.src, d.src_iter, wl, wi, d.bias, d.dst, d.dst_iter, d.src, d.src_iter, wl, wi,
                                     d.bias, d.dst, d.dst_iter),
          engine(), vanilla_rnn_forward::primitive_desc(fwd.get()));
  }
}

// mds: the forward's weights (layer, iter); for the backward also its own
// weights and diff weights (layer, iter).
CachedPtr lookup(const RnnGeom& g) {
  Key key;
  key.add(g.mode).add(g.reverse).add(g.backward).add(g.T).add(g.N).add(g.I).add(g.H);
  return cache().get(key, [&](Cached& e) {
    const Descs d = user_descs(g);
    auto md = [](const dnnl::primitive_desc& pd, int arg) { return pd.query_md(dnnl::query::exec_arg_md, arg); };
    if (!g.backward) {
      dnnl::primitive_desc pd = forward_pd(g, d, dnnl::prop_kind::forward_inference);
      e.prim = dnnl::primitive(pd);
      e.mds = {md(pd, DNNL_ARG_WEIGHTS_LAYER), md(pd, DNNL_ARG_WEIGHTS_ITER)};
      return;
    }
    dnnl::primitive_desc fwd = forward_pd(g, d, dnnl::prop_kind::forward_training);
    dnnl::primitive_desc bwd = backward_pd(g, d, fwd);
    e.fwd = dnnl::primitive(fwd);
    e.prim = dnnl::primitive(bwd);
    e.workspace_md = md(fwd, DNNL_ARG_WORKSPACE);
    e.mds = {md(fwd, DNNL_ARG_WEIGHTS_LAYER), md(fwd, DNNL_ARG_WEIGHTS_ITER),
             md(bwd, DNNL_ARG_WEIGHTS_LAYER), md(bwd, DNNL_ARG_WEIGHTS_ITER),
             md(bwd, DNNL_ARG_DIFF_WEIGHTS_LAYER), md(bwd, DNNL_ARG_DIFF_WEIGHTS_ITER)};
  });
}

int32_t rnn_supports(const oar_kernel_context* ctx, char* reason, size_t size) {
  return answer_supports(ctx, reason, size, [](const sdk::KernelArgs& a) -> std::string {
    if (a.has_input(kLengths)) return "oneDNN's RNN has no per-sequence lengths (packed batches)";
    const bool backward = std::strcmp(a.context().op_name, "rnn_layer_backward") == 0;
    const RnnGeom g = geometry(a, backward);
    if (g.T == 0 || g.N == 0 || g.I == 0) return "empty input";
    const std::string& err = lookup(g)->error;
    return err.empty() ? err : "oneDNN RNN: " + err;
  });
}

float* scratch(const sdk::KernelArgs& a, int64_t n) {
  return static_cast<float*>(a.workspace(uint64_t(std::max<int64_t>(n, 1)) * sizeof(float)));
}

// PyTorch gate block k of a [G*H, X] weight (or [G*H] bias) at oneDNN's position.
int64_t dnnl_gate(const RnnGeom& g, int64_t k) { return g.mode == kGru ? (k == 0 ? 1 : k == 1 ? 0 : 2) : k; }

// A PyTorch [G*H, X] weight as oneDNN's ldgoi (gate blocks permuted for GRU).
const float* weights_in(const sdk::KernelArgs& a, const RnnGeom& g, int slot) {
  const float* w = static_cast<const float*>(dense_input(a, slot));
  if (g.mode != kGru) return w;
  const int64_t block = g.H * a.input(slot).shape[1];
  float* p = scratch(a, g.G * block);
  for (int64_t k = 0; k < g.G; ++k) std::memcpy(p + dnnl_gate(g, k) * block, w + k * block, size_t(block) * 4);
  return p;
}

// The combined bias: b_ih + b_hh per gate; GRU: [z, r, n_ih, n_hh].
const float* bias_in(const sdk::KernelArgs& a, const RnnGeom& g) {
  float* b = scratch(a, g.bias_gates() * g.H);
  std::fill(b, b + g.bias_gates() * g.H, 0.0f);
  for (int slot : {int(kBih), int(kBhh)}) {
    if (!a.has_input(slot)) continue;
    const float* src = static_cast<const float*>(dense_input(a, slot));
    for (int64_t k = 0; k < g.G; ++k) {
      const int64_t at = g.mode == kGru && k == 2 && slot == kBhh ? 3 : dnnl_gate(g, k);
      for (int64_t j = 0; j < g.H; ++j) b[at * g.H + j] += src[k * g.H + j];
    }
  }
  return b;
}

// Optional input `slot` ([n] elements), or zeros when absent (a state or a gradient).
const void* input_or_zeros(const sdk::KernelArgs& a, int slot, int64_t n) {
  if (a.has_input(slot)) return dense_input(a, slot);
  float* p = scratch(a, n);
  std::fill(p, p + n, 0.0f);
  return p;
}

// `src` in layout `from` as a memory in layout `to` (a reorder when they differ).
memory as_layout(const memory::desc& from, const void* src, const memory::desc& to, const sdk::KernelArgs& a) {
  memory m = make_memory(from, src);
  if (from == to) return m;
  memory out(to, engine(), a.workspace(to.get_size()));
  execute(dnnl::reorder(m, out), {{DNNL_ARG_FROM, m}, {DNNL_ARG_TO, out}});
  return out;
}

oar_status_t forward_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const RnnGeom g = geometry(a, false);
    const Cached& c = require_ok(lookup(g), "rnn_layer");
    const Descs d = user_descs(g);
    DenseOutput y(a, 0), hn(a, 1), cn(a, 2);
    std::unordered_map<int, memory> args = {
        {DNNL_ARG_SRC_LAYER, make_memory(d.src, dense_input(a, kX))},
        {DNNL_ARG_SRC_ITER, make_memory(d.src_iter, dense_input(a, kH0))},
        {DNNL_ARG_WEIGHTS_LAYER, as_layout(d.w_layer, weights_in(a, g, kWih), c.mds[0], a)},
        {DNNL_ARG_WEIGHTS_ITER, as_layout(d.w_iter, weights_in(a, g, kWhh), c.mds[1], a)},
        {DNNL_ARG_BIAS, make_memory(d.bias, bias_in(a, g))},
        {DNNL_ARG_DST_LAYER, make_memory(d.dst, y.data())},
        {DNNL_ARG_DST_ITER, make_memory(d.dst_iter, hn.data())}};
    if (g.mode == kLstm) {
      args[DNNL_ARG_SRC_ITER_C] = make_memory(d.src_iter, input_or_zeros(a, kC0, g.N * g.H));
      args[DNNL_ARG_DST_ITER_C] = make_memory(d.dst_iter, cn.data());
    } else {
      std::fill(cn.as<float>(), cn.as<float>() + g.N * g.H, 0.0f);
    }
    execute(c.prim, args);
    y.finish(), hn.finish(), cn.finish();
  });
}

oar_status_t backward_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const RnnGeom g = geometry(a, true);
    const Cached& c = require_ok(lookup(g), "rnn_layer_backward");
    const Descs d = user_descs(g);
    const memory x = make_memory(d.src, dense_input(a, kX));
    const memory h0 = make_memory(d.src_iter, dense_input(a, kH0));
    const memory c0 = make_memory(d.src_iter, input_or_zeros(a, kC0, g.N * g.H));
    const memory bias = make_memory(d.bias, bias_in(a, g));
    const float* wih = weights_in(a, g, kWih);
    const float* whh = weights_in(a, g, kWhh);
    // The forward again, in training mode: its outputs and oneDNN's workspace.
    const memory y(d.dst, engine(), scratch(a, g.T * g.N * g.H));
    const memory hn(d.dst_iter, engine(), scratch(a, g.N * g.H));
    const memory cn(d.dst_iter, engine(), scratch(a, g.N * g.H));
    const memory ws(c.workspace_md, engine(), a.workspace(c.workspace_md.get_size()));
    std::unordered_map<int, memory> fargs = {{DNNL_ARG_SRC_LAYER, x},
                                             {DNNL_ARG_SRC_ITER, h0},
                                             {DNNL_ARG_WEIGHTS_LAYER, as_layout(d.w_layer, wih, c.mds[0], a)},
                                             {DNNL_ARG_WEIGHTS_ITER, as_layout(d.w_iter, whh, c.mds[1], a)},
                                             {DNNL_ARG_BIAS, bias},
                                             {DNNL_ARG_DST_LAYER, y},
                                             {DNNL_ARG_DST_ITER, hn},
                                             {DNNL_ARG_WORKSPACE, ws}};
    if (g.mode == kLstm) fargs[DNNL_ARG_SRC_ITER_C] = c0, fargs[DNNL_ARG_DST_ITER_C] = cn;
    execute(c.fwd, fargs);

    DenseOutput gx(a, 0), gh0(a, 1), gc0(a, 2), gwih(a, 3), gwhh(a, 4), gbih(a, 5), gbhh(a, 6);
    // oneDNN accumulates into the weight and bias gradients: they start at zero.
    const memory dwl(c.mds[4], engine(), a.workspace(c.mds[4].get_size()));
    const memory dwi(c.mds[5], engine(), a.workspace(c.mds[5].get_size()));
    float* db = scratch(a, g.bias_gates() * g.H);
    std::memset(dwl.get_data_handle(), 0, c.mds[4].get_size());
    std::memset(dwi.get_data_handle(), 0, c.mds[5].get_size());
    std::fill(db, db + g.bias_gates() * g.H, 0.0f);
    std::unordered_map<int, memory> bargs = {
        {DNNL_ARG_SRC_LAYER, x},
        {DNNL_ARG_SRC_ITER, h0},
        {DNNL_ARG_WEIGHTS_LAYER, as_layout(d.w_layer, wih, c.mds[2], a)},
        {DNNL_ARG_WEIGHTS_ITER, as_layout(d.w_iter, whh, c.mds[3], a)},
        {DNNL_ARG_BIAS, bias},
        {DNNL_ARG_DST_LAYER, y},
        {DNNL_ARG_DST_ITER, hn},
        {DNNL_ARG_WORKSPACE, ws},
        {DNNL_ARG_DIFF_SRC_LAYER, make_memory(d.src, gx.data())},
        {DNNL_ARG_DIFF_SRC_ITER, make_memory(d.src_iter, gh0.data())},
        {DNNL_ARG_DIFF_WEIGHTS_LAYER, dwl},
        {DNNL_ARG_DIFF_WEIGHTS_ITER, dwi},
        {DNNL_ARG_DIFF_BIAS, make_memory(d.bias, db)},
        {DNNL_ARG_DIFF_DST_LAYER, make_memory(d.dst, input_or_zeros(a, kGradY, g.T * g.N * g.H))},
        {DNNL_ARG_DIFF_DST_ITER, make_memory(d.dst_iter, input_or_zeros(a, kGradH, g.N * g.H))}};
    if (g.mode == kLstm) {
      bargs[DNNL_ARG_SRC_ITER_C] = c0;
      bargs[DNNL_ARG_DST_ITER_C] = cn;
      bargs[DNNL_ARG_DIFF_SRC_ITER_C] = make_memory(d.src_iter, gc0.data());
      bargs[DNNL_ARG_DIFF_DST_ITER_C] = make_memory(d.dst_iter, input_or_zeros(a, kGradC, g.N * g.H));
    } else {
      std::fill(gc0.as<float>(), gc0.as<float>() + g.N * g.H, 0.0f);
    }
    execute(c.prim, bargs);

    // Weight gradients back to PyTorch's layout and gate order.
    for (auto [slot, dw, out] : {std::tuple{kWih, &dwl, &gwih}, std::tuple{kWhh, &dwi, &gwhh}}) {
      const int64_t cols = a.input(slot).shape[1], block = g.H * cols;
      const memory::desc user = slot == kWih ? d.w_layer : d.w_iter;
      float* dense = g.mode == kGru ? scratch(a, g.G * block) : out->as<float>();
      memory dst = make_memory(user, dense);
      execute(dnnl::reorder(*dw, dst), {{DNNL_ARG_FROM, *dw}, {DNNL_ARG_TO, dst}});
      if (g.mode == kGru)
        for (int64_t k = 0; k < g.G; ++k)
          std::memcpy(out->as<float>() + k * block, dense + dnnl_gate(g, k) * block, size_t(block) * 4);
    }
    for (int64_t k = 0; k < g.G; ++k) {
      const float* src = db + dnnl_gate(g, k) * g.H;
      const float* src_hh = g.mode == kGru && k == 2 ? db + 3 * g.H : src;
      std::memcpy(gbih.as<float>() + k * g.H, src, size_t(g.H) * 4);
      std::memcpy(gbhh.as<float>() + k * g.H, src_hh, size_t(g.H) * 4);
    }
    gx.finish(), gh0.finish(), gc0.finish(), gwih.finish(), gwhh.finish(), gbih.finish(), gbhh.finish();
  });
}

}  // namespace

oar_status_t register_rnn_kernels(const oar_kernel_registrar* r) {
  static constexpr oar_dtype_t kF32[] = {OAR_DTYPE_F32};
  // Signatures hold the required inputs only (x, hx, w_ih, w_hh).
  if (auto st = sdk::register_same_dtype(r, "rnn_layer", kF32, 4, forward_kernel, "onednn", 10, rnn_supports))
    return st;
  return sdk::register_same_dtype(r, "rnn_layer_backward", kF32, 4, backward_kernel, "onednn", 10, rnn_supports);
}

}  // namespace oar_cpu
