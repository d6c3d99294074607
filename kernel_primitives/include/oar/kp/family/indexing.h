// The indexing family: gather, index_select, scatter_add, index_add,
// embedding and embedding_backward, written once (indexing.kp). Index values
// are validated on the device first (index_scan.h): an out-of-range index is
// an OUT_OF_RANGE error naming its position, value and the bound on every
// device. Shapes were validated by the catalog.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "oar/kp/family/index_scan.h"
#include "oar/kp/family/register.h"

namespace oar::kp::family {

template <class TT, class IT, class ACC>
struct IndexingKernels {
  OAR_KP_FAMILY_TYPES(TT, IT, ACC)
#include "oar/kp/family/indexing.kp"
};

// Dense strides of a shape (a 0-d tensor is [1]).
inline std::vector<int64_t> dense_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

template <class B>
struct Indexing {
  static std::vector<int64_t> shape_or_scalar(const oar_tensor_view& v) {
    if (v.ndim == 0) return std::vector<int64_t>(1, 1);
    return std::vector<int64_t>(v.shape, v.shape + v.ndim);
  }
  static int64_t dim_of(const sdk::KernelArgs& a, size_t rank) {
    int64_t d = a.attr_int("dim");
    return d < 0 ? d + int64_t(rank) : d;
  }
  static std::string dim_text(int64_t dim, int64_t size) {
    return "dimension " + std::to_string(dim) + " of size " + std::to_string(size);
  }
  // Shape and stride tables as a device buffer: nd, then nd values per table.
  static Operand meta(B& b, const std::vector<std::vector<int64_t>>& tables) {
    std::vector<int64_t> m{int64_t(tables[0].size())};
    for (const auto& t : tables) m.insert(m.end(), t.begin(), t.end());
    Operand o = b.temp(m.size() * sizeof(int64_t));
    b.write(o, m.data(), m.size() * sizeof(int64_t));
    return o;
  }
  static Launch launch(const oar_tensor_view& data, const oar_tensor_view& index) {
    Launch L;
    L.family = "indexing";
    L.t = data.dtype;
    L.i = index.dtype;
    return L;
  }
  // y = x, before the accumulating ops add into it.
  template <DTypeSet Set>
  static void copy(B& b, const oar_tensor_view& y, const oar_tensor_view& x, const oar_tensor_view& index) {
    Launch C = launch(x, index);
    C.lanes = sdk::numel(x);
    C.p[0] = operand(y), C.p[1] = operand(x);
    with_kernels<IndexingKernels, Set, B>(C, [&]<class K>() { b.template launch<typename K::copy_elements_k>(C); });
  }
  static void set_alpha(Launch& L, double alpha) {
    L.A.f[0] = param_bits(alpha);
    L.A.i[11] = int64_t(alpha);
  }

  static void gather(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view &x = a.input(0), &iv = a.input(1), &y = a.output(0);
    auto X = shape_or_scalar(x), I = shape_or_scalar(iv);
    const int64_t dim = dim_of(a, X.size());
    check_indices(b, "gather", iv, X[size_t(dim)], dim_text(dim, X[size_t(dim)]));
    Launch L = launch(x, iv);
    L.lanes = sdk::numel(iv);
    L.p[0] = operand(y), L.p[1] = operand(x), L.p[2] = operand(iv);
    L.A.i[0] = dim;
    if (rows_form(L, X, I, dim)) {
      L.lanes /= std::max<int64_t>(L.A.i[3], 1);  // a lane per row (o, k)
      L.work_per_lane = L.A.i[3];
      if (L.A.i[3] == 0) return;
      OAR_KP_LAUNCH(IndexingKernels, kAll, b, L, gather_rows);
      return;
    }
    L.p[3] = meta(b, {I, dense_strides(I), dense_strides(X)});
    OAR_KP_LAUNCH(IndexingKernels, kAll, b, L, gather);
  }

