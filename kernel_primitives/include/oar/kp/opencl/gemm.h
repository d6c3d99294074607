// OpenCL backend of the kernel primitives, part 4: a tiled GEMM that matmul
// and the convolutions share. Every operand is addressed through a row and a
// column stride, so a transposed or sliced operand, an im2col workspace or a
// strided output is read in place; batches are a coalesced strided layout
// (kp::make_layout over the four operands A, B, C, D, stride 0 where one is
// broadcast), the same geometry the elementwise kernels use. An optional
// "K block" loop sums over a second reduction axis with its own strides
// (conv2d_backward_weight sums over images and output pixels without a copy).
//
//   C[b, m, n] = (beta ? C[b, m, n] : 0) + (bias ? D[b, m, n] : 0)
//                + sum_{kb < KB, k < K} A[b, kb, m, k] * B[b, kb, k, n]
//
// Each work-group computes a TS x TS tile of C (TS = group edge * WPT) with
// GS x GS work-items, each holding WPT x WPT results in registers, and stages
// TK-deep slices of A and B in local memory. Accumulation happens in float for
// f32/f16/bf16, double for f64 and long for the integer dtypes
// (kp::accumulate_t without fp64 promotion, as the CPU's direct matmul loop).
//
// Kernel `oar_gemm` parameters, in order (what push_gemm_args passes):
//   A, a_off, B, b_off, C, c_off, D, d_off (buffer, element offset),
//   long M, N, K, sam, sak, sbk, sbn, scm, scn, sdm, sdn, KB, sakb, sbkb,
//   int has_bias, int beta, then the by-value batch layout struct.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oar/kp/opencl/strided.h"
#include "oar/kp/opencl/types.h"

namespace oar::kp::opencl {

inline constexpr const char* kGemmKernelName = "oar_gemm";
inline constexpr int kGemmWpt = 4;  // outputs per work-item per tile dimension

// What decides the program text: operand dtypes, batch rank bucket, group edge.
struct GemmSpec {
  oar_dtype_t a = OAR_DTYPE_F32, b = OAR_DTYPE_F32, c = OAR_DTYPE_F32, d = OAR_DTYPE_F32;
  int rank = 1;    // kp::opencl::source_rank of the batch layout
  int group = 16;  // work-group edge (16 x 16 work-items; 8 where a device allows fewer)
};

inline std::string gemm_key(const GemmSpec& s) {
  return "gemm:" + std::to_string(s.a) + "," + std::to_string(s.b) + "," + std::to_string(s.c) + "," +
         std::to_string(s.d) + "/r" + std::to_string(s.rank) + "/g" + std::to_string(s.group);
}

// The accumulator of a product written to dtype `c`.
inline const char* gemm_acc_type(oar_dtype_t c) {
  if (c == OAR_DTYPE_F64) return "double";
  return type_info(c).floating ? "float" : "long";
}

inline std::string gemm_source(const GemmSpec& s, bool fp64) {
  const std::string L = layout_type(s.rank, 4);
  std::string src = prelude(fp64) + operand_defs("A", s.a) + operand_defs("B", s.b) + operand_defs("C", s.c) +
                    operand_defs("D", s.d) + layout_source(s.rank, 4);
  src += "#define GS " + std::to_string(s.group) + "\n#define WPT " + std::to_string(kGemmWpt) + "\n";
  src += "#define TS (GS * WPT)\n#define TK GS\ntypedef " + std::string(gemm_acc_type(s.c)) + " gemm_acc;\n";
  src += "__kernel __attribute__((reqd_work_group_size(GS, GS, 1)))\nvoid oar_gemm(";
  src += "__global const A_t* a, long a_off, __global const B_t* b, long b_off,\n";
  src += "    __global C_t* c, long c_off, __global const D_t* d, long d_off,\n";
  src += "    long M, long N, long K, long sam, long sak, long sbk, long sbn, long scm, long scn,\n";
  src += "    long sdm, long sdn, long KB, long sakb, long sbkb, int has_bias, int beta, const " + L + " L) {\n";
  src += "  long off[4];\n  " + L + "_offsets(L, (long)get_global_id(2), off);\n";
  src += R"CLC(
  /* +1 column of padding keeps the column reads of a tile off one bank. */
  __local gemm_acc As[TK][TS + 1];
  __local gemm_acc Bs[TK][TS + 1];
  const int tx = get_local_id(0), ty = get_local_id(1), lid = ty * GS + tx;
  const long n0 = (long)get_group_id(0) * TS, m0 = (long)get_group_id(1) * TS;
  a_off += off[0];
  b_off += off[1];
  c_off += off[2];
  d_off += off[3];
  gemm_acc acc[WPT][WPT];
  for (int i = 0; i < WPT; ++i)
    for (int j = 0; j < WPT; ++j) acc[i][j] = (gemm_acc)0;
  for (long kb = 0; kb < KB; ++kb) {
    const long ab = a_off + kb * sakb, bb = b_off + kb * sbkb;
    for (long k0 = 0; k0 < K; k0 += TK) {
      /* Neighbouring work-items walk the unit-stride dim of each operand, so a
         plain or a transposed operand is read contiguously (a uniform branch). */
      for (int r = 0; r < WPT; ++r) {
        const int e = lid + r * GS * GS;
        const int ka = sak == 1 ? e % TK : e / TS, ma = sak == 1 ? e / TK : e % TS;
        const long m = m0 + ma, k = k0 + ka;
        As[ka][ma] = (m < M && k < K) ? (gemm_acc)A_LOAD(a, ab + m * sam + k * sak) : (gemm_acc)0;
        const int kb2 = sbn == 1 ? e / TS : e % TK, nb = sbn == 1 ? e % TS : e / TK;
        const long n = n0 + nb, k2 = k0 + kb2;
        Bs[kb2][nb] = (n < N && k2 < K) ? (gemm_acc)B_LOAD(b, bb + k2 * sbk + n * sbn) : (gemm_acc)0;
      }
      barrier(CLK_LOCAL_MEM_FENCE);
      for (int kk = 0; kk < TK; ++kk) {
        gemm_acc av[WPT], bv[WPT];
        for (int i = 0; i < WPT; ++i) av[i] = As[kk][ty + i * GS];
        for (int j = 0; j < WPT; ++j) bv[j] = Bs[kk][tx + j * GS];
        for (int i = 0; i < WPT; ++i)
          for (int j = 0; j < WPT; ++j) acc[i][j] += av[i] * bv[j];
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  }
  for (int i = 0; i < WPT; ++i) {
    const long m = m0 + ty + i * GS;
    if (m >= M) break;
    for (int j = 0; j < WPT; ++j) {
      const long n = n0 + tx + j * GS;
      if (n >= N) break;
      gemm_acc v = acc[i][j];
      if (has_bias) v += (gemm_acc)D_LOAD(d, d_off + m * sdm + n * sdn);
      const long ci = c_off + m * scm + n * scn;
      if (beta) v += (gemm_acc)C_LOAD(c, ci);
      C_STORE(c, ci, v);
    }
  }
}
)CLC";
  return src;
}

// One operand: buffer (a cl_mem, kept opaque here), element offset, the
// strides of its two matrix dims, and its stride along each batch dim.
struct GemmOperand {
  void* mem = nullptr;
  int64_t offset = 0;
  int64_t rs = 0, cs = 0;
  int64_t batch[kMaxDims] = {};
};

// A whole call. The operands are A [M, K], B [K, N], C [M, N], D [M, N] (the
// bias, read when has_bias); `batch_shape` has batch_ndim dims (at most kMaxDims).
struct GemmCall {
  GemmOperand a, b, c, d;
  bool has_bias = false, beta = false;
  int64_t M = 0, N = 0, K = 0;
  int64_t KB = 1, a_kb = 0, b_kb = 0;  // outer reduction blocks and their strides in A and B
  int batch_ndim = 0;
  int64_t batch_shape[kMaxDims] = {};

