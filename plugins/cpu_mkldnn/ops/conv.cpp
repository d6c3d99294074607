// CPU conv2d and its two backward ops: oneDNN convolution primitives for f32
// (and bf16 where the CPU has it), plus reference loops for every float dtype
// that also serve what oneDNN declines. Dispatch hands over plain NCHW / OIHW
// memory (inputs made contiguous). On plain memory oneDNN 2.6 runs its im2col +
// GEMM convolution; its direct JIT kernels want blocked layouts (nChw16c), which
// the primitive chooses itself (format_tag::any) and the kernel reorders in and
// out of through workspaces: 1.4-4x faster per call at ResNet sizes even with
// the reorders (docs/performance.md). blocked_layout() decides per call which of
// the two runs. PyTorch's grouped weight [C_out, C_in / groups, kH, kW] is
// oneDNN's goihw layout byte for byte, and oneDNN counts dilation from 0 where
// PyTorch counts from 1.
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>

#include "oar/plugin_sdk/op_geometry.hpp"
#include "ops/dnnl_common.h"
#include "ops/ops.h"

namespace oar_cpu {

namespace {

using namespace nn;

enum ConvKind : int64_t { kForward, kBackwardData, kBackwardWeight };


struct ConvGeom : sdk::ConvParams {
  ConvKind kind;
  oar_dtype_t dtype;
  Dims x, w, y;  // [N, C, H, W], [OC, C / g, KH, KW], [N, OC, OH, OW]
  bool bias = false;
  Activation act = kNoActivation;  // conv2d_act: applied to the output in the same kernel
};


ConvGeom geometry(const sdk::KernelArgs& a, ConvKind kind) {
  ConvGeom g;
  g.kind = kind;
  g.dtype = a.output(0).dtype;
  static_cast<sdk::ConvParams&>(g) = sdk::conv_params(a);
  if (kind == kForward) {
    g.x = dims_of(a.input(0)), g.w = dims_of(a.input(1)), g.y = dims_of(a.output(0));
    g.bias = a.has_input(2);
    g.act = activation_of(a, "conv2d_act");
  } else if (kind == kBackwardData) {
    g.y = dims_of(a.input(0)), g.w = dims_of(a.input(1)), g.x = dims_of(a.output(0));
  } else {
    g.y = dims_of(a.input(0)), g.x = dims_of(a.input(1)), g.w = dims_of(a.output(0));
  }
  return g;
}

constexpr const char* kLayoutFlag = "OAR_CPU_MKLDNN_CONV_LAYOUT";

// Blocked layouts (with reorders) or the plain-memory GEMM path. Measured on
// AVX-512 with one thread (tests compare both paths): blocked wins 1.4-4x on
// 3x3 convolutions from 16 channels up and 3-7x on grouped/depthwise ones;
// plain wins on 1x1 convolutions (a GEMM already), on the image-input layer
// (C < 4) except its weight gradient, and where the weights outweigh the
// activations 16 to 1 (batch-1 deep layers: the weight reorder dominates).
bool blocked_layout(const ConvGeom& g) {
  char mode[16] = "auto";
  if (const oar_host_api* h = host()) h->get_flag(kLayoutFlag, mode, sizeof(mode));
  if (std::strcmp(mode, "plain") == 0) return false;
  if (std::strcmp(mode, "blocked") == 0) return true;
  int64_t KHW = g.w[2] * g.w[3], Cg = g.w[1];
  if (g.groups == 1 && KHW == 1) return false;
  if (g.groups == 1 && Cg < 4 && g.kind != kBackwardWeight) return false;
  int64_t weights = g.w[0] * Cg * KHW;
  int64_t activations = g.x[0] * g.x[1] * g.x[2] * g.x[3] + g.y[0] * g.y[1] * g.y[2] * g.y[3];
  return weights <= 16 * activations;
}

PrimitiveCache& cache() {
  static PrimitiveCache c;
  return c;
}

// Operand roles in Cached::staged (and mds, their plain descs).
enum Role { kX, kW, kY, kBias };

CachedPtr lookup(const ConvGeom& g) {
  bool blocked = blocked_layout(g);
  Key key;
  key.add(g.kind).add(g.dtype).add(g.x).add(g.w).add(g.y).add(g.bias).add(blocked);
  key.add(g.sh).add(g.sw).add(g.ph).add(g.pw).add(g.dh).add(g.dw).add(g.groups).add(int64_t(g.act));
  return cache().get(key, [&](Cached& e) {
    using namespace dnnl;
    Dims wd = g.groups == 1 ? g.w : Dims{g.groups, g.w[0] / g.groups, g.w[1], g.w[2], g.w[3]};
    memory::desc px = dense_md(g.x, g.dtype), pw = dense_md(wd, g.dtype), py = dense_md(g.y, g.dtype);
    auto any = [&](const Dims& d) { return memory::desc(d, dnnl_dtype(g.dtype), memory::format_tag::any); };
    memory::desc x_md = blocked ? any(g.x) : px, w_md = blocked ? any(wd) : pw, y_md = blocked ? any(g.y) : py;
    memory::desc b_md = g.bias ? dense_md({g.w[0]}, g.dtype) : memory::desc();
    Dims strides{g.sh, g.sw}, dil{g.dh - 1, g.dw - 1}, pad{g.ph, g.pw};
    auto fwd_desc = g.bias ? convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct,
                                                       x_md, w_md, b_md, y_md, strides, dil, pad, pad)
                           : convolution_forward::desc(prop_kind::forward_training, algorithm::convolution_direct,
                                                       x_md, w_md, y_md, strides, dil, pad, pad);
    convolution_forward::primitive_desc fwd(fwd_desc, activation_attr(g.act), engine());
    // The operands in the layouts the primitive chose; the kernel's output is staged out, its inputs in.
    if (g.kind == kForward) {
      e.prim = convolution_forward(fwd);
      e.staged = {stage(px, fwd.src_desc(), true), stage(pw, fwd.weights_desc(), true),
                  stage(py, fwd.dst_desc(), false)};
    } else if (g.kind == kBackwardData) {
      convolution_backward_data::primitive_desc pd(
          convolution_backward_data::desc(algorithm::convolution_direct, x_md, w_md, y_md, strides, dil, pad, pad),
          engine(), fwd);
      e.prim = convolution_backward_data(pd);
      e.staged = {stage(px, pd.diff_src_desc(), false), stage(pw, pd.weights_desc(), true),
                  stage(py, pd.diff_dst_desc(), true)};
    } else {
      convolution_backward_weights::primitive_desc pd(
          convolution_backward_weights::desc(algorithm::convolution_direct, x_md, w_md, y_md, strides, dil, pad, pad),
          engine(), fwd);
      e.prim = convolution_backward_weights(pd);
      e.staged = {stage(px, pd.src_desc(), true), stage(pw, pd.diff_weights_desc(), false),
                  stage(py, pd.diff_dst_desc(), true)};
    }
    e.mds = {px, pw, py, b_md};
  });
}

template <ConvKind kind>
int32_t dnnl_supports(const oar_kernel_context* ctx, char* reason, size_t size) {
  return answer_supports(ctx, reason, size, [](const sdk::KernelArgs& a) -> std::string {
    for (int i = 0; i < 2; ++i)
      if (sdk::numel(a.input(i)) == 0) return "empty input";
    ConvGeom g = geometry(a, kind);
    const std::string& err = lookup(g)->error;
    return err.empty() ? err : std::string("oneDNN cannot create a ") + sdk::dtype_name(g.dtype) + " convolution here (" + err + ")";
  });
}

template <ConvKind kind>
oar_status_t dnnl_conv_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    ConvGeom g = geometry(a, kind);
    const Cached& c = require_ok(lookup(g), "conv2d");
    DenseOutput out(a, 0);
    // Forward reads x, w and writes y; backward-data reads dy, w and writes dx;
    // backward-weights reads dy, x and writes dw.
    Role out_role = kind == kForward ? kY : kind == kBackwardData ? kX : kW;
    Role in0_role = kind == kForward ? kX : kY, in1_role = kind == kBackwardWeight ? kX : kW;
    dnnl::memory in0 = staged_input(c.staged[in0_role], dense_input(a, 0), a);
    dnnl::memory in1 = staged_input(c.staged[in1_role], dense_input(a, 1), a);
    dnnl::memory dst = staged_output(c.staged[out_role], out.data(), a);
    std::unordered_map<int, dnnl::memory> args;
    if (kind == kForward) {
      args = {{DNNL_ARG_SRC, in0}, {DNNL_ARG_WEIGHTS, in1}, {DNNL_ARG_DST, dst}};
      if (g.bias) args[DNNL_ARG_BIAS] = make_memory(c.mds[kBias], dense_input(a, 2));
    } else if (kind == kBackwardData) {
      args = {{DNNL_ARG_DIFF_DST, in0}, {DNNL_ARG_WEIGHTS, in1}, {DNNL_ARG_DIFF_SRC, dst}};
    } else {
      args = {{DNNL_ARG_DIFF_DST, in0}, {DNNL_ARG_SRC, in1}, {DNNL_ARG_DIFF_WEIGHTS, dst}};
    }
    execute(c.prim, args);
    staged_output_done(c.staged[out_role], dst, out.data());
    out.finish();
  });
}

