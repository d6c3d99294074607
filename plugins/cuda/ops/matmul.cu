// CUDA matmul through cuBLAS, for the dtypes the CPU plugin registers (the
// four float dtypes, both operands of one dtype): f32 / f16 / bf16 with
// cublasGemmStridedBatchedEx accumulating in f32 (f32 on TF32 tensor cores
// only when OAR_CUDA_ALLOW_TF32=1, like torch.backends.cuda.matmul.allow_tf32),
// f64 with cublasDgemmStridedBatched. The 64-bit (_64) entry points take the
// sizes as they are.
//
// cuBLAS is column-major, so the row-major C = A B is computed as
// C^T = B^T A^T: a row-major operand is read untransposed with its row stride
// as leading dimension and a column-major one (a transposed view) with the
// transpose flag, both without a copy. Operands with no unit stride in their
// last two dims, row strides that overlap, or negative batch strides are
// copied to a dense workspace first. Batch dims (broadcast ones have stride
// 0) merge into the one strided-batch dimension cuBLAS has wherever every
// operand's strides allow; the dims that do not merge are looped on the host,
// and when that loop would be long the operands are expanded to dense batches
// instead. An output cuBLAS cannot write in place goes through a dense
// workspace copied back.
#include <algorithm>
#include <vector>

#include "ops/ops.h"
#include "ops/vendor_common.cuh"
#include "oar/kp/family/launch.h"  // kp::family::Gemm (family_gemm)
#include "vendor_handles.h"

