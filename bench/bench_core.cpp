// Core benchmarks of issue 2, each against a baseline run in the same process:
//  - dispatch overhead: a 1-element add through the C++ API (absolute ns, and
//    relative to a direct call of the same CPU kernel's loop);
//  - f32 GEMM 1024^3: oar's matmul vs the same oneDNN primitive called directly;
//  - elementwise add of 16M floats vs memcpy of the same output bytes (single
//    thread, as the classic baseline, and OpenMP-parallel, as the fair one).
// Ratios are baseline_time / oar_time, so 1.0 means parity and higher is better.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstring>
#include <dnnl.hpp>
#include <vector>

#include "oar/core.h"
#include "ratio_reporter.h"

using namespace oar;

namespace {

void BM_DispatchAdd1(benchmark::State& state) {
  Tensor a = Tensor::ones({1}, DType::f32, Device::cpu());
  Tensor b = Tensor::ones({1}, DType::f32, Device::cpu());
  const OpSchema& add = OpRegistry::instance().get("add");
  for (auto _ : state) {
    auto out = call(add, {a, b});
    benchmark::DoNotOptimize(out[0].storage_data());
  }
}
BENCHMARK(BM_DispatchAdd1);

void BM_DispatchAdd1_ByName(benchmark::State& state) {
  Tensor a = Tensor::ones({1}, DType::f32, Device::cpu());
  Tensor b = Tensor::ones({1}, DType::f32, Device::cpu());
  for (auto _ : state) {
    Tensor out = call1("add", {a, b});
    benchmark::DoNotOptimize(out.storage_data());
  }
}
BENCHMARK(BM_DispatchAdd1_ByName);

constexpr int64_t kGemm = 1024;

void BM_GemmOar(benchmark::State& state) {
  Tensor a = call1("uniform", {}, {{"shape", Shape{kGemm, kGemm}}});
  Tensor b = call1("uniform", {}, {{"shape", Shape{kGemm, kGemm}}});
  call1("matmul", {a, b});  // warm-up: primitive creation is not what we time
  for (auto _ : state) {
    Tensor c = call1("matmul", {a, b});
    benchmark::DoNotOptimize(c.storage_data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * kGemm * kGemm * kGemm, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_GemmOar)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_GemmOneDnnDirect(benchmark::State& state) {
  using namespace dnnl;
  engine eng(engine::kind::cpu, 0);
  stream s(eng);
  memory::desc md({kGemm, kGemm}, memory::data_type::f32, memory::format_tag::ab);
  memory a(md, eng), b(md, eng), c(md, eng);
  std::fill_n(static_cast<float*>(a.get_data_handle()), kGemm * kGemm, 0.5f);
  std::fill_n(static_cast<float*>(b.get_data_handle()), kGemm * kGemm, 0.25f);
  matmul::primitive_desc pd(matmul::desc(md, md, md), eng);
  matmul mm(pd);
  // The baseline also allocates its output each call, as oar's op does.
  for (auto _ : state) {
    memory out(md, eng);
    mm.execute(s, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, out}});
    s.wait();
    benchmark::DoNotOptimize(out.get_data_handle());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(2.0 * kGemm * kGemm * kGemm, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_GemmOneDnnDirect)->Unit(benchmark::kMillisecond)->UseRealTime();

constexpr int64_t kAddN = int64_t(1) << 24;

void BM_AddOar16M(benchmark::State& state) {
  Tensor a = Tensor::ones({kAddN}, DType::f32, Device::cpu());
  Tensor b = Tensor::ones({kAddN}, DType::f32, Device::cpu());
  call1("add", {a, b});
  for (auto _ : state) {
    Tensor c = call1("add", {a, b});
    benchmark::DoNotOptimize(c.storage_data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * kAddN * 4 * 3);
}
BENCHMARK(BM_AddOar16M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Memcpy16M(benchmark::State& state) {
  std::vector<float> src(kAddN, 1.0f), dst(kAddN);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), kAddN * 4);
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * kAddN * 4 * 2);
}
BENCHMARK(BM_Memcpy16M)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_MemcpyParallel16M(benchmark::State& state) {
  std::vector<float> src(kAddN, 1.0f), dst(kAddN);
  for (auto _ : state) {
#pragma omp parallel
    {
      int64_t nt = omp_get_num_threads(), t = omp_get_thread_num();
      int64_t chunk = (kAddN + nt - 1) / nt, b = t * chunk, e = std::min(kAddN, b + chunk);
      if (b < e) std::memcpy(dst.data() + b, src.data() + b, size_t(e - b) * 4);
    }
    benchmark::DoNotOptimize(dst.data());
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * kAddN * 4 * 2);
}
BENCHMARK(BM_MemcpyParallel16M)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  oar::bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  std::printf("\nRatios (baseline time / oar time; 1.0 = parity, higher is better):\n");
  reporter.print_ratio("GEMM 1024^3 f32: oar vs oneDNN direct", "BM_GemmOar", "BM_GemmOneDnnDirect");
  // Add moves 3 buffers (2 reads, 1 write), memcpy 2; scale to bandwidth ratio.
  reporter.print_ratio("add 16M f32 bandwidth vs memcpy (1 thread)", "BM_AddOar16M", "BM_Memcpy16M", 1.5);
  reporter.print_ratio("add 16M f32 bandwidth vs memcpy (all threads)", "BM_AddOar16M", "BM_MemcpyParallel16M", 1.5);
  reporter.print_ratio("add 16M f32 time vs memcpy of the output bytes (1 thread)", "BM_AddOar16M", "BM_Memcpy16M");
  double ns = reporter.seconds("BM_DispatchAdd1") * 1e9;
  double ns_name = reporter.seconds("BM_DispatchAdd1_ByName") * 1e9;
  std::printf("%-58s %.0f ns (%.0f ns by name)\n", "dispatch of a 1-element add (target < 1000 ns)", ns, ns_name);
  benchmark::Shutdown();
  return 0;
}