  static void scatter_add(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view &x = a.input(0), &iv = a.input(1), &src = a.input(2), &y = a.output(0);
    auto X = shape_or_scalar(x), I = shape_or_scalar(iv), S = shape_or_scalar(src);
    const int64_t dim = dim_of(a, X.size());
    check_indices(b, "scatter_add", iv, X[size_t(dim)], dim_text(dim, X[size_t(dim)]));
    copy<DTypeSet::kNumeric>(b, y, x, iv);
    if (sdk::numel(iv) == 0) return;
    Launch L = launch(x, iv);
    L.lanes = sdk::numel(iv) / I[size_t(dim)];
    L.work_per_lane = I[size_t(dim)];
    L.p[0] = operand(y), L.p[1] = operand(src), L.p[2] = operand(iv);
    L.A.i[0] = dim;
    set_alpha(L, 1.0);
    if (S == I && rows_form(L, X, I, dim)) {
      L.lanes = L.lanes / std::max<int64_t>(L.A.i[3], 1) * set_row_chunks<B>(L, L.A.i[3], 4);
      L.work_per_lane = I[size_t(dim)] * L.A.i[4];
      OAR_KP_LAUNCH(IndexingKernels, kNumeric, b, L, scatter_add_rows);
      return;
    }
    L.p[3] = meta(b, {I, dense_strides(I), dense_strides(X), dense_strides(S)});
    OAR_KP_LAUNCH(IndexingKernels, kNumeric, b, L, scatter_add);
  }

  // Whether the index has x's shape in every dim but `dim` (the common case):
  // then x is [outer, N, inner] and the index [outer, K, inner], and the
  // *_rows kernels need no shape tables. Fills A.i[1..3] when it is.
  static bool rows_form(Launch& L, const std::vector<int64_t>& X, const std::vector<int64_t>& I, int64_t dim) {
    if (X.size() != I.size()) return false;
    int64_t inner = 1;
    for (size_t d = 0; d < X.size(); ++d) {
      if (int64_t(d) != dim && X[d] != I[d]) return false;
      if (int64_t(d) > dim) inner *= X[d];
    }
    L.A.i[1] = X[size_t(dim)], L.A.i[2] = I[size_t(dim)], L.A.i[3] = inner;
    return true;
  }

  // index_select and index_add see x as [outer, N, inner] around dim.
  static Launch around_dim(const sdk::KernelArgs& a, const oar_tensor_view& x, const oar_tensor_view& iv,
                           int64_t* outer) {
    const int64_t rank = std::max<int64_t>(x.ndim, 1);
    const int64_t dim = dim_of(a, size_t(rank));
    Launch L = launch(x, iv);
    int64_t inner = 1;
    *outer = 1;
    for (int64_t d = 0; d < x.ndim; ++d) {
      if (d < dim) *outer *= x.shape[d];
      if (d > dim) inner *= x.shape[d];
    }
    L.A.i[0] = x.ndim ? x.shape[dim] : 1, L.A.i[1] = sdk::numel(iv), L.A.i[2] = inner;
    L.A.i[3] = dim;
    return L;
  }

  static void index_select(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view &x = a.input(0), &iv = a.input(1), &y = a.output(0);
    int64_t outer = 1;
    Launch L = around_dim(a, x, iv, &outer);
    check_indices(b, "index_select", iv, L.A.i[0], dim_text(L.A.i[3], L.A.i[0]));
    L.lanes = outer * L.A.i[1] * set_row_chunks<B>(L, L.A.i[2], 3);
    L.work_per_lane = L.A.i[3];
    L.A.i[5] = outer;
    if (L.lanes == 0) return;
    L.p[0] = operand(y), L.p[1] = operand(x), L.p[2] = operand(iv);
    OAR_KP_LAUNCH(IndexingKernels, kAll, b, L, index_select);
  }

