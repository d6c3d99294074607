// Kernel-run counters and the coverage report (see oar/kernel_coverage.h).
#include "oar/kernel_coverage.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <array>
#include <atomic>

#include "oar/dispatch.h"
#include "oar/error.h"
#include "oar/op_registry.h"
#include "oar/runtime.h"

namespace oar {

namespace {

// Op ids and device type ids are small and dense; beyond these bounds runs are not counted.
constexpr int32_t kMaxOps = 1024, kMaxTypes = 16;
std::array<std::atomic<int64_t>, kMaxOps * kMaxTypes> g_runs{};

}  // namespace

void count_kernel_run(int32_t op_id, int32_t device_type) {
  if (op_id >= 0 && op_id < kMaxOps && device_type >= 0 && device_type < kMaxTypes)
    g_runs[size_t(op_id * kMaxTypes + device_type)].fetch_add(1, std::memory_order_relaxed);
}

int64_t kernel_run_count(const std::string& op, const std::string& device_type) {
  const int32_t type = Runtime::get().find_device_type(device_type);
  const int32_t id = OpRegistry::instance().get(op).id;
  if (type < 0 || type >= kMaxTypes || id >= kMaxOps) return 0;
  return g_runs[size_t(id * kMaxTypes + type)].load(std::memory_order_relaxed);
}

void append_kernel_coverage(const std::string& path) {
  std::string text;
  const Runtime& rt = Runtime::get();
  for (const auto& op : OpRegistry::instance().all())
    for (const auto& plugin : rt.plugins()) {
      const std::string& type = plugin->device_type;
      if (int64_t n = kernel_run_count(op->name, type)) text += str("kernel ", type, " ", op->name, " ", n, "\n");
      if (int64_t n = fallback_count(op->name, type)) text += str("fallback ", type, " ", op->name, " ", n, "\n");
    }
  // Several test processes append to one file: one locked write each.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;  // at exit there is nobody to tell; the reading test finds the file short
  ::flock(fd, LOCK_EX);
  ssize_t rc = ::write(fd, text.data(), text.size());
  (void)rc;
  ::flock(fd, LOCK_UN);
  ::close(fd);
}

}  // namespace oar
