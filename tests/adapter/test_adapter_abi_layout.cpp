// The adapter driver ABI's binary layout, pinned (as tests/abi/test_abi_layout.cpp
// pins the plugin ABI): every struct's size, alignment and each field's offset
// and size for x86_64 LP64, computed once from the 1.0 headers. A change to any
// of them breaks every driver built before it and needs a major version bump;
// a minor version appends fields and updates only that struct's size here.
// adapter_headers_c99.c checks that the headers are valid C99.
#include <gtest/gtest.h>

#include <cstddef>

#include "oar/adapter/oar_adapter_driver.h"
#include "../support/layout_expect.h"

TEST(AdapterAbiLayout, Version) {
  EXPECT_EQ(OAR_ADAPTER_ABI_VERSION_MAJOR, 1);
  EXPECT_EQ(OAR_ADAPTER_ABI_VERSION_MINOR, 0);
  EXPECT_STREQ(OAR_ADAPTER_DRIVER_ENTRY_SYMBOL, "oar_adapter_driver_entry");
  EXPECT_EQ(OAR_ADAPTER_DIM_DYNAMIC, -1);
  EXPECT_EQ(sizeof(oar_adapter_lifetime_t), 4u);
  EXPECT_EQ(sizeof(oar_adapter_layout_t), 4u);
  EXPECT_EQ(sizeof(oar_adapter_quant_scheme_t), 4u);
  EXPECT_EQ(OAR_ADAPTER_LIFETIME_TEMPORARY, 3);
  EXPECT_EQ(OAR_ADAPTER_LAYOUT_OIHW, 3);
  EXPECT_EQ(OAR_ADAPTER_QUANT_PER_CHANNEL, 2);
}

TEST(AdapterAbiLayout, Quant) {
  EXPECT_STRUCT(oar_adapter_quant, 40, 8);
  EXPECT_FIELD(oar_adapter_quant, struct_size, 0, 8);
  EXPECT_FIELD(oar_adapter_quant, scheme, 8, 4);
  EXPECT_FIELD(oar_adapter_quant, channel_axis, 12, 4);
  EXPECT_FIELD(oar_adapter_quant, scale_count, 16, 4);
  EXPECT_FIELD(oar_adapter_quant, scales, 24, 8);
  EXPECT_FIELD(oar_adapter_quant, zero_points, 32, 8);
}

TEST(AdapterAbiLayout, Dim) {
  EXPECT_STRUCT(oar_adapter_dim, 32, 8);
  EXPECT_FIELD(oar_adapter_dim, size, 0, 8);
  EXPECT_FIELD(oar_adapter_dim, min, 8, 8);
  EXPECT_FIELD(oar_adapter_dim, max, 16, 8);
  EXPECT_FIELD(oar_adapter_dim, symbol, 24, 8);
}

TEST(AdapterAbiLayout, Operand) {
  EXPECT_STRUCT(oar_adapter_operand, 64, 8);
  EXPECT_FIELD(oar_adapter_operand, struct_size, 0, 8);
  EXPECT_FIELD(oar_adapter_operand, name, 8, 8);
  EXPECT_FIELD(oar_adapter_operand, dtype, 16, 4);
  EXPECT_FIELD(oar_adapter_operand, layout, 20, 4);
  EXPECT_FIELD(oar_adapter_operand, lifetime, 24, 4);
  EXPECT_FIELD(oar_adapter_operand, rank, 28, 4);
  EXPECT_FIELD(oar_adapter_operand, dims, 32, 8);
  EXPECT_FIELD(oar_adapter_operand, quant, 40, 8);
  EXPECT_FIELD(oar_adapter_operand, data, 48, 8);
  EXPECT_FIELD(oar_adapter_operand, data_size, 56, 8);
}

TEST(AdapterAbiLayout, Operation) {
  EXPECT_STRUCT(oar_adapter_operation, 72, 8);
  EXPECT_FIELD(oar_adapter_operation, struct_size, 0, 8);
  EXPECT_FIELD(oar_adapter_operation, type, 8, 8);
  EXPECT_FIELD(oar_adapter_operation, name, 16, 8);
  EXPECT_FIELD(oar_adapter_operation, input_count, 24, 4);
  EXPECT_FIELD(oar_adapter_operation, inputs, 32, 8);
  EXPECT_FIELD(oar_adapter_operation, output_count, 40, 4);
  EXPECT_FIELD(oar_adapter_operation, outputs, 48, 8);
  EXPECT_FIELD(oar_adapter_operation, attr_count, 56, 4);
  EXPECT_FIELD(oar_adapter_operation, attrs, 64, 8);
}

