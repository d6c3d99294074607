/*
 * oar adapter ABI: the tables a subgraph-offload driver and the core exchange.
 *
 * A driver is a shared library liboar_adapter_<name>.so exporting one symbol:
 *
 *   oar_status_t oar_adapter_driver_entry(const oar_adapter_host_api* host,
 *                                         const oar_adapter_driver_api** out_driver);
 *
 * The core passes its host table (adapter ABI version, struct_size, error and
 * logging callbacks); the driver refuses a host of another major
 * version through host->set_error naming both versions, otherwise it hands
 * back its static table. OAR_ADAPTER_DEFINE_ENTRY (driver_sdk.hpp) writes that
 * function. The driver describes itself (name, vendor, version: the version
 * is part of every cache key) and declares its options as flags
 * (OAR_<NAME>_<OPTION>, the plugin ABI's oar_flag_definition), which the core
 * registers, lists in `oar-info`, and hands to context_create as values.
 *
 * The life of an offload, all through this table:
 *   context_create(options)          one per (driver, option set)
 *   query_operation(model, i)        per operation: supported, or a reason
 *   compile(model) -> program        one per subgraph
 *   serialize(program) / deserialize(bytes, model) -> program   (the cache)
 *   execute(program, inputs, outputs)           synchronous
 *   execute_async(...) -> event, event_wait     with events
 *
 * Semantics every driver keeps:
 *  - Errors: a non-OK return is preceded by host->set_error(code, message);
 *    a model that breaks the rules of oar_adapter_model.h gets
 *    OAR_STATUS_INVALID_ARGUMENT with a message naming the operand or
 *    operation; a driver never aborts the process or throws across the ABI.
 *  - query_operation answers for one operation *in the context of the whole
 *    model* (dtypes and shapes of its operands, whether its weights are
 *    constant). "No" is not an error: *out_supported = 0 and a reason.
 *  - compile may still fail for a model whose operations were all supported
 *    (an SDK's own limit): the core then runs the subgraph on the plugin
 *    device with a warning, or raises under OAR_FALLBACK=error.
 *  - A program keeps no pointer into the model it was compiled from.
 *  - serialize writes bytes that deserialize accepts only from a compatible
 *    driver (same format and driver version); anything else gets
 *    OAR_STATUS_VERSION_MISMATCH (or INVALID_ARGUMENT for garbage) and a
 *    message, and the core recompiles.
 *  - Buffers are host memory, dense row-major, aligned to their element size
 *    (usually to 64 bytes, but a driver must not rely on it); a buffer may be
 *    larger than needed. execute writes every output. A program is executed
 *    from one thread at a time (the core never overlaps two executions of one
 *    program).
 *  - An operation index outside the model gets OAR_STATUS_OUT_OF_RANGE; so
 *    does serialize into a buffer smaller than *out_size says it needs.
 *  - event_destroy on an execution still running waits for it first.
 *  - Two serialize calls on one program return the same bytes.
 */
#ifndef OAR_ADAPTER_DRIVER_H
#define OAR_ADAPTER_DRIVER_H

#include "oar/abi/oar_plugin.h" /* oar_flag_definition, OAR_PLUGIN_EXPORT */
#include "oar_adapter_model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OAR_ADAPTER_DRIVER_ENTRY_SYMBOL "oar_adapter_driver_entry"

typedef struct oar_adapter_context_s* oar_adapter_context_t; /* a driver with its options */
typedef struct oar_adapter_program_s* oar_adapter_program_t; /* one compiled subgraph */
typedef struct oar_adapter_event_s* oar_adapter_event_t;     /* one asynchronous execution */

/* ---- host (core) -> driver ---- */
typedef struct oar_adapter_host_api {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  /* Record the message for the failing call on this thread. */
  void (*set_error)(oar_status_t code, const char* message);
  void (*log)(oar_log_level_t level, const char* message);
} oar_adapter_host_api;

/* One option value handed to context_create: the flag's full name and its value as text. */
typedef struct oar_adapter_option {
  size_t struct_size;
  const char* name;  /* "OAR_OPENVINO_DEVICE" */
  const char* value; /* "CPU" */
} oar_adapter_option;

/* ---- driver -> host ---- */
typedef struct oar_adapter_driver_api {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* name;    /* lower case; OAR_ADAPTER=<name> selects it */
  const char* vendor;  /* "Intel OpenVINO 2025.3.0", "oar (simulated NPU)" */
  const char* version; /* the driver's build and SDK version; a change invalidates cached programs */

  /* Options, declared as flags OAR_<NAME>_<OPTION> (see oar_plugin.h). */
  uint64_t option_count;
  const oar_flag_definition* const* options;

  /* Creates a context with these option values (every declared option is
   * given; values are already checked against the declarations). */
  oar_status_t (*context_create)(const oar_adapter_option* const* options, uint32_t option_count,
                                 oar_adapter_context_t* out_context);
  void (*context_destroy)(oar_adapter_context_t context);

  /* Can operation `operation_index` of `model` run on this driver? Writes 1 or
   * 0 to *out_supported; on 0, a NUL-terminated reason (truncated to
   * reason_size). Returns INVALID_ARGUMENT for a broken model. */
  oar_status_t (*query_operation)(oar_adapter_context_t context, const oar_adapter_model* model,
                                  uint32_t operation_index, int32_t* out_supported, char* reason,
                                  size_t reason_size);

  oar_status_t (*compile)(oar_adapter_context_t context, const oar_adapter_model* model,
                          oar_adapter_program_t* out_program);
  void (*program_destroy)(oar_adapter_program_t program);
  /* inputs/outputs: in the order of model->inputs / model->outputs. */
  oar_status_t (*execute)(oar_adapter_program_t program, const oar_adapter_buffer* const* inputs,
                          uint32_t input_count, const oar_adapter_buffer* const* outputs,
                          uint32_t output_count);

  /* Optional groups: serialization (both or neither), asynchronous execution (all three or none). */

  /* Bytes that deserialize turns back into the program. Called with
   * buffer == NULL first: writes the size needed to *out_size. */
  oar_status_t (*serialize)(oar_adapter_program_t program, void* buffer, uint64_t capacity,
                            uint64_t* out_size);
  /* `model` is the model the bytes were compiled from (same operands and
   * operations; constant data included). */
  oar_status_t (*deserialize)(oar_adapter_context_t context, const oar_adapter_model* model,
                              const void* data, uint64_t size, oar_adapter_program_t* out_program);

  /* Starts an execution; the buffers must stay valid until event_wait returns
   * OK (or an error). *out_event is destroyed with event_destroy. */
  oar_status_t (*execute_async)(oar_adapter_program_t program, const oar_adapter_buffer* const* inputs,
                                uint32_t input_count, const oar_adapter_buffer* const* outputs,
                                uint32_t output_count, oar_adapter_event_t* out_event);
  /* Waits up to timeout_ms (< 0: forever). OK: done; OAR_STATUS_TIMEOUT: not
   * yet (not an error: set_error is optional); any other status: the
   * execution failed (with a message). There is no cancel: event_destroy of
   * a running execution blocks until it ends. */
  oar_status_t (*event_wait)(oar_adapter_event_t event, int64_t timeout_ms);
  void (*event_destroy)(oar_adapter_event_t event);
} oar_adapter_driver_api;

typedef oar_status_t (*oar_adapter_driver_entry_fn)(const oar_adapter_host_api* host,
                                                   const oar_adapter_driver_api** out_driver);

#ifdef __cplusplus
}
#endif

#endif /* OAR_ADAPTER_DRIVER_H */