namespace oar_gpu {

namespace {

using namespace nn;

// Beyond this many host-looped gemm calls, expanding the operands is cheaper.
constexpr int64_t kMaxLoopedCalls = 64;

// One matrix operand as cuBLAS reads it (pointers in bytes, strides in elements).
struct Mat {
  const char* base = nullptr;
  int64_t rows = 0, cols = 0;   // logical [rows, cols] of this operand
  bool col_major = false;       // stored column-major: cuBLAS reads it transposed
  int64_t ld = 1;
  std::vector<int64_t> batch;   // per batch dim of the output; 0 where broadcast
};

// Row / column layout of [R, C] with strides (sr, sc) as cuBLAS can read it
// in place; false when it has no unit stride or rows overlap.
bool blas_layout(int64_t R, int64_t C, int64_t sr, int64_t sc, bool* col_major, int64_t* ld) {
  if ((C == 1 || sc == 1) && (R == 1 || sr >= std::max<int64_t>(C, 1))) {
    *col_major = false;
    *ld = R == 1 ? std::max<int64_t>(C, 1) : sr;
    return true;
  }
  if ((R == 1 || sr == 1) && (C == 1 || sc >= std::max<int64_t>(R, 1))) {
    *col_major = true;
    *ld = C == 1 ? std::max<int64_t>(R, 1) : sc;
    return true;
  }
  return false;
}

struct Problem {
  int nb = 0;                        // batch dims of the output
  std::vector<int64_t> batch_shape;  // the output's batch dims
  int64_t M = 0, N = 0, K = 0;
  int64_t esize = 0;
};

// Batch strides of view v aligned to the output's batch dims from the right;
// a missing or size-1 dim broadcasts (stride 0).
std::vector<int64_t> batch_strides(const oar_tensor_view& v, const Problem& p) {
  std::vector<int64_t> s(size_t(p.nb), 0);
  for (int i = 0; i < p.nb; ++i) {
    int vi = i - (p.nb - (v.ndim - 2));
    if (vi >= 0 && v.shape[vi] != 1) s[size_t(i)] = v.strides[vi];
  }
  return s;
}

bool has_negative(const std::vector<int64_t>& batch, const Problem& p) {
  for (int i = 0; i < p.nb; ++i)
    if (p.batch_shape[size_t(i)] > 1 && batch[size_t(i)] < 0) return true;
  return false;
}

// Operand v in place, or as a dense copy of its own shape when cuBLAS cannot read it.
Mat describe(const OpContext& c, const oar_tensor_view& v, const Problem& p) {
  Mat m;
  m.rows = v.shape[v.ndim - 2];
  m.cols = v.shape[v.ndim - 1];
  m.base = static_cast<const char*>(byte_ptr(v));
  m.batch = batch_strides(v, p);
  int64_t sr = v.strides[v.ndim - 2], sc = v.strides[v.ndim - 1];
  if (blas_layout(m.rows, m.cols, sr, sc, &m.col_major, &m.ld) && !has_negative(m.batch, p)) return m;
  m.base = static_cast<const char*>(dense_copy(c, v.ndim, v.shape, v.strides, byte_ptr(v), p.esize));
  std::vector<int64_t> ds = dense_strides(v.ndim, v.shape);
  oar_tensor_view dense = v;
  dense.strides = ds.data();
  dense.offset = 0;
  m.batch = batch_strides(dense, p);
  m.col_major = false;
  m.ld = std::max<int64_t>(m.cols, 1);
  return m;
}

// Operand m copied to a dense [batch..., rows, cols] buffer: every batch dim
// materialised, so its batch strides merge like a contiguous tensor's.
void expand(const OpContext& c, Mat& m, const Problem& p) {
  std::vector<int64_t> shape = p.batch_shape, strides = m.batch;
  shape.push_back(m.rows);
  shape.push_back(m.cols);
  int64_t row_stride = m.col_major ? 1 : m.ld, col_stride = m.col_major ? m.ld : 1;
  strides.push_back(m.rows == 1 ? 0 : row_stride);
  strides.push_back(m.cols == 1 ? 0 : col_stride);
  m.base = static_cast<const char*>(
      dense_copy(c, int(shape.size()), shape.data(), strides.data(), m.base, p.esize));
  std::vector<int64_t> ds = dense_strides(int(shape.size()), shape.data());
  m.batch.assign(ds.begin(), ds.begin() + p.nb);
  m.col_major = false;
  m.ld = std::max<int64_t>(m.cols, 1);
}

// The output as cuBLAS writes it: row-major with unit column stride, rows not
// overlapping, batch strides positive (else a dense workspace).
struct Out {
  char* base = nullptr;
  int64_t ld = 1;
  std::vector<int64_t> batch;
  bool scratch = false;
};

// A dense [batch..., M, N] workspace standing in for the output.
Out dense_out(const OpContext& c, const oar_tensor_view& v, const Problem& p) {
  Out o;
  o.scratch = true;
  o.base = static_cast<char*>(c.workspace(uint64_t(sdk::numel(v) * p.esize)));
  o.ld = std::max<int64_t>(p.N, 1);
  std::vector<int64_t> ds = dense_strides(v.ndim, v.shape);
  o.batch.assign(ds.begin(), ds.begin() + p.nb);
  return o;
}

Out output_of(const OpContext& c, const oar_tensor_view& v, const Problem& p) {
  int64_t sr = v.strides[v.ndim - 2], sc = v.strides[v.ndim - 1];
  bool ok = (p.N == 1 || sc == 1) && (p.M == 1 || sr >= std::max<int64_t>(p.N, 1));
  for (int i = 0; i < p.nb && ok; ++i) ok = p.batch_shape[size_t(i)] == 1 || v.strides[i] > 0;
  if (!ok) return dense_out(c, v, p);
  Out o;
  o.base = static_cast<char*>(byte_ptr(v));
  o.ld = p.M == 1 ? std::max<int64_t>(p.N, 1) : sr;
  o.batch.assign(v.strides, v.strides + p.nb);
  return o;
}

// Batch dims (output size > 1) merged where every operand's strides allow.
struct Group {
  int64_t size, a, b, c;  // count and the three operands' strides
};

std::vector<Group> merge_batch(const Problem& p, const Mat& a, const Mat& b, const Out& o) {
  std::vector<Group> g;
  for (int i = 0; i < p.nb; ++i) {
    int64_t n = p.batch_shape[size_t(i)];
    if (n == 1) continue;
    Group next{n, a.batch[size_t(i)], b.batch[size_t(i)], o.batch[size_t(i)]};
    if (!g.empty()) {
      Group& last = g.back();
      if (last.a == next.a * n && last.b == next.b * n && last.c == next.c * n) {
        last = Group{last.size * n, next.a, next.b, next.c};
        continue;
      }
    }
    g.push_back(next);
  }
  return g;
}

cudaDataType blas_dtype(oar_dtype_t d) {
  switch (d) {
    case OAR_DTYPE_F32: return CUDA_R_32F;
    case OAR_DTYPE_F16: return CUDA_R_16F;
    case OAR_DTYPE_BF16: return CUDA_R_16BF;
    default: return CUDA_R_64F;
  }
}

// cuBLAS's recommended workspace: 32 MiB on Hopper and later, 4 MiB before.
uint64_t blas_workspace_bytes(int32_t device) {
  int major = 0;
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute");
  return major >= 9 ? (32ull << 20) : (4ull << 20);
}

oar_status_t matmul_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& args) {
    const oar_tensor_view &va = args.input(0), &vb = args.input(1), &vc = args.output(0);
    OpContext c(args);
    Problem p;
    p.nb = vc.ndim - 2;
    p.batch_shape.assign(vc.shape, vc.shape + p.nb);
    p.M = vc.shape[vc.ndim - 2];
    p.N = vc.shape[vc.ndim - 1];
    p.K = va.shape[va.ndim - 1];
    p.esize = elem_size(vc.dtype);
    if (sdk::numel(vc) == 0) return;
    if (p.K == 0) {  // an empty sum
      zero_fill(c, vc);
      return;
    }

    Mat a = describe(c, va, p), b = describe(c, vb, p);
    Out o = output_of(c, vc, p);
    std::vector<Group> groups = merge_batch(p, a, b, o);
    int64_t looped = 1;
    for (size_t i = 0; i + 1 < groups.size(); ++i) looped *= groups[i].size;
    if (looped > kMaxLoopedCalls) {
      expand(c, a, p);
      expand(c, b, p);
      groups = merge_batch(p, a, b, o);
      if (groups.size() > 1) {  // only a strided output still splits the batch
        o = dense_out(c, vc, p);
        groups = merge_batch(p, a, b, o);
      }
      looped = 1;
      for (size_t i = 0; i + 1 < groups.size(); ++i) looped *= groups[i].size;
    }
    Group inner = groups.empty() ? Group{1, 0, 0, 0} : groups.back();
    if (!groups.empty()) groups.pop_back();

    cublasHandle_t h = cublas_handle(c.device, c.stream);
    uint64_t ws_bytes = blas_workspace_bytes(c.device);
    check_cublas(cublas().SetWorkspace(h, c.workspace(ws_bytes), ws_bytes), "cublasSetWorkspace");

    // C^T [N, M] = op(B^T) [N, K] * op(A^T) [K, M], column-major.
    cublasOperation_t op_b = b.col_major ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t op_a = a.col_major ? CUBLAS_OP_T : CUBLAS_OP_N;
    const oar_dtype_t dtype = vc.dtype;
    const float one = 1.0f, zero = 0.0f;
    const double one_d = 1.0, zero_d = 0.0;
    cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
    if (dtype == OAR_DTYPE_F32 && allow_tf32()) compute = CUBLAS_COMPUTE_32F_FAST_TF32;

    for (int64_t call = 0; call < looped; ++call) {
      int64_t off_a = 0, off_b = 0, off_c = 0, rest = call;
      for (size_t i = groups.size(); i-- > 0;) {
        int64_t idx = rest % groups[i].size;
        rest /= groups[i].size;
        off_a += idx * groups[i].a;
        off_b += idx * groups[i].b;
        off_c += idx * groups[i].c;
      }
      const char* pa = a.base + off_a * p.esize;
      const char* pb = b.base + off_b * p.esize;
      char* pc = o.base + off_c * p.esize;
      if (dtype == OAR_DTYPE_F64) {
        check_cublas(cublas().DgemmStridedBatched_64(h, op_b, op_a, p.N, p.M, p.K, &one_d,
                                                  reinterpret_cast<const double*>(pb), b.ld, inner.b,
                                                  reinterpret_cast<const double*>(pa), a.ld, inner.a, &zero_d,
                                                  reinterpret_cast<double*>(pc), o.ld, inner.c, inner.size),
                     "matmul: cublasDgemmStridedBatched");
      } else {
        cudaDataType t = blas_dtype(dtype);
        check_cublas(cublas().GemmStridedBatchedEx_64(h, op_b, op_a, p.N, p.M, p.K, &one, pb, t, b.ld, inner.b, pa, t,
                                                   a.ld, inner.a, &zero, pc, t, o.ld, inner.c, inner.size, compute,
                                                   CUBLAS_GEMM_DEFAULT),
                     "matmul: cublasGemmStridedBatchedEx");
      }
    }

    if (o.scratch) {
      std::vector<int64_t> ds = dense_strides(vc.ndim, vc.shape);
      copy_strided(c, vc.ndim, vc.shape, p.esize, byte_ptr(vc), vc.strides, o.base, ds.data());
    }
  });
}

}  // namespace

