// Reading and writing ONNX protobuf files: the one place that turns bytes
// into ModelProto / TensorProto (with the checks that make a corrupt,
// truncated or too-new file a clear error) and back, atomically.
#pragma once

#include <string>

#include "onnx/onnx_pb.h"
#include "oar/file_io.h"

namespace oar::onnx::detail {

// Whole-file reads and atomic writes are the core's (oar/file_io.h).
using oar::read_file;
using oar::write_file_atomic;

// Parses and checks a model: IOError when the bytes are not a ModelProto
// (truncated, corrupt, not protobuf), ValueError when the IR version or the
// ai.onnx opset is newer than this importer, or the graph is missing.
::onnx::ModelProto parse_model(const std::string& bytes, const std::string& name);

// The opset the model imports for the default domain ("" or "ai.onnx").
int64_t default_opset(const ::onnx::ModelProto& model);
// The opset the model imports for another domain; 0 when none.
int64_t domain_opset(const ::onnx::ModelProto& model, const std::string& domain);

// ONNX's TensorProto data-type name, for messages ("UINT16").
const char* onnx_type_name(int32_t onnx_type);

}  // namespace oar::onnx::detail
