// After the op and autograd suites ran with the hipcpu plugin loaded (each
// process appending to OAR_KERNEL_COVERAGE_FILE at exit), checks the report
// against the kernel registry: every op the hipcpu plugin registers ran as a
// hipcpu kernel, and every op that fell back to the CPU from hipcpu is one
// whose GPU kernel is a vendor library (the CUDA plugin registers it, the
// portable sources do not). Prints the share of the CUDA plugin's ops that
// ran on hipcpu. The report path is the first argument.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "oar/core.h"

using namespace oar;

namespace {

std::string g_report;

struct Report {
  std::map<std::string, int64_t> kernels, fallbacks;  // op -> count on hipcpu
};

Report read_report(const std::string& path) {
  Report r;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream s(line);
    std::string kind, type, op;
    int64_t n = 0;
    if (!(s >> kind >> type >> op >> n) || type != "hipcpu") continue;
    (kind == "kernel" ? r.kernels : r.fallbacks)[op] += n;
  }
  return r;
}

std::set<std::string> registered_ops(const std::string& device_type) {
  std::set<std::string> ops;
  const int32_t type = Runtime::get().find_device_type(device_type);
  if (type < 0) return ops;
  for (const auto& op : OpRegistry::instance().all())
    if (!KernelRegistry::instance().signatures(op->id, type).empty()) ops.insert(op->name);
  return ops;
}

TEST(HipCpu, EveryRegisteredKernelRanAndOnlyVendorOpsFellBack) {
  ASSERT_FALSE(g_report.empty()) << "usage: test_hipcpu_coverage <coverage report>";
  const Report r = read_report(g_report);
  ASSERT_FALSE(r.kernels.empty()) << "no hipcpu kernel ran (is " << g_report << " written by the HipCpu suites?)";
  const std::set<std::string> hipcpu = registered_ops("hipcpu");
  ASSERT_FALSE(hipcpu.empty()) << "the hipcpu plugin is not loaded (OAR_PLUGIN_PATH)";
  std::set<std::string> cuda = registered_ops("cuda");
  const bool have_cuda = !cuda.empty();
  if (!have_cuda) cuda = hipcpu;  // no CUDA plugin built here: the portable set is all there is

  std::vector<std::string> never_ran;
  for (const auto& op : hipcpu)
    if (!r.kernels.count(op)) never_ran.push_back(op);
  EXPECT_TRUE(never_ran.empty()) << never_ran.size() << " hipcpu kernels never ran, first: " << never_ran.front();

  for (const auto& [op, n] : r.fallbacks) {
    const bool vendor = cuda.count(op) && !hipcpu.count(op);
    EXPECT_TRUE(vendor) << "'" << op << "' fell back to the CPU from hipcpu " << n
                        << " times, but its GPU kernel is not a vendor library ("
                        << (hipcpu.count(op) ? "hipcpu registers it" : "the CUDA plugin does not register it") << ")";
  }

  size_t ran = 0;
  for (const auto& op : cuda) ran += r.kernels.count(op);
  std::printf("hipcpu ran %zu of the %zu ops the %s registers as its own kernels (%.0f%%); the rest are vendor "
              "libraries (cuBLAS, cuDNN) and ran on the CPU\n",
              ran, cuda.size(), have_cuda ? "CUDA plugin" : "hipcpu plugin", 100.0 * double(ran) / double(cuda.size()));
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc > 1) g_report = argv[1];
  return RUN_ALL_TESTS();
}
