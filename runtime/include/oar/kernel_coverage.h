// Which kernels ran in this process: a count of successful kernel calls per op
// and device type (one relaxed atomic add per launch), and the report that
// OAR_KERNEL_COVERAGE_FILE asks for at exit, appended to that file by every
// process that runs with it set. Tests use it to prove that an emulated
// device (hipcpu, docs/hipcpu.md) ran every kernel its plugin registers and
// fell back to the CPU only where it may.
#pragma once

#include <cstdint>
#include <string>

namespace oar {

void count_kernel_run(int32_t op_id, int32_t device_type);
int64_t kernel_run_count(const std::string& op, const std::string& device_type);
// Appends one line per (device type, op) that ran a kernel or fell back:
// "kernel <device_type> <op> <count>" / "fallback <device_type> <op> <count>".
void append_kernel_coverage(const std::string& path);

}  // namespace oar
