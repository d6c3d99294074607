// The shape family: concat, stack, split (row-block copies), pad and
// pad_backward (coordinate maps), tril/triu, written once (shape.kp). Shapes were
// validated by the catalog.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "oar/kp/family/register.h"

namespace oar::kp::family {

template <class TT, class IT, class ACC>
struct ShapeKernels {
  OAR_KP_FAMILY_TYPES(TT, IT, ACC)
#include "oar/kp/family/shape.kp"
};

template <class B>
struct Shape {
  static int64_t prod(const oar_tensor_view& v, int64_t b, int64_t e) {
    int64_t n = 1;
    for (int64_t d = b; d < e; ++d) n *= v.shape[d];
    return n;
  }

  // `rows` rows of `len` elements from src (row stride src_row) to dst.
  static void copy_rows(B& b, oar_dtype_t t, Operand dst, int64_t dst_row, Operand src, int64_t src_row, int64_t rows,
                        int64_t len) {
    if (rows == 0 || len == 0) return;
    Launch L;
    L.family = "shape";
    L.t = t;
    const int64_t chunk = 4096;
    const int64_t chunks = (len + chunk - 1) / chunk;
    L.lanes = rows * chunks;
    L.work_per_lane = std::min(len, chunk);
    L.p[0] = dst, L.p[1] = src;
    L.A.i[0] = len, L.A.i[1] = chunk, L.A.i[2] = chunks, L.A.i[3] = dst_row, L.A.i[4] = src_row;
    OAR_KP_LAUNCH(ShapeKernels, kAll, b, L, copy_rows);
  }

  // concat and stack: input i fills a [outer, size_i * inner] block of the
  // output's [outer, total * inner] rows.
  static void join(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view& y = a.output(0);
    const bool stack = std::strcmp(a.context().op_name, "stack") == 0;
    int64_t dim = a.attr_int("dim");
    if (dim < 0) dim += y.ndim;
    const int64_t es = int64_t(sdk::dtype_size(y.dtype));
    const int64_t outer = prod(y, 0, dim), inner = prod(y, dim + 1, y.ndim), out_row = y.shape[dim] * inner;
    int64_t at = 0;
    for (int i = 0; i < a.num_inputs(); ++i) {
      const oar_tensor_view& x = a.input(i);
      if (sdk::numel(x) == 0) continue;  // also skips 1-D empty tensors of another rank
      const int64_t len = stack ? inner : x.shape[dim] * inner;
      Operand dst = operand(y);
      dst.offset += at * es;
      copy_rows(b, y.dtype, dst, out_row, operand(x), len, outer, len);
      at += len;
    }
  }

  static void split(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view& x = a.input(0);
    int64_t dim = a.attr_int("dim");
    if (dim < 0) dim += x.ndim;
    const int64_t es = int64_t(sdk::dtype_size(x.dtype));
    const int64_t outer = prod(x, 0, dim), inner = prod(x, dim + 1, x.ndim), in_row = x.shape[dim] * inner;
    int64_t at = 0;
    for (int i = 0; i < a.context().num_outputs; ++i) {
      const oar_tensor_view& y = a.output(i);
      const int64_t len = y.shape[dim] * inner;
      Operand src = operand(x);
      src.offset += at * es;
      copy_rows(b, x.dtype, operand(y), len, src, in_row, outer, len);
      at += len;
    }
  }

  template <bool kBackward>
  static void pad(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view& x = kBackward ? a.output(0) : a.input(0);
    const oar_tensor_view& y = kBackward ? a.input(0) : a.output(0);
    std::vector<int64_t> in = sdk::shape_of(x), out = sdk::shape_of(y);
    if (in.empty()) in = out = {1};
    const size_t nd = in.size();
    if (nd > 16) sdk::fail(OAR_STATUS_UNSUPPORTED, "pad: more than 16 dimensions");
    const std::vector<int64_t> pads = a.attr_ints("pads");
    const std::string mode = a.attr_string("mode");
    std::vector<int64_t> meta{int64_t(nd)};
    meta.insert(meta.end(), in.begin(), in.end());
    meta.insert(meta.end(), out.begin(), out.end());
    for (size_t d = 0; d < nd; ++d) {
      const size_t k = nd - 1 - d;  // pads list the last dimension first
      meta.push_back(2 * k < pads.size() ? pads[2 * k] : 0);
    }
    const int mode_code = mode == "reflect" ? 1 : mode == "replicate" ? 2 : 0;
    if (!kBackward) {  // pad's column table, from the kernels' own pad_source (host-callable)
      const int64_t lo = meta.back();
      for (int64_t c = 0; c < out.back(); ++c)
        meta.push_back(ShapeKernels<float, int64_t, float>::pad_source(mode_code, c, in.back(), lo));
    }
    Launch L;
    L.family = "shape";
    L.t = x.dtype;
    // pad: a lane per row of y; pad_backward: a lane per element of grad_x.
    L.lanes = kBackward ? sdk::numel(x) : (out.back() ? sdk::numel(y) / out.back() : 0);
    L.work_per_lane = kBackward ? 1 : out.back();
    if (L.lanes == 0 || sdk::numel(kBackward ? x : y) == 0) return;
    const Operand m = b.temp(meta.size() * sizeof(int64_t));
    b.write(m, meta.data(), meta.size() * sizeof(int64_t));
    L.p[0] = operand(a.output(0)), L.p[1] = operand(a.input(0)), L.p[2] = m;
    L.A.i[0] = mode_code;
    if (kBackward) {
      OAR_KP_LAUNCH(ShapeKernels, kNumeric, b, L, pad_backward);
    } else {
      L.A.f[0] = param_bits(a.attr_float("value"));
      OAR_KP_LAUNCH(ShapeKernels, kAll, b, L, pad);
    }
  }

  // tril / triu: the elements on one side of a diagonal of each matrix, the rest zero.
  template <bool kUpper>
  static void triangle(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view& x = a.input(0);
    if (sdk::numel(x) == 0) return;
    Launch L;
    L.family = "shape";
    L.t = x.dtype;
    L.lanes = sdk::numel(x);
    L.p[0] = operand(a.output(0));
    L.p[1] = operand(x);
    L.A.i[0] = x.shape[x.ndim - 2];
    L.A.i[1] = x.shape[x.ndim - 1];
    L.A.i[2] = a.attr_int("diagonal");
    L.A.i[3] = kUpper;
    OAR_KP_LAUNCH(ShapeKernels, kAll, b, L, triangle_lanes);
  }

  static oar_status_t register_ops(Registrar& r) {
    r.add("tril", "T", DTypeSet::kAll, entry<B, &triangle<false>>);
    r.add("triu", "T", DTypeSet::kAll, entry<B, &triangle<true>>);
    r.add("concat", "T", DTypeSet::kAll, entry<B, &join>);
    r.add("stack", "T", DTypeSet::kAll, entry<B, &join>);
    r.add("split", "T", DTypeSet::kAll, entry<B, &split>);
    r.add("pad", "T", DTypeSet::kAll, entry<B, &pad<false>>);
    return r.add("pad_backward", "T", DTypeSet::kNumeric, entry<B, &pad<true>>);
  }
};

}  // namespace oar::kp::family
