// OpenCL matmul: one call of the shared tiled GEMM (kp/opencl/gemm.h) per op.
// The schema passes operands strided, and the GEMM addresses every operand
// through its own row / column / batch strides, so transposed, sliced and
// expanded operands (stride 0 batch or rows) and a strided output need no
// copy; broadcast batch dims get stride 0. Same dtypes as the CPU plugin: the
// float dtypes, both operands of one dtype.
#include "launch.h"
#include "oar/kp/opencl/gemm.h"
#include "ops/ops.h"

namespace oar_ocl {

namespace {

using namespace oar;
namespace kcl = oar::kp::opencl;

oar_status_t matmul_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    const oar_tensor_view &va = a.input(0), &vb = a.input(1), &vc = a.output(0);
    const int nd = vc.ndim, nb = nd - 2;
    kcl::GemmCall g;
    g.M = vc.shape[nd - 2];
    g.N = vc.shape[nd - 1];
    g.K = va.shape[va.ndim - 1];
    g.a = {va.data, va.offset, va.strides[va.ndim - 2], va.strides[va.ndim - 1], {}};
    g.b = {vb.data, vb.offset, vb.strides[vb.ndim - 2], vb.strides[vb.ndim - 1], {}};
    g.c = {vc.data, vc.offset, vc.strides[nd - 2], vc.strides[nd - 1], {}};
    g.d = {vc.data, 0, 0, 0, {}};  // no bias: never read
    // Batch dims aligned from the right; an operand's missing or size-1 dim broadcasts.
    auto batch_stride = [&](const oar_tensor_view& v, int i) -> int64_t {
      int vi = i - (nd - v.ndim);
      return vi >= 0 && v.shape[vi] != 1 ? v.strides[vi] : 0;
    };
    // At most OAR_MAX_DIMS - 2 batch dims, within the layout's kMaxDims.
    for (int i = 0; i < nb; ++i) {
      if (vc.shape[i] == 1) continue;
      int j = g.batch_ndim++;
      g.batch_shape[j] = vc.shape[i];
      g.a.batch[j] = batch_stride(va, i);
      g.b.batch[j] = batch_stride(vb, i);
      g.c.batch[j] = vc.strides[i];
    }
    kp::StridedLayout L = g.layout();

    OpContext c = op_context(a);
    kcl::GemmSpec spec;
    spec.a = spec.b = spec.c = spec.d = vc.dtype;
    spec.rank = kcl::source_rank(L);
    spec.group = c.dev.max_work_group >= 256 ? 16 : 8;
    cl_kernel k = get_kernel(c.dev, kcl::gemm_key(spec), [&] { return kcl::gemm_source(spec, c.dev.fp64); },
                             kcl::kGemmKernelName);
    size_t global[3], local[3];
    kcl::gemm_ndrange(g, L, spec.group, global, local);
    Launch l(k);
    kcl::push_gemm_args(l, g, L);
    l.run3d(c.queue, global, local);
  });
}

}  // namespace

oar_status_t register_matmul_kernels(const oar_kernel_registrar* r) {
  for (oar_dtype_t d : sdk::kFloatDTypes)
    if (oar_status_t st = sdk::register_kernel(r, "matmul", {d, d}, matmul_kernel, "kp-opencl-gemm")) return st;
  return OAR_STATUS_OK;
}

}  // namespace oar_ocl