TEST(AdapterAbiLayout, Model) {
  EXPECT_STRUCT(oar_adapter_model, 72, 8);
  EXPECT_FIELD(oar_adapter_model, struct_size, 0, 8);
  EXPECT_FIELD(oar_adapter_model, operand_count, 8, 4);
  EXPECT_FIELD(oar_adapter_model, operands, 16, 8);
  EXPECT_FIELD(oar_adapter_model, operation_count, 24, 4);
  EXPECT_FIELD(oar_adapter_model, operations, 32, 8);
  EXPECT_FIELD(oar_adapter_model, input_count, 40, 4);
  EXPECT_FIELD(oar_adapter_model, inputs, 48, 8);
  EXPECT_FIELD(oar_adapter_model, output_count, 56, 4);
  EXPECT_FIELD(oar_adapter_model, outputs, 64, 8);
}

TEST(AdapterAbiLayout, Buffer) {
  EXPECT_STRUCT(oar_adapter_buffer, 40, 8);
  EXPECT_FIELD(oar_adapter_buffer, struct_size, 0, 8);
  EXPECT_FIELD(oar_adapter_buffer, data, 8, 8);
  EXPECT_FIELD(oar_adapter_buffer, size, 16, 8);
  EXPECT_FIELD(oar_adapter_buffer, dtype, 24, 4);
  EXPECT_FIELD(oar_adapter_buffer, rank, 28, 4);
  EXPECT_FIELD(oar_adapter_buffer, dims, 32, 8);
}

TEST(AdapterAbiLayout, HostApi) {
  EXPECT_STRUCT(oar_adapter_host_api, 32, 8);
  EXPECT_FIELD(oar_adapter_host_api, struct_size, 0, 8);
  EXPECT_FIELD(oar_adapter_host_api, abi_major, 8, 4);
  EXPECT_FIELD(oar_adapter_host_api, abi_minor, 12, 4);
  EXPECT_FIELD(oar_adapter_host_api, set_error, 16, 8);
  EXPECT_FIELD(oar_adapter_host_api, log, 24, 8);
}

TEST(AdapterAbiLayout, Option) {
  EXPECT_STRUCT(oar_adapter_option, 24, 8);
  EXPECT_FIELD(oar_adapter_option, struct_size, 0, 8);
  EXPECT_FIELD(oar_adapter_option, name, 8, 8);
  EXPECT_FIELD(oar_adapter_option, value, 16, 8);
}

TEST(AdapterAbiLayout, DriverApi) {
  EXPECT_STRUCT(oar_adapter_driver_api, 144, 8);
  EXPECT_FIELD(oar_adapter_driver_api, struct_size, 0, 8);
  EXPECT_FIELD(oar_adapter_driver_api, abi_major, 8, 4);
  EXPECT_FIELD(oar_adapter_driver_api, abi_minor, 12, 4);
  EXPECT_FIELD(oar_adapter_driver_api, name, 16, 8);
  EXPECT_FIELD(oar_adapter_driver_api, vendor, 24, 8);
  EXPECT_FIELD(oar_adapter_driver_api, version, 32, 8);
  EXPECT_FIELD(oar_adapter_driver_api, option_count, 40, 8);
  EXPECT_FIELD(oar_adapter_driver_api, options, 48, 8);
  EXPECT_FIELD(oar_adapter_driver_api, context_create, 56, 8);
  EXPECT_FIELD(oar_adapter_driver_api, context_destroy, 64, 8);
  EXPECT_FIELD(oar_adapter_driver_api, query_operation, 72, 8);
  EXPECT_FIELD(oar_adapter_driver_api, compile, 80, 8);
  EXPECT_FIELD(oar_adapter_driver_api, program_destroy, 88, 8);
  EXPECT_FIELD(oar_adapter_driver_api, serialize, 104, 8);
  EXPECT_FIELD(oar_adapter_driver_api, deserialize, 112, 8);
  EXPECT_FIELD(oar_adapter_driver_api, execute, 96, 8);
  EXPECT_FIELD(oar_adapter_driver_api, execute_async, 120, 8);
  EXPECT_FIELD(oar_adapter_driver_api, event_wait, 128, 8);
  EXPECT_FIELD(oar_adapter_driver_api, event_destroy, 136, 8);
}
