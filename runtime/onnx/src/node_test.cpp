// One ONNX node test: import model.onnx with the shapes of
// test_data_set_0's inputs, run it with the graph executor, compare every
// output with output_N.pb (shape and dtype exactly, integers and bools
// exactly, floats within tolerance, NaN equal to NaN). Every failure becomes
// a one-line reason; nothing escapes as an exception.
#include "oar/onnx/node_test.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <unordered_set>

#include "oar/error.h"
#include "oar/graph/executor.h"
#include "oar/onnx/onnx.h"
#include "proto_io.h"

namespace oar::onnx {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> numbered_files(const fs::path& dir, const std::string& prefix) {
  std::vector<std::string> files;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    files.push_back(p.string());
  }
  return files;
}

// The message without the long model path it starts with, on one line.
std::string short_reason(std::string message, const std::string& dir) {
  for (const std::string& prefix : {(fs::path(dir) / "model.onnx").string() + ": ", dir + "/"}) {
    size_t at;
    while ((at = message.find(prefix)) != std::string::npos) message.erase(at, prefix.size());
  }
  std::replace(message.begin(), message.end(), '\n', ' ');
  std::replace(message.begin(), message.end(), '|', '/');
  if (message.size() > 200) message = message.substr(0, 197) + "...";
  return message;
}

std::string error_reason(const Error& e, const std::string& dir) {
  return short_reason(str(error_kind_name(e.kind()), ": ", e.what()), dir);
}

// Empty when `actual` matches `expected`, else what differs.
std::string compare(const Tensor& actual_any, const Tensor& expected, const NodeTestOptions& o, size_t index) {
  Tensor actual = actual_any.to(Device::cpu()).contiguous();
  if (actual.dtype() != expected.dtype())
    return str("output ", index, ": dtype ", dtype_name(actual.dtype()), ", expected ", dtype_name(expected.dtype()));
  if (actual.shape() != expected.shape())
    return str("output ", index, ": shape ", shape_str(actual.shape()), ", expected ", shape_str(expected.shape()));
  if (!is_floating(expected.dtype())) {
    auto a = actual.to_vector<int64_t>(), e = expected.to_vector<int64_t>();
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != e[i]) return str("output ", index, ": element ", i, " is ", a[i], ", expected ", e[i]);
    return "";
  }
  double rtol = o.rtol;
  if (expected.dtype() == DType::f16) rtol = std::max(rtol, 1e-3);
  if (expected.dtype() == DType::bf16) rtol = std::max(rtol, 1e-2);
  auto a = actual.to_vector<double>(), e = expected.to_vector<double>();
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(e[i]) && std::isnan(a[i])) continue;
    if (a[i] == e[i]) continue;  // infinities included
    if (!(std::abs(a[i] - e[i]) <= o.atol + rtol * std::abs(e[i])))
      return str("output ", index, ": element ", i, " is ", a[i], ", expected ", e[i]);
  }
  return "";
}

// The declared element types of the model's runtime inputs ("input_") or its outputs.
std::vector<int32_t> declared_types(const std::string& model_path, const std::string& prefix) {
  ::onnx::ModelProto m = detail::parse_model(detail::read_file(model_path), model_path);
  std::vector<int32_t> types;
  if (prefix == "output_") {
    for (const auto& out : m.graph().output()) types.push_back(out.type().tensor_type().elem_type());
    return types;
  }
  std::unordered_set<std::string> initializers;
  for (const auto& init : m.graph().initializer()) initializers.insert(init.name());
  for (const auto& in : m.graph().input())
    if (!initializers.count(in.name())) types.push_back(in.type().tensor_type().elem_type());
  return types;
}

}  // namespace

std::vector<std::string> list_node_tests(const std::string& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw IOError(str(root, ": not a directory"));
  std::vector<std::string> dirs;
  for (const auto& entry : fs::directory_iterator(root))
    if (entry.is_directory() && fs::exists(entry.path() / "model.onnx")) dirs.push_back(entry.path().string());
  std::sort(dirs.begin(), dirs.end());
  return dirs;
}

std::vector<Tensor> load_node_test_tensors(const std::string& dir, const std::string& prefix) {
  std::vector<int32_t> declared;
  try {
    declared = declared_types((fs::path(dir) / "model.onnx").string(), prefix);
  } catch (const Error&) {
    // a model that does not parse: its import says why; the data reads as stored
  }
  std::vector<Tensor> tensors;
  const auto files = numbered_files(fs::path(dir) / "test_data_set_0", prefix);
  for (size_t i = 0; i < files.size(); ++i) {
    ::onnx::TensorProto proto;
    if (!proto.ParseFromString(detail::read_file(files[i])))
      throw IOError(str(files[i], ": not a valid TensorProto (protobuf parse failed; truncated or corrupt?)"));
    if (i < declared.size() && declared[i] == ::onnx::TensorProto::BFLOAT16 &&
        proto.data_type() == ::onnx::TensorProto::UINT16)
      proto.set_data_type(::onnx::TensorProto::BFLOAT16);
    tensors.push_back(tensor_from_proto(proto, files[i]));
  }
  return tensors;
}

NodeTestResult run_node_test(const std::string& dir, const NodeTestOptions& options) {
  NodeTestResult result;
  result.name = fs::path(dir).filename().string();
  try {
    std::vector<Tensor> inputs;
    std::string load_error;
    try {
      inputs = load_node_test_tensors(dir, "input_");
    } catch (const Error& e) {
      load_error = error_reason(e, dir);  // e.g. a SequenceProto: the import says why, below
    }
    ImportOptions import_options;
    if (load_error.empty())
      for (const Tensor& t : inputs) import_options.input_shapes.push_back(t.shape());
    // Parameters fed as inputs (shapes, axes, pads...) specialize the graph, like the shapes.
    if (load_error.empty()) import_options.input_values = inputs;
    std::shared_ptr<const graph::Graph> graph = import_model((fs::path(dir) / "model.onnx").string(), import_options);
    if (!load_error.empty()) {
      result.reason = load_error;
      return result;
    }
    graph::Executor executor(graph, options.device);
    std::vector<Tensor> outputs = executor.run(inputs);
    std::vector<Tensor> expected = load_node_test_tensors(dir, "output_");
    if (outputs.size() != expected.size()) {
      result.reason = str("the graph has ", outputs.size(), " outputs, the test expects ", expected.size());
      return result;
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      std::string diff = compare(outputs[i], expected[i], options, i);
      if (!diff.empty()) {
        result.reason = short_reason(diff, dir);
        return result;
      }
    }
    result.passed = true;
  } catch (const Error& e) {
    result.reason = error_reason(e, dir);
  } catch (const std::exception& e) {
    result.reason = short_reason(str("unexpected error: ", e.what()), dir);
  }
  return result;
}

}  // namespace oar::onnx
