// The scan family: cumsum, cumprod, cummax, cummin, logcumsumexp, the
// backward kernels of cumprod and logcumsumexp, and a stable sort, along any
// dim, written once (scan.kp). A lane is one row along the dim; each lane
// walks its row in order (a thread per lane), so every device gives the same
// bits. Shapes and dtypes were validated by the catalog.
#pragma once

#include <cstring>

#include "oar/kp/family/register.h"
#include "oar/plugin_sdk/op_geometry.hpp"

namespace oar::kp::family {

template <class TT, class IT, class ACC>
struct ScanKernels {
  OAR_KP_FAMILY_TYPES(TT, IT, ACC)
#include "oar/kp/family/scan.kp"
};

// The modes scan.kp's kernels take in A.i[2].
enum ScanMode : int64_t { kScanSum = 0, kScanProd = 1, kScanMax = 2, kScanMin = 3, kScanLogSumExp = 4 };

template <class B>
struct Scan {
  static Launch rows(const oar_tensor_view& x, int64_t dim) {
    sdk::AxisExtents e = sdk::axis_extents(x, dim);
    Launch L;
    L.family = "scan";
    L.t = x.dtype;
    L.lanes = e.outer * e.inner;
    L.work_per_lane = e.d;
    L.A.i[0] = e.d, L.A.i[1] = e.inner;
    return L;
  }

  template <int64_t kMode>
  static void forward(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view& x = a.input(0);
    if (sdk::numel(x) == 0) return;
    Launch L = rows(x, a.attr_int("dim"));
    L.p[0] = operand(a.output(0));
    L.p[1] = operand(x);
    if (kMode == kScanMax || kMode == kScanMin) {
      L.i = a.output(1).dtype;
      L.p[2] = operand(a.output(1));
    }
    L.A.i[2] = kMode;
    L.A.i[3] = kMode == kScanSum && a.attr_bool("reverse");
    if (kMode == kScanLogSumExp) OAR_KP_LAUNCH(ScanKernels, kFloat, b, L, scan_forward);
    else OAR_KP_LAUNCH(ScanKernels, kNumeric, b, L, scan_forward);
  }

  // cumprod_backward(g, x) and logcumsumexp_backward(g, x, y).
  template <int64_t kMode>
  static void backward(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view& x = a.input(1);
    if (sdk::numel(x) == 0) return;
    Launch L = rows(x, a.attr_int("dim"));
    L.p[0] = operand(a.output(0));
    L.p[1] = operand(a.input(0));
    L.p[2] = operand(x);
    if (kMode == kScanLogSumExp) L.p[3] = operand(a.input(2));
    L.A.i[2] = kMode;
    OAR_KP_LAUNCH(ScanKernels, kFloat, b, L, scan_backward);
  }

  static void sort(B& b) {
    const sdk::KernelArgs& a = b.args();
    const oar_tensor_view& x = a.input(0);
    if (sdk::numel(x) == 0) return;
    Launch L = rows(x, a.attr_int("dim"));
    const oar_tensor_view& indices = a.output(1);
    L.i = indices.dtype;
    L.p[0] = operand(a.output(0));
    L.p[1] = operand(indices);
    L.p[2] = operand(x);
    L.p[3] = b.temp(uint64_t(2 * L.lanes * L.A.i[0]) * sdk::dtype_size(indices.dtype));
    L.A.i[2] = a.attr_bool("descending");
    L.A.i[3] = L.lanes;
    L.work_per_lane = L.A.i[0] * 8;
    OAR_KP_LAUNCH(ScanKernels, kNumeric, b, L, sort_rows);
  }

  static oar_status_t register_ops(Registrar& r) {
    r.add("cumsum", "T", DTypeSet::kNumeric, entry<B, &forward<kScanSum>>);
    r.add("cumprod", "T", DTypeSet::kNumeric, entry<B, &forward<kScanProd>>);
    r.add("cummax", "T", DTypeSet::kNumeric, entry<B, &forward<kScanMax>>);
    r.add("cummin", "T", DTypeSet::kNumeric, entry<B, &forward<kScanMin>>);
    r.add("logcumsumexp", "T", DTypeSet::kFloat, entry<B, &forward<kScanLogSumExp>>);
    r.add("cumprod_backward", "TT", DTypeSet::kFloat, entry<B, &backward<kScanProd>>);
    r.add("logcumsumexp_backward", "TTT", DTypeSet::kFloat, entry<B, &backward<kScanLogSumExp>>);
    return r.add("sort", "T", DTypeSet::kNumeric, entry<B, &sort>);
  }
};

}  // namespace oar::kp::family
