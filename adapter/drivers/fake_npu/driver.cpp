// fake_npu: a simulated NPU on the host. The entry, the driver table, the
// options (declared as OAR_FAKE_NPU_* flags) and the C functions of the
// adapter ABI; the work happens in support/compile/execute/serialize.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "oar/adapter/driver_sdk.hpp"
#include "program.h"
#include "support.h"

using namespace oar_adapter_sdk;
using fake_npu::Precision;

struct oar_adapter_context_s {
  Precision precision = Precision::kFp32;
  std::vector<std::string> fail_compile;  // op types whose presence refuses compile
  int64_t max_operations = 0;             // 0: unlimited
};

struct oar_adapter_program_s {
  fake_npu::Program program;
};

struct oar_adapter_event_s {
  std::thread worker;
  std::mutex mutex;
  std::condition_variable done_cv;
  bool done = false;
  oar_status_t status = OAR_STATUS_OK;
  std::string message;
};

namespace {

constexpr const char* kPrecisionFlag = "OAR_FAKE_NPU_PRECISION";
constexpr const char* kFailCompileFlag = "OAR_FAKE_NPU_FAIL_COMPILE";
constexpr const char* kMaxOperationsFlag = "OAR_FAKE_NPU_MAX_OPERATIONS";

const oar_flag_definition kPrecision = {
    sizeof(oar_flag_definition), kPrecisionFlag, OAR_FLAG_TYPE_CHOICE, "fp32",
    "fake_npu: the precision programs compute in (fp16 rounds every stored tensor, int8 quantizes products)",
    "fp32,fp16,int8"};
const oar_flag_definition kFailCompile = {
    sizeof(oar_flag_definition), kFailCompileFlag, OAR_FLAG_TYPE_STRING, "",
    "fake_npu: comma-separated op types whose presence makes compile fail (simulates an SDK limit)", nullptr};
const oar_flag_definition kMaxOperations = {
    sizeof(oar_flag_definition), kMaxOperationsFlag, OAR_FLAG_TYPE_INT, "0",
    "fake_npu: compile fails for a model with more operations than this (0: unlimited)", nullptr};
const oar_flag_definition* const kOptions[] = {&kPrecision, &kFailCompile, &kMaxOperations};

std::string trim_lower(std::string s) {
  s.erase(0, s.find_first_not_of(" \t"));
  s.erase(s.find_last_not_of(" \t") + 1);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

void apply_option(oar_adapter_context_s& c, const std::string& name, const std::string& value) {
  if (name == kPrecisionFlag) {
    const std::string v = trim_lower(value);
    if (v == "fp32") c.precision = Precision::kFp32;
    else if (v == "fp16") c.precision = Precision::kFp16;
    else if (v == "int8") c.precision = Precision::kInt8;
    else throw invalid(std::string(kPrecisionFlag) + " is '" + value + "'; expected fp32, fp16 or int8");
  } else if (name == kFailCompileFlag) {
    c.fail_compile.clear();
    size_t start = 0;
    while (start <= value.size()) {
      const size_t comma = std::min(value.find(',', start), value.size());
      const std::string type = trim_lower(value.substr(start, comma - start));
      if (!type.empty()) c.fail_compile.push_back(type);
      start = comma + 1;
    }
  } else if (name == kMaxOperationsFlag) {
    size_t used = 0;
    long long v = -1;
    try {
      v = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value.size() || v < 0)
      throw invalid(std::string(kMaxOperationsFlag) + " is '" + value + "'; expected an integer >= 0");
    c.max_operations = v;
  } else {
    throw invalid("unknown option '" + name + "' (fake_npu has " + kPrecisionFlag + ", " + kFailCompileFlag + ", " +
                  kMaxOperationsFlag + ")");
  }
}

oar_status_t context_create(const oar_adapter_option* const* options, uint32_t option_count,
                            oar_adapter_context_t* out_context) {
  return guarded("fake_npu context_create", [&] {
    if (out_context == nullptr) throw invalid("out_context is NULL");
    *out_context = nullptr;
    if (option_count > 0 && options == nullptr) throw invalid("the option list is NULL");
    auto context = std::make_unique<oar_adapter_context_s>();
    for (uint32_t i = 0; i < option_count; ++i) {
      const oar_adapter_option* o = options[i];
      if (!OAR_STRUCT_HAS(o, oar_adapter_option, value) || o->name == nullptr || o->value == nullptr)
        throw invalid("option " + std::to_string(i) + " is NULL, too small or has no name or value");
      apply_option(*context, o->name, o->value);
    }
    *out_context = context.release();
  });
}

void context_destroy(oar_adapter_context_t context) { delete context; }

oar_status_t query_operation(oar_adapter_context_t context, const oar_adapter_model* model, uint32_t operation_index,
                             int32_t* out_supported, char* reason, size_t reason_size) {
  return guarded("fake_npu", [&] {
    if (context == nullptr || out_supported == nullptr) throw invalid("query_operation: NULL context or out_supported");
    *out_supported = 0;
    validate_model(model);
    if (operation_index >= model->operation_count)
      throw invalid("query_operation: operation " + std::to_string(operation_index) + " is outside the model's " +
                    std::to_string(model->operation_count) + " operations");
    const fake_npu::OpPlan plan = fake_npu::plan_operation(model, operation_index);
    *out_supported = plan.reason.empty() ? 1 : 0;
    if (reason != nullptr && reason_size > 0) std::snprintf(reason, reason_size, "%s", plan.reason.c_str());
  });
}

oar_status_t compile(oar_adapter_context_t context, const oar_adapter_model* model, oar_adapter_program_t* out_program) {
  return guarded("fake_npu", [&] {
    if (context == nullptr || out_program == nullptr) throw invalid("compile: NULL context or out_program");
    *out_program = nullptr;
    const std::vector<uint32_t> order = validate_model(model);
    for (uint32_t k : order) {
      const fake_npu::OpPlan plan = fake_npu::plan_operation(model, k);
      if (!plan.reason.empty()) throw unsupported(operation_label(model, k) + " is not supported: " + plan.reason);
    }
    for (uint32_t i = 0; i < model->input_count; ++i) {  // inputs that no operation reads were not checked above
      const oar_adapter_operand& o = *model->operands[model->inputs[i]];
      const bool quantized = o.quant != nullptr && o.quant->scheme == OAR_ADAPTER_QUANT_PER_TENSOR;
      static_dims(model, model->inputs[i]);
      if (o.dtype != OAR_DTYPE_F32 && o.dtype != OAR_DTYPE_F16 &&
          !((o.dtype == OAR_DTYPE_I8 || o.dtype == OAR_DTYPE_U8) && quantized))
        throw unsupported("model input " + std::to_string(i) + " (" + operand_label(model, model->inputs[i]) +
                          ") has dtype " + dtype_name(o.dtype) + "; fake_npu takes f32, f16 and quantized i8/u8");
    }
    // The simulated SDK's own limits, after the per-operation answers said yes.
    if (context->max_operations > 0 && int64_t(model->operation_count) > context->max_operations)
      throw unsupported("compile refused: the model has " + std::to_string(model->operation_count) +
                        " operations, more than " + std::to_string(context->max_operations) + " (" +
                        kMaxOperationsFlag + ")");
    for (uint32_t k : order) {
      const std::string type = trim_lower(model->operations[k]->type);
      if (std::find(context->fail_compile.begin(), context->fail_compile.end(), type) != context->fail_compile.end())
        throw unsupported("compile refused: the model contains " + type + " (" + kFailCompileFlag + ")");
    }
    auto program = std::make_unique<oar_adapter_program_s>();
    program->program = fake_npu::build_program(model, order, context->precision);
    fake_npu::verify_program(program->program);
    *out_program = program.release();
  });
}

void program_destroy(oar_adapter_program_t program) { delete program; }

oar_status_t serialize(oar_adapter_program_t program, void* buffer, uint64_t capacity, uint64_t* out_size) {
  return guarded("fake_npu serialize", [&] {
    if (program == nullptr || out_size == nullptr) throw invalid("NULL program or out_size");
    const std::vector<uint8_t> bytes = fake_npu::serialize_program(program->program);
    *out_size = bytes.size();
    if (buffer == nullptr) return;
    if (capacity < bytes.size())
      throw invalid("the buffer holds " + std::to_string(capacity) + " bytes, the program needs " +
                    std::to_string(bytes.size()));
    std::memcpy(buffer, bytes.data(), bytes.size());
  });
}

oar_status_t deserialize(oar_adapter_context_t context, const oar_adapter_model* model, const void* data,
                         uint64_t size, oar_adapter_program_t* out_program) {
  return guarded("fake_npu deserialize", [&] {
    if (context == nullptr || out_program == nullptr) throw invalid("NULL context or out_program");
    *out_program = nullptr;
    validate_model(model);
    auto program = std::make_unique<oar_adapter_program_s>();
    program->program = fake_npu::deserialize_program(data, size, context->precision);
    fake_npu::check_matches_model(program->program, model);
    *out_program = program.release();
  });
}

struct Job {
  std::vector<fake_npu::HostBuffer> inputs, outputs;
};

Job prepare(oar_adapter_program_t program, const oar_adapter_buffer* const* inputs, uint32_t input_count,
            const oar_adapter_buffer* const* outputs, uint32_t output_count) {
  if (program == nullptr) throw invalid("the program is NULL");
  Job job;
  job.inputs = fake_npu::check_buffers(program->program, inputs, input_count, true);
  job.outputs = fake_npu::check_buffers(program->program, outputs, output_count, false);
  return job;
}

oar_status_t execute(oar_adapter_program_t program, const oar_adapter_buffer* const* inputs, uint32_t input_count,
                     const oar_adapter_buffer* const* outputs, uint32_t output_count) {
  return guarded("fake_npu execute", [&] {
    const Job job = prepare(program, inputs, input_count, outputs, output_count);
    fake_npu::run_program(program->program, job.inputs, job.outputs);
  });
}

oar_status_t execute_async(oar_adapter_program_t program, const oar_adapter_buffer* const* inputs,
                           uint32_t input_count, const oar_adapter_buffer* const* outputs, uint32_t output_count,
                           oar_adapter_event_t* out_event) {
  return guarded("fake_npu execute_async", [&] {
    if (out_event == nullptr) throw invalid("out_event is NULL");
    *out_event = nullptr;
    Job job = prepare(program, inputs, input_count, outputs, output_count);
    auto event = std::make_unique<oar_adapter_event_s>();
    oar_adapter_event_s* e = event.get();
    // The worker cannot report through the host (its errors are per thread):
    // it keeps the status for event_wait to report on the waiting thread.
    e->worker = std::thread([e, program, job = std::move(job)] {
      oar_status_t status = OAR_STATUS_OK;
      std::string message;
      try {
        fake_npu::run_program(program->program, job.inputs, job.outputs);
      } catch (const DriverError& err) {
        status = err.code, message = err.message;
      } catch (const std::bad_alloc&) {
        status = OAR_STATUS_OUT_OF_MEMORY, message = "out of host memory";
      } catch (const std::exception& err) {
        status = OAR_STATUS_INTERNAL, message = err.what();
      }
      std::lock_guard<std::mutex> lock(e->mutex);
      e->status = status;
      e->message = std::move(message);
      e->done = true;
      e->done_cv.notify_all();
    });
    *out_event = event.release();
  });
}

oar_status_t event_wait(oar_adapter_event_t event, int64_t timeout_ms) {
  return guarded("fake_npu event_wait", [&] {
    if (event == nullptr) throw invalid("the event is NULL");
    std::unique_lock<std::mutex> lock(event->mutex);
    if (timeout_ms < 0) {
      event->done_cv.wait(lock, [&] { return event->done; });
    } else if (!event->done_cv.wait_for(lock, std::chrono::milliseconds(timeout_ms), [&] { return event->done; })) {
      throw DriverError(OAR_STATUS_TIMEOUT,
                        "the execution is still running after " + std::to_string(timeout_ms) + " ms");
    }
    if (event->status != OAR_STATUS_OK) throw DriverError(event->status, "the execution failed: " + event->message);
  });
}

void event_destroy(oar_adapter_event_t event) {
  if (event == nullptr) return;
  try {
    if (event->worker.joinable()) event->worker.join();  // an event outlives its execution
  } catch (const std::exception& e) {
    oar_adapter_sdk::log(OAR_LOG_ERROR, std::string("fake_npu event_destroy: ") + e.what());
    event->worker.detach();
  }
  delete event;
}

void fill(oar_adapter_driver_api* t) {
  t->name = "fake_npu";
  t->vendor = "oar (simulated NPU on the host)";
  t->version = OAR_FAKE_NPU_VERSION;
  t->option_count = sizeof(kOptions) / sizeof(kOptions[0]);
  t->options = kOptions;
  t->context_create = context_create;
  t->context_destroy = context_destroy;
  t->query_operation = query_operation;
  t->compile = compile;
  t->program_destroy = program_destroy;
  t->serialize = serialize;
  t->deserialize = deserialize;
  t->execute = execute;
  t->execute_async = execute_async;
  t->event_wait = event_wait;
  t->event_destroy = event_destroy;
}

oar_adapter_driver_api g_table;

}  // namespace

OAR_ADAPTER_DEFINE_ENTRY(g_table, fill)
