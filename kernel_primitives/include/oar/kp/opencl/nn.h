// OpenCL backend of the kernel primitives: the work-group reductions the
// family programs (kp/opencl/family.h) share. Per-channel and per-row
// statistics are reduced by one work-group per group of elements: each
// work-item folds a strided share, then a tree in local memory combines the
// shares. The group size is a fixed power of two baked into the source (PoCL
// compiles one variant per group size), and the accumulator type is the
// operand's `_acc` type (double when the device has fp64).
#pragma once

#include <cstdint>
#include <string>

#include "oar/abi/oar_kernel.h"

namespace oar::kp::opencl {

// Work-items per group in the nn reductions.
inline constexpr int kNNGroup = 128;

// Declares, for accumulator type `acc`, work-group reductions over a 1-D group
// of kNNGroup items; every item gets the result. All items must call them (they
// hold barriers). Scratch is __local memory of kNNGroup (sum, max) or 2 *
// kNNGroup (sum2) accumulators, declared by the kernel.
inline std::string group_reduce_source(const std::string& acc) {
  std::string G = std::to_string(kNNGroup);
  std::string s = "#define OAR_G " + G + "\n";
  s += "inline " + acc + " oar_wg_sum(" + acc + " v, __local " + acc + "* sc) {\n";
  s += R"CLC(  const int l = (int)get_local_id(0);
  sc[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = OAR_G / 2; k > 0; k >>= 1) {
    if (l < k) sc[l] += sc[l + k];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  v = sc[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return v;
}
)CLC";
  // The CPU's std::max(running, v): a NaN never replaces the running value
  // (and, unlike fmax, this compiles for integer accumulators too).
  s += "inline " + acc + " oar_wg_max(" + acc + " v, __local " + acc + "* sc) {\n";
  s += R"CLC(  const int l = (int)get_local_id(0);
  sc[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = OAR_G / 2; k > 0; k >>= 1) {
    if (l < k) sc[l] = sc[l] < sc[l + k] ? sc[l + k] : sc[l];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  v = sc[0];
  barrier(CLK_LOCAL_MEM_FENCE);
  return v;
}
)CLC";
  s += "inline void oar_wg_sum2(" + acc + "* u, " + acc + "* v, __local " + acc + "* sc) {\n";
  s += R"CLC(  const int l = (int)get_local_id(0);
  sc[l] = *u;
  sc[OAR_G + l] = *v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = OAR_G / 2; k > 0; k >>= 1) {
    if (l < k) {
      sc[l] += sc[l + k];
      sc[OAR_G + l] += sc[OAR_G + l + k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  *u = sc[0];
  *v = sc[OAR_G];
  barrier(CLK_LOCAL_MEM_FENCE);
}
)CLC";
  return s;
}

}  // namespace oar::kp::opencl