// ---- reference loops (double accumulation) ----

template <class T>
struct RefConv {
  const ConvGeom& g;
  int64_t N, C, H, W, OC, KH, KW, OH, OW, Cg, OCg;
  explicit RefConv(const ConvGeom& geom)
      : g(geom), N(g.x[0]), C(g.x[1]), H(g.x[2]), W(g.x[3]), OC(g.w[0]), KH(g.w[2]), KW(g.w[3]), OH(g.y[2]),
        OW(g.y[3]), Cg(g.w[1]), OCg(g.w[0] / g.groups) {}

  // y[n, oc] = bias[oc] + sum over the group's channels and the kernel window.
  void forward(const T* x, const T* w, const T* bias, T* y) const {
    kp::cpu::parallel_for(N * OC, kp::cpu::grain_for_work(OH * OW * Cg * KH * KW), [&](int64_t lo, int64_t hi) {
      for (int64_t no = lo; no < hi; ++no) {
        int64_t n = no / OC, oc = no % OC, c0 = (oc / OCg) * Cg;
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            double acc = bias ? to_d(bias[oc]) : 0.0;
            for (int64_t ic = 0; ic < Cg; ++ic)
              for (int64_t kh = 0; kh < KH; ++kh) {
                int64_t ih = oh * g.sh - g.ph + kh * g.dh;
                if (ih < 0 || ih >= H) continue;
                for (int64_t kw = 0; kw < KW; ++kw) {
                  int64_t iw = ow * g.sw - g.pw + kw * g.dw;
                  if (iw < 0 || iw >= W) continue;
                  acc += to_d(x[((n * C + c0 + ic) * H + ih) * W + iw]) * to_d(w[((oc * Cg + ic) * KH + kh) * KW + kw]);
                }
              }
            y[((n * OC + oc) * OH + oh) * OW + ow] = from_d<T>(acc);
          }
      }
    });
  }

  // grad_x[n, c, ih, iw]: gathers every (oc, kh, kw) whose window covers (ih, iw).
  void backward_data(const T* gy, const T* w, T* gx) const {
    kp::cpu::parallel_for(N * C, kp::cpu::grain_for_work(H * W * OCg * KH * KW), [&](int64_t lo, int64_t hi) {
      for (int64_t nc = lo; nc < hi; ++nc) {
        int64_t n = nc / C, c = nc % C, grp = c / Cg, ic = c % Cg;
        for (int64_t ih = 0; ih < H; ++ih)
          for (int64_t iw = 0; iw < W; ++iw) {
            double acc = 0;
            for (int64_t oc = grp * OCg; oc < (grp + 1) * OCg; ++oc)
              for (int64_t kh = 0; kh < KH; ++kh) {
                int64_t th = ih + g.ph - kh * g.dh;
                if (th < 0 || th % g.sh || th / g.sh >= OH) continue;
                for (int64_t kw = 0; kw < KW; ++kw) {
                  int64_t tw = iw + g.pw - kw * g.dw;
                  if (tw < 0 || tw % g.sw || tw / g.sw >= OW) continue;
                  acc += to_d(gy[((n * OC + oc) * OH + th / g.sh) * OW + tw / g.sw]) *
                         to_d(w[((oc * Cg + ic) * KH + kh) * KW + kw]);
                }
              }
            gx[((n * C + c) * H + ih) * W + iw] = from_d<T>(acc);
          }
      }
    });
  }

  // grad_w[oc, ic, kh, kw] = sum over batch and output positions of grad_y * x.
  void backward_weight(const T* gy, const T* x, T* gw) const {
    kp::cpu::parallel_for(OC * Cg, kp::cpu::grain_for_work(KH * KW * N * OH * OW), [&](int64_t lo, int64_t hi) {
      for (int64_t oi = lo; oi < hi; ++oi) {
        int64_t oc = oi / Cg, ic = oi % Cg, c = (oc / OCg) * Cg + ic;
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            double acc = 0;
            for (int64_t n = 0; n < N; ++n)
              for (int64_t oh = 0; oh < OH; ++oh) {
                int64_t ih = oh * g.sh - g.ph + kh * g.dh;
                if (ih < 0 || ih >= H) continue;
                for (int64_t ow = 0; ow < OW; ++ow) {
                  int64_t iw = ow * g.sw - g.pw + kw * g.dw;
                  if (iw < 0 || iw >= W) continue;
                  acc += to_d(gy[((n * OC + oc) * OH + oh) * OW + ow]) * to_d(x[((n * C + c) * H + ih) * W + iw]);
                }
              }
            gw[((oc * Cg + ic) * KH + kh) * KW + kw] = from_d<T>(acc);
          }
      }
    });
  }
};

