// Throughput of the same ops on every loaded device, side by side in one
// process: elementwise add (GB/s moved) and f32 GEMM (GFLOP/s), each printed
// with its ratio to the CPU plugin (device / cpu, > 1 means faster than cpu).
// Issue 4 uses it for opencl vs cpu; a CUDA plugin shows up the same way.
// Each measurement is the median of several timed repetitions after a warm-up
// (the warm-up also pays an OpenCL program's first compile).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "oar/core.h"

using namespace oar;

namespace {

void sync(Device d) { Runtime::get().synchronize(d); }

// Median seconds per call of fn (fn returns after enqueueing; we sync per batch).
double time_op(Device d, const std::function<void()>& fn, int reps = 7) {
  fn();
  sync(d);
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    int inner = 5;
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < inner; ++i) fn();
    sync(d);
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / inner);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

int main() {
  std::vector<Device> devs = Runtime::get().devices();
  std::printf("devices:");
  for (Device d : devs) std::printf(" %s", d.str().c_str());
  std::printf("\n\n%-28s %-12s %12s %10s\n", "benchmark", "device", "throughput", "vs cpu");
  struct Case {
    std::string name, unit;
    double work;  // bytes or flops per call
    std::function<std::function<void()>(Device)> make;
  };
  std::vector<Case> cases;
  for (int64_t n : {int64_t(1) << 16, int64_t(1) << 20, int64_t(1) << 24}) {
    cases.push_back({"add f32 n=" + std::to_string(n), "GB/s", 3.0 * 4 * double(n), [n](Device d) {
                       Tensor a = call1("uniform", {}, {{"shape", Shape{n}}}).to(d);
                       Tensor b = call1("uniform", {}, {{"shape", Shape{n}}}).to(d);
                       return std::function<void()>([a, b] { call1("add", {a, b}); });
                     }});
  }
  for (int64_t m : {int64_t(128), int64_t(512), int64_t(1024)}) {
    cases.push_back({"matmul f32 " + std::to_string(m) + "^3", "GFLOP/s", 2.0 * double(m) * double(m) * double(m),
                     [m](Device d) {
                       Tensor a = call1("uniform", {}, {{"shape", Shape{m, m}}}).to(d);
                       Tensor b = call1("uniform", {}, {{"shape", Shape{m, m}}}).to(d);
                       return std::function<void()>([a, b] { call1("matmul", {a, b}); });
                     }});
  }
  for (const Case& c : cases) {
    double cpu_rate = 0;
    for (Device d : devs) {
      double s = time_op(d, c.make(d));
      double rate = c.work / s / 1e9;
      if (d.type == Runtime::get().cpu_type()) cpu_rate = rate;
      std::printf("%-28s %-12s %9.2f %-7s", c.name.c_str(), d.str().c_str(), rate, c.unit.c_str());
      if (cpu_rate > 0) std::printf(" %6.3fx", rate / cpu_rate);
      std::printf("\n");
    }
  }
  return 0;
}
