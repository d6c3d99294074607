// The GPU plugins on any machine, GPU or not: the CUDA plugin (and, built as
// test_hip_plugin, the HIP plugin when OAR_BUILD_HIP built it) loads, says why it has no device when
// there is none, keeps NVIDIA's vendor libraries out of the process until an op needs them, and registers a kernel for every (op, dtype signature) the
// CPU plugin has. Kernels are registered with or without a device, so the
// kernel table is checked here even on a machine without a GPU; running them
// is the job of every op suite in tests/unit, which iterate over all devices.
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include "oar/core.h"
#include "oar/kernel_registry.h"
#include "oar/op_registry.h"
#include "oar/runtime.h"
#include "test_util.h"

#ifndef OAR_TEST_HIP
#include <cublas_api.h>
#include <cudnn_version.h>
#include <nccl.h>
#endif

namespace {

const oar::LoadedPlugin* plugin_of(const std::string& type) {
  for (const auto& p : oar::Runtime::get().plugins())
    if (p->device_type == type) return p.get();
  return nullptr;
}

std::string skipped_reason(const std::string& type) {
  for (const auto& s : oar::Runtime::get().skipped())
    if (s.path.find("oar_plugin_" + type) != std::string::npos) return s.reason;
  return "not found in any plugin directory";
}

// Ops a plugin leaves to the CPU or to a decomposition, by design.
std::set<std::string> uncovered_by_design(const std::string& type) {
  if (type != "hip") return {};
  // Debian ships no hipBLAS or MIOpen: these ops (cuBLAS/cuDNN on CUDA) have
  // no HIP kernel and fall back to the CPU there.
  return {"matmul",  "conv2d",           "conv2d_backward_data", "conv2d_backward_weight",
          "softmax", "softmax_backward", "log_softmax",          "log_softmax_backward"};
}

void expect_covers_cpu(const std::string& type) {
  const oar::Runtime& rt = oar::Runtime::get();
  int32_t id = rt.find_device_type(type);
  ASSERT_GE(id, 0) << type << " plugin is not loaded: " << skipped_reason(type);
  const auto exempt = uncovered_by_design(type);
  int checked = 0;
  for (const auto& op : oar::OpRegistry::instance().all()) {
    if (op->decompose || exempt.count(op->name)) continue;
    auto cpu_sigs = oar::KernelRegistry::instance().signatures(op->id, rt.cpu_type());
    auto sigs = oar::KernelRegistry::instance().signatures(op->id, id);
    for (const auto& sig : cpu_sigs) {
      ++checked;
      EXPECT_NE(std::find(sigs.begin(), sigs.end(), sig), sigs.end())
          << "op '" << op->name << "' has a CPU kernel for this signature but no " << type << " kernel";
    }
  }
  EXPECT_GT(checked, 200);
}

void expect_loads_and_explains(const std::string& type) {
  const oar::LoadedPlugin* p = plugin_of(type);
  ASSERT_NE(p, nullptr) << "the " << type << " plugin did not load: " << skipped_reason(type);
  EXPECT_EQ(p->abi_major, uint32_t(OAR_ABI_VERSION_MAJOR));
  if (p->device_count == 0) {
    // The reason a GPU test skips: printed so a CI log says it, asserted so it is never empty.
    std::printf("[   INFO   ] %s plugin has no device here: %s\n", type.c_str(), p->version.c_str());
    EXPECT_NE(p->version.find("no device: "), std::string::npos) << p->version;
    EXPECT_THROW(oar::Device::parse(type + ":0"), oar::DeviceError);
  } else {
    for (int32_t i = 0; i < p->device_count; ++i) EXPECT_GT(std::strlen(p->properties[size_t(i)].name), 0u);
  }
}

#ifndef OAR_TEST_HIP
TEST(CudaPlugin, LoadsAndExplainsAMissingDevice) { expect_loads_and_explains("cuda"); }
TEST(CudaPlugin, CoversEveryCpuKernel) { expect_covers_cpu("cuda"); }

// cuBLAS, cuDNN and NCCL are opened at first use, never by loading the plugin:
// libcublasLt's LLVM breaks PoCL's kernel compiler in the same process
// (plugins/cuda/vendor_loader.h). With every plugin loaded and nothing run on
// cuda, none of them may be in the process.
TEST(CudaPlugin, LoadsNoVendorLibraryUntilAnOpNeedsIt) {
  ASSERT_NE(plugin_of("cuda"), nullptr) << skipped_reason("cuda");
  const std::string cublas_major = std::to_string(CUBLAS_VER_MAJOR);
  for (const std::string& soname : {"libcublas.so." + cublas_major, "libcublasLt.so." + cublas_major,
                                    "libcudnn.so." + std::to_string(CUDNN_MAJOR), "libnccl.so." + std::to_string(NCCL_MAJOR)}) {
    void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_NOLOAD);
    EXPECT_EQ(handle, nullptr) << soname << " is in the process though no cuda op has run";
    if (handle != nullptr) dlclose(handle);
  }
}
#else
// Built a second time as test_hip_plugin: the HIP plugin is loaded from its
// own directory, with no OpenCL driver in the process (ROCm's runtime and
// PoCL clash). Set before the runtime starts, which is at the first test.
const bool hip_environment = [] {
  setenv("OAR_PLUGIN_PATH", OAR_HIP_PLUGIN_DIR, 1);
  setenv("OCL_ICD_VENDORS", "/nonexistent", 1);
  return true;
}();
TEST(HipPlugin, LoadsAndExplainsAMissingDevice) { expect_loads_and_explains("hip"); }
TEST(HipPlugin, CoversEveryCpuKernelButTheVendorLibraryOps) { expect_covers_cpu("hip"); }
#endif

}  // namespace
