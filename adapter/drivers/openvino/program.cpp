// compile, execute and events: an ov::Model compiled for the context's device,
// run on the caller's buffers wrapped as ov::Tensor (no copies).
#include "program.h"

#include <algorithm>
#include <chrono>

#include "entry_points.h"
#include "model_builder.h"
#include "support.h"

namespace oar_openvino {

using oar_adapter_sdk::invalid;

namespace {

std::string dims_text(const int64_t* dims, uint32_t rank) {
  std::string s = "[";
  for (uint32_t i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

// The caller's buffers, checked against the program's signatures (throws
// INVALID_ARGUMENT naming the first that does not fit).
void check_buffers(const std::vector<TensorSignature>& want, const oar_adapter_buffer* const* buffers, uint32_t count,
                   const char* what) {
  if (count != want.size())
    throw invalid(std::to_string(count) + " " + what + " buffers given, the program has " + std::to_string(want.size()));
  if (count > 0 && buffers == nullptr) throw invalid(std::string("the ") + what + " buffer list is NULL");
  std::vector<ov::Tensor> tensors;
  for (uint32_t i = 0; i < count; ++i) {
    const TensorSignature& s = want[i];
    const oar_adapter_buffer* b = buffers[i];
    if (!OAR_STRUCT_HAS(b, oar_adapter_buffer, dims)) throw invalid(s.label + ": buffer is NULL or too small a struct");
    if (b->dtype != s.dtype)
      throw invalid(s.label + ": buffer has dtype " + oar_adapter_sdk::dtype_name(b->dtype) + ", the model " +
                    oar_adapter_sdk::dtype_name(s.dtype));
    if (b->rank > 0 && b->dims == nullptr) throw invalid(s.label + ": buffer dims are NULL");
    if (b->rank != s.dims.size() || !std::equal(s.dims.begin(), s.dims.end(), b->dims))
      throw invalid(s.label + ": buffer has dims " + dims_text(b->dims, b->rank) + ", the model " +
                    dims_text(s.dims.data(), uint32_t(s.dims.size())));
    const uint64_t bytes = uint64_t(oar_adapter_sdk::element_count(s.dims)) * oar_adapter_sdk::dtype_size(s.dtype);
    if (b->size < bytes)
      throw invalid(s.label + ": buffer has " + std::to_string(b->size) + " bytes, its dims and dtype need " +
                    std::to_string(bytes));
    if (b->data == nullptr && bytes > 0) throw invalid(s.label + ": buffer data is NULL");
  }
}

ov::Tensor wrap(const TensorSignature& s, void* data) {
  return ov::Tensor(element_type(s.dtype), ov::Shape(s.dims.begin(), s.dims.end()), data);
}

// The caller's buffers, checked and wrapped as tensors over the same memory.
std::vector<ov::Tensor> wrap_buffers(const std::vector<TensorSignature>& want, const oar_adapter_buffer* const* buffers,
                                     uint32_t count, const char* what) {
  check_buffers(want, buffers, count, what);
  std::vector<ov::Tensor> tensors;
  for (uint32_t i = 0; i < count; ++i) tensors.push_back(wrap(want[i], buffers[i]->data));
  return tensors;
}

// execute()'s request: binds only the buffers whose memory changed since the last run.
void bind_changed(oar_adapter_program_s& p, const oar_adapter_buffer* const* inputs, uint32_t input_count,
                  const oar_adapter_buffer* const* outputs, uint32_t output_count) {
  check_buffers(p.inputs, inputs, input_count, "input");
  check_buffers(p.outputs, outputs, output_count, "output");
  p.bound_inputs.resize(input_count, nullptr);
  p.bound_outputs.resize(output_count, nullptr);
  with_openvino(OAR_STATUS_DEVICE_ERROR, "binding buffers", [&] {
    for (uint32_t i = 0; i < input_count; ++i)
      if (p.bound_inputs[i] != inputs[i]->data) {
        p.request.set_input_tensor(i, wrap(p.inputs[i], inputs[i]->data));
        p.bound_inputs[i] = inputs[i]->data;
      }
    for (uint32_t i = 0; i < output_count; ++i)
      if (p.bound_outputs[i] != outputs[i]->data) {
        p.request.set_output_tensor(i, wrap(p.outputs[i], outputs[i]->data));
        p.bound_outputs[i] = outputs[i]->data;
      }
  });
}

void bind(ov::InferRequest& request, const oar_adapter_program_s& p, const oar_adapter_buffer* const* inputs,
          uint32_t input_count, const oar_adapter_buffer* const* outputs, uint32_t output_count) {
  std::vector<ov::Tensor> in = wrap_buffers(p.inputs, inputs, input_count, "input");
  std::vector<ov::Tensor> out = wrap_buffers(p.outputs, outputs, output_count, "output");
  with_openvino(OAR_STATUS_DEVICE_ERROR, "binding buffers", [&] {
    for (size_t i = 0; i < in.size(); ++i) request.set_input_tensor(i, in[i]);
    for (size_t i = 0; i < out.size(); ++i) request.set_output_tensor(i, out[i]);
  });
}

}  // namespace

void finish_program(oar_adapter_context_s& context, oar_adapter_program_s& program) {
  program.request = with_openvino(OAR_STATUS_DEVICE_ERROR, "creating an OpenVINO infer request",
                                  [&] { return program.compiled.create_infer_request(); });
  if (context.options.precision == "fp32" || context.precision_warned) return;
  // A device without f16 (or bf16) units picks another precision; say so once.
  try {
    const ov::element::Type got = program.compiled.get_property(ov::hint::inference_precision);
    const std::string asked = context.options.precision == "fp16" ? "f16" : "bf16";
    if (got.get_type_name() != asked && !context.precision_warned.exchange(true))
      oar_adapter_sdk::log(OAR_LOG_WARNING, "openvino: OAR_OPENVINO_PRECISION=" + context.options.precision + " runs as " +
                                                got.get_type_name() + " on " + context.options.device);
  } catch (const std::exception&) {
    // A device that does not report its precision is left alone.
  }
}

oar_status_t compile(oar_adapter_context_t context, const oar_adapter_model* model, oar_adapter_program_t* out_program) {
  return oar_adapter_sdk::guarded("openvino compile", [&] {
    if (context == nullptr || out_program == nullptr) throw invalid("context or out_program is NULL");
    *out_program = nullptr;
    const std::vector<uint32_t> order = oar_adapter_sdk::validate_model(model);
    for (uint32_t k = 0; k < model->operation_count; ++k)
      if (std::string why = unsupported_reason(model, k); !why.empty())
        throw oar_adapter_sdk::unsupported(oar_adapter_sdk::operation_label(model, k) + ": " + why);
    BuiltModel built = build_model(model, order);
    auto program = std::make_unique<oar_adapter_program_s>();
    program->core = context->core;
    program->options = context->options;
    program->inputs = std::move(built.inputs);
    program->outputs = std::move(built.outputs);
    require_device(*context->core, context->options.device);
    program->compiled = with_openvino(OAR_STATUS_DEVICE_ERROR, "OpenVINO compile_model for " + context->options.device, [&] {
      return context->core->compile_model(built.model, context->options.device, device_properties(context->options, model));
    });
    finish_program(*context, *program);
    *out_program = program.release();
  });
}

void program_destroy(oar_adapter_program_t program) {
  oar_adapter_sdk::guarded("openvino program_destroy", [&] { delete program; });
}

oar_status_t execute(oar_adapter_program_t program, const oar_adapter_buffer* const* inputs, uint32_t input_count,
                     const oar_adapter_buffer* const* outputs, uint32_t output_count) {
  return oar_adapter_sdk::guarded("openvino execute", [&] {
    if (program == nullptr) throw invalid("program is NULL");
    bind_changed(*program, inputs, input_count, outputs, output_count);
    with_openvino(OAR_STATUS_DEVICE_ERROR, "OpenVINO infer", [&] { program->request.infer(); });
  });
}

oar_status_t execute_async(oar_adapter_program_t program, const oar_adapter_buffer* const* inputs,
                           uint32_t input_count, const oar_adapter_buffer* const* outputs, uint32_t output_count,
                           oar_adapter_event_t* out_event) {
  return oar_adapter_sdk::guarded("openvino execute_async", [&] {
    if (program == nullptr || out_event == nullptr) throw invalid("program or out_event is NULL");
    *out_event = nullptr;
    auto event = std::make_unique<oar_adapter_event_s>();
    // A request per event: executions in flight never share bound buffers.
    event->request = with_openvino(OAR_STATUS_DEVICE_ERROR, "creating an OpenVINO infer request",
                                   [&] { return program->compiled.create_infer_request(); });
    bind(event->request, *program, inputs, input_count, outputs, output_count);
    with_openvino(OAR_STATUS_DEVICE_ERROR, "OpenVINO start_async", [&] { event->request.start_async(); });
    *out_event = event.release();
  });
}

oar_status_t event_wait(oar_adapter_event_t event, int64_t timeout_ms) {
  return oar_adapter_sdk::guarded("openvino event_wait", [&] {
    if (event == nullptr) throw invalid("event is NULL");
    const bool done = with_openvino(OAR_STATUS_DEVICE_ERROR, "OpenVINO inference", [&] {
      if (timeout_ms < 0) {
        event->request.wait();
        return true;
      }
      return event->request.wait_for(std::chrono::milliseconds(timeout_ms));
    });
    if (!done)
      throw DriverError(OAR_STATUS_TIMEOUT, "the execution is still running after " + std::to_string(timeout_ms) + " ms");
  });
}

void event_destroy(oar_adapter_event_t event) {
  if (event == nullptr) return;
  try {
    // The caller may free its buffers once this returns: stop writing to them first.
    event->request.cancel();
    event->request.wait();
  } catch (...) {
    // A cancelled or failed request has nothing left to wait for.
  }
  oar_adapter_sdk::guarded("openvino event_destroy", [&] { delete event; });
}

}  // namespace oar_openvino
