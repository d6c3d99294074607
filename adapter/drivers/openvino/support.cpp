// query_operation: the driver's rules for each mapped op, a trial build of
// the one operation (OpenVINO's own shape and type checks), and for devices
// other than CPU the device plugin's query_model.
#include "support.h"

#include <openvino/op/util/op_types.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "driver_types.h"
#include "entry_points.h"
#include "model_builder.h"

namespace oar_openvino {

namespace {

using oar_adapter_sdk::attr_int;
using oar_adapter_sdk::attr_ints;
using oar_adapter_sdk::attr_string;
using oar_adapter_sdk::dtype_name;

enum class Types { kFloat, kNumeric, kAny };  // what the op's outputs may be

struct Rule {
  Types types;
  uint32_t min_inputs, max_inputs;
  std::set<uint32_t> optional;  // inputs that may be -1
  uint32_t outputs;
  std::string (*check)(const oar_adapter_model*, const oar_adapter_operation*);
};

bool allowed(oar_dtype_t t, Types types) {
  switch (t) {
    case OAR_DTYPE_F32: case OAR_DTYPE_F16: case OAR_DTYPE_BF16: return true;
    case OAR_DTYPE_I32: case OAR_DTYPE_I64: return types != Types::kFloat;
    case OAR_DTYPE_I8: case OAR_DTYPE_U8: return types == Types::kAny;
    default: return false;
  }
}

uint32_t rank_of(const oar_adapter_model* m, const oar_adapter_operation* op, uint32_t i) {
  return m->operands[op->inputs[i]]->rank;
}

std::string check_pair(const oar_adapter_operation* op, const char* name, int64_t min) {
  const oar_attr* a = oar_adapter_sdk::find_attr(op, name);
  if (a == nullptr) return "";
  std::vector<int64_t> v = attr_ints(op, name);
  if (v.empty() && std::string(name) == "stride") return "";  // pooling: stride = kernel_size
  if (v.size() != 1 && v.size() != 2) return std::string(op->type) + ": '" + name + "' needs 1 or 2 values";
  for (int64_t x : v)
    if (x < min) return std::string(op->type) + ": '" + name + "' values must be >= " + std::to_string(min);
  return "";
}

std::string check_activation(const oar_adapter_operation* op) {
  const std::string act = attr_string(op, "activation", "relu");
  if (act == "relu" || act == "sigmoid" || act == "tanh") return "";
  return std::string(op->type) + ": activation '" + act + "' is not one of relu, sigmoid, tanh";
}

std::string check_conv(const oar_adapter_model* m, const oar_adapter_operation* op) {
  for (auto [name, min] : {std::pair<const char*, int64_t>{"stride", 1}, {"padding", 0}, {"dilation", 1}})
    if (std::string why = check_pair(op, name, min); !why.empty()) return why;
  if (attr_int(op, "groups", 1) < 1) return std::string(op->type) + ": groups must be >= 1";
  if (rank_of(m, op, 0) != 4 || rank_of(m, op, 1) != 4)
    return std::string(op->type) + ": x and weight must be 4-D (NCHW, OIHW)";
  if (op->input_count > 2 && op->inputs[2] >= 0 && rank_of(m, op, 2) != 1)
    return std::string(op->type) + ": bias must be 1-D";
  return std::string(op->type) == "conv2d_act" ? check_activation(op) : "";
}

std::string check_linear(const oar_adapter_model* m, const oar_adapter_operation* op) {
  if (rank_of(m, op, 0) < 1 || rank_of(m, op, 1) != 2)
    return std::string(op->type) + ": x must have a dim and weight must be 2-D [out, in]";
  if (op->input_count > 2 && op->inputs[2] >= 0 && rank_of(m, op, 2) != 1)
    return std::string(op->type) + ": bias must be 1-D";
  return std::string(op->type) == "linear_act" ? check_activation(op) : "";
}

std::string check_matmul(const oar_adapter_model* m, const oar_adapter_operation* op) {
  return rank_of(m, op, 0) >= 2 && rank_of(m, op, 1) >= 2 ? "" : "matmul: both operands need 2 or more dims";
}

std::string check_gelu(const oar_adapter_model*, const oar_adapter_operation* op) {
  const std::string a = attr_string(op, "approximate", "none");
  return a == "none" || a == "tanh" ? "" : "gelu: approximate='" + a + "' is not none or tanh";
}

// PyTorch's output size in ceil mode (the catalog's rule).
int64_t ceil_pool_size(int64_t in, int64_t k, int64_t s, int64_t p) {
  const int64_t num = in + 2 * p - k + s - 1;
  int64_t out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if ((out - 1) * s >= in + p) --out;
  return out;
}

std::string check_pool(const oar_adapter_model* m, const oar_adapter_operation* op) {
  const std::string type = op->type;
  if (rank_of(m, op, 0) != 4) return type + ": x must be 4-D (NCHW)";
  if (oar_adapter_sdk::find_attr(op, "kernel_size") == nullptr) return type + ": kernel_size is missing";
  for (auto [name, min] : {std::pair<const char*, int64_t>{"kernel_size", 1}, {"stride", 1}, {"padding", 0}})
    if (std::string why = check_pair(op, name, min); !why.empty()) return why;
  if (const oar_attr* d = oar_adapter_sdk::find_attr(op, "dilation"); d != nullptr) {
    for (int64_t v : attr_ints(op, "dilation"))
      if (v != 1) return type + ": dilation " + std::to_string(v) + " is not in oar's pooling semantics; only 1 is mapped";
  }
  const auto k = pair_attr(op, "kernel_size", {1, 1});
  const auto s = pair_attr(op, "stride", k, true);
  const auto p = pair_attr(op, "padding", {0, 0});
  for (int i = 0; i < 2; ++i)
    if (p[i] * 2 > k[i]) return type + ": padding must be at most half of kernel_size";
  const bool ceil_mode = attr_int(op, "ceil_mode", 0) != 0;
  if (type == "avg_pool2d" && ceil_mode && attr_int(op, "count_include_pad", 1) != 0 && (p[0] > 0 || p[1] > 0)) {
    // OpenVINO divides a window that passes the right padding by another count
    // than PyTorch does (measured against the CPU plugin for 2.9k geometries).
    const std::vector<int64_t> x = oar_adapter_sdk::static_dims(m, op->inputs[0]);
    for (int i = 0; i < 2; ++i) {
      const int64_t out = ceil_pool_size(x[2 + i], k[i], s[i], p[i]);
      if ((out - 1) * s[i] - p[i] + k[i] > x[2 + i] + p[i])
        return "avg_pool2d: with ceil_mode, count_include_pad and padding, the last window passes the right padding "
               "and OpenVINO divides it by another count than oar (PyTorch) does";
    }
  }
  return "";
}

std::string check_softmax(const oar_adapter_model* m, const oar_adapter_operation* op) {
  return rank_of(m, op, 0) >= 1 ? "" : std::string(op->type) + ": a scalar input";
}

std::string check_batch_norm(const oar_adapter_model* m, const oar_adapter_operation* op) {
  if (attr_int(op, "training", 0) != 0)
    return "batch_norm: training=true (batch statistics) is not mapped; only inference batch_norm is";
  if (rank_of(m, op, 0) < 2) return "batch_norm: x must be [N, C, ...]";
  // Only y is built: save_mean / save_var may exist but nothing may read them.
  for (uint32_t j = 1; j < op->output_count; ++j) {
    const int32_t saved = op->outputs[j];
    for (uint32_t i = 0; i < m->output_count; ++i)
      if (m->outputs[i] == saved)
        return "batch_norm: output " + std::to_string(j) + " (save_mean/save_var) is a model output; only y is mapped";
    for (uint32_t k = 0; k < m->operation_count; ++k)
      for (uint32_t i = 0; i < m->operations[k]->input_count; ++i)
        if (m->operations[k]->inputs[i] == saved)
          return "batch_norm: output " + std::to_string(j) + " (save_mean/save_var) is read by " +
                 oar_adapter_sdk::operation_label(m, k) + "; only y is mapped";
  }
  return "";
}

std::string check_attr_present(const oar_adapter_operation* op, const char* name) {
  return oar_adapter_sdk::find_attr(op, name) != nullptr ? ""
                                                          : std::string(op->type) + ": attribute '" + name + "' is missing";
}

std::string no_check(const oar_adapter_model*, const oar_adapter_operation*) { return ""; }

const std::map<std::string, Rule>& rules() {
  static const std::map<std::string, Rule> table = {
      {"conv2d", {Types::kFloat, 2, 3, {2}, 1, check_conv}},
      {"conv2d_act", {Types::kFloat, 2, 3, {2}, 1, check_conv}},
      {"linear", {Types::kFloat, 2, 3, {2}, 1, check_linear}},
      {"linear_act", {Types::kFloat, 2, 3, {2}, 1, check_linear}},
      {"matmul", {Types::kFloat, 2, 2, {}, 1, check_matmul}},
      {"add", {Types::kNumeric, 2, 2, {}, 1, no_check}},
      {"sub", {Types::kNumeric, 2, 2, {}, 1, no_check}},
      {"mul", {Types::kNumeric, 2, 2, {}, 1, no_check}},
      {"div", {Types::kFloat, 2, 2, {}, 1, no_check}},
      {"relu", {Types::kNumeric, 1, 1, {}, 1, no_check}},
      {"clamp", {Types::kNumeric, 1, 1, {}, 1, no_check}},
      {"sigmoid", {Types::kFloat, 1, 1, {}, 1, no_check}},
      {"tanh", {Types::kFloat, 1, 1, {}, 1, no_check}},
      {"exp", {Types::kFloat, 1, 1, {}, 1, no_check}},
      {"log", {Types::kFloat, 1, 1, {}, 1, no_check}},
      {"sqrt", {Types::kFloat, 1, 1, {}, 1, no_check}},
      {"silu", {Types::kFloat, 1, 1, {}, 1, no_check}},
      {"leaky_relu", {Types::kFloat, 1, 1, {}, 1, no_check}},
      {"gelu", {Types::kFloat, 1, 1, {}, 1, check_gelu}},
      {"max_pool2d", {Types::kFloat, 1, 1, {}, 1, check_pool}},
      {"avg_pool2d", {Types::kFloat, 1, 1, {}, 1, check_pool}},
      {"softmax", {Types::kFloat, 1, 1, {}, 1, check_softmax}},
      {"log_softmax", {Types::kFloat, 1, 1, {}, 1, check_softmax}},
      {"batch_norm", {Types::kFloat, 5, 5, {1, 2}, 3, check_batch_norm}},
      {"mean", {Types::kFloat, 1, 1, {}, 1, no_check}},
      {"reshape", {Types::kAny, 1, 1, {}, 1,
                   [](const oar_adapter_model*, const oar_adapter_operation* op) { return check_attr_present(op, "shape"); }}},
      {"permute", {Types::kAny, 1, 1, {}, 1,
                   [](const oar_adapter_model*, const oar_adapter_operation* op) { return check_attr_present(op, "dims"); }}},
      {"concat", {Types::kAny, 1, 1u << 16, {}, 1, no_check}},
  };
  return table;
}

// dtype, shape and quantization rules every operand of a mapped op meets.
std::string check_operand(const oar_adapter_model* m, const oar_adapter_operation* op, int32_t index, bool output,
                          Types types) {
  const oar_adapter_operand& o = *m->operands[index];
  const std::string type = op->type, label = oar_adapter_sdk::operand_label(m, index);
  if (!oar_adapter_sdk::all_static(&o)) return type + ": dynamic dims are not supported yet (" + label + ")";
  int64_t count = 1;
  for (uint32_t d = 0; d < o.rank; ++d) count *= o.dims[d].size;
  const bool skipped_by_concat = type == "concat" && !output && o.rank == 1;
  if (count == 0 && !skipped_by_concat) return type + ": empty tensors are not supported (" + label + ")";
  const bool quantized = o.quant != nullptr && o.quant->scheme != OAR_ADAPTER_QUANT_NONE;
  if (quantized) {
    if (output) return type + ": quantized results (requantization) are not mapped yet (" + label + ")";
    if (o.dtype != OAR_DTYPE_I8 && o.dtype != OAR_DTYPE_U8 && o.dtype != OAR_DTYPE_I32)
      return type + ": quantization of a " + dtype_name(o.dtype) + " operand (" + label + ")";
    return "";  // dequantized to f32 on the way in
  }
  if (o.dtype == OAR_DTYPE_F64) return type + ": f64 is not mapped (OpenVINO would compute it in f32) (" + label + ")";
  if (!allowed(o.dtype, output ? types : (types == Types::kAny ? Types::kAny : Types::kNumeric)))
    return type + ": " + dtype_name(o.dtype) + " " + (output ? "results" : "inputs") + " are not supported (" + label + ")";
  return "";
}

// Asks the device plugin whether it runs every node of a one-op model. A
// device that cannot answer (AUTO without a device list, a missing device)
// is left to compile, which names the problem.
std::string device_reason(oar_adapter_context_s& context, const std::shared_ptr<ov::Model>& one, const char* type) {
  ov::SupportedOpsMap supported;
  try {
    supported = context.core->query_model(one, context.options.device, device_properties(context.options));
  } catch (const std::exception& e) {
    oar_adapter_sdk::log(OAR_LOG_DEBUG, "openvino: query_model on " + context.options.device + ": " + ov_message(e));
    return "";
  }
  for (const auto& node : one->get_ordered_ops())
    if (supported.count(node->get_friendly_name()) == 0 && !ov::op::util::is_parameter(node) &&
        !ov::op::util::is_output(node) && !ov::op::util::is_constant(node))
      return std::string(type) + ": OpenVINO's " + context.options.device + " plugin does not run " +
             node->get_type_name();
  return "";
}

}  // namespace

std::string unsupported_reason(const oar_adapter_model* m, uint32_t index) {
  const oar_adapter_operation* op = m->operations[index];
  const std::string type = op->type;
  auto it = rules().find(type);
  if (it == rules().end()) return type + " is not mapped to OpenVINO ops yet";
  const Rule& rule = it->second;
  if (op->input_count < rule.min_inputs || op->input_count > rule.max_inputs || op->output_count != rule.outputs)
    return type + ": " + std::to_string(op->input_count) + " inputs and " + std::to_string(op->output_count) +
           " outputs do not match the catalog";
  for (uint32_t i = 0; i < op->input_count; ++i) {
    if (op->inputs[i] < 0) {
      if (rule.optional.count(i) == 0) return type + ": required input " + std::to_string(i) + " is absent";
      continue;
    }
    if (std::string why = check_operand(m, op, op->inputs[i], false, rule.types); !why.empty()) return why;
  }
  for (uint32_t j = 0; j < op->output_count; ++j)
    if (std::string why = check_operand(m, op, op->outputs[j], true, rule.types); !why.empty()) return why;
  try {
    return rule.check(m, op);
  } catch (const DriverError& e) {
    if (e.code != OAR_STATUS_UNSUPPORTED) throw;  // an attribute of the wrong kind: a broken model
    return e.message;
  }
}

oar_status_t query_operation(oar_adapter_context_t context, const oar_adapter_model* model, uint32_t operation_index,
                             int32_t* out_supported, char* reason, size_t reason_size) {
  return oar_adapter_sdk::guarded("openvino query_operation", [&] {
    if (context == nullptr || out_supported == nullptr) throw oar_adapter_sdk::invalid("context or out_supported is NULL");
    *out_supported = 0;
    oar_adapter_sdk::validate_model(model);
    if (operation_index >= model->operation_count)
      throw DriverError(OAR_STATUS_OUT_OF_RANGE, "operation " + std::to_string(operation_index) + " of a model with " +
                                                     std::to_string(model->operation_count) + " operations");
    std::string why = unsupported_reason(model, operation_index);
    // The CPU plugin runs every node the recipes make (and its query_model
    // costs ~7 ms per call); other devices are asked.
    const bool cpu = context->options.device == "CPU";
    try {
      if (why.empty()) {
        std::shared_ptr<ov::Model> one = build_single_operation(model, operation_index, !cpu);
        if (!cpu) why = device_reason(*context, one, model->operations[operation_index]->type);
      }
    } catch (const DriverError& e) {
      if (e.code != OAR_STATUS_UNSUPPORTED) throw;
      why = e.message;
    }
    *out_supported = why.empty() ? 1 : 0;
    if (reason != nullptr && reason_size > 0) {
      const size_t n = std::min(why.size(), reason_size - 1);
      std::memcpy(reason, why.data(), n);
      reason[n] = '\0';
    }
  });
}

}  // namespace oar_openvino
