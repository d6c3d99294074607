// fused_elementwise on the CPU: a chain of kp functors (the program format is
// plugin_sdk/fused_program.hpp) run block by block, so each element is read
// once and written once instead of once per op. Registers hold a block of
// values in the compute type, rounded through T after every instruction, as
// separate kernels would store them: fused and unfused results are equal.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <type_traits>
#include <vector>

#include "oar/kp/cpu/isa_clones.h"
#include "oar/kp/cpu/parallel.h"
#include "oar/kp/cpu/vector_math.h"  // the same vector math as the unfused kernels: equal results
#include "oar/kp/functors.h"
#include "oar/kp/numeric.h"
#include "oar/plugin_sdk/fused_program.hpp"
#include "oar/plugin_sdk/kernel_api.hpp"
#include "ops/ops.h"

namespace oar_cpu {

namespace sdk = oar::sdk;

namespace {

constexpr int64_t kBlock = 512;

template <class T>
using C = oar::kp::compute_t<T>;

template <class T>
using BlockFn = void (*)(const C<T>* a, const C<T>* b, C<T>* out, int64_t n, double p0, double p1);

// Each instruction writes a fresh register, or the output, which may share
// memory with an input only index for index (in place), so __restrict holds
// for every reordering a vectorized loop makes. Compiled per x86-64 level as
// the unfused kernels' loop is (kp/cpu/isa_clones.h): the same vector math.
template <class T, class Op>
OAR_KP_CPU_ISA_CLONES void apply_block(const C<T>* __restrict a, const C<T>* __restrict b, C<T>* __restrict out, int64_t n, double p0,
                 double p1) {
  Op op;
  op.p0 = p0;
  op.p1 = p1;
  if constexpr (Op::arity == 1) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = C<T>(T(op(a[i])));
  } else {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) out[i] = C<T>(T(op(a[i], b[i])));
  }
}

// Functor name -> block function for T (the fusable ones: same dtype in and out).
template <class T>
const std::map<std::string, BlockFn<T>>& block_functions() {
  static const std::map<std::string, BlockFn<T>> table = [] {
    std::map<std::string, BlockFn<T>> t;
    oar::kp::for_each_functor([&]<class Op>() {
      if constexpr (Op::kind != oar::kp::VARIANT && Op::kind != oar::kp::COMPARE && Op::kind != oar::kp::INTEGRAL)
        t[Op::op_name] = &apply_block<T, Op>;
    });
    return t;
  }();
  return table;
}

// An input as the kernel reads it: contiguous at the output's shape, or one
// value broadcast everywhere; anything else is gathered into workspace first.
template <class T>
struct Source {
  const T* data = nullptr;
  bool scalar = false;
};

template <class T>
Source<T> source_of(const sdk::KernelArgs& a, int i, const oar_tensor_view& out) {
  const oar_tensor_view& v = a.input(i);
  const T* base = sdk::data_of<const T>(v);
  bool all_zero = true, contiguous = true;
  int64_t expected = 1;
  for (int d = v.ndim - 1; d >= 0; --d) {
    all_zero &= v.strides[d] == 0 || v.shape[d] == 1;
    contiguous &= v.shape[d] == 1 || v.strides[d] == expected;
    expected *= v.shape[d];
  }
  if (all_zero) return {base, true};
  if (contiguous) return {base, false};
  // Strided (a transposed view, a partial broadcast): gather in index order.
  int64_t n = sdk::numel(out);
  T* dst = static_cast<T*>(a.workspace(uint64_t(n) * sizeof(T)));
  std::vector<int64_t> idx(size_t(v.ndim), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t off = 0;
    for (int d = 0; d < v.ndim; ++d) off += idx[size_t(d)] * v.strides[d];
    dst[flat] = base[off];
    for (int d = v.ndim - 1; d >= 0; --d) {
      if (++idx[size_t(d)] < v.shape[d]) break;
      idx[size_t(d)] = 0;
    }
  }
  return {dst, false};
}

template <class T>
struct Step {
  BlockFn<T> fn;
  int a, b;
  double p0, p1;
};

// Parsed programs by text: a graph runs the same few programs on every step,
// and parsing costs more than running a small one.
template <class T>
std::shared_ptr<const std::vector<Step<T>>> compiled_program(const std::string& text, int num_inputs) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::shared_ptr<const std::vector<Step<T>>>> cache;
  std::string key = std::to_string(num_inputs) + '|' + text;
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  std::vector<oar::sdk::FusedInstruction> program;
  try {
    program = oar::sdk::parse_fused_program(text, num_inputs);
  } catch (const std::invalid_argument& e) {
    sdk::fail(OAR_STATUS_INVALID_ARGUMENT, e.what());
  }
  auto steps = std::make_shared<std::vector<Step<T>>>();
  for (const auto& ins : program) {
    auto it = block_functions<T>().find(ins.op);
    if (it == block_functions<T>().end())
      sdk::fail(OAR_STATUS_INVALID_ARGUMENT, "fused_elementwise: no fusable functor '" + ins.op + "'");
    steps->push_back({it->second, ins.a, ins.b, ins.p0, ins.p1});
  }
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() > 4096) cache.clear();  // bounded: programs come from graphs, not data
  cache.emplace(key, steps);
  return steps;
}

