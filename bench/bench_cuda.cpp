// oar's CUDA plugin against the vendor baselines, side by side in one
// process on one GPU:
//  - matmul 4096^3 in f32 (TF32 off and on, through OAR_CUDA_ALLOW_TF32) and bf16, as a fraction of
//    cuBLAS called directly (cublasGemmEx with the same types);
//  - elementwise add of 64 Mi f32, as a fraction of device-to-device
//    cudaMemcpy bandwidth (bytes moved per second: add moves 3n, a copy 2n).
// Every time is the median over repetitions measured with CUDA events on
// the default stream, which oar's kernels also run on. Without a GPU it
// says why and exits 0 (CI builds it; the device tool runs it).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "oar/core.h"
#include "oar/flags.h"

using namespace oar;

namespace {

#define CUDA_OK(x) require((x) == cudaSuccess, #x)
#define CUBLAS_OK(x) require((x) == CUBLAS_STATUS_SUCCESS, #x)

void require(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "bench_cuda: %s failed\n", what);
    std::exit(1);
  }
}

// Median milliseconds of fn over `reps` timed batches of `inner` calls.
double median_ms(const std::function<void()>& fn, int reps = 9, int inner = 5) {
  cudaEvent_t a, b;
  CUDA_OK(cudaEventCreate(&a));
  CUDA_OK(cudaEventCreate(&b));
  fn();
  CUDA_OK(cudaDeviceSynchronize());
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    CUDA_OK(cudaEventRecord(a, nullptr));
    for (int i = 0; i < inner; ++i) fn();
    CUDA_OK(cudaEventRecord(b, nullptr));
    CUDA_OK(cudaEventSynchronize(b));
    float t = 0;
    CUDA_OK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t / float(inner));
  }
  std::sort(ms.begin(), ms.end());
  CUDA_OK(cudaEventDestroy(a));
  CUDA_OK(cudaEventDestroy(b));
  return ms[ms.size() / 2];
}

// work_per_unit: the operations one run does, counted in the unit's own
// scale (1e12 flops for TFLOP/s), so rate = work_per_unit / seconds.
void print_row(const std::string& name, double oar_ms, double base_ms, const char* baseline, double work_per_unit,
               const char* unit) {
  std::printf("%-34s oar %8.3f ms %9.1f %-7s | %-14s %8.3f ms %9.1f %-7s | fraction %.3f\n", name.c_str(), oar_ms,
              work_per_unit / (oar_ms * 1e-3), unit, baseline, base_ms, work_per_unit / (base_ms * 1e-3), unit,
              base_ms / oar_ms);
}

// oar matmul vs cublasGemmEx on the same device buffers (row-major C = A B
// is column-major C^T = B^T A^T, the usual cuBLAS spelling).
void bench_gemm(Device dev, DType dt, bool tf32, cublasHandle_t handle) {
  const int64_t n = 4096;
  Tensor a = call1("uniform", {}, {{"shape", Shape{n, n}}}).to(dt).to(dev);
  Tensor b = call1("uniform", {}, {{"shape", Shape{n, n}}}).to(dt).to(dev);
  Tensor c = call1("matmul", {a, b});
  double oar_ms = median_ms([&] { call1("matmul", {a, b}); });
  cudaDataType_t type = dt == DType::bf16 ? CUDA_R_16BF : CUDA_R_32F;
  cublasComputeType_t compute = tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  float one = 1, zero = 0;
  auto direct = [&] {
    CUBLAS_OK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(n), int(n), &one, b.storage_data(), type,
                           int(n), a.storage_data(), type, int(n), &zero, c.storage_data(), type, int(n), compute,
                           CUBLAS_GEMM_DEFAULT));
  };
  double base_ms = median_ms(direct);
  std::string name = std::string("matmul 4096^3 ") + (dt == DType::bf16 ? "bf16" : tf32 ? "f32 (TF32)" : "f32");
  print_row(name, oar_ms, base_ms, "cuBLAS", 2.0 * double(n) * double(n) * double(n) / 1e12, "TFLOP/s");
}

void bench_add(Device dev) {
  const int64_t n = int64_t(64) << 20;
  Tensor a = call1("uniform", {}, {{"shape", Shape{n}}}).to(dev);
  Tensor b = call1("uniform", {}, {{"shape", Shape{n}}}).to(dev);
  Tensor c = call1("add", {a, b});
  double add_ms = median_ms([&] { call1("add", {a, b}); });
  size_t bytes = size_t(n) * 4;
  double copy_ms = median_ms([&] {
    CUDA_OK(cudaMemcpyAsync(c.storage_data(), a.storage_data(), bytes, cudaMemcpyDeviceToDevice, nullptr));
  });
  // Bandwidths: add reads 2n and writes n floats; a copy reads n and writes n.
  double add_gbs = 3.0 * double(bytes) / add_ms / 1e6, copy_gbs = 2.0 * double(bytes) / copy_ms / 1e6;
  std::printf("%-34s oar %8.3f ms %9.1f GB/s    | %-14s %8.3f ms %9.1f GB/s    | fraction %.3f\n",
              "add f32 n=64Mi", add_ms, add_gbs, "memcpy d2d", copy_ms, copy_gbs, add_gbs / copy_gbs);
}

}  // namespace

// `bench_cuda [gemm|add ...]` runs only the named rows (a profiler run wants one).
int main(int argc, char** argv) {
  auto wanted = [&](const char* row) {
    if (argc < 2) return true;
    for (int i = 1; i < argc; ++i)
      if (std::string(argv[i]) == row) return true;
    return false;
  };
  const Runtime& rt = Runtime::get();
  std::vector<Device> gpus;
  for (Device d : rt.devices())
    if (rt.device_type_name(d.type) == "cuda") gpus.push_back(d);
  if (gpus.empty()) {
    std::string why = "no cuda plugin is loaded";
    for (const auto& p : rt.plugins())
      if (p->device_type == "cuda") why = p->version;
    std::printf("bench_cuda: no CUDA device, nothing to measure (%s)\n", why.c_str());
    return 0;
  }
  Device dev = gpus[0];
  std::printf("device: %s (%s)\n\n", rt.plugin_for(dev).properties[0].name, dev.str().c_str());
  CUDA_OK(cudaSetDevice(dev.index));
  cublasHandle_t handle;
  CUBLAS_OK(cublasCreate(&handle));
  if (wanted("gemm")) {
    // The plugin's TF32 flag is set for each row, so both sides use the same arithmetic.
    Flags::instance().set("OAR_CUDA_ALLOW_TF32", "0");
    bench_gemm(dev, DType::f32, false, handle);
    bench_gemm(dev, DType::bf16, false, handle);
    Flags::instance().set("OAR_CUDA_ALLOW_TF32", "1");
    bench_gemm(dev, DType::f32, true, handle);
    Flags::instance().set("OAR_CUDA_ALLOW_TF32", "0");
  }
  if (wanted("add")) bench_add(dev);
  CUBLAS_OK(cublasDestroy(handle));
  return 0;
}
