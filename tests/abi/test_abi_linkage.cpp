// The core knows no vendor: liboar_core.so must not depend on oneDNN, CUDA,
// cuDNN, cuBLAS, NCCL or OpenCL. Vendor libraries are reached only through
// plugins, which the core opens at run time, so a machine without a GPU stack
// (or without oneDNN) can still load the core and report what is missing.
#include <algorithm>
#include <cctype>

#include "abi_test_util.h"

using namespace oar::abi_testing;

TEST(AbiLinkage, CoreNamesNoVendorLibrary) {
  ProcessResult r = run_process("/usr/bin/ldd", {OAR_CORE_LIBRARY}, {});
  ASSERT_EQ(r.exit_code, 0) << "ldd " << OAR_CORE_LIBRARY << " failed: " << r.err;
  // ldd really listed dependencies (the check below is not vacuous).
  ASSERT_NE(r.out.find("libc.so"), std::string::npos) << r.out;
  // Library names only (the first word of each line), lower-cased: a build
  // directory called "build-cuda" in a resolved path must not count.
  std::string deps;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string name;
    words >> name;
    deps += name.substr(name.rfind('/') + 1) + "\n";
  }
  std::transform(deps.begin(), deps.end(), deps.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (const char* vendor : {"dnnl", "mkldnn", "cuda", "cudnn", "cublas", "nccl", "opencl"})
    EXPECT_EQ(deps.find(vendor), std::string::npos)
        << "liboar_core.so depends on a '" << vendor << "' library:\n" << r.out;
  EXPECT_NE(deps.find("libc.so"), std::string::npos) << deps;
}

// The CPU plugin is where oneDNN lives; this also shows the ldd check can see
// a vendor library when one is linked.
TEST(AbiLinkage, CpuPluginCarriesOneDnn) {
  std::string plugin = std::string(OAR_CORE_LIBRARY);
  plugin = plugin.substr(0, plugin.rfind('/')) + "/oar/plugins/liboar_plugin_cpu.so";
  ProcessResult r = run_process("/usr/bin/ldd", {plugin}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("libdnnl"), std::string::npos) << r.out;
}
