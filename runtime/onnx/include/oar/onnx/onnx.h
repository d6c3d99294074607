// ONNX import and export for the graph IR (liboar_onnx.so). An ONNX model
// becomes a static oar::graph::Graph: initializers become constants, graph
// inputs keep their declared (or overridden) static shapes, and each ONNX node
// is mapped, by op type and opset version, onto catalog ops or a small
// subgraph of them. Nodes whose inputs are all constants (shape arithmetic,
// Constant, Shape, Range...) are evaluated at import time with eager ops, so
// the graph that comes out holds only the work that depends on its inputs.
// Export is the reverse: a Graph becomes a ModelProto at a chosen opset.
//
// This library is the only part of oar that links protobuf and the ONNX proto
// library; the core stays free of both. Every failure is a typed oar error
// whose message names the file and the problem: IOError for files that are
// missing, unreadable or not valid protobuf, ValueError for models that are
// newer than this importer or malformed, NotImplementedError for op types
// (or attributes) it does not map, DTypeError for element types oar lacks.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "oar/graph/graph.h"
#include "oar/tensor.h"

namespace onnx {  // the generated protobuf classes (ONNX_NAMESPACE=onnx)
class TensorProto;
class ModelProto;
}  // namespace onnx

namespace oar::onnx {

// Newest versions this importer understands and the exporter writes (those
// of ONNX 1.17: IR 10, ai.onnx opset 22); newer models are refused with a
// ValueError rather than misread. The proto classes may be older (Debian's
// 1.12): protobuf keeps the fields they lack as unknown fields, and the
// element types they lack (float8, int4) are DTypeErrors like any other.
inline constexpr int64_t kMaxIrVersion = 10;
inline constexpr int64_t kMaxOpset = 22;

struct ImportOptions {
  // Static shapes for the graph inputs that are not initializers, in order;
  // empty: use the shapes the model declares (which must then be static).
  std::vector<Shape> input_shapes;
  // Values for the graph inputs that ONNX ops read as parameters rather than
  // data (Reshape's shape, Unsqueeze's axes, Tile's repeats, Pad's pads,
  // Resize's scales...), in the same order; undefined tensors for the rest,
  // or empty. oar ops take such parameters as attributes, so a mapping that
  // needs one uses the value given here: the graph still takes that input
  // but is specialized to this value, as it is to the input shapes.
  std::vector<Tensor> input_values;
};

// ONNX model file -> graph. The graph's inputs are the model's non-initializer
// inputs, its outputs the model's outputs in declared order.
std::unique_ptr<graph::Graph> import_model(const std::string& path, const ImportOptions& options = {});
// The same from serialized bytes; `name` stands for the file in messages.
std::unique_ptr<graph::Graph> import_model_bytes(const std::string& bytes, const std::string& name = "<bytes>",
                                                 const ImportOptions& options = {});

// The ONNX op types the importer maps (ai.onnx and the training domain), sorted.
std::vector<std::string> supported_op_types();

// ONNX element type (TensorProto::DataType value) <-> oar dtype; DTypeError
// for types oar has no dtype for (string, complex, uint16, ...).
DType dtype_from_onnx(int32_t onnx_type, const std::string& context = "");
int32_t dtype_to_onnx(DType dtype);

// TensorProto -> CPU tensor, from raw_data or the typed fields. External
// data is refused (NotImplementedError); sizes that disagree with the dims
// are a ValueError.
Tensor tensor_from_proto(const ::onnx::TensorProto& proto, const std::string& context = "");
void tensor_to_proto(const Tensor& tensor, ::onnx::TensorProto& proto);
// A serialized TensorProto file (the test data's input_0.pb, ...).
Tensor load_tensor(const std::string& path);

// Graph -> ONNX model file, written atomically (a temporary file in the same
// directory, then a rename). Constants and captured tensors become
// initializers; an op without an ONNX mapping is a NotImplementedError naming
// it. `opset` must be between 13 and kMaxOpset.
void export_model(const graph::Graph& graph, const std::string& path, int opset = 17);
// The same model as serialized bytes.
std::string export_model_bytes(const graph::Graph& graph, int opset = 17);

// Export with names chosen for the model's inputs and outputs, in order
// (fewer names than inputs or outputs leave the rest as they are, as
// torch.onnx.export's input_names/output_names do). Names must be distinct
// and non-empty (ValueError otherwise).
struct ExportOptions {
  int opset = 17;
  std::vector<std::string> input_names;
  std::vector<std::string> output_names;
};
void export_model(const graph::Graph& graph, const std::string& path, const ExportOptions& options);
std::string export_model_bytes(const graph::Graph& graph, const ExportOptions& options);

}  // namespace oar::onnx
