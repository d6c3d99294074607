// The OpenCL plugin's compiled-program cache, tested directly on the device
// layer: a build is cached in memory and on disk, a second process (a fresh
// cache object) loads the binary instead of compiling, corrupt or truncated
// files are rejected and rebuilt, files are written atomically (no temporary
// is left behind), keys separate options, and a failing build reports the
// compiler's build log.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cl_device.h"
#include "oar/plugin_sdk/kernel_api.hpp"
#include "program_cache.h"

namespace fs = std::filesystem;
using namespace oar_ocl;

namespace {

const char* kSource = "__kernel void twice(__global float* y) { y[get_global_id(0)] *= 2.0f; }\n";

class ProgramCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (devices().empty()) {
      const char* req = std::getenv("TEST_OAR_REQUIRE_DEVICES");
      if (req && std::string(req).find("opencl") != std::string::npos)
        FAIL() << "TEST_OAR_REQUIRE_DEVICES names opencl but the ICD loader lists no OpenCL device";
      GTEST_SKIP() << "no OpenCL device on this machine (install pocl-opencl-icd)";
    }
    dir_ = fs::temp_directory_path() / ("oar_clcache_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  Device& dev() { return *devices()[0]; }
  fs::path dir_;
};

// Runs `twice` on 4 floats and returns them.
std::vector<float> run_twice(Device& d, cl_program prog) {
  cl_int err = CL_SUCCESS;
  cl_kernel k = clCreateKernel(prog, "twice", &err);
  EXPECT_EQ(err, CL_SUCCESS);
  std::vector<float> v = {1, 2, 3, 4};
  cl_mem m = clCreateBuffer(d.context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, 16, v.data(), &err);
  clSetKernelArg(k, 0, sizeof(m), &m);
  size_t n = 4;
  clEnqueueNDRangeKernel(d.queue, k, 1, nullptr, &n, nullptr, 0, nullptr, nullptr);
  clEnqueueReadBuffer(d.queue, m, CL_TRUE, 0, 16, v.data(), 0, nullptr, nullptr);
  clReleaseMemObject(m);
  clReleaseKernel(k);
  return v;
}

TEST_F(ProgramCacheTest, BuildsOnceThenServesFromMemoryAndDisk) {
  {
    ProgramCache cache(dir_.string());
    cl_program p1 = cache.program(dev(), kSource, "");
    cl_program p2 = cache.program(dev(), kSource, "");
    EXPECT_EQ(p1, p2);
    EXPECT_EQ(cache.stats().builds, 1u);
    EXPECT_EQ(cache.stats().memory_hits, 1u);
    EXPECT_EQ(cache.stats().disk_writes, 1u);
    EXPECT_TRUE(fs::exists(cache.disk_path(dev(), kSource, "")));
    EXPECT_EQ(run_twice(dev(), p1), (std::vector<float>{2, 4, 6, 8}));
  }
  // A new cache (as in a new process) loads the binary: no compile.
  ProgramCache again(dir_.string());
  cl_program p = again.program(dev(), kSource, "");
  EXPECT_EQ(again.stats().builds, 0u);
  EXPECT_EQ(again.stats().disk_hits, 1u);
  EXPECT_EQ(run_twice(dev(), p), (std::vector<float>{2, 4, 6, 8}));
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().string().find(".tmp"), std::string::npos) << "temporary left behind: " << e.path();
}

TEST_F(ProgramCacheTest, CorruptOrTruncatedFilesAreRebuilt) {
  std::string path;
  {
    ProgramCache cache(dir_.string());
    cache.program(dev(), kSource, "");
    path = cache.disk_path(dev(), kSource, "");
  }
  auto size = fs::file_size(path);
  fs::resize_file(path, size / 2);  // truncated
  {
    ProgramCache cache(dir_.string());
    cl_program p = cache.program(dev(), kSource, "");
    EXPECT_EQ(cache.stats().disk_rejects, 1u);
    EXPECT_EQ(cache.stats().builds, 1u);
    EXPECT_EQ(run_twice(dev(), p), (std::vector<float>{2, 4, 6, 8}));
  }
  EXPECT_EQ(fs::file_size(path), size) << "the rebuilt binary replaces the truncated file";
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << "definitely not an OpenCL binary";
  }
  ProgramCache cache(dir_.string());
  cache.program(dev(), kSource, "");
  EXPECT_EQ(cache.stats().disk_rejects, 1u);
  EXPECT_EQ(cache.stats().builds, 1u);
}

TEST_F(ProgramCacheTest, KeySeparatesOptionsAndSources) {
  ProgramCache cache(dir_.string());
  EXPECT_NE(cache.disk_path(dev(), kSource, ""), cache.disk_path(dev(), kSource, "-cl-fast-relaxed-math"));
  EXPECT_NE(cache.disk_path(dev(), kSource, ""), cache.disk_path(dev(), std::string(kSource) + " ", ""));
  cache.program(dev(), kSource, "");
  cache.program(dev(), kSource, "-cl-mad-enable");
  EXPECT_EQ(cache.stats().builds, 2u);
}

TEST_F(ProgramCacheTest, MemoryOnlyCacheWritesNothing) {
  ProgramCache cache("");
  cache.program(dev(), kSource, "");
  EXPECT_EQ(cache.stats().disk_writes, 0u);
  EXPECT_EQ(cache.disk_path(dev(), kSource, ""), "");
}

TEST_F(ProgramCacheTest, BuildFailureCarriesTheBuildLog) {
  ProgramCache cache(dir_.string());
  const char* bad = "__kernel void broken(__global float* y) { y[0] = undefined_name; }\n";
  try {
    cache.program(dev(), bad, "");
    FAIL() << "a kernel that does not compile was accepted";
  } catch (const oar::sdk::KernelError& e) {
    EXPECT_EQ(e.code, OAR_STATUS_DEVICE_ERROR);
    EXPECT_NE(e.message.find("broken"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("build log"), std::string::npos) << e.message;
    EXPECT_NE(e.message.find("undefined_name"), std::string::npos) << "build log missing: " << e.message;
  }
  EXPECT_FALSE(fs::exists(dir_) && !fs::is_empty(dir_)) << "a failed build must not be cached";
}

// Kernels declared through a macro (as the op families' are) are named by the
// kernel asked for, not by the macro's text ("name##_lanes" before).
TEST_F(ProgramCacheTest, BuildFailureNamesTheKernelAskedFor) {
  ProgramCache cache("");
  const char* bad =
      "#define LANES(name) __kernel void name##_lanes(__global float* y) { y[0] = undefined_name; }\n"
      "LANES(softmax)\n";
  try {
    cache.kernel(dev(), "macro-kernel", [&] { return std::string(bad); }, "softmax_lanes");
    FAIL() << "a kernel that does not compile was accepted";
  } catch (const oar::sdk::KernelError& e) {
    EXPECT_EQ(e.message.rfind("OpenCL build of kernel 'softmax_lanes' failed", 0), 0u) << e.message;
  }
}

}  // namespace
