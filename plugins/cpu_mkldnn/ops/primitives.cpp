// Every kernel the CPU gets from kernel_primitives/ without writing it: the
// elementwise functors, the reductions and the single-source op families
// (softmax, losses, normalisation, pooling, indexing, shape, creation). Files
// of this folder register oneDNN kernels above them where oneDNN is faster.
// The families' matrix products (rnn) run on oneDNN's sgemm (float32) and
// BLAS's dgemm (float64) rather than on the generic lane kernel.
#include <cblas.h>
#include <dnnl.h>

#include <cstring>

#include "oar/kp/cpu/elementwise_kernels.h"
#include "oar/kp/cpu/family.h"
#include "oar/kp/cpu/reduction_kernels.h"
#include "oar/kp/family/families.h"
#include "ops/ops.h"

namespace oar_cpu {

namespace {

// kp::cpu::FamilyBackend with the optional gemm of the family backend contract (kp/family/launch.h).
class FamilyBackend : public oar::kp::cpu::FamilyBackend {
 public:
  using oar::kp::cpu::FamilyBackend::FamilyBackend;

  void gemm(const oar::kp::family::Gemm& g) {
    auto ptr = [](const oar::kp::family::Operand& o) { return static_cast<char*>(o.mem) + o.offset; };
    if (g.t == OAR_DTYPE_F32) {
      const dnnl_status_t st = dnnl_sgemm(g.trans_a ? 'T' : 'N', g.trans_b ? 'T' : 'N', g.M, g.N, g.K, 1.0f,
                                          reinterpret_cast<const float*>(ptr(g.a)), g.lda,
                                          reinterpret_cast<const float*>(ptr(g.b)), g.ldb, g.accumulate ? 1.0f : 0.0f,
                                          reinterpret_cast<float*>(ptr(g.c)), g.ldc);
      if (st != dnnl_success)
        oar::sdk::fail(OAR_STATUS_INTERNAL, "oneDNN sgemm failed with status " + std::to_string(int(st)));
    } else if (g.t == OAR_DTYPE_F64) {
      cblas_dgemm(CblasRowMajor, g.trans_a ? CblasTrans : CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans,
                  int(g.M), int(g.N), int(g.K), 1.0, reinterpret_cast<const double*>(ptr(g.a)), int(g.lda),
                  reinterpret_cast<const double*>(ptr(g.b)), int(g.ldb), g.accumulate ? 1.0 : 0.0,
                  reinterpret_cast<double*>(ptr(g.c)), int(g.ldc));
    } else {
      oar::sdk::fail(OAR_STATUS_UNSUPPORTED, "family gemm: float32 and float64 only");
    }
  }
};

}  // namespace

oar_status_t register_primitive_kernels(const oar_kernel_registrar* r) {
  if (oar_status_t st = oar::kp::cpu::register_elementwise_kernels(r, "kp-cpu")) return st;
  if (oar_status_t st = oar::kp::cpu::register_reduction_kernels(r, "kp-cpu")) return st;
  oar::kp::family::Registrar reg(r, "kp-cpu");
  return oar::kp::family::register_families<FamilyBackend>(reg);
}

}  // namespace oar_cpu
