// Running ONNX backend node tests (the layout Debian's libonnx-testdata
// ships: <root>/test_xxx/model.onnx and test_data_set_0/{input,output}_N.pb)
// through the importer and the graph executor. Shared by the
// oar-onnx-node-tests tool, which writes docs/onnx_node_tests.md, and the
// GoogleTest suite, which guards the pass rate.
#pragma once

#include <string>
#include <vector>

#include "oar/device.h"
#include "oar/tensor.h"

namespace oar::onnx {

inline constexpr const char* kDefaultNodeTestRoot = "/usr/share/libonnx-testdata/data/node";

struct NodeTestOptions {
  Device device = Device::cpu();
  // ONNX's backend tests compare with rtol 1e-3; atol 1e-5 absorbs values
  // near zero. 16-bit floats are compared at their own precision (one unit
  // in the last place relative: 1e-3 for f16, 1e-2 for bf16) since the
  // expected values were rounded from f32 references.
  double rtol = 1e-3;
  double atol = 1e-5;
};

struct NodeTestResult {
  std::string name;
  bool passed = false;
  std::string reason;  // short, one line; empty when passed
};

// The test directories under `root` (those holding a model.onnx), sorted.
std::vector<std::string> list_node_tests(const std::string& root);
// The tensors test_data_set_0/<prefix>N.pb ("input_" or "output_") of a test
// directory, read as the model declares them: ONNX stores BFLOAT16 test data
// as UINT16 (numpy has no bfloat16), and those bits are read as bf16.
std::vector<Tensor> load_node_test_tensors(const std::string& dir, const std::string& prefix);
// Imports, runs and compares one test directory; never throws for a failing
// test (import errors, kernel errors and mismatches become the reason).
NodeTestResult run_node_test(const std::string& dir, const NodeTestOptions& options = {});

}  // namespace oar::onnx
