// The lazy loader of cuBLAS, cuDNN, cuSOLVER and NCCL (plugins/cuda/vendor_loader.h),
// on any machine with the libraries installed, GPU or not: nothing is loaded
// before first use, every entry point the plugin calls resolves in the
// installed library (a renamed or versioned symbol fails here, not at a
// user's first matmul), and the calls reach the real library. Each test runs
// in its own process (gtest_discover_tests), so "not loaded yet" holds.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "vendor_loader.h"

namespace {

bool in_process(const std::string& soname) {
  void* handle = dlopen(soname.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle != nullptr) dlclose(handle);
  return handle != nullptr;
}

#define OAR_EXPECT_RESOLVED(prefix, name) EXPECT_NE(api.name, nullptr) << #prefix #name;

TEST(VendorLoader, CublasIsOpenedAtFirstUseWithEveryEntryPoint) {
  const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  EXPECT_FALSE(in_process(soname));
  const oar_gpu::CublasApi& api = oar_gpu::cublas();
  EXPECT_TRUE(in_process(soname));
  OAR_CUBLAS_ENTRY_POINTS(OAR_EXPECT_RESOLVED)
  EXPECT_STREQ(api.GetStatusName(CUBLAS_STATUS_NOT_INITIALIZED), "CUBLAS_STATUS_NOT_INITIALIZED");
  EXPECT_EQ(&oar_gpu::cublas(), &api);  // loaded once
}

TEST(VendorLoader, CudnnIsOpenedAtFirstUseWithEveryEntryPoint) {
  const std::string soname = "libcudnn.so." + std::to_string(CUDNN_MAJOR);
  EXPECT_FALSE(in_process(soname));
  const oar_gpu::CudnnApi& api = oar_gpu::cudnn();
  EXPECT_TRUE(in_process(soname));
  OAR_CUDNN_ENTRY_POINTS(OAR_EXPECT_RESOLVED)
  EXPECT_STREQ(api.GetErrorString(CUDNN_STATUS_BAD_PARAM), "CUDNN_STATUS_BAD_PARAM");
}

TEST(VendorLoader, CusolverIsOpenedAtFirstUseWithEveryEntryPoint) {
  const std::string soname = "libcusolver.so." + std::to_string(CUSOLVER_VER_MAJOR);
  EXPECT_FALSE(in_process(soname));
  const oar_gpu::CusolverApi& api = oar_gpu::cusolver();
  EXPECT_TRUE(in_process(soname));
  OAR_CUSOLVER_ENTRY_POINTS(OAR_EXPECT_RESOLVED)
  EXPECT_EQ(&oar_gpu::cusolver(), &api);
}

TEST(VendorLoader, NcclIsOpenedAtFirstUseWithEveryEntryPoint) {
  const std::string soname = "libnccl.so." + std::to_string(NCCL_MAJOR);
  EXPECT_FALSE(in_process(soname));
  const oar_gpu::NcclApi& api = oar_gpu::nccl();
  EXPECT_TRUE(in_process(soname));
  OAR_NCCL_ENTRY_POINTS(OAR_EXPECT_RESOLVED)
  EXPECT_NE(std::string(api.GetErrorString(ncclInvalidArgument)).find("invalid argument"), std::string::npos);
}

}  // namespace
