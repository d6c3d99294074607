// Compiled OpenCL programs, cached in memory and on disk. A program is keyed
// by everything that decides its binary: the source text, the build options,
// the device name, the device and driver versions and the platform version,
// so a driver upgrade never loads a stale binary. On-disk entries are written
// to a temporary file and renamed into place (atomic: a crash or a concurrent
// writer never leaves a torn file), start with a magic and the full key (a
// hash collision or a corrupt file is detected and rebuilt), and live in
// OAR_OPENCL_CACHE_DIR. A failed build throws with the compiler's build log.
#pragma once

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>

#include "cl_device.h"

namespace oar_ocl {

struct ProgramCacheStats {
  uint64_t memory_hits = 0;  // served from this process's map
  uint64_t disk_hits = 0;    // loaded from a cached binary
  uint64_t builds = 0;       // compiled from source
  uint64_t disk_writes = 0;
  uint64_t disk_rejects = 0;  // cache files that were corrupt, truncated or for another key
};

class ProgramCache {
 public:
  // disk_dir empty: memory only.
  explicit ProgramCache(std::string disk_dir) : disk_dir_(std::move(disk_dir)) {}
  ~ProgramCache();

  // The kernel `kernel_name` of the program built from make_source(). `key`
  // is a cheap identity for the in-memory lookup: with the kernel name it must
  // determine the source; the disk cache hashes the full source.
  cl_kernel kernel(Device& dev, const std::string& key, const std::function<std::string()>& make_source,
                   const char* kernel_name, const std::string& options = "");

  // Builds (or loads) a program from source; exposed for tests. A failed
  // build names `kernel_name` (the kernel asked for), else the source's first.
  cl_program program(Device& dev, const std::string& source, const std::string& options,
                     const char* kernel_name = nullptr);

  ProgramCacheStats stats() const;
  const std::string& disk_dir() const { return disk_dir_; }
  // The file a program's binary is cached in (for tests and diagnostics).
  std::string disk_path(Device& dev, const std::string& source, const std::string& options) const;

 private:
  std::string key_material(Device& dev, const std::string& source, const std::string& options) const;
  cl_program load_from_disk(Device& dev, const std::string& path, const std::string& material);
  void save_to_disk(Device& dev, cl_program prog, const std::string& path, const std::string& material);

  std::string disk_dir_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, cl_kernel> kernels_;  // (device, key, name) -> kernel
  std::unordered_map<std::string, cl_program> programs_;  // key material hash -> program
  ProgramCacheStats stats_;
};

// The process-wide cache the ops use (disk dir from OAR_OPENCL_CACHE_DIR).
ProgramCache& program_cache();
void set_program_cache_dir(const std::string& dir);

uint64_t fnv1a64(const std::string& s);

}  // namespace oar_ocl
