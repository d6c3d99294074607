// The functions of the driver table (oar_adapter_driver.h), each defined in
// the file that does its job; driver.cpp puts them into the table.
#pragma once

#include "oar/adapter/oar_adapter_driver.h"

namespace oar_openvino {

// support.cpp
oar_status_t query_operation(oar_adapter_context_t context, const oar_adapter_model* model, uint32_t operation_index,
                             int32_t* out_supported, char* reason, size_t reason_size);

// program.cpp
oar_status_t compile(oar_adapter_context_t context, const oar_adapter_model* model, oar_adapter_program_t* out_program);
void program_destroy(oar_adapter_program_t program);
oar_status_t execute(oar_adapter_program_t program, const oar_adapter_buffer* const* inputs, uint32_t input_count,
                     const oar_adapter_buffer* const* outputs, uint32_t output_count);
oar_status_t execute_async(oar_adapter_program_t program, const oar_adapter_buffer* const* inputs,
                           uint32_t input_count, const oar_adapter_buffer* const* outputs, uint32_t output_count,
                           oar_adapter_event_t* out_event);
oar_status_t event_wait(oar_adapter_event_t event, int64_t timeout_ms);
void event_destroy(oar_adapter_event_t event);

// serialize.cpp
oar_status_t serialize(oar_adapter_program_t program, void* buffer, uint64_t capacity, uint64_t* out_size);
oar_status_t deserialize(oar_adapter_context_t context, const oar_adapter_model* model, const void* data,
                         uint64_t size, oar_adapter_program_t* out_program);

}  // namespace oar_openvino
