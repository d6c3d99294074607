// docs/ops.md is generated from the catalog; this fails when it is stale
// (regenerate with: build/bin/oar-op-docs > docs/ops.md).
#include <fstream>
#include <sstream>

#include "oar/op_docs.h"
#include "test_util.h"

TEST(OpDocs, DocsMatchCatalog) {
  std::ifstream in(std::string(OAR_SOURCE_DIR) + "/docs/ops.md");
  ASSERT_TRUE(in.good()) << "docs/ops.md is missing";
  std::stringstream ss;
  ss << in.rdbuf();
  EXPECT_EQ(ss.str(), oar::catalog_markdown())
      << "docs/ops.md is stale: run build/bin/oar-op-docs > docs/ops.md";
}

TEST(OpDocs, EveryOpHasDocAndInference) {
  for (const auto& op : oar::OpRegistry::instance().all()) {
    EXPECT_FALSE(op->doc.empty()) << op->name;
    EXPECT_TRUE(bool(op->infer)) << op->name;
    EXPECT_FALSE(op->outputs.empty() && !op->variadic_outputs) << op->name;
  }
}

// View ops (reshape, permute, ...) are Tensor methods on every device and have no kernel anywhere;
// composites may have none.
TEST(OpDocs, EveryCatalogOpHasACpuKernel) {
  int32_t cpu = oar::Runtime::get().cpu_type();
  ASSERT_GE(cpu, 0);
  for (const auto& op : oar::OpRegistry::instance().all()) {
    if (op->view) {
      EXPECT_TRUE(oar::KernelRegistry::instance().signatures(op->id, cpu).empty()) << op->name;
      EXPECT_TRUE(bool(op->decompose)) << "view op '" << op->name << "' needs its Tensor method as decompose";
      continue;
    }
    if (op->decompose) continue;  // a composite (topk, linalg_solve) runs as its decomposition anywhere
    EXPECT_FALSE(oar::KernelRegistry::instance().signatures(op->id, cpu).empty())
        << "op '" << op->name << "' has no CPU kernel";
  }
}

// The OpenCL plugin covers the CPU plugin: every op and dtype signature with a
// CPU kernel has an OpenCL kernel, except composite ops, which run as their
// decomposition on a device without a kernel of their own.
TEST(OpDocs, OpenclCoversEveryCpuKernel) {
  const oar::Runtime& rt = oar::Runtime::get();
  int32_t cl = rt.find_device_type("opencl");
  if (cl < 0) GTEST_SKIP() << "the OpenCL plugin is not loaded (oar-info says why)";
  int32_t cpu = rt.cpu_type();
  for (const auto& op : oar::OpRegistry::instance().all()) {
    if (op->decompose) continue;
    auto cpu_sigs = oar::KernelRegistry::instance().signatures(op->id, cpu);
    auto cl_sigs = oar::KernelRegistry::instance().signatures(op->id, cl);
    for (const auto& sig : cpu_sigs)
      EXPECT_NE(std::find(cl_sigs.begin(), cl_sigs.end(), sig), cl_sigs.end())
          << "op '" << op->name << "' has a CPU kernel for this signature but no OpenCL kernel";
  }
}
