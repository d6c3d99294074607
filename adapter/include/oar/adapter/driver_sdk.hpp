// Adapter driver SDK: what every subgraph-offload driver needs, written once.
//
// Header-only C++17 that a driver compiles itself (so it may use another
// compiler, or another standard-library ABI: the OpenVINO driver builds with
// _GLIBCXX_USE_CXX11_ABI=0, as OpenVINO does). Nothing here crosses the ABI
// as a C++ type. It gives a driver:
//  - OAR_ADAPTER_DEFINE_ENTRY: version negotiation and the table hand-over;
//  - guarded(): runs a C entry's body, turning a thrown DriverError (or any
//    exception) into a status code plus a message through the host;
//  - validate_model(): every rule of oar_adapter_model.h, checked with a
//    message naming the operand or operation, plus a topological order of the
//    operations (the core and the conformance-style negative tests rely on a
//    driver answering a broken model with INVALID_ARGUMENT, not a crash);
//  - readers for attributes, dims and dtypes.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "oar/adapter/oar_adapter_driver.h"

namespace oar_adapter_sdk {

// A failure inside a driver: the status code and its message.
struct DriverError : std::exception {
  oar_status_t code;
  std::string message;
  DriverError(oar_status_t c, std::string m) : code(c), message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
};

inline DriverError invalid(std::string message) { return {OAR_STATUS_INVALID_ARGUMENT, std::move(message)}; }
inline DriverError unsupported(std::string message) { return {OAR_STATUS_UNSUPPORTED, std::move(message)}; }

// The host table the entry received (one per driver library).
inline const oar_adapter_host_api*& host() {
  static const oar_adapter_host_api* h = nullptr;
  return h;
}

inline oar_status_t report(oar_status_t code, const std::string& message) {
  const oar_adapter_host_api* h = host();
  if (OAR_STRUCT_HAS(h, oar_adapter_host_api, set_error) && h->set_error != nullptr) h->set_error(code, message.c_str());
  return code;
}

inline void log(oar_log_level_t level, const std::string& message) {
  const oar_adapter_host_api* h = host();
  if (OAR_STRUCT_HAS(h, oar_adapter_host_api, log) && h->log != nullptr) h->log(level, message.c_str());
}

// Runs `body` (returning void); a DriverError becomes its code, any other
// exception OAR_STATUS_INTERNAL with its what(), std::bad_alloc OUT_OF_MEMORY.
template <class Body>
oar_status_t guarded(const char* what, Body&& body) noexcept {
  try {
    body();
    return OAR_STATUS_OK;
  } catch (const DriverError& e) {
    return report(e.code, std::string(what) + ": " + e.message);
  } catch (const std::bad_alloc&) {
    return report(OAR_STATUS_OUT_OF_MEMORY, std::string(what) + ": out of host memory");
  } catch (const std::exception& e) {
    return report(OAR_STATUS_INTERNAL, std::string(what) + ": " + e.what());
  } catch (...) {
    return report(OAR_STATUS_INTERNAL, std::string(what) + ": unknown exception");
  }
}

// ---- dtypes, dims ----
inline size_t dtype_size(oar_dtype_t t) {
  switch (t) {
    case OAR_DTYPE_F64: case OAR_DTYPE_I64: return 8;
    case OAR_DTYPE_F32: case OAR_DTYPE_I32: return 4;
    case OAR_DTYPE_F16: case OAR_DTYPE_BF16: return 2;
    case OAR_DTYPE_I8: case OAR_DTYPE_U8: case OAR_DTYPE_BOOL: return 1;
    default: return 0;
  }
}

inline const char* dtype_name(oar_dtype_t t) {
  static const char* names[] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i32", "i64", "bool"};
  return t >= 0 && t < OAR_DTYPE_COUNT ? names[t] : "unknown dtype";
}

inline std::string operand_label(const oar_adapter_model* m, int32_t index) {
  std::string s = "operand " + std::to_string(index);
  if (index >= 0 && uint32_t(index) < m->operand_count && m->operands[index] != nullptr &&
      m->operands[index]->name != nullptr && m->operands[index]->name[0] != '\0')
    s += " ('" + std::string(m->operands[index]->name) + "')";
  return s;
}

inline std::string operation_label(const oar_adapter_model* m, uint32_t index) {
  const oar_adapter_operation* op = index < m->operation_count ? m->operations[index] : nullptr;
  std::string s = "operation " + std::to_string(index);
  if (op != nullptr && op->type != nullptr) s += " (" + std::string(op->type);
  if (op != nullptr && op->name != nullptr && op->name[0] != '\0') s += " '" + std::string(op->name) + "'";
  if (op != nullptr && op->type != nullptr) s += ")";
  return s;
}

// Static dims of an operand (throws UNSUPPORTED naming it for a dynamic one:
// a valid model this driver cannot serve).
inline std::vector<int64_t> static_dims(const oar_adapter_model* m, int32_t index) {
  const oar_adapter_operand* o = m->operands[index];
  std::vector<int64_t> dims;
  for (uint32_t d = 0; d < o->rank; ++d) {
    if (o->dims[d].size < 0) throw unsupported(operand_label(m, index) + " has a dynamic dim " + std::to_string(d));
    dims.push_back(o->dims[d].size);
  }
  return dims;
}

inline bool all_static(const oar_adapter_operand* o) {
  for (uint32_t d = 0; d < o->rank; ++d)
    if (o->dims[d].size < 0) return false;
  return true;
}

inline int64_t element_count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// ---- attributes ----
inline const oar_attr* find_attr(const oar_adapter_operation* op, const char* name) {
  for (uint32_t i = 0; i < op->attr_count; ++i) {
    const oar_attr* a = op->attrs[i];
    if (a != nullptr && a->name != nullptr && std::strcmp(a->name, name) == 0) return a;
  }
  return nullptr;
}

inline const oar_attr& require_attr(const oar_adapter_operation* op, const char* name, oar_attr_kind_t kind) {
  const oar_attr* a = find_attr(op, name);
  const std::string who = std::string(op->type) + (op->name != nullptr && op->name[0] ? std::string(" '") + op->name + "'" : "");
  if (a == nullptr) throw invalid(who + ": attribute '" + name + "' is missing");
  bool ok = a->kind == kind || (kind == OAR_ATTR_INT && (a->kind == OAR_ATTR_BOOL || a->kind == OAR_ATTR_DTYPE));
  if (!ok) throw invalid(who + ": attribute '" + name + "' has kind " + std::to_string(a->kind));
  if ((kind == OAR_ATTR_INTS && a->count > 0 && a->ints == nullptr) ||
      (kind == OAR_ATTR_FLOATS && a->count > 0 && a->floats == nullptr) || a->count < 0)
    throw invalid(who + ": attribute '" + name + "' has no values");
  return *a;
}

inline int64_t attr_int(const oar_adapter_operation* op, const char* name, int64_t fallback) {
  const oar_attr* a = find_attr(op, name);
  return a == nullptr ? fallback : require_attr(op, name, OAR_ATTR_INT).i;
}

inline double attr_float(const oar_adapter_operation* op, const char* name, double fallback) {
  const oar_attr* a = find_attr(op, name);
  if (a == nullptr) return fallback;
  return a->kind == OAR_ATTR_INT ? double(a->i) : require_attr(op, name, OAR_ATTR_FLOAT).f;
}

inline std::vector<int64_t> attr_ints(const oar_adapter_operation* op, const char* name,
                                      std::vector<int64_t> fallback = {}) {
  const oar_attr* a = find_attr(op, name);
  if (a == nullptr) return fallback;
  if (a->kind == OAR_ATTR_INT) return {a->i};
  const oar_attr& r = require_attr(op, name, OAR_ATTR_INTS);
  return std::vector<int64_t>(r.ints, r.ints + r.count);
}

inline std::string attr_string(const oar_adapter_operation* op, const char* name, std::string fallback = {}) {
  const oar_attr* a = find_attr(op, name);
  if (a == nullptr) return fallback;
  const oar_attr& r = require_attr(op, name, OAR_ATTR_STRING);
  return r.s != nullptr ? r.s : "";
}

// ---- validation ----
// Checks every rule of oar_adapter_model.h; returns the operations in a
// topological order, or throws INVALID_ARGUMENT naming what is wrong.
inline std::vector<uint32_t> validate_model(const oar_adapter_model* m) {
  if (m == nullptr) throw invalid("the model is NULL");
  if (!OAR_STRUCT_HAS(m, oar_adapter_model, outputs))
    throw invalid("model struct_size " + std::to_string(m->struct_size) + " is too small");
  if (m->operand_count > 0 && m->operands == nullptr) throw invalid("operands is NULL");
  if (m->operation_count > 0 && m->operations == nullptr) throw invalid("operations is NULL");
  if ((m->input_count > 0 && m->inputs == nullptr) || (m->output_count > 0 && m->outputs == nullptr))
    throw invalid("the model's input or output list is NULL");
  if (m->operation_count == 0) throw invalid("the model has no operations");
  if (m->output_count == 0) throw invalid("the model has no outputs");
  const uint32_t n = m->operand_count;
  for (uint32_t i = 0; i < n; ++i) {
    const oar_adapter_operand* o = m->operands[i];
    const std::string label = operand_label(m, int32_t(i));
    if (o == nullptr || !OAR_STRUCT_HAS(o, oar_adapter_operand, data_size))
      throw invalid(label + ": NULL or struct_size too small");
    if (dtype_size(o->dtype) == 0) throw invalid(label + ": unknown dtype " + std::to_string(o->dtype));
    if (o->lifetime < OAR_ADAPTER_LIFETIME_INPUT || o->lifetime > OAR_ADAPTER_LIFETIME_TEMPORARY)
      throw invalid(label + ": unknown lifetime " + std::to_string(o->lifetime));
    if (o->layout < OAR_ADAPTER_LAYOUT_PLAIN || o->layout > OAR_ADAPTER_LAYOUT_OIHW)
      throw invalid(label + ": unknown layout " + std::to_string(o->layout));
    if (o->rank > OAR_MAX_DIMS) throw invalid(label + ": rank " + std::to_string(o->rank) + " exceeds 16");
    if (o->rank > 0 && o->dims == nullptr) throw invalid(label + ": dims is NULL");
    int64_t count = 1;
    for (uint32_t d = 0; d < o->rank; ++d) {
      const oar_adapter_dim& dim = o->dims[d];
      if (dim.size < 0 && dim.size != OAR_ADAPTER_DIM_DYNAMIC)
        throw invalid(label + ": dim " + std::to_string(d) + " is " + std::to_string(dim.size));
      if (dim.size == OAR_ADAPTER_DIM_DYNAMIC && (dim.min < 0 || dim.max < dim.min))
        throw invalid(label + ": dynamic dim " + std::to_string(d) + " has range [" + std::to_string(dim.min) + ", " +
                      std::to_string(dim.max) + "]");
      if (dim.size >= 0) {
        if (dim.size > 0 && count > (int64_t(1) << 48) / dim.size)
          throw invalid(label + ": more than 2^48 elements");
        count *= dim.size;
      }
    }
    if (o->quant != nullptr) {
      const oar_adapter_quant* q = o->quant;
      if (!OAR_STRUCT_HAS(q, oar_adapter_quant, zero_points)) throw invalid(label + ": quant struct_size too small");
      if (q->scheme == OAR_ADAPTER_QUANT_PER_TENSOR && q->scale_count != 1)
        throw invalid(label + ": per-tensor quantization with " + std::to_string(q->scale_count) + " scales");
      if (q->scheme == OAR_ADAPTER_QUANT_PER_CHANNEL) {
        if (q->channel_axis < 0 || uint32_t(q->channel_axis) >= o->rank)
          throw invalid(label + ": quantization channel axis " + std::to_string(q->channel_axis) + " outside rank " +
                        std::to_string(o->rank));
        int64_t channels = o->dims[q->channel_axis].size;
        if (channels >= 0 && int64_t(q->scale_count) != channels)
          throw invalid(label + ": " + std::to_string(q->scale_count) + " scales for " + std::to_string(channels) +
                        " channels");
      }
      if (q->scheme < OAR_ADAPTER_QUANT_NONE || q->scheme > OAR_ADAPTER_QUANT_PER_CHANNEL)
        throw invalid(label + ": unknown quantization scheme " + std::to_string(q->scheme));
      if (q->scheme != OAR_ADAPTER_QUANT_NONE) {
        if (q->scales == nullptr) throw invalid(label + ": quantization scales are NULL");
        for (uint32_t s = 0; s < q->scale_count; ++s)
          if (!(q->scales[s] > 0.0f) || q->scales[s] != q->scales[s] || q->scales[s] > 3.0e38f)
            throw invalid(label + ": quantization scale " + std::to_string(s) + " is not a positive finite number");
        // A zero point lies on the quantized type's grid.
        const int64_t lo = o->dtype == OAR_DTYPE_U8 ? 0 : o->dtype == OAR_DTYPE_I8 ? -128 : INT32_MIN;
        const int64_t hi = o->dtype == OAR_DTYPE_U8 ? 255 : o->dtype == OAR_DTYPE_I8 ? 127 : INT32_MAX;
        if (q->zero_points != nullptr)
          for (uint32_t s = 0; s < q->scale_count; ++s)
            if (q->zero_points[s] < lo || q->zero_points[s] > hi)
              throw invalid(label + ": zero point " + std::to_string(q->zero_points[s]) + " is outside " +
                            dtype_name(o->dtype) + "'s range");
      }
    }
    if (o->lifetime == OAR_ADAPTER_LIFETIME_CONSTANT) {
      if (!all_static(o)) throw invalid(label + ": a constant with a dynamic dim");
      const uint64_t want = uint64_t(count) * dtype_size(o->dtype);
      if (o->data == nullptr && want > 0) throw invalid(label + ": a constant without data");
      if (o->data_size != want)
        throw invalid(label + ": constant data has " + std::to_string(o->data_size) + " bytes, its dims and dtype need " +
                      std::to_string(want));
    } else if (o->data != nullptr) {
      throw invalid(label + ": data given for an operand that is not a constant");
    }
  }
  // Who writes each operand.
  std::vector<int32_t> writer(n, -2);  // -2: nobody yet; -1: the caller; >= 0: an operation
  for (uint32_t i = 0; i < n; ++i) {
    int32_t lt = m->operands[i]->lifetime;
    if (lt == OAR_ADAPTER_LIFETIME_CONSTANT) writer[i] = -1;
  }
  auto check_index = [&](int32_t index, const std::string& where) {
    if (index < 0 || uint32_t(index) >= n)
      throw invalid(where + " refers to operand " + std::to_string(index) + ", but the model has " + std::to_string(n) +
                    " operands");
  };
  for (uint32_t i = 0; i < m->input_count; ++i) {
    int32_t index = m->inputs[i];
    check_index(index, "model input " + std::to_string(i));
    if (m->operands[index]->lifetime != OAR_ADAPTER_LIFETIME_INPUT)
      throw invalid("model input " + std::to_string(i) + " is " + operand_label(m, index) + ", whose lifetime is not INPUT");
    if (writer[index] != -2) throw invalid(operand_label(m, index) + " is listed twice as a model input");
    writer[index] = -1;
  }
  for (uint32_t i = 0; i < n; ++i)
    if (m->operands[i]->lifetime == OAR_ADAPTER_LIFETIME_INPUT && writer[i] != -1)
      throw invalid(operand_label(m, int32_t(i)) + " has lifetime INPUT but is not among the model's inputs");
  for (uint32_t k = 0; k < m->operation_count; ++k) {
    const oar_adapter_operation* op = m->operations[k];
    const std::string label = operation_label(m, k);
    if (op == nullptr || !OAR_STRUCT_HAS(op, oar_adapter_operation, attrs))
      throw invalid(label + ": NULL or struct_size too small");
    if (op->type == nullptr || op->type[0] == '\0') throw invalid(label + ": no type");
    if ((op->input_count > 0 && op->inputs == nullptr) || (op->output_count > 0 && op->outputs == nullptr) ||
        (op->attr_count > 0 && op->attrs == nullptr))
      throw invalid(label + ": an input, output or attribute list is NULL");
    if (op->output_count == 0) throw invalid(label + ": no outputs");
    for (uint32_t a = 0; a < op->attr_count; ++a) {
      const oar_attr* at = op->attrs[a];
      if (at == nullptr || at->name == nullptr) throw invalid(label + ": attribute " + std::to_string(a) + " is NULL or unnamed");
      if (at->kind < OAR_ATTR_INT || at->kind > OAR_ATTR_DTYPE)
        throw invalid(label + ": attribute '" + at->name + "' has unknown kind " + std::to_string(at->kind));
      if (at->count > (int64_t(1) << 20))
        throw invalid(label + ": attribute '" + at->name + "' has " + std::to_string(at->count) + " values");
      if ((at->kind == OAR_ATTR_INTS && at->count > 0 && at->ints == nullptr) ||
          (at->kind == OAR_ATTR_FLOATS && at->count > 0 && at->floats == nullptr) || at->count < 0 ||
          (at->kind == OAR_ATTR_STRING && at->s == nullptr))
        throw invalid(label + ": attribute '" + at->name + "' has no values");
    }
    for (uint32_t i = 0; i < op->input_count; ++i)
      if (op->inputs[i] != -1) check_index(op->inputs[i], label + " input " + std::to_string(i));
    for (uint32_t i = 0; i < op->output_count; ++i) {
      int32_t index = op->outputs[i];
      check_index(index, label + " output " + std::to_string(i));
      int32_t lt = m->operands[index]->lifetime;
      if (lt != OAR_ADAPTER_LIFETIME_TEMPORARY && lt != OAR_ADAPTER_LIFETIME_OUTPUT)
        throw invalid(label + " writes " + operand_label(m, index) + ", which is an input or a constant");
      if (writer[index] != -2)
        throw invalid(label + " writes " + operand_label(m, index) + ", which " +
                      (writer[index] >= 0 ? operation_label(m, uint32_t(writer[index])) : std::string("the caller")) +
                      " already writes");
      writer[index] = int32_t(k);
    }
  }
  for (uint32_t i = 0; i < n; ++i)
    if (writer[i] == -2 && m->operands[i]->lifetime != OAR_ADAPTER_LIFETIME_INPUT) {
      // A temporary nobody writes is fine only if nobody reads it either.
      for (uint32_t k = 0; k < m->operation_count; ++k)
        for (uint32_t j = 0; j < m->operations[k]->input_count; ++j)
          if (m->operations[k]->inputs[j] == int32_t(i))
            throw invalid(operation_label(m, k) + " reads " + operand_label(m, int32_t(i)) +
                          ", which nothing writes (a missing constant or producer)");
    }
  std::vector<char> listed_output(n, 0);
  for (uint32_t i = 0; i < m->output_count; ++i) {
    int32_t index = m->outputs[i];
    check_index(index, "model output " + std::to_string(i));
    if (m->operands[index]->lifetime != OAR_ADAPTER_LIFETIME_OUTPUT)
      throw invalid("model output " + std::to_string(i) + " is " + operand_label(m, index) + ", whose lifetime is not OUTPUT");
    if (listed_output[index]) throw invalid(operand_label(m, index) + " is listed twice as a model output");
    listed_output[index] = 1;
  }
  for (uint32_t i = 0; i < n; ++i)
    if (m->operands[i]->lifetime == OAR_ADAPTER_LIFETIME_OUTPUT && !listed_output[i])
      throw invalid(operand_label(m, int32_t(i)) + " has lifetime OUTPUT but is not among the model's outputs");
  for (uint32_t i = 0; i < m->output_count; ++i) {
    int32_t index = m->outputs[i];
    check_index(index, "model output " + std::to_string(i));
    if (m->operands[index]->lifetime != OAR_ADAPTER_LIFETIME_OUTPUT)
      throw invalid("model output " + std::to_string(i) + " is " + operand_label(m, index) + ", whose lifetime is not OUTPUT");
    if (writer[index] < 0) throw invalid("model output " + std::to_string(i) + " (" + operand_label(m, index) + ") is written by no operation");
  }
  // Kahn's algorithm over operations; what remains lies on a cycle.
  std::vector<uint32_t> pending(m->operation_count, 0);
  std::vector<std::vector<uint32_t>> readers(n);
  for (uint32_t k = 0; k < m->operation_count; ++k)
    for (uint32_t j = 0; j < m->operations[k]->input_count; ++j) {
      int32_t index = m->operations[k]->inputs[j];
      if (index >= 0 && writer[index] >= 0) {
        ++pending[k];
        readers[index].push_back(k);
      }
    }
  std::vector<uint32_t> order;
  for (uint32_t k = 0; k < m->operation_count; ++k)
    if (pending[k] == 0) order.push_back(k);
  for (size_t head = 0; head < order.size(); ++head) {
    const oar_adapter_operation* op = m->operations[order[head]];
    for (uint32_t i = 0; i < op->output_count; ++i)
      for (uint32_t r : readers[op->outputs[i]])
        if (--pending[r] == 0) order.push_back(r);
  }
  if (order.size() != m->operation_count) {
    for (uint32_t k = 0; k < m->operation_count; ++k)
      if (pending[k] != 0) throw invalid("the operations form a cycle through " + operation_label(m, k));
  }
  return order;
}

}  // namespace oar_adapter_sdk