  static void index_add(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view &x = a.input(0), &iv = a.input(1), &src = a.input(2), &y = a.output(0);
    int64_t outer = 1;
    Launch L = around_dim(a, x, iv, &outer);
    check_indices(b, "index_add", iv, L.A.i[0], dim_text(L.A.i[3], L.A.i[0]));
    copy<DTypeSet::kNumeric>(b, y, x, iv);
    if (L.A.i[1] == 0) return;
    L.lanes = outer * set_row_chunks<B>(L, L.A.i[2], 4);
    L.work_per_lane = L.A.i[1] * L.A.i[4];
    if (L.lanes == 0) return;
    L.p[0] = operand(y), L.p[1] = operand(src), L.p[2] = operand(iv);
    set_alpha(L, a.attr_float("alpha"));
    OAR_KP_LAUNCH(IndexingKernels, kNumeric, b, L, index_add);
  }

  static void embedding(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view &w = a.input(0), &iv = a.input(1), &y = a.output(0);
    const int64_t V = w.shape[0], D = w.shape[1];
    check_indices(b, "embedding", iv, V, "a weight with " + std::to_string(V) + " rows");
    Launch L = launch(w, iv);
    L.lanes = D ? sdk::numel(iv) : 0;
    L.work_per_lane = D;
    L.p[0] = operand(y), L.p[1] = operand(w), L.p[2] = operand(iv);
    L.A.i[0] = D;
    OAR_KP_LAUNCH(IndexingKernels, kFloat, b, L, embedding);
  }

  // The rows of grad are bucketed by index on the host (a stable counting
  // sort), so each weight row sums its gradient rows in order.
  static void embedding_backward(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view &g = a.input(0), &iv = a.input(1), &gw = a.output(0);
    const int64_t V = gw.shape[0], D = gw.shape[1], M = sdk::numel(iv);
    check_indices(b, "embedding_backward", iv, V, "num_weights " + std::to_string(V));
    std::vector<int64_t> idx(static_cast<size_t>(M));
    if (iv.dtype == OAR_DTYPE_I64) {
      b.read(operand(iv), idx.data(), uint64_t(M) * sizeof(int64_t));
    } else {
      std::vector<int32_t> narrow(static_cast<size_t>(M));
      b.read(operand(iv), narrow.data(), uint64_t(M) * sizeof(int32_t));
      idx.assign(narrow.begin(), narrow.end());
    }
    std::vector<int64_t> table(size_t(V) + 1 + size_t(M), 0);  // start[V + 1], then order[M]
    for (int64_t v : idx) ++table[size_t(v) + 1];
    for (int64_t v = 0; v < V; ++v) table[size_t(v) + 1] += table[size_t(v)];
    std::vector<int64_t> fill(table.begin(), table.begin() + V);
    for (int64_t m = 0; m < M; ++m) table[size_t(V + 1 + fill[size_t(idx[size_t(m)])]++)] = m;
    Operand t = b.temp(table.size() * sizeof(int64_t));
    b.write(t, table.data(), table.size() * sizeof(int64_t));
    Launch L = launch(g, iv);
    L.lanes = V;
    L.work_per_lane = D * std::max<int64_t>(1, M / std::max<int64_t>(V, 1));
    L.p[0] = operand(gw), L.p[1] = operand(g);
    L.p[3] = t;
    L.p[4] = t;
    L.p[4].offset += (V + 1) * int64_t(sizeof(int64_t));
    L.A.i[0] = D, L.A.i[1] = a.attr_int("padding_idx");
    OAR_KP_LAUNCH(IndexingKernels, kFloat, b, L, embedding_backward);
  }

  static oar_status_t register_ops(Registrar& r) {
    r.add("gather", "TI", DTypeSet::kAll, entry<B, &gather>);
    r.add("index_select", "TI", DTypeSet::kAll, entry<B, &index_select>);
    r.add("scatter_add", "TIT", DTypeSet::kNumeric, entry<B, &scatter_add>);
    r.add("index_add", "TIT", DTypeSet::kNumeric, entry<B, &index_add>);
    r.add("embedding", "TI", DTypeSet::kFloat, entry<B, &embedding>);
    return r.add("embedding_backward", "TI", DTypeSet::kFloat, entry<B, &embedding_backward>);
  }
};

}  // namespace oar::kp::family
