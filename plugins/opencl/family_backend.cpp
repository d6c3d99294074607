// OpenCL family backend (see family_backend.h).
#include "family_backend.h"

namespace oar_ocl {

namespace fam = oar::kp::family;
namespace kcl = oar::kp::opencl;

void FamilyBackend::run(const fam::Launch& L, const char* kernel) {
  if (L.lanes <= 0) return;
  const char* text = fam::family_source(L.family);
  if (!text) oar::sdk::fail(OAR_STATUS_INTERNAL, std::string("no kernel family '") + L.family + "'");
  const std::string name = std::string(kernel) + (L.groups ? "_groups" : "_lanes");
  const std::string key = std::string("family/") + L.family + ":" + std::to_string(L.t) + ":" + std::to_string(L.i);
  const bool fp64 = c_.dev.fp64;
  cl_kernel k = get_kernel(c_.dev, key + ":" + name,
                           [&] { return kcl::family_program_source(text, L.t, L.i, fp64); }, name.c_str());
  Launch l(k);
  for (const fam::Operand& p : L.p) l.mem(static_cast<cl_mem>(p.mem)).scalar<cl_long>(p.offset);
  l.raw(&L.A, sizeof(L.A)).scalar<cl_long>(L.lanes);
  if (L.groups) l.run(c_.queue, size_t(L.lanes) * kcl::kNNGroup, kcl::kNNGroup);
  else l.run(c_.queue, size_t(L.lanes));
}

void FamilyBackend::read(const fam::Operand& o, void* dst, uint64_t bytes) {
  if (!bytes) return;
  check(clEnqueueReadBuffer(c_.queue, static_cast<cl_mem>(o.mem), CL_TRUE, size_t(o.offset), size_t(bytes), dst, 0,
                            nullptr, nullptr),
        "clEnqueueReadBuffer(family)");
}

void FamilyBackend::write(const fam::Operand& o, const void* src, uint64_t bytes) {
  if (!bytes) return;
  check(clEnqueueWriteBuffer(c_.queue, static_cast<cl_mem>(o.mem), CL_TRUE, size_t(o.offset), size_t(bytes), src, 0,
                             nullptr, nullptr),
        "clEnqueueWriteBuffer(family)");
}

}  // namespace oar_ocl
