// The unit of oar-conformance: a named check ("ops/add/f32/broadcast",
// "abi/memory/odd_copies") that runs against one device in a child process
// and ends as an Outcome. Every group of checks (abi, ops, grad, onnx, train,
// collectives) adds its cases from what the device declares and registers, so
// the list is a function of the device: a new op in the catalog, a new dtype
// in a plugin or a new ONNX test directory is a new case with no code.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "oar/device.h"

namespace oar::conformance {

enum class Status { kPass, kFail, kSkip, kCrash, kTimeout, kAllowed };
const char* status_name(Status s);
bool parse_status(const std::string& text, Status& out);

struct Outcome {
  Status status = Status::kPass;
  std::string reason;  // one line; empty for a plain pass
};

enum class Level { kQuick, kFull };

// What the cases are built for: the device under test and the reference.
struct Target {
  Device device;            // the device under test (index 0 of its type)
  std::string device_type;  // "opencl", "template", ...
  Level level = Level::kQuick;
  std::string onnx_root = "/usr/share/libonnx-testdata/data";
};

struct Case {
  std::string id;
  double budget_s = 60;  // the supervisor's time limit for this case
  // For the coverage matrix (ops/ cases): the op and the dtype column.
  std::string op, dtype;
  std::function<Outcome()> run;
};

// A failed check inside a case: its message is the case's reason.
struct CheckFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};
[[noreturn]] void fail(const std::string& reason);
inline void require(bool ok, const std::string& reason) {
  if (!ok) fail(reason);
}
// A case that cannot apply here (a capability the device does not declare).
struct NotApplicable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs `run` and turns exceptions into outcomes: CheckFailure and oar's typed
// errors FAIL with their message, NotApplicable SKIPs.
Outcome run_guarded(const std::function<Outcome()>& run);

// The groups, one file each.
void add_abi_cases(const Target& t, std::vector<Case>& cases);
void add_op_cases(const Target& t, std::vector<Case>& cases);
void add_grad_cases(const Target& t, std::vector<Case>& cases);
void add_onnx_cases(const Target& t, std::vector<Case>& cases);
void add_train_cases(const Target& t, std::vector<Case>& cases);
void add_collective_cases(const Target& t, std::vector<Case>& cases);

inline std::vector<Case> all_cases(const Target& t) {
  std::vector<Case> cases;
  add_abi_cases(t, cases);
  add_op_cases(t, cases);
  add_grad_cases(t, cases);
  add_onnx_cases(t, cases);
  add_train_cases(t, cases);
  add_collective_cases(t, cases);
  return cases;
}

}  // namespace oar::conformance
