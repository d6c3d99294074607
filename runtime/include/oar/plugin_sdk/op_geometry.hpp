// The extents op families read from their views and attributes, shared by
// every plugin so that the CPU and OpenCL kernels of one op agree on how a
// tensor is split: the class layout of a loss, the (outer, dim, inner) split
// of softmax, and the (outer, channels, inner) split of batch/layer norm.
#pragma once

#include <algorithm>
#include <string>

#include "oar/plugin_sdk/kernel_api.hpp"

namespace oar::sdk {

// Loss inputs are [N, C, d...] (S = product of d...) or a single [C] row.
struct LossShape {
  int64_t N, C, S;
  explicit LossShape(const oar_tensor_view& x) {
    if (x.ndim == 1) {
      N = 1, C = x.shape[0], S = 1;
    } else {
      N = x.shape[0], C = x.shape[1], S = 1;
      for (int32_t d = 2; d < x.ndim; ++d) S *= x.shape[d];
    }
  }
  int64_t positions() const { return N * S; }
};

enum class LossReduction { kNone, kMean, kSum };

inline LossReduction loss_reduction(const KernelArgs& a) {
  std::string r = a.attr_string("reduction");
  return r == "none" ? LossReduction::kNone : r == "sum" ? LossReduction::kSum : LossReduction::kMean;
}

// x seen as [outer, d, inner] around axis `dim` (negative counts from the end).
struct AxisExtents {
  int64_t outer = 1, d = 1, inner = 1;
};

inline AxisExtents axis_extents(const oar_tensor_view& x, int64_t dim) {
  AxisExtents e;
  int64_t nd = std::max<int32_t>(x.ndim, 1);
  if (dim < 0) dim += nd;
  for (int i = 0; i < x.ndim; ++i) {
    if (i < dim) e.outer *= x.shape[i];
    else if (i == dim) e.d = x.shape[i];
    else e.inner *= x.shape[i];
  }
  return e;
}

// A 2-D convolution's stride, padding, dilation and groups. The attributes
// arrive as 1 or 2 values (validated by the catalog): one value serves both
// spatial dims.
struct ConvParams {
  int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1, groups = 1;
};

inline ConvParams conv_params(const KernelArgs& a) {
  auto pair = [&](const char* name, int64_t& h, int64_t& w) {
    std::vector<int64_t> v = a.attr_ints(name);
    if (v.empty()) fail(OAR_STATUS_INVALID_ARGUMENT, std::string("conv2d: attribute '") + name + "' is empty");
    h = v.front(), w = v.back();
  };
  ConvParams p;
  pair("stride", p.sh, p.sw);
  pair("padding", p.ph, p.pw);
  pair("dilation", p.dh, p.dw);
  p.groups = a.attr_int("groups");
  return p;
}

// Batch norm: [outer = N, channels = C, inner = spatial]. Layer norm: one
// "channel" per leading row, inner = the last normalized_ndim dims.
struct NormExtents {
  int64_t outer = 1, channels = 1, inner = 1;
};

inline NormExtents norm_extents(const oar_tensor_view& x, bool batch, int64_t normalized_ndim) {
  NormExtents e;
  if (batch) {
    e.outer = x.shape[0];
    e.channels = x.shape[1];
    e.inner = numel(x) / std::max<int64_t>(1, e.outer * e.channels);
  } else {
    for (int i = 0; i < x.ndim - normalized_ndim; ++i) e.channels *= x.shape[i];
    for (int i = int(x.ndim - normalized_ndim); i < x.ndim; ++i) e.inner *= x.shape[i];
  }
  return e;
}

}  // namespace oar::sdk
