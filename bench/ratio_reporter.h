// A Google Benchmark reporter that, besides the usual console table, keeps
// each benchmark's time so a program can print ratios between a measured
// path and its baseline run side by side in the same process.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace oar::bench {

class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs)
      if (r.run_type == Run::RT_Iteration && !r.error_occurred)
        seconds_[base_name(r.benchmark_name())] =
            r.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(r.time_unit);
    ConsoleReporter::ReportRuns(runs);
  }
  // Real time per iteration in seconds.
  double seconds(const std::string& name) const {
    auto it = seconds_.find(name);
    return it == seconds_.end() ? -1 : it->second;
  }
  // Prints "label: baseline_time / measured_time" (> 1 means oar is faster).
  void print_ratio(const std::string& label, const std::string& measured, const std::string& baseline,
                   double scale = 1.0) const {
    double m = seconds(measured), b = seconds(baseline);
    if (m <= 0 || b <= 0) {
      std::printf("%-58s n/a (missing %s)\n", label.c_str(), m <= 0 ? measured.c_str() : baseline.c_str());
      return;
    }
    std::printf("%-58s %.3f\n", label.c_str(), scale * b / m);
  }

 private:
  // "BM_X/real_time" -> "BM_X", so callers name benchmarks as declared.
  static std::string base_name(std::string name) {
    const std::string suffix = "/real_time";
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      name.resize(name.size() - suffix.size());
    return name;
  }
  std::map<std::string, double> seconds_;
};

}  // namespace oar::bench