  StridedLayout layout() const {
    const int64_t* st[4] = {a.batch, b.batch, c.batch, d.batch};
    return make_layout(batch_ndim, batch_shape, 4, st);
  }
};

// Sets the kernel arguments through a launcher with mem(handle) (as Launch::raw
// of the handle), scalar<T>(v) and layout(packed) -- the OpenCL plugin's Launch.
template <class Launcher>
void push_gemm_args(Launcher& l, const GemmCall& g, const StridedLayout& L) {
  auto op = [&](const GemmOperand& o) { l.raw(&o.mem, sizeof(o.mem)).template scalar<int64_t>(o.offset); };
  op(g.a);
  op(g.b);
  op(g.c);
  op(g.d);
  for (int64_t v : {g.M, g.N, g.K, g.a.rs, g.a.cs, g.b.rs, g.b.cs, g.c.rs, g.c.cs, g.d.rs, g.d.cs, g.KB, g.a_kb, g.b_kb})
    l.template scalar<int64_t>(v);
  l.template scalar<int32_t>(g.has_bias ? 1 : 0).template scalar<int32_t>(g.beta ? 1 : 0);
  l.layout(pack_layout(L));
}

// NDRange of a call: tiles of C along dims 0 (N) and 1 (M), batches along dim 2.
inline void gemm_ndrange(const GemmCall& g, const StridedLayout& L, int group, size_t global[3], size_t local[3]) {
  const int64_t ts = int64_t(group) * kGemmWpt;
  global[0] = size_t((g.N + ts - 1) / ts) * size_t(group);
  global[1] = size_t((g.M + ts - 1) / ts) * size_t(group);
  global[2] = size_t(L.numel);
  local[0] = local[1] = size_t(group);
  local[2] = 1;
}

}  // namespace oar::kp::opencl
