// The declarative allow/skip list (tests/conformance/expectations.txt, one
// file for every device). Each line: a device type pattern, a case id
// pattern (shell globs), an action and the reason:
//
//   opencl  onnx/node/test_cast_FLOAT_to_STRING  allow  no string dtype in oar
//   *       train/*                               skip   (why)
//
// `skip` does not run the case (reported SKIP with the reason); `allow` runs
// it and reports a failure as ALLOWED with the reason, so the run passes; a
// case that passes despite an `allow` is reported so the entry can go.
#pragma once

#include <string>
#include <vector>

namespace oar::conformance {

struct Expectation {
  std::string device, pattern, action, reason;
  int line = 0;
};

// Reads the file; throws std::runtime_error naming the file and line of a bad entry.
std::vector<Expectation> read_expectations(const std::string& path);
// The first entry matching (device type, case id), or nullptr.
const Expectation* find_expectation(const std::vector<Expectation>& list, const std::string& device,
                                    const std::string& case_id);

// --filter: comma-separated globs; a leading '-' excludes. Empty matches all.
bool matches_filter(const std::string& filter, const std::string& case_id);

}  // namespace oar::conformance