template <class T>
void run_fused(const sdk::KernelArgs& a) {
  const int k = a.num_inputs();
  const auto program = compiled_program<T>(a.attr_string("program"), k);
  const std::vector<Step<T>>& steps = *program;
  const oar_tensor_view& out_view = a.output(0);
  int64_t expected = 1;
  for (int d = out_view.ndim - 1; d >= 0; --d) {
    if (out_view.shape[d] != 1 && out_view.strides[d] != expected)
      sdk::fail(OAR_STATUS_UNSUPPORTED, "fused_elementwise: the output must be contiguous");
    expected *= out_view.shape[d];
  }
  T* out = sdk::data_of<T>(out_view);
  const int64_t n = sdk::numel(out_view);
  std::vector<Source<T>> sources;
  for (int i = 0; i < k; ++i) sources.push_back(source_of<T>(a, i, out_view));
  const size_t regs = size_t(k) + steps.size();
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  // Where T is its own compute type (f32, f64) instructions read contiguous
  // inputs where they lie and the last one writes the output directly; f16 and
  // bf16 values are converted into register buffers first.
  constexpr bool direct = std::is_same_v<T, C<T>>;
  oar::kp::cpu::parallel_for(blocks, std::max<int64_t>(1, oar::kp::cpu::kGrainSize / kBlock), [&](int64_t lo, int64_t hi) {
    std::vector<C<T>> buffer(regs * size_t(kBlock));
    std::vector<const C<T>*> reg(regs);
    auto slot = [&](size_t r) { return buffer.data() + r * size_t(kBlock); };
    for (int i = 0; i < k; ++i)  // a broadcast value fills its register once
      if (sources[size_t(i)].scalar) std::fill(slot(size_t(i)), slot(size_t(i)) + kBlock, C<T>(sources[size_t(i)].data[0]));
    for (int64_t blk = lo; blk < hi; ++blk) {
      const int64_t start = blk * kBlock, len = std::min(kBlock, n - start);
      // Every input of the block is read before the output is written: the
      // output may share memory with an input (in-place execution), index by index.
      for (int i = 0; i < k; ++i) {
        const Source<T>& src = sources[size_t(i)];
        if (src.scalar) {
          reg[size_t(i)] = slot(size_t(i));
        } else if constexpr (direct) {
          reg[size_t(i)] = reinterpret_cast<const C<T>*>(src.data + start);
        } else {
          C<T>* r = slot(size_t(i));
          for (int64_t j = 0; j < len; ++j) r[j] = C<T>(src.data[start + j]);
          reg[size_t(i)] = r;
        }
      }
      for (size_t st = 0; st < steps.size(); ++st) {
        const Step<T>& step = steps[st];
        const size_t r = size_t(k) + st;
        C<T>* dst = direct && st + 1 == steps.size() ? reinterpret_cast<C<T>*>(out + start) : slot(r);
        step.fn(reg[size_t(step.a)], step.b >= 0 ? reg[size_t(step.b)] : nullptr, dst, len, step.p0, step.p1);
        reg[r] = dst;
      }
      if constexpr (!direct) {
        const C<T>* result = reg[regs - 1];
        for (int64_t j = 0; j < len; ++j) out[start + j] = T(result[j]);
      }
    }
  });
}

oar_status_t fused_kernel(const oar_kernel_context* ctx) {
  return sdk::run_kernel(ctx, [](const sdk::KernelArgs& a) {
    switch (a.output(0).dtype) {
      case OAR_DTYPE_F32: return run_fused<float>(a);
      case OAR_DTYPE_F64: return run_fused<double>(a);
      case OAR_DTYPE_F16: return run_fused<oar::kp::half>(a);
      case OAR_DTYPE_BF16: return run_fused<oar::kp::bfloat16>(a);
      default: sdk::fail(OAR_STATUS_UNSUPPORTED, "fused_elementwise: floating dtypes only");
    }
  });
}

}  // namespace

oar_status_t register_fused_elementwise_kernels(const oar_kernel_registrar* r) {
  return sdk::register_same_dtype(r, "fused_elementwise", sdk::kFloatDTypes, 1, fused_kernel, "kp-cpu-fused");
}

}  // namespace oar_cpu
