// Program cache (see program_cache.h).
#include "program_cache.h"

#include <fcntl.h>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <vector>

#include "oar/plugin_sdk/kernel_api.hpp"

namespace oar_ocl {

namespace {

constexpr char kMagic[8] = {'O', 'A', 'R', 'C', 'L', 'B', '0', '1'};

std::string hex(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

bool make_dirs(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  return std::filesystem::is_directory(dir, ec);
}

std::string build_log(Device& dev, cl_program prog) {
  size_t n = 0;
  clGetProgramBuildInfo(prog, dev.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
  std::string log(n, '\0');
  if (n) clGetProgramBuildInfo(prog, dev.id, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// The name of the first kernel a source declares, to name it in errors.
std::string kernel_of(const std::string& source) {
  size_t at = source.find("__kernel");
  if (at != std::string::npos) at = source.find("void ", at);
  if (at == std::string::npos) return "(no kernel)";
  size_t end = source.find('(', at);
  return source.substr(at + 5, end - at - 5);
}

}  // namespace

uint64_t fnv1a64(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

ProgramCache::~ProgramCache() {
  for (auto& [k, kern] : kernels_) clReleaseKernel(kern);
  for (auto& [k, prog] : programs_) clReleaseProgram(prog);
}

std::string ProgramCache::key_material(Device& dev, const std::string& source, const std::string& options) const {
  return "device=" + dev.name + "\ndevice_version=" + dev.device_version + "\ndriver=" + dev.driver_version +
         "\nplatform=" + dev.platform_name + " " + dev.platform_version + "\noptions=" + options + "\nsource=" + source;
}

std::string ProgramCache::disk_path(Device& dev, const std::string& source, const std::string& options) const {
  if (disk_dir_.empty()) return "";
  return disk_dir_ + "/" + hex(fnv1a64(key_material(dev, source, options))) + ".clbin";
}

cl_program ProgramCache::load_from_disk(Device& dev, const std::string& path, const std::string& material) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return nullptr;
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Layout: magic[8], u64 key length, key bytes, u64 binary length, binary bytes.
  auto reject = [&]() -> cl_program {
    ++stats_.disk_rejects;
    return nullptr;
  };
  size_t pos = 0;
  auto read_u64 = [&](uint64_t& v) {
    if (data.size() - pos < 8) return false;
    std::memcpy(&v, data.data() + pos, 8);
    pos += 8;
    return true;
  };
  if (data.size() < 8 || std::memcmp(data.data(), kMagic, 8) != 0) return reject();
  pos = 8;
  uint64_t klen = 0, blen = 0;
  if (!read_u64(klen) || data.size() - pos < klen) return reject();
  if (data.compare(pos, klen, material) != 0 || klen != material.size()) return reject();
  pos += klen;
  if (!read_u64(blen) || data.size() - pos != blen || blen == 0) return reject();
  const unsigned char* bin = reinterpret_cast<const unsigned char*>(data.data() + pos);
  size_t bin_size = blen;
  cl_int status = CL_SUCCESS, err = CL_SUCCESS;
  cl_program prog = clCreateProgramWithBinary(dev.context, 1, &dev.id, &bin_size, &bin, &status, &err);
  if (err != CL_SUCCESS || status != CL_SUCCESS) {
    if (prog) clReleaseProgram(prog);
    return reject();
  }
  if (clBuildProgram(prog, 1, &dev.id, "", nullptr, nullptr) != CL_SUCCESS) {
    clReleaseProgram(prog);
    return reject();
  }
  ++stats_.disk_hits;
  return prog;
}

void ProgramCache::save_to_disk(Device& dev, cl_program prog, const std::string& path, const std::string& material) {
  size_t bin_size = 0;
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof(bin_size), &bin_size, nullptr) != CL_SUCCESS ||
      bin_size == 0)
    return;
  std::vector<unsigned char> bin(bin_size);
  unsigned char* ptr = bin.data();
  if (clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr) != CL_SUCCESS) return;
  (void)dev;
  if (!make_dirs(disk_dir_)) return;  // an unwritable cache only costs rebuilds
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + hex(rng());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return;
    uint64_t klen = material.size(), blen = bin_size;
    out.write(kMagic, 8);
    out.write(reinterpret_cast<const char*>(&klen), 8);
    out.write(material.data(), std::streamsize(klen));
    out.write(reinterpret_cast<const char*>(&blen), 8);
    out.write(reinterpret_cast<const char*>(bin.data()), std::streamsize(blen));
    out.flush();
    if (!out) {
      out.close();
      std::remove(tmp.c_str());
      return;
    }
  }
  // fsync before rename so a crash cannot publish an empty file.
  int fd = open(tmp.c_str(), O_RDONLY);
  if (fd >= 0) {
    fsync(fd);
    close(fd);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return;
  }
  ++stats_.disk_writes;
}

cl_program ProgramCache::program(Device& dev, const std::string& source, const std::string& options,
                                 const char* kernel_name) {
  const std::string material = key_material(dev, source, options);
  const std::string hkey = std::to_string(dev.index) + ":" + hex(fnv1a64(material));
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = programs_.find(hkey); it != programs_.end()) {
    ++stats_.memory_hits;
    return it->second;
  }
  std::string path = disk_dir_.empty() ? "" : disk_dir_ + "/" + hex(fnv1a64(material)) + ".clbin";
  cl_program prog = path.empty() ? nullptr : load_from_disk(dev, path, material);
  if (!prog) {
    const char* text = source.c_str();
    size_t len = source.size();
    cl_int err = CL_SUCCESS;
    prog = clCreateProgramWithSource(dev.context, 1, &text, &len, &err);
    check(err, "clCreateProgramWithSource");
    err = clBuildProgram(prog, 1, &dev.id, options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
      std::string log = build_log(dev, prog);
      clReleaseProgram(prog);
      const std::string which = kernel_name != nullptr ? kernel_name : kernel_of(source);
      oar::sdk::fail(OAR_STATUS_DEVICE_ERROR, "OpenCL build of kernel '" + which + "' failed on " +
                                                  dev.name + " (" + cl_error_name(err) + "); build log:\n" + log);
    }
    ++stats_.builds;
    if (!path.empty()) save_to_disk(dev, prog, path, material);
  }
  programs_.emplace(hkey, prog);
  return prog;
}

cl_kernel ProgramCache::kernel(Device& dev, const std::string& key, const std::function<std::string()>& make_source,
                               const char* kernel_name, const std::string& options) {
  std::string full = std::to_string(dev.index) + "|" + options + "|" + kernel_name + "|" + key;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = kernels_.find(full); it != kernels_.end()) {
      ++stats_.memory_hits;
      return it->second;
    }
  }
  cl_program prog = program(dev, make_source(), options, kernel_name);
  cl_int err = CL_SUCCESS;
  cl_kernel k = clCreateKernel(prog, kernel_name, &err);
  check(err, (std::string("clCreateKernel(") + kernel_name + ")").c_str());
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = kernels_.emplace(full, k);
  if (!inserted) clReleaseKernel(k);
  return it->second;
}

ProgramCacheStats ProgramCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

namespace {
std::string& cache_dir_setting() {
  static std::string dir;
  return dir;
}
}  // namespace

void set_program_cache_dir(const std::string& dir) { cache_dir_setting() = dir; }

ProgramCache& program_cache() {
  // Leaked on purpose: OpenCL objects must not be released after the ICD
  // loader has been torn down at process exit.
  static ProgramCache* cache = new ProgramCache(cache_dir_setting());
  return *cache;
}

}  // namespace oar_ocl