void family_gemm(const oar::sdk::KernelArgs& args, gpu::Stream stream, const oar::kp::family::Gemm& g,
                 void** workspace) {
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: each operand is read as
  // stored, with its transpose flag.
  const int32_t device = args.context().device_index;
  cublasHandle_t h = cublas_handle(device, stream);
  const uint64_t ws_bytes = blas_workspace_bytes(device);
  if (*workspace == nullptr) *workspace = args.workspace(ws_bytes);
  check_cublas(cublas().SetWorkspace(h, *workspace, ws_bytes), "cublasSetWorkspace");
  const cublasOperation_t op_a = g.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = g.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  const char* pa = static_cast<const char*>(g.a.mem) + g.a.offset;
  const char* pb = static_cast<const char*>(g.b.mem) + g.b.offset;
  char* pc = static_cast<char*>(g.c.mem) + g.c.offset;
  if (g.t == OAR_DTYPE_F64) {
    const double one = 1.0, beta = g.accumulate ? 1.0 : 0.0;
    check_cublas(cublas().DgemmStridedBatched_64(h, op_b, op_a, g.N, g.M, g.K, &one,
                                              reinterpret_cast<const double*>(pb), g.ldb, 0,
                                              reinterpret_cast<const double*>(pa), g.lda, 0, &beta,
                                              reinterpret_cast<double*>(pc), g.ldc, 0, 1),
                 "family gemm: cublasDgemmStridedBatched");
  } else {
    const float one = 1.0f, beta = g.accumulate ? 1.0f : 0.0f;
    const cudaDataType t = blas_dtype(g.t);
    const cublasComputeType_t compute = allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
    check_cublas(cublas().GemmStridedBatchedEx_64(h, op_b, op_a, g.N, g.M, g.K, &one, pb, t, g.ldb, 0, pa, t, g.lda, 0,
                                               &beta, pc, t, g.ldc, 0, 1, compute, CUBLAS_GEMM_DEFAULT),
                 "family gemm: cublasGemmStridedBatchedEx");
  }
}

oar_status_t register_matmul_kernels(const oar_kernel_registrar* r) {
  return oar::sdk::register_same_dtype(r, "matmul", oar::sdk::kFloatDTypes, 2, matmul_kernel, "cublas", 10);
}

}  // namespace oar_gpu
