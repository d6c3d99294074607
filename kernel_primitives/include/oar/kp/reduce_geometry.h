// Geometry of a reduction, shared by every backend: which input dims are kept
// (with their input and output strides) and which are reduced (with their
// input strides), from the op's `dims` / `keepdim` attributes.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace oar::kp {

constexpr int kReduceMaxDims = 16;

struct ReduceGeometry {
  std::vector<int64_t> kept_shape, kept_in_strides, kept_out_strides;
  std::vector<int64_t> red_shape, red_strides;
  int64_t n_out = 1, n_red = 1;
};

// in_shape/in_strides: input; out_strides: output strides per input dim
// (for reduced dims ignored); reduced[d]: whether dim d is reduced.
inline ReduceGeometry make_reduce_geometry(int ndim, const int64_t* in_shape, const int64_t* in_strides,
                                           const int64_t* out_strides_per_in_dim, const bool* reduced) {
  ReduceGeometry g;
  for (int d = 0; d < ndim; ++d) {
    if (reduced[d]) {
      g.red_shape.push_back(in_shape[d]);
      g.red_strides.push_back(in_strides[d]);
      g.n_red *= in_shape[d];
    } else {
      g.kept_shape.push_back(in_shape[d]);
      g.kept_in_strides.push_back(in_strides[d]);
      g.kept_out_strides.push_back(out_strides_per_in_dim[d]);
      g.n_out *= in_shape[d];
    }
  }
  // Consecutive reduced dims that walk memory as one ([.., 32, 32] reduced
  // over both: one run of 1024) become one dim: longer contiguous runs for the
  // backends' inner loops; the row-major order of reduced elements (and so an
  // arg-reduction's flat index) is unchanged.
  for (size_t k = g.red_shape.size(); k-- > 1;) {
    if (g.red_strides[k - 1] != g.red_shape[k] * g.red_strides[k]) continue;
    g.red_shape[k - 1] *= g.red_shape[k];
    g.red_strides[k - 1] = g.red_strides[k];
    g.red_shape.erase(g.red_shape.begin() + int64_t(k));
    g.red_strides.erase(g.red_strides.begin() + int64_t(k));
  }
  return g;
}

// The geometry of reducing input (ndim, shape, strides) over `dims` (all dims
// when empty; negative dims count from the end) into an output with
// `out_strides` (keepdim: one per input dim, else one per kept dim).
inline ReduceGeometry reduce_geometry_for(int ndim, const int64_t* shape, const int64_t* strides,
                                          const int64_t* out_strides, const std::vector<int64_t>& dims,
                                          bool keepdim) {
  std::vector<char> reduced(size_t(std::max(ndim, 1)), dims.empty() ? 1 : 0);
  for (int64_t d : dims) reduced[size_t(d < 0 ? d + ndim : d)] = 1;
  std::vector<int64_t> out_per_in(size_t(std::max(ndim, 1)), 0);
  int od = 0;
  for (int d = 0; d < ndim; ++d) {
    if (!reduced[size_t(d)]) out_per_in[size_t(d)] = out_strides[od++];
    else if (keepdim) ++od;
  }
  bool flags[kReduceMaxDims];
  for (int d = 0; d < ndim; ++d) flags[d] = reduced[size_t(d)];
  return make_reduce_geometry(ndim, shape, strides, out_per_in.data(), flags);
}

}  // namespace oar::kp
