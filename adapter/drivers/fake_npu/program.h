// fake_npu's compiled program: what the simulated NPU keeps of a model
// (shapes, packed weights, boundary conversions) and the functions that make,
// check, store and run one. It holds no pointer into the model.
//
// Memory layout on the "NPU": every 4-D tensor (NCHW in the model) is NHWC,
// conv weights are [Cout, kh, kw, Cin / groups], linear/matmul weights are
// [out, in]; all other tensors are dense row-major as in the model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "oar/adapter/oar_adapter_driver.h"
#include "quantize.h"

namespace fake_npu {

enum class Precision : uint8_t { kFp32 = 0, kFp16 = 1, kInt8 = 2 };
const char* precision_name(Precision p);

enum class OpKind : uint8_t { kConv, kLinear, kMatmul, kAdd, kRelu, kMaxPool, kAvgPool, kSoftmax, kCount };

// One tensor of the program; its index is the model's operand index.
struct Value {
  bool used = false;        // false: an operand the program never reads or writes
  std::vector<int64_t> dims;  // the model's dims (NCHW order for 4-D)
  bool half = false;        // declared f16: rounded to half whenever written
  bool constant = false;    // read from `data`
  Quant storage;            // declared i8/u8: values pass through this quantization
  Quant activation;         // int8 precision: the operand's own per-tensor scale
  std::vector<float> data;  // constant data in NPU layout
};

// Weights of conv/linear (and matmul with a constant right side), one row per output channel.
struct Weights {
  int64_t rows = 0, inner = 0;
  std::vector<float> f;       // fp32 / fp16 precision
  std::vector<int8_t> q;      // int8 precision
  std::vector<float> scales;  // int8 precision: one per row
};

struct Op {
  OpKind kind = OpKind::kRelu;
  std::vector<int32_t> inputs;  // activations only (weights live in `weights`)
  int32_t output = -1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, groups = 1;  // conv and pools
  bool relu = false;               // fused activation of conv2d_act / linear_act
  bool count_include_pad = true;   // avg pool
  Weights weights;
  std::vector<float> bias;         // empty: none
};

struct Boundary {
  int32_t value = -1;
  oar_dtype_t dtype = OAR_DTYPE_F32;
  std::string name;  // for messages
};

struct Program {
  Precision precision = Precision::kFp32;
  std::vector<Value> values;
  std::vector<Op> ops;  // in execution order
  std::vector<Boundary> inputs, outputs;
};

// ---- shape helpers (program.cpp) ----
int64_t numel(const std::vector<int64_t>& dims);
// Output extent of a window along one axis, (in + 2p - k) / s + 1; -1 when no window fits.
int64_t window_out(int64_t in, int64_t k, int64_t s, int64_t p);
// The innermost extent in NPU memory: channels for 4-D (NHWC), the last dim otherwise.
int64_t inner_extent(const std::vector<int64_t>& dims);
std::string dims_text(const std::vector<int64_t>& dims);
// Checks every invariant the kernels rely on (ids, order, shapes, sizes) and
// throws INVALID_ARGUMENT: a self-check after compile, the gate for untrusted bytes.
void verify_program(const Program& p);

// ---- compile.cpp: a model whose operations are all supported -> program ----
Program build_program(const oar_adapter_model* m, const std::vector<uint32_t>& order, Precision precision);

// ---- serialize.cpp ----
std::vector<uint8_t> serialize_program(const Program& p);
// Throws INVALID_ARGUMENT (garbage) or VERSION_MISMATCH (another driver version or precision).
Program deserialize_program(const void* data, uint64_t size, Precision expected);
// Throws INVALID_ARGUMENT unless the program's inputs/outputs are the model's.
void check_matches_model(const Program& p, const oar_adapter_model* m);

// ---- execute.cpp ----
struct HostBuffer {
  void* data = nullptr;
  uint64_t size = 0;
};
// Checks buffers against the program's inputs or outputs (count, dtype, dims, bytes).
std::vector<HostBuffer> check_buffers(const Program& p, const oar_adapter_buffer* const* buffers, uint32_t count,
                                      bool inputs);
void run_program(const Program& p, const std::vector<HostBuffer>& inputs, const std::vector<HostBuffer>& outputs);

}  // namespace fake_npu
