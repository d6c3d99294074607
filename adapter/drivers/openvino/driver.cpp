// The OpenVINO adapter driver's entry: its table, version, and contexts.
// The work of each table entry lives in its own file (entry_points.h).
#include <openvino/core/version.hpp>

#include "driver_types.h"
#include "entry_points.h"

#ifndef OAR_OPENVINO_DRIVER_VERSION
#define OAR_OPENVINO_DRIVER_VERSION "0.0.0-unversioned"
#endif

namespace oar_openvino {

namespace {


oar_status_t context_create(const oar_adapter_option* const* options, uint32_t option_count,
                            oar_adapter_context_t* out_context) {
  return oar_adapter_sdk::guarded("openvino context_create", [&] {
    if (out_context == nullptr) throw oar_adapter_sdk::invalid("out_context is NULL");
    *out_context = nullptr;
    auto context = std::make_unique<oar_adapter_context_s>();
    context->options = parse_options(options, option_count);
    context->core = with_openvino(OAR_STATUS_DEVICE_ERROR, "creating an OpenVINO Core",
                                  [] { return std::make_shared<ov::Core>(); });
    *out_context = context.release();
  });
}

void context_destroy(oar_adapter_context_t context) {
  oar_adapter_sdk::guarded("openvino context_destroy", [&] { delete context; });
}

void fill_table(oar_adapter_driver_api* table) {
  table->name = "openvino";
  table->vendor = "Intel OpenVINO";
  table->version = driver_version().c_str();
  table->options = option_definitions(&table->option_count);
  table->context_create = context_create;
  table->context_destroy = context_destroy;
  table->query_operation = query_operation;
  table->compile = compile;
  table->program_destroy = program_destroy;
  table->serialize = serialize;
  table->deserialize = deserialize;
  table->execute = execute;
  table->execute_async = execute_async;
  table->event_wait = event_wait;
  table->event_destroy = event_destroy;
}

oar_adapter_driver_api g_table;

}  // namespace

const std::string& driver_version() {
  // OpenVINO's build is part of the driver version, so a new OpenVINO invalidates
  // cached programs (export_model blobs are not portable across releases).
  static const std::string version = [] {
    std::string build = ov::get_openvino_version().buildNumber;
    for (char& c : build)
      if (c == '/' || c == ' ') c = '_';
    return std::string(OAR_OPENVINO_DRIVER_VERSION) + "+ov" + build;
  }();
  return version;
}

std::string ov_message(const std::exception& e) {
  // OpenVINO wraps its message in "Exception from src/...cpp:NN:", "Check '...'
  // failed at ..." and "While validating node ..." lines; keep what follows.
  const std::string text = e.what();
  std::string out, last;
  int lines = 0;
  size_t start = 0;
  while (start < text.size() && lines < 4) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    last = line;
    if (line.rfind("Exception from ", 0) == 0 || line.rfind("Check '", 0) == 0 ||
        line.rfind("While validating node", 0) == 0)
      continue;
    out += (out.empty() ? "" : " ") + line;
    ++lines;
  }
  if (out.empty()) out = !last.empty() ? last : "unknown OpenVINO error";
  if (out.size() > 800) out = out.substr(0, 800) + "...";
  return out;
}

ov::element::Type element_type(oar_dtype_t dtype) {
  switch (dtype) {
    case OAR_DTYPE_F32: return ov::element::f32;
    case OAR_DTYPE_F64: return ov::element::f64;
    case OAR_DTYPE_F16: return ov::element::f16;
    case OAR_DTYPE_BF16: return ov::element::bf16;
    case OAR_DTYPE_I8: return ov::element::i8;
    case OAR_DTYPE_U8: return ov::element::u8;
    case OAR_DTYPE_I32: return ov::element::i32;
    case OAR_DTYPE_I64: return ov::element::i64;
    case OAR_DTYPE_BOOL: return ov::element::boolean;
    default: throw oar_adapter_sdk::invalid("unknown dtype " + std::to_string(dtype));
  }
}

}  // namespace oar_openvino

OAR_ADAPTER_DEFINE_ENTRY(oar_openvino::g_table, oar_openvino::fill_table)