// The activation of conv2d_act on the reference path, through double as the
// elementwise kernels compute it.
template <class T>
void apply_activation(Activation act, T* y, int64_t n) {
  if (act == kNoActivation) return;
  for (int64_t i = 0; i < n; ++i) y[i] = from_d<T>(activate(act, to_d(y[i])));
}

template <ConvKind kind>
oar_status_t ref_conv_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    ConvGeom g = geometry(a, kind);
    DenseOutput out(a, 0);
    sdk::visit_float(g.dtype, [&]<class T>() {
      RefConv<T> conv(g);
      auto in = [&](int i) { return static_cast<const T*>(dense_input(a, i)); };
      if (kind == kForward) {
        conv.forward(in(0), in(1), g.bias ? in(2) : nullptr, out.as<T>());
        apply_activation(g.act, out.as<T>(), g.y[0] * g.y[1] * g.y[2] * g.y[3]);
      }
      else if (kind == kBackwardData) conv.backward_data(in(0), in(1), out.as<T>());
      else conv.backward_weight(in(0), in(1), out.as<T>());
    });
    out.finish();
  });
}

template <ConvKind kind>
oar_status_t register_conv(const oar_kernel_registrar* r, const char* op) {
  if (auto st = sdk::register_same_dtype(r, op, kDnnlDTypes, 2, dnnl_conv_kernel<kind>, "onednn", 10, dnnl_supports<kind>))
    return st;
  return sdk::register_same_dtype(r, op, kRefDTypes, 2, ref_conv_kernel<kind>, "reference", 0);
}

}  // namespace

oar_status_t register_conv_kernels(const oar_kernel_registrar* r) {
  if (auto st = register_conv<kForward>(r, "conv2d")) return st;
  if (auto st = register_conv<kForward>(r, "conv2d_act")) return st;
  if (auto st = register_conv<kBackwardData>(r, "conv2d_backward_data")) return st;
  return register_conv<kBackwardWeight>(r, "conv2d_backward_weight");
}

}  // namespace oar_cpu
