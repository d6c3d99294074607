// Crash isolation: the cases run in a child process (this same executable in
// its child mode), which reports "BEGIN i" and "END i STATUS seconds reason"
// on a pipe of its own. The supervisor enforces each case's time budget; when
// the child dies (a signal, an abort, an exit) or overruns, the case it was in
// is recorded as CRASH (with the signal) or TIMEOUT and a fresh child goes on
// from the next case. A child that dies before its first case (the plugin
// fails to load) ends the run with that reason.
#pragma once

#include <string>
#include <vector>

#include "conformance_case.h"

namespace oar::conformance {

struct CaseInfo {  // what the parent knows of a case before running it
  std::string id, op, dtype;
  double budget_s = 60;
};

struct CaseResult {
  Status status = Status::kSkip;
  std::string reason;
  double seconds = 0;
  std::string output_tail;  // the child's stdout/stderr around a crash or timeout
};

struct ChildCommand {
  std::string executable;          // /proc/self/exe
  std::vector<std::string> args;   // the child-mode arguments, without the case file
  std::vector<std::string> env;    // KEY=VALUE added to the environment
  double startup_budget_s = 180;   // loading plugins, compiling first kernels
};

// Lists the cases in a child ("--child-list"): fills `cases` and `info`
// (key/value lines describing the device), or returns the reason it failed.
std::string list_in_child(const ChildCommand& cmd, std::vector<CaseInfo>& cases,
                          std::vector<std::pair<std::string, std::string>>& info);

// Runs `cases` (results in the same order); `progress` is called after each.
void run_in_children(const ChildCommand& cmd, const std::vector<CaseInfo>& cases, std::vector<CaseResult>& results,
                     const std::function<void(size_t index)>& progress, std::string& fatal);

// The child's side: writes one protocol line to the report descriptor.
void report_line(int fd, const std::string& line);
// Escapes a reason to one line (\n, \t, \\) and back.
std::string one_line(const std::string& text);
std::string from_one_line(const std::string& text);

}  // namespace oar::conformance
