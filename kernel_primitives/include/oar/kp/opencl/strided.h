// OpenCL backend of the kernel primitives, part 2: strided iteration. The host
// coalesces dimensions with kp::make_layout (the same geometry the CPU loop
// uses), and a kernel receives it as one by-value struct sized for the
// coalesced rank, so a contiguous or simply broadcast case costs one
// multiply per operand. `oar_offsets` turns a linear index into each
// operand's element offset.
#pragma once

#include <string>
#include <vector>

#include "oar/kp/strided.h"

namespace oar::kp::opencl {

// Rank used in the source: 1, 4 or kMaxDims, the smallest that holds the
// coalesced rank. Few buckets keep the number of distinct programs (each a
// compile, at first use) small; unused leading dims are size 1.
inline int source_rank(const StridedLayout& L) { return L.ndim <= 1 ? 1 : (L.ndim <= 4 ? 4 : kMaxDims); }

// Declares `oar_layout_R_N` (R dims, N operands) and its offset function.
inline std::string layout_source(int rank, int noperands) {
  std::string r = std::to_string(rank), n = std::to_string(noperands);
  std::string name = "oar_layout_" + r + "_" + n;
  std::string s = "#ifndef OAR_LAYOUT_" + r + "_" + n + "\n#define OAR_LAYOUT_" + r + "_" + n + "\n";
  s += "typedef struct { long shape[" + r + "]; long st[" + n + "][" + r + "]; } " + name + ";\n";
  s += "inline void " + name + "_offsets(const " + name + " L, long i, long* off) {\n";
  if (rank == 1) {  // the common flat case: no division per element
    s += "  for (int k = 0; k < " + n + "; ++k) off[k] = i * L.st[k][0];\n}\n#endif\n";
    return s;
  }
  s += "  for (int k = 0; k < " + n + "; ++k) off[k] = 0;\n";
  s += "  for (int d = " + r + " - 1; d >= 0; --d) {\n";
  s += "    long q = i % L.shape[d];\n    i /= L.shape[d];\n";
  s += "    for (int k = 0; k < " + n + "; ++k) off[k] += q * L.st[k][d];\n  }\n}\n#endif\n";
  return s;
}

inline std::string layout_type(int rank, int noperands) {
  return "oar_layout_" + std::to_string(rank) + "_" + std::to_string(noperands);
}

// The struct's bytes, in the order layout_source declares them: the coalesced
// dims right-aligned, leading pad dims of size 1 and stride 0.
inline std::vector<int64_t> pack_layout(const StridedLayout& L) {
  const int rank = source_rank(L), pad = rank - L.ndim;
  std::vector<int64_t> v(size_t(rank) * size_t(1 + L.noperands), 0);
  for (int d = 0; d < rank; ++d) v[size_t(d)] = d < pad ? 1 : L.shape[d - pad];
  for (int k = 0; k < L.noperands; ++k)
    for (int d = pad; d < rank; ++d) v[size_t(rank + k * rank + d)] = L.strides[k][d - pad];
  return v;
}

}  // namespace oar::kp::opencl
