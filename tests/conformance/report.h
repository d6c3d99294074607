// The two reports of a run: JSON (every case with its status, reason, time
// and reproducing command, for tools) and Markdown (for a person: summary,
// op x dtype coverage matrix, ONNX pass rates, every failure with its reason
// and one command that reproduces it). Both are written atomically.
#pragma once

#include "oar/file_io.h"
#include <string>
#include <utility>
#include <vector>

#include "supervisor.h"

namespace oar::conformance {

struct RunReport {
  std::vector<std::pair<std::string, std::string>> info;  // device, plugin, versions, level, command...
  std::vector<std::string> ops;                           // every op of the catalog with kernels somewhere
  std::vector<CaseInfo> cases;
  std::vector<CaseResult> results;
  std::string repro_prefix;  // "oar-conformance --device opencl"
  std::string fatal;         // why the run stopped early, if it did
  double seconds = 0;
};

std::string to_json(const RunReport& r);
std::string to_markdown(const RunReport& r);
// Counts by status; `failed` is true when any case failed, crashed or timed out.
std::vector<std::pair<Status, size_t>> status_counts(const RunReport& r, bool& failed);

// Reports are written with the core's oar::write_file_atomic (oar/file_io.h).
using oar::write_file_atomic;

}  // namespace oar::conformance
