// Host side of the single-source op families: what a family driver (written
// once, e.g. kp/family/softmax.h) hands a backend to run one lane kernel, and
// the backend contract. A backend is a small class per device family
// (kp/cpu/family.h, kp/gpu/family.cuh, the OpenCL plugin's family_backend.h):
//
//   explicit B(const sdk::KernelArgs&);
//   const sdk::KernelArgs& args() const;
//   template <class T> using acc = ...;            // T_acc of compiled kernels
//   uint64_t acc_bytes(oar_dtype_t t) const;       // sizeof(T_acc) on the device
//   template <class K> void launch(const Launch&);  // K: a family's name##_k functor
//   Operand temp(uint64_t bytes);                  // device scratch for this call
//   void read(const Operand&, void* dst, uint64_t bytes);        // device -> host, ordered
//   void write(const Operand&, const void* src, uint64_t bytes); // host -> device, ordered
//
// and optionally, where the device has a BLAS (the CPU plugin's cblas):
//
//   void gemm(const Gemm&);  // families that multiply matrices (rnn) use it, else a lane kernel
//
// Operands are (memory handle, byte offset) pairs: a raw pointer on the CPU
// and CUDA/HIP, a cl_mem in OpenCL, which is why a view's data is never
// offset on the host.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "oar/kp/family/dialect.h"
#include "oar/plugin_sdk/kernel_api.hpp"

namespace oar::kp::family {

struct Operand {
  void* mem = nullptr;
  int64_t offset = 0;  // bytes
};

inline Operand operand(const oar_tensor_view& v) {
  return {v.data, v.offset * int64_t(sdk::dtype_size(v.dtype))};
}

// C = op(A) op(B) (+ C when accumulate), row-major, dtype t (f32/f64): op(A)
// is [M, K] (stored [K, M] when trans_a), op(B) [K, N] (stored [N, K] when
// trans_b); ld* are the stored matrices' row strides in elements.
struct Gemm {
  oar_dtype_t t = OAR_DTYPE_F32;
  bool trans_a = false, trans_b = false, accumulate = false;
  int64_t M = 0, N = 0, K = 0, lda = 0, ldb = 0, ldc = 0;
  Operand a, b, c;
};

// One launch of a lane kernel over `lanes` lanes.
struct Launch {
  const char* family = "";          // the .kp file (OpenCL compiles it by name)
  oar_dtype_t t = OAR_DTYPE_F32;    // T_t
  oar_dtype_t i = OAR_DTYPE_I64;    // I_t
  int64_t lanes = 0;
  bool groups = false;              // a thread group per lane (long reductions)
  int64_t work_per_lane = 1;        // elements a lane touches: the CPU's grain
  Operand p[kOperands];
  kp_args A{};
};

// How many consecutive entries of a row one lane of a row-copying kernel
// takes (index_select, index_add, scatter_add's rows): a backend that runs
// lanes as loop iterations (the CPU) declares `static constexpr int64_t
// kLaneChunk` so a lane copies a run it can vectorise and pays its index
// arithmetic once per run; on GPUs (none declared) a lane takes one entry,
// so that neighbouring lanes touch neighbouring memory.
template <class B>
constexpr int64_t lane_chunk() {
  if constexpr (requires { B::kLaneChunk; }) return B::kLaneChunk;
  else return 1;
}

// Whether the host may read the backend's device memory directly (the CPU:
// `static constexpr bool kHostMemory = true`): a family driver then reads a
// small device scalar (a step count) once instead of every lane computing
// with it.
template <class B>
constexpr bool host_memory() {
  if constexpr (requires { B::kHostMemory; }) return B::kHostMemory;
  else return false;
}

// Rows of `inner` entries cut into runs of at most lane_chunk<B>(): the run
// length (A.i[chunk_at]) and runs per row (A.i[chunk_at + 1]); returns the runs per row.
template <class B>
int64_t set_row_chunks(Launch& L, int64_t inner, int chunk_at) {
  const int64_t c = std::max<int64_t>(1, std::min(lane_chunk<B>(), inner));
  const int64_t runs = inner == 0 ? 0 : (inner + c - 1) / c;
  L.A.i[chunk_at] = c, L.A.i[chunk_at + 1] = runs;
  return runs;
}

inline void require_dense(const sdk::KernelArgs& a) {
  const oar_kernel_context& c = a.context();
  for (int32_t k = 0; k < c.num_inputs; ++k)
    if (c.inputs[k].data && !sdk::is_dense(c.inputs[k]))
      sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(c.op_name) + ": input " + std::to_string(k) + " is not dense");
  for (int32_t k = 0; k < c.num_outputs; ++k)
    if (!sdk::is_dense(c.outputs[k]))
      sdk::fail(OAR_STATUS_UNSUPPORTED, std::string(c.op_name) + ": output " + std::to_string(k) + " is not dense");
}

// Element k of a dense view, read back to the host (ordered after the work
// queued so far) as R: for error messages and host-side preparation.
template <class R, class B>
R read_element(B& b, const oar_tensor_view& v, int64_t k) {
  return sdk::visit_dtype(v.dtype, [&]<class T>() {
    T value{};
    Operand at = operand(v);
    at.offset += k * int64_t(sizeof(T));
    b.read(at, &value, sizeof(T));
    return static_cast<R>(compute_t<T>(value));
  });
}

// Calls f.template operator()<I>() for an i32 or i64 index dtype.
template <class F>
decltype(auto) visit_index(oar_dtype_t d, F&& f) {
  if (d == OAR_DTYPE_I64) return f.template operator()<int64_t>();
  if (d == OAR_DTYPE_I32) return f.template operator()<int32_t>();
  sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "index tensors must be i32 or i64, got dtype " + std::to_string(d));
}

// Which data dtypes an op takes (its T): kernels are compiled only for those.
enum class DTypeSet { kFloat, kNumeric, kAll };

// Calls f.template operator()<T>() for dtype d if it is in `Set`.
template <DTypeSet Set, class F>
void visit_set(oar_dtype_t d, F&& f) {
  sdk::visit_dtype(d, [&]<class T>() {
    constexpr bool in_set = Set == DTypeSet::kAll || (Set == DTypeSet::kNumeric ? !std::is_same_v<T, bool>
                                                                                 : is_floating_v<T>);
    if constexpr (in_set) f.template operator()<T>();
    else sdk::fail(OAR_STATUS_UNSUPPORTED, "dtype " + std::to_string(d) + " is not supported by this op");
  });
}

// Runs a kernel of family class template Fam<T_t, I_t, T_acc> at the
// launch's dtypes: `pick.template operator()<Fam<...>>()` calls
// b.template launch<typename K::name_k>(L) itself.
template <template <class, class, class> class Fam, DTypeSet Set, class B, class Pick>
void with_kernels(const Launch& L, Pick&& pick) {
  visit_set<Set>(L.t, [&]<class T>() {
    visit_index(L.i, [&]<class I>() { pick.template operator()<Fam<T, I, typename B::template acc<T>>>(); });
  });
}

// Launches kernel `name` of family class template `Fam` for dtypes `Set` (a
// macro because the kernel is named by a member type of a dependent class).
#define OAR_KP_LAUNCH(Fam, Set, backend, L, name)                                              \
  ::oar::kp::family::with_kernels<Fam, ::oar::kp::family::DTypeSet::Set, std::decay_t<decltype(backend)>>( \
      (L), [&]<class K>() { (backend).template launch<typename K::name##_k>(L); })

}  // namespace oar::kp::family
