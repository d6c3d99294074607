// Single-source op semantics: `softsign` is declared by one line in
// kernel_primitives/include/oar/kp/unary_ops.def and nowhere else. These
// tests show that this line alone gives a catalog op with a kernel of its own
// on every loaded device (CPU and OpenCL alike), with the right values, and
// that no plugin or core source names it.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "oar/kernel_registry.h"
#include "oar/op_registry.h"
#include "oar/runtime.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

TEST(SingleSource, DefLineGivesACatalogOp) {
  const OpSchema* s = OpRegistry::instance().find("softsign");
  ASSERT_NE(s, nullptr) << "softsign is not in the catalog";
  EXPECT_NE(s->doc.find("declared only in kernel_primitives"), std::string::npos) << s->doc;
}

TEST(SingleSource, EveryDeviceHasItsOwnKernelAndMatchesReference) {
  const OpSchema& s = OpRegistry::instance().get("softsign");
  for (Device dev : devices()) {
    for (DType dt : {DType::f32, DType::f64, DType::f16, DType::bf16}) {
      SCOPED_TRACE(dev.str() + " " + dtype_name(dt));
      DType sig[] = {dt};
      const auto* kernels = KernelRegistry::instance().lookup(s.id, dev.type, sig, 1);
      ASSERT_TRUE(kernels && !kernels->empty()) << "no softsign kernel registered on " << dev.str();
      std::vector<double> x = random_values(257, -6, 6, 3, dt);
      for (auto& v : x) v = round_to(v, dt);
      int64_t before = fallback_count_total();
      Tensor y = call1("softsign", {make_tensor(x, {257}, dt, dev)});
      EXPECT_EQ(fallback_count_total(), before) << "softsign left its device";
      EXPECT_EQ(y.device(), dev);
      std::vector<double> want(x.size());
      for (size_t i = 0; i < x.size(); ++i) want[i] = round_to(x[i] / (1 + std::fabs(x[i])), dt);
      expect_close(host_values(y), want, 4 * tolerance(dt), 4 * tolerance(dt), "softsign");
    }
  }
}

// The grep-able proof: the name appears in kernel_primitives/ and in no C or
// C++ source of the plugins, the core or the frontends. (Python's torch.nn
// layer names it, as PyTorch's API does: F.softsign and nn.Softsign only
// forward to the catalog op, which _catalog.py installed without naming it.)
TEST(SingleSource, NoPluginOrCoreSourceNamesTheOp) {
  namespace fs = std::filesystem;
  const fs::path root(OAR_SOURCE_DIR);
  const std::set<std::string> sources{".c", ".cc", ".cpp", ".h", ".hpp", ".cu", ".cuh", ".cl", ".def", ".kp"};
  for (const char* dir : {"plugins", "runtime", "frontend"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / dir)) {
      if (!entry.is_regular_file() || !sources.count(entry.path().extension().string())) continue;
      std::ifstream in(entry.path());
      std::stringstream text;
      text << in.rdbuf();
      EXPECT_EQ(text.str().find("softsign"), std::string::npos) << entry.path() << " names softsign";
    }
  }
  std::ifstream def(root / "kernel_primitives/include/oar/kp/unary_ops.def");
  std::stringstream text;
  text << def.rdbuf();
  EXPECT_NE(text.str().find("OAR_KP_UNARY(softsign"), std::string::npos);
}

}  // namespace
