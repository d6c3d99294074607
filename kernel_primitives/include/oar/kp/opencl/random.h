// OpenCL backend of the kernel primitives, part 5: the Philox random stream.
// The functions are the stringified macro bodies of kp/philox.h, so OpenCL
// and the CPU share one definition and draw the same values for the same
// (seed, offset, i). Needs fp64 for bit-identical doubles; without it the
// uniform is computed in float (documented in plugins/opencl/README.md).
#pragma once

#include <string>

#include "oar/kp/philox.h"

#define OAR_KP_CL_STR_(...) #__VA_ARGS__
#define OAR_KP_CL_STR(...) OAR_KP_CL_STR_(__VA_ARGS__)

namespace oar::kp::opencl {

inline std::string philox_source() {
  std::string s = "typedef uint uint32_t;\ntypedef ulong uint64_t;\n";
  s += "#ifdef OAR_HAS_FP64\ntypedef double oar_real;\n#else\ntypedef float oar_real;\n#endif\n";
  s += "inline void oar_philox4x32(uint64_t counter, uint64_t seed, uint32_t* out) ";
  s += OAR_KP_CL_STR(OAR_KP_PHILOX4X32_BODY);
  s += "\ninline oar_real oar_uniform_double(uint32_t hi, uint32_t lo) { return (oar_real)";
  s += OAR_KP_CL_STR(OAR_KP_UNIFORM_DOUBLE_EXPR);
  s += "; }\n";
  s += "inline oar_real oar_philox_uniform(uint64_t seed, uint64_t offset, long i) {\n"
       "  uint32_t r[4];\n  oar_philox4x32(offset + (uint64_t)i, seed, r);\n"
       "  return oar_uniform_double(r[0], r[1]);\n}\n";
  s += "inline oar_real oar_philox_normal(uint64_t seed, uint64_t offset, long i) {\n"
       "  uint32_t r[4];\n  oar_philox4x32(offset + (uint64_t)i, seed, r);\n"
       "  oar_real u1 = 1.0 - oar_uniform_double(r[0], r[1]);\n"
       "  oar_real u2 = oar_uniform_double(r[2], r[3]);\n  return ";
  s += OAR_KP_CL_STR(OAR_KP_BOX_MULLER_EXPR);
  s += ";\n}\n";
  return s;
}

}  // namespace oar::kp::opencl