// The driver's exported entry: zeroes the static table `table`, sets its
// struct_size and versions, calls `fill(&table)` (a `void(oar_adapter_driver_api*)`
// that sets the name, version and entries), refuses a host of another major
// version with a message naming both, and hands the table back. Calling the
// entry again refills the same table (the loader calls it once).
#define OAR_ADAPTER_DEFINE_ENTRY(table, fill)                                                                   \
  extern "C" OAR_PLUGIN_EXPORT oar_status_t oar_adapter_driver_entry(const oar_adapter_host_api* host_api,     \
                                                                     const oar_adapter_driver_api** out) {      \
    if (host_api == nullptr || out == nullptr) return OAR_STATUS_INVALID_ARGUMENT;                            \
    *out = nullptr;                                                                                           \
    if (!OAR_STRUCT_HAS(host_api, oar_adapter_host_api, abi_minor)) return OAR_STATUS_VERSION_MISMATCH;       \
    oar_adapter_sdk::host() = host_api;                                                                       \
    std::memset(&(table), 0, sizeof(table));                                                                  \
    (table).struct_size = sizeof(table);                                                                      \
    (table).abi_major = OAR_ADAPTER_ABI_VERSION_MAJOR;                                                        \
    (table).abi_minor = OAR_ADAPTER_ABI_VERSION_MINOR;                                                        \
    oar_status_t status = oar_adapter_sdk::guarded("driver entry", [&] { fill(&(table)); });                 \
    if (status != OAR_STATUS_OK) return status;                                                               \
    if (host_api->abi_major != OAR_ADAPTER_ABI_VERSION_MAJOR) {                                               \
      char message[192];                                                                                      \
      std::snprintf(message, sizeof(message), "%s adapter driver is built for adapter ABI %u.%u but the host " \
                    "offers %u.%u", (table).name ? (table).name : "an", (unsigned)OAR_ADAPTER_ABI_VERSION_MAJOR, \
                    (unsigned)OAR_ADAPTER_ABI_VERSION_MINOR, (unsigned)host_api->abi_major,                   \
                    (unsigned)host_api->abi_minor);                                                           \
      return oar_adapter_sdk::report(OAR_STATUS_VERSION_MISMATCH, message);                                   \
    }                                                                                                         \
    *out = &(table);                                                                                          \
    return OAR_STATUS_OK;                                                                                     \
  }
