// Model files in and out: reading with the checks that turn a missing,
// corrupt, truncated or too-new file into an error that says which, and the
// atomic write the exporter and the node-test report rely on.
#include "proto_io.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <google/protobuf/io/coded_stream.h>

#include "oar/error.h"
#include "oar/onnx/onnx.h"

namespace oar::onnx::detail {

::onnx::ModelProto parse_model(const std::string& bytes, const std::string& name) {
  if (bytes.empty()) throw IOError(str(name, ": empty file, not an ONNX model"));
  ::onnx::ModelProto model;
  google::protobuf::io::CodedInputStream stream(reinterpret_cast<const uint8_t*>(bytes.data()), int(bytes.size()));
  stream.SetTotalBytesLimit(INT32_MAX);
  // A truncated or corrupt file usually fails here; one cut at a field
  // boundary parses but lacks parts, which the checks below and the
  // importer's undefined-value checks catch.
  if (!model.ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    throw IOError(str(name, ": not a valid ONNX model (protobuf parse failed after reading ", bytes.size(),
                      " bytes: the file is truncated, corrupt or not ONNX)"));
  if (!model.has_ir_version() || model.ir_version() <= 0)
    throw ValueError(str(name, ": the model has no IR version (truncated or not an ONNX model?)"));
  if (model.ir_version() > kMaxIrVersion)
    throw ValueError(str(name, ": ONNX IR version ", model.ir_version(), " is newer than this importer supports (",
                         kMaxIrVersion, ", ONNX 1.17); re-export the model for an older IR version"));
  if (!model.has_graph())
    throw ValueError(str(name, ": the model has no graph (truncated or not an ONNX model?)"));
  if (model.opset_import_size() == 0)
    throw ValueError(str(name, ": the model imports no opset (truncated or not an ONNX model?)"));
  for (const auto& op : model.opset_import()) {
    bool standard = op.domain().empty() || op.domain() == "ai.onnx";
    if (standard && op.version() > kMaxOpset)
      throw ValueError(str(name, ": the model uses ai.onnx opset ", op.version(), ", newer than this importer supports (",
                           kMaxOpset, "); re-export it for opset ", kMaxOpset, " or older"));
    if (standard && op.version() < 1)
      throw ValueError(str(name, ": invalid ai.onnx opset version ", op.version()));
  }
  return model;
}

int64_t default_opset(const ::onnx::ModelProto& model) {
  for (const auto& op : model.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") return op.version();
  return 0;
}

int64_t domain_opset(const ::onnx::ModelProto& model, const std::string& domain) {
  for (const auto& op : model.opset_import())
    if (op.domain() == domain) return op.version();
  return 0;
}

const char* onnx_type_name(int32_t t) {
  switch (t) {
    case 0: return "UNDEFINED";
    case 1: return "FLOAT";
    case 2: return "UINT8";
    case 3: return "INT8";
    case 4: return "UINT16";
    case 5: return "INT16";
    case 6: return "INT32";
    case 7: return "INT64";
    case 8: return "STRING";
    case 9: return "BOOL";
    case 10: return "FLOAT16";
    case 11: return "DOUBLE";
    case 12: return "UINT32";
    case 13: return "UINT64";
    case 14: return "COMPLEX64";
    case 15: return "COMPLEX128";
    case 16: return "BFLOAT16";
    default: return "unknown";
  }
}

}  // namespace oar::onnx::detail
