// Registration of the single-source op families: a family lists its ops once
// (name, dtype signature, driver), and a plugin registers every family for
// its backend with one call, choosing the families and dtypes it
// instantiates, never repeating an op's signature:
//
//   kp::family::Registrar reg(r, "kp-cpu");
//   return kp::family::register_families<CpuFamilyBackend>(reg);
#pragma once

#include <algorithm>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "oar/kp/family/launch.h"

namespace oar::kp::family {

// The families, as bits a plugin passes to register only some of them (a
// plugin with a vendor softmax still registers the primitive one below it).
enum Families : uint32_t {
  kSoftmaxFamily = 1u << 0,
  kLossFamily = 1u << 1,
  kNormFamily = 1u << 2,
  kPoolFamily = 1u << 3,
  kIndexingFamily = 1u << 4,
  kShapeFamily = 1u << 5,
  kCreationFamily = 1u << 6,
  kOptimizerFamily = 1u << 7,
  kScanFamily = 1u << 8,
  kLinalgFamily = 1u << 9,
  kAttentionFamily = 1u << 10,
  kRnnFamily = 1u << 11,
  kAllFamilies = 0xffffffffu,
};

class Registrar {
 public:
  // `floats` are the floating dtypes the device computes in (a device without
  // fp64 leaves F64 out); integer and bool dtypes are always offered.
  Registrar(const oar_kernel_registrar* r, const char* impl_name, int32_t priority = 0,
            std::span<const oar_dtype_t> floats = sdk::kFloatDTypes, uint32_t families = kAllFamilies)
      : r_(r), impl_(impl_name), priority_(priority), floats_(floats.begin(), floats.end()), families_(families) {}

  bool wants(uint32_t family) const { return (families_ & family) != 0; }

  // The same registrar with only the floating dtypes in `allowed` (linear
  // algebra is float32/float64 only, whatever else the device computes in).
  Registrar with_floats(std::initializer_list<oar_dtype_t> allowed) const {
    Registrar r = *this;
    r.floats_.clear();
    for (oar_dtype_t d : floats_)
      if (std::find(allowed.begin(), allowed.end(), d) != allowed.end()) r.floats_.push_back(d);
    return r;
  }

  // Registers `fn` for every expansion of `signature`: one letter per input,
  // T = the data dtype (from `set`), I = an index dtype (i64 and i32).
  oar_status_t add(const char* op, const char* signature, DTypeSet set, oar_kernel_fn fn) {
    if (status_) return status_;
    std::vector<oar_dtype_t> ts;
    ts = floats_;
    if (set != DTypeSet::kFloat)
      for (oar_dtype_t d : {OAR_DTYPE_I8, OAR_DTYPE_U8, OAR_DTYPE_I32, OAR_DTYPE_I64}) ts.push_back(d);
    if (set == DTypeSet::kAll) ts.push_back(OAR_DTYPE_BOOL);
    const std::string sig(signature);
    const bool indexed = sig.find('I') != std::string::npos;
    if (sig.find('T') == std::string::npos && !indexed) ts.resize(1);  // no typed input: one registration
    for (oar_dtype_t t : ts)
      for (oar_dtype_t i : {OAR_DTYPE_I64, OAR_DTYPE_I32}) {
        std::vector<oar_dtype_t> dtypes;
        for (char c : sig) dtypes.push_back(c == 'T' ? t : i);
        oar_kernel_def def{};
        def.struct_size = sizeof(def);
        def.op_name = op;
        def.dtypes = dtypes.data();
        def.num_dtypes = int32_t(dtypes.size());
        def.priority = priority_;
        def.impl_name = impl_;
        def.fn = fn;
        if ((status_ = r_->register_kernel(r_->registry, &def))) return status_;
        if (!indexed) break;
      }
    return status_;
  }
  oar_status_t status() const { return status_; }

 private:
  const oar_kernel_registrar* r_;
  const char* impl_;
  int32_t priority_;
  std::vector<oar_dtype_t> floats_;
  uint32_t families_;
  oar_status_t status_ = OAR_STATUS_OK;
};

// The C entry of a family op for backend B: dense operands checked, then the
// driver runs with errors turned into a status by sdk::run_kernel.
template <class B, void (*Driver)(B&)>
oar_status_t entry(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    require_dense(a);
    B b(a);
    Driver(b);
  });
}

}  // namespace oar::kp::family
