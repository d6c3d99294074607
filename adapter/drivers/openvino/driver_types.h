// The OpenVINO adapter driver's own types: its options, and what stands
// behind the ABI's opaque context, program and event handles. Every file of
// the driver includes this; nothing here crosses the C ABI.
#pragma once

#include <openvino/runtime/compiled_model.hpp>
#include <openvino/runtime/core.hpp>
#include <openvino/runtime/infer_request.hpp>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "oar/adapter/driver_sdk.hpp"

namespace oar_openvino {

using oar_adapter_sdk::DriverError;

// The driver's options (flags OAR_OPENVINO_*, options.cpp), parsed.
struct Options {
  std::string device = "CPU";
  std::string precision = "fp32";  // fp32 | bf16 | fp16
  int64_t num_threads = 0;         // 0: OpenVINO's default
  std::string hint = "latency";    // latency | throughput
};

// A model input or output as execute() checks it and serialize() records it.
struct TensorSignature {
  oar_dtype_t dtype = OAR_DTYPE_F32;
  std::vector<int64_t> dims;
  std::string label;  // "input 0 (operand 3 'x')", for messages
};

// The flag table handed to the core (static storage).
const oar_flag_definition* const* option_definitions(uint64_t* count);
Options parse_options(const oar_adapter_option* const* options, uint32_t count);
// The compile_model / import_model properties the options stand for.
// OpenVINO properties for `options`; with `model` (compile, import) and
// OAR_OPENVINO_NUM_THREADS=0, a tiny model in latency mode on the CPU runs on one thread.
ov::AnyMap device_properties(const Options& options, const oar_adapter_model* model = nullptr);
// Throws DEVICE_ERROR naming the device and OpenVINO's available devices when
// the device is not among them (virtual devices such as AUTO are left to OpenVINO).
void require_device(ov::Core& core, const std::string& device);

// The driver's version string: OAR_OPENVINO_DRIVER_VERSION "+ov" and
// OpenVINO's build number (filled at entry time).
const std::string& driver_version();

// OpenVINO's message without its source-location lines, cut to a few lines.
std::string ov_message(const std::exception& e);

// Runs `body`; an OpenVINO (or other non-driver) exception becomes a
// DriverError with `code` and "`what`: OpenVINO's message".
template <class Body>
auto with_openvino(oar_status_t code, const std::string& what, Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const DriverError&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw DriverError(code, what + ": " + ov_message(e));
  }
}

ov::element::Type element_type(oar_dtype_t dtype);

}  // namespace oar_openvino

// One driver with its options: an ov::Core of its own (contexts never share
// property state, and no static Core outlives the plugins at process exit).
struct oar_adapter_context_s {
  oar_openvino::Options options;
  std::shared_ptr<ov::Core> core;
  std::atomic<bool> precision_warned{false};  // the "fp16 runs as bf16" note, once per context
};

// One compiled subgraph. Members are destroyed bottom-up, so the Core (and
// with it the device plugin) outlives the compiled model and its request.
struct oar_adapter_program_s {
  std::shared_ptr<ov::Core> core;
  oar_openvino::Options options;
  std::vector<oar_openvino::TensorSignature> inputs, outputs;
  ov::CompiledModel compiled;
  ov::InferRequest request;  // for execute(); execute_async makes one per event
  // The caller memory `request` is bound to: execute() rebinds only what changed
  // (a caching allocator hands the same buffers back run after run).
  std::vector<void*> bound_inputs, bound_outputs;
  std::string serialized;    // header + export_model bytes, made on the first serialize
};

// One asynchronous execution: its own infer request.
struct oar_adapter_event_s {
  ov::InferRequest request;
};
