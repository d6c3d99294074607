// onnx/<suite>/<test>: the ONNX backend tests of Debian's libonnx-testdata,
// imported with oar's ONNX importer and run by the graph executor on the
// device (node tests, the PyTorch-converted and -operator model tests and the
// simple models). The "real" models ship only a download address in the
// package, so each is reported as skipped with that address.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "conformance_case.h"

#ifdef OAR_CONFORMANCE_ONNX
#include "oar/onnx/node_test.h"
#endif

namespace oar::conformance {

namespace fs = std::filesystem;

void add_onnx_cases(const Target& t, std::vector<Case>& cases) {
#ifdef OAR_CONFORMANCE_ONNX
  std::error_code ec;
  if (!fs::is_directory(t.onnx_root, ec)) {
    std::string root = t.onnx_root;
    cases.push_back({"onnx/testdata", 10, "", "", [root]() -> Outcome {
                       throw NotApplicable("no ONNX test data at " + root + " (Debian package libonnx-testdata)");
                     }});
    return;
  }
  for (const char* suite : {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
    const std::string dir = (fs::path(t.onnx_root) / suite).string();
    for (const std::string& test : onnx::list_node_tests(dir)) {
      const std::string name = fs::path(test).filename().string();
      cases.push_back({std::string("onnx/") + suite + "/" + name, 120, "", "", [&t, test]() -> Outcome {
                         onnx::NodeTestOptions o;
                         o.device = t.device;
                         onnx::NodeTestResult r = onnx::run_node_test(test, o);
                         return r.passed ? Outcome{} : Outcome{Status::kFail, r.reason};
                       }});
    }
  }
  const fs::path real = fs::path(t.onnx_root) / "real";
  std::vector<fs::path> models;
  for (const auto& e : fs::directory_iterator(real, ec)) models.push_back(e.path());
  std::sort(models.begin(), models.end());
  for (const auto& m : models) {
    fs::path json = m / "data.json";
    if (!fs::exists(json, ec)) continue;
    std::ifstream in(json);
    std::stringstream text;
    text << in.rdbuf();
    std::string s = text.str(), url = "(no url)";
    size_t at = s.find("\"url\"");
    if (at != std::string::npos) {
      size_t q1 = s.find('"', s.find(':', at) + 1), q2 = q1 == std::string::npos ? q1 : s.find('"', q1 + 1);
      if (q2 != std::string::npos) url = s.substr(q1 + 1, q2 - q1 - 1);
    }
    cases.push_back({"onnx/real/" + m.filename().string(), 10, "", "", [url]() -> Outcome {
                       throw NotApplicable("libonnx-testdata ships only the download address " + url +
                                           ", and the suite runs offline");
                     }});
  }
#else
  (void)t;
  cases.push_back({"onnx/importer", 10, "", "", []() -> Outcome {
                     throw NotApplicable("oar was built without ONNX import (libonnx-dev missing)");
                   }});
#endif
}

}  // namespace oar::conformance
