// The driver's options (flags OAR_OPENVINO_*), their parsing, and the
// OpenVINO properties they become.
#include <openvino/runtime/properties.hpp>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "driver_types.h"

namespace oar_openvino {

namespace {

const oar_flag_definition kDevice = {
    sizeof(oar_flag_definition), "OAR_OPENVINO_DEVICE", OAR_FLAG_TYPE_STRING, "CPU",
    "OpenVINO device subgraphs compile for (CPU, GPU, NPU, AUTO, ...); read when a context is made", nullptr};
const oar_flag_definition kPrecision = {
    sizeof(oar_flag_definition), "OAR_OPENVINO_PRECISION", OAR_FLAG_TYPE_CHOICE, "fp32",
    "OpenVINO inference precision hint; fp32 keeps oar's f32 results (a CPU with bf16 units would otherwise pick bf16)",
    "fp32,bf16,fp16"};
const oar_flag_definition kNumThreads = {
    sizeof(oar_flag_definition), "OAR_OPENVINO_NUM_THREADS", OAR_FLAG_TYPE_INT, "0",
    "threads OpenVINO infers with (0: OpenVINO's default)", nullptr};
const oar_flag_definition kHint = {
    sizeof(oar_flag_definition), "OAR_OPENVINO_HINT", OAR_FLAG_TYPE_CHOICE, "latency",
    "OpenVINO performance hint: latency (one request at a time) or throughput (parallel requests)",
    "latency,throughput"};

const oar_flag_definition* const kDefinitions[] = {&kDevice, &kPrecision, &kNumThreads, &kHint};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

std::string choice(const std::string& name, const std::string& value, std::initializer_list<const char*> words) {
  const std::string v = lower(value);
  std::string listed;
  for (const char* w : words) {
    if (v == w) return v;
    listed += listed.empty() ? w : std::string(", ") + w;
  }
  throw oar_adapter_sdk::invalid(name + " is '" + value + "'; expected one of " + listed);
}

}  // namespace

const oar_flag_definition* const* option_definitions(uint64_t* count) {
  *count = sizeof(kDefinitions) / sizeof(kDefinitions[0]);
  return kDefinitions;
}

Options parse_options(const oar_adapter_option* const* options, uint32_t count) {
  Options parsed;
  if (count > 0 && options == nullptr) throw oar_adapter_sdk::invalid("the option list is NULL");
  for (uint32_t i = 0; i < count; ++i) {
    const oar_adapter_option* o = options[i];
    if (!OAR_STRUCT_HAS(o, oar_adapter_option, value) || o->name == nullptr || o->value == nullptr)
      throw oar_adapter_sdk::invalid("option " + std::to_string(i) + " is NULL, unnamed or has no value");
    const std::string name = o->name, value = o->value;
    if (name == kDevice.name) {
      if (value.empty()) throw oar_adapter_sdk::invalid(name + " is empty");
      parsed.device = value;
    } else if (name == kPrecision.name) {
      parsed.precision = choice(name, value, {"fp32", "bf16", "fp16"});
    } else if (name == kHint.name) {
      parsed.hint = choice(name, value, {"latency", "throughput"});
    } else if (name == kNumThreads.name) {
      char* end = nullptr;
      errno = 0;
      long long n = std::strtoll(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || errno != 0 || n < 0 || n > 4096)
        throw oar_adapter_sdk::invalid(name + " is '" + value + "'; expected a thread count from 0 to 4096");
      parsed.num_threads = n;
    } else {
      throw oar_adapter_sdk::invalid("unknown option " + name + " (the openvino driver declares OAR_OPENVINO_DEVICE, "
                                     "OAR_OPENVINO_PRECISION, OAR_OPENVINO_NUM_THREADS, OAR_OPENVINO_HINT)");
    }
  }
  return parsed;
}

namespace {

// Multiply-accumulates of a model, roughly: convolutions and GEMMs by their
// inner products, anything else one per output element.
double model_macs(const oar_adapter_model* m) {
  double total = 0;
  for (uint32_t k = 0; k < m->operation_count; ++k) {
    const oar_adapter_operation* op = m->operations[k];
    if (op->output_count == 0 || op->outputs[0] < 0) continue;
    const oar_adapter_operand* out = m->operands[op->outputs[0]];
    double n = 1;
    for (uint32_t d = 0; d < out->rank; ++d) n *= double(std::max<int64_t>(out->dims[d].size, 1));
    const std::string type = op->type;
    auto weight_dims = [&](uint32_t from) {
      double inner = 1;
      if (op->input_count < 2 || op->inputs[1] < 0) return inner;
      const oar_adapter_operand* w = m->operands[op->inputs[1]];
      for (uint32_t d = from; d < w->rank; ++d) inner *= double(std::max<int64_t>(w->dims[d].size, 1));
      return inner;
    };
    if (type == "conv2d" || type == "conv2d_act") n *= weight_dims(1);
    else if (type == "linear" || type == "linear_act") n *= weight_dims(1);
    else if (type == "matmul" && op->input_count > 0 && op->inputs[0] >= 0) {
      const oar_adapter_operand* a = m->operands[op->inputs[0]];
      if (a->rank > 0) n *= double(std::max<int64_t>(a->dims[a->rank - 1].size, 1));
    }
    total += n;
  }
  return total;
}

// Below this much work, OpenVINO's latency mode is faster on one unpinned
// thread than on all cores (the digits CNN at batch 1: 17 us vs 21 us on a 2-core EPYC;
// equal at ~7e5 MACs; at 3e6 MACs two threads win 77 us to 114 us).
constexpr double kOneThreadMacs = 5e5;

}  // namespace

ov::AnyMap device_properties(const Options& options, const oar_adapter_model* model) {
  ov::AnyMap props;
  const ov::element::Type precision = options.precision == "bf16"   ? ov::element::bf16
                                      : options.precision == "fp16" ? ov::element::f16
                                                                    : ov::element::f32;
  props.emplace(ov::hint::inference_precision(precision));
  props.emplace(ov::hint::performance_mode(options.hint == "throughput" ? ov::hint::PerformanceMode::THROUGHPUT
                                                                         : ov::hint::PerformanceMode::LATENCY));
  if (options.num_threads > 0) {
    props.emplace(ov::inference_num_threads(int32_t(options.num_threads)));
  } else if (model != nullptr && options.hint == "latency" && options.device.rfind("CPU", 0) == 0 &&
             model_macs(model) < kOneThreadMacs) {
    props.emplace(ov::inference_num_threads(1));
    // One thread needs no pinning, and pinning costs a sched_setaffinity
    // round per inference: half the time of such a model (29 us -> 15 us).
    props.emplace(ov::hint::enable_cpu_pinning(false));
  }
  return props;
}

void require_device(ov::Core& core, const std::string& device) {
  const std::string base = device.substr(0, device.find(':'));
  for (const char* virtual_device : {"AUTO", "MULTI", "HETERO", "BATCH"})
    if (base == virtual_device) return;  // OpenVINO resolves these itself
  std::vector<std::string> available =
      with_openvino(OAR_STATUS_DEVICE_ERROR, "listing OpenVINO devices", [&] { return core.get_available_devices(); });
  std::string listed;
  for (const std::string& d : available) {
    // "GPU" names the first of "GPU.0", "GPU.1", ...
    if (d == device || d.rfind(device + ".", 0) == 0) return;
    listed += (listed.empty() ? "" : ", ") + d;
  }
  throw DriverError(OAR_STATUS_DEVICE_ERROR, "OpenVINO has no device '" + device + "'; available devices: " +
                                                 (listed.empty() ? std::string("none") : listed) +
                                                 " (set OAR_OPENVINO_DEVICE to one of them)");
}

}  // namespace oar_openvino
