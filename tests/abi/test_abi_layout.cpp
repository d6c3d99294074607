// The plugin ABI's binary layout, pinned. Every struct in the ABI headers has
// its size, alignment and each field's offset and size written here as golden
// numbers for x86_64 LP64 (computed once from the v1.0 headers). A change to
// any of them breaks every plugin built before it, so it must come with a
// major version bump (docs/abi.md); appending a field in a minor version
// changes only the struct's size, and this file is then updated for that
// struct alone. plugins/abi_headers_c99.c checks the same numbers from C.
#include <gtest/gtest.h>

#include "oar/abi/oar_plugin.h"
#include "../support/layout_expect.h"

TEST(AbiLayout, Version) {
  EXPECT_EQ(OAR_ABI_VERSION_MAJOR, 1);
  EXPECT_EQ(OAR_ABI_VERSION_MINOR, 3);
  EXPECT_STREQ(OAR_PLUGIN_ENTRY_SYMBOL, "oar_plugin_entry");
}

// Enum-like constants cross the boundary as int32_t/uint64_t values.
TEST(AbiLayout, Constants) {
  EXPECT_EQ(sizeof(oar_status_t), 4u);
  EXPECT_EQ(sizeof(oar_dtype_t), 4u);
  EXPECT_EQ(sizeof(oar_attr_kind_t), 4u);
  EXPECT_EQ(sizeof(oar_log_level_t), 4u);
  EXPECT_EQ(sizeof(oar_reduce_op_t), 4u);
  EXPECT_EQ(sizeof(oar_capability_flags_t), 8u);
  EXPECT_EQ(sizeof(oar_memory_stats_fields_t), 4u);
  const int statuses[] = {OAR_STATUS_OK,           OAR_STATUS_INVALID_ARGUMENT,
                          OAR_STATUS_OUT_OF_MEMORY, OAR_STATUS_UNIMPLEMENTED,
                          OAR_STATUS_UNSUPPORTED,  OAR_STATUS_VERSION_MISMATCH,
                          OAR_STATUS_DEVICE_ERROR, OAR_STATUS_NOT_READY,
                          OAR_STATUS_TIMEOUT,      OAR_STATUS_INTERNAL,
                          OAR_STATUS_OUT_OF_RANGE};
  for (int i = 0; i < 11; ++i) EXPECT_EQ(statuses[i], i);
  const int dtypes[] = {OAR_DTYPE_F32, OAR_DTYPE_F64, OAR_DTYPE_F16, OAR_DTYPE_BF16,
                        OAR_DTYPE_I8,  OAR_DTYPE_U8,  OAR_DTYPE_I32, OAR_DTYPE_I64,
                        OAR_DTYPE_BOOL};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(dtypes[i], i);
  EXPECT_EQ(OAR_DTYPE_COUNT, 9);
  const int attrs[] = {OAR_ATTR_INT,  OAR_ATTR_FLOAT,  OAR_ATTR_BOOL, OAR_ATTR_STRING,
                       OAR_ATTR_INTS, OAR_ATTR_FLOATS, OAR_ATTR_DTYPE};
  for (int i = 0; i < 7; ++i) EXPECT_EQ(attrs[i], i);
  EXPECT_EQ(OAR_LOG_DEBUG, 0);
  EXPECT_EQ(OAR_LOG_ERROR, 3);
  EXPECT_EQ(OAR_REDUCE_SUM, 0);
  EXPECT_EQ(OAR_REDUCE_AVG, 4);
  EXPECT_EQ(OAR_CAPABILITY_ASYNC_COPY, 1u);
  EXPECT_EQ(OAR_CAPABILITY_EVENT_TIMING, 2u);
  EXPECT_EQ(OAR_CAPABILITY_COLLECTIVES, 4u);
  EXPECT_EQ(OAR_CAPABILITY_GRAPH_OFFLOAD, 8u);
  EXPECT_EQ(OAR_CAPABILITY_PINNED_HOST_MEMORY, 16u);
  EXPECT_EQ(OAR_CAPABILITY_PEER_COPY, 32u);
  EXPECT_EQ(OAR_CAPABILITY_HOST_ACCESSIBLE_MEMORY, 64u);
  EXPECT_EQ(OAR_MEMORY_STAT_IN_USE, 1u);
  EXPECT_EQ(OAR_MEMORY_STAT_FREE, 16u);
  EXPECT_EQ(OAR_MAX_DIMS, 16);
  EXPECT_EQ(OAR_COMM_UNIQUE_ID_BYTES, 128);
}

// OAR_STRUCT_HAS is how a reader guards fields a peer's older table lacks.
TEST(AbiLayout, StructHasGuardsAppendedFields) {
  oar_plugin_api api{};
  api.struct_size = offsetof(oar_plugin_api, collectives);  // as if one field shorter
  EXPECT_TRUE(OAR_STRUCT_HAS(&api, oar_plugin_api, register_kernels));
  EXPECT_FALSE(OAR_STRUCT_HAS(&api, oar_plugin_api, collectives));
  api.struct_size = offsetof(oar_plugin_api, memory_copy_peer);  // a 1.0 table
  EXPECT_TRUE(OAR_STRUCT_HAS(&api, oar_plugin_api, collectives));
  EXPECT_FALSE(OAR_STRUCT_HAS(&api, oar_plugin_api, memory_copy_peer));
  api.struct_size = offsetof(oar_plugin_api, flag_count);  // a 1.1 table
  EXPECT_TRUE(OAR_STRUCT_HAS(&api, oar_plugin_api, memory_copy_peer));
  EXPECT_FALSE(OAR_STRUCT_HAS(&api, oar_plugin_api, flag_count));
  EXPECT_FALSE(OAR_STRUCT_HAS(&api, oar_plugin_api, flags));
  api.struct_size = sizeof(api);
  EXPECT_TRUE(OAR_STRUCT_HAS(&api, oar_plugin_api, collectives));
  EXPECT_TRUE(OAR_STRUCT_HAS(&api, oar_plugin_api, memory_copy_peer));
  EXPECT_TRUE(OAR_STRUCT_HAS(&api, oar_plugin_api, flags));
  const oar_plugin_api* none = nullptr;
  EXPECT_FALSE(OAR_STRUCT_HAS(none, oar_plugin_api, struct_size));
}

TEST(AbiLayout, TensorView) {
  EXPECT_STRUCT(oar_tensor_view, 48, 8);
  EXPECT_FIELD(oar_tensor_view, struct_size, 0, 8);
  EXPECT_FIELD(oar_tensor_view, data, 8, 8);
  EXPECT_FIELD(oar_tensor_view, offset, 16, 8);
  EXPECT_FIELD(oar_tensor_view, dtype, 24, 4);
  EXPECT_FIELD(oar_tensor_view, ndim, 28, 4);
  EXPECT_FIELD(oar_tensor_view, shape, 32, 8);
  EXPECT_FIELD(oar_tensor_view, strides, 40, 8);
}

TEST(AbiLayout, Attr) {
  EXPECT_STRUCT(oar_attr, 72, 8);
  EXPECT_FIELD(oar_attr, struct_size, 0, 8);
  EXPECT_FIELD(oar_attr, name, 8, 8);
  EXPECT_FIELD(oar_attr, kind, 16, 4);
  EXPECT_FIELD(oar_attr, i, 24, 8);
  EXPECT_FIELD(oar_attr, f, 32, 8);
  EXPECT_FIELD(oar_attr, s, 40, 8);
  EXPECT_FIELD(oar_attr, ints, 48, 8);
  EXPECT_FIELD(oar_attr, floats, 56, 8);
  EXPECT_FIELD(oar_attr, count, 64, 8);
}

TEST(AbiLayout, KernelContext) {
  EXPECT_STRUCT(oar_kernel_context, 96, 8);
  EXPECT_FIELD(oar_kernel_context, struct_size, 0, 8);
  EXPECT_FIELD(oar_kernel_context, host, 8, 8);
  EXPECT_FIELD(oar_kernel_context, op_name, 16, 8);
  EXPECT_FIELD(oar_kernel_context, device_index, 24, 4);
  EXPECT_FIELD(oar_kernel_context, stream, 32, 8);
  EXPECT_FIELD(oar_kernel_context, inputs, 40, 8);
  EXPECT_FIELD(oar_kernel_context, num_inputs, 48, 4);
  EXPECT_FIELD(oar_kernel_context, outputs, 56, 8);
  EXPECT_FIELD(oar_kernel_context, num_outputs, 64, 4);
  EXPECT_FIELD(oar_kernel_context, attrs, 72, 8);
  EXPECT_FIELD(oar_kernel_context, num_attrs, 80, 4);
  EXPECT_FIELD(oar_kernel_context, host_context, 88, 8);
}

TEST(AbiLayout, KernelDef) {
  EXPECT_STRUCT(oar_kernel_def, 56, 8);
  EXPECT_FIELD(oar_kernel_def, struct_size, 0, 8);
  EXPECT_FIELD(oar_kernel_def, op_name, 8, 8);
  EXPECT_FIELD(oar_kernel_def, dtypes, 16, 8);
  EXPECT_FIELD(oar_kernel_def, num_dtypes, 24, 4);
  EXPECT_FIELD(oar_kernel_def, priority, 28, 4);
  EXPECT_FIELD(oar_kernel_def, impl_name, 32, 8);
  EXPECT_FIELD(oar_kernel_def, fn, 40, 8);
  EXPECT_FIELD(oar_kernel_def, supports, 48, 8);
}

TEST(AbiLayout, KernelRegistrar) {
  EXPECT_STRUCT(oar_kernel_registrar, 32, 8);
  EXPECT_FIELD(oar_kernel_registrar, struct_size, 0, 8);
  EXPECT_FIELD(oar_kernel_registrar, registry, 8, 8);
  EXPECT_FIELD(oar_kernel_registrar, device_type, 16, 8);
  EXPECT_FIELD(oar_kernel_registrar, register_kernel, 24, 8);
}

TEST(AbiLayout, HostApi) {
  EXPECT_STRUCT(oar_host_api, 48, 8);
  EXPECT_FIELD(oar_host_api, struct_size, 0, 8);
  EXPECT_FIELD(oar_host_api, abi_major, 8, 4);
  EXPECT_FIELD(oar_host_api, abi_minor, 12, 4);
  EXPECT_FIELD(oar_host_api, set_error, 16, 8);
  EXPECT_FIELD(oar_host_api, log, 24, 8);
  EXPECT_FIELD(oar_host_api, get_flag, 32, 8);
  EXPECT_FIELD(oar_host_api, workspace_allocate, 40, 8);
}

TEST(AbiLayout, DeviceCapabilities) {
  EXPECT_STRUCT(oar_device_capabilities, 40, 8);
  EXPECT_FIELD(oar_device_capabilities, struct_size, 0, 8);
  EXPECT_FIELD(oar_device_capabilities, dtype_mask, 8, 8);
  EXPECT_FIELD(oar_device_capabilities, flags, 16, 8);
  EXPECT_FIELD(oar_device_capabilities, memory_stats_fields, 24, 4);
  EXPECT_FIELD(oar_device_capabilities, alloc_alignment, 32, 8);
}

TEST(AbiLayout, DeviceProperties) {
  EXPECT_STRUCT(oar_device_properties, 216, 8);
  EXPECT_FIELD(oar_device_properties, struct_size, 0, 8);
  EXPECT_FIELD(oar_device_properties, name, 8, 128);
  EXPECT_FIELD(oar_device_properties, vendor, 136, 64);
  EXPECT_FIELD(oar_device_properties, total_memory, 200, 8);
  EXPECT_FIELD(oar_device_properties, compute_units, 208, 4);
  EXPECT_FIELD(oar_device_properties, dlpack_device_type, 212, 4);  // 1.2, in former padding
}

TEST(AbiLayout, FlagDefinition) {  // 1.2
  EXPECT_EQ(sizeof(oar_flag_type_t), 4u);
  const int types[] = {OAR_FLAG_TYPE_BOOL, OAR_FLAG_TYPE_INT, OAR_FLAG_TYPE_FLOAT,
                       OAR_FLAG_TYPE_STRING, OAR_FLAG_TYPE_CHOICE};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(types[i], i);
  EXPECT_STRUCT(oar_flag_definition, 48, 8);
  EXPECT_FIELD(oar_flag_definition, struct_size, 0, 8);
  EXPECT_FIELD(oar_flag_definition, name, 8, 8);
  EXPECT_FIELD(oar_flag_definition, type, 16, 4);
  EXPECT_FIELD(oar_flag_definition, default_value, 24, 8);
  EXPECT_FIELD(oar_flag_definition, doc, 32, 8);
  EXPECT_FIELD(oar_flag_definition, choices, 40, 8);
}

TEST(AbiLayout, MemoryStats) {
  EXPECT_STRUCT(oar_memory_stats, 48, 8);
  EXPECT_FIELD(oar_memory_stats, struct_size, 0, 8);
  EXPECT_FIELD(oar_memory_stats, in_use, 8, 8);
  EXPECT_FIELD(oar_memory_stats, peak, 16, 8);
  EXPECT_FIELD(oar_memory_stats, limit, 24, 8);
  EXPECT_FIELD(oar_memory_stats, total, 32, 8);
  EXPECT_FIELD(oar_memory_stats, free, 40, 8);
}

TEST(AbiLayout, CommUniqueId) {
  EXPECT_STRUCT(oar_comm_unique_id, 128, 1);
  EXPECT_FIELD(oar_comm_unique_id, bytes, 0, 128);
}

TEST(AbiLayout, CollectivesApi) {
  EXPECT_STRUCT(oar_collectives_api, 112, 8);
  EXPECT_FIELD(oar_collectives_api, struct_size, 0, 8);
  EXPECT_FIELD(oar_collectives_api, get_unique_id, 8, 8);
  EXPECT_FIELD(oar_collectives_api, comm_init, 16, 8);
  EXPECT_FIELD(oar_collectives_api, comm_destroy, 24, 8);
  EXPECT_FIELD(oar_collectives_api, comm_abort, 32, 8);
  EXPECT_FIELD(oar_collectives_api, all_reduce, 40, 8);
  EXPECT_FIELD(oar_collectives_api, broadcast, 48, 8);
  EXPECT_FIELD(oar_collectives_api, all_gather, 56, 8);
  EXPECT_FIELD(oar_collectives_api, reduce_scatter, 64, 8);
  EXPECT_FIELD(oar_collectives_api, send, 72, 8);
  EXPECT_FIELD(oar_collectives_api, recv, 80, 8);
  EXPECT_FIELD(oar_collectives_api, barrier, 88, 8);
  EXPECT_FIELD(oar_collectives_api, p2p_batch, 96, 8);         // appended in 1.3
  EXPECT_FIELD(oar_collectives_api, comm_init_ranks, 104, 8);  // appended in 1.3
  oar_collectives_api v12{};
  v12.struct_size = offsetof(oar_collectives_api, p2p_batch);  // a 1.2 plugin's table
  EXPECT_TRUE(OAR_STRUCT_HAS(&v12, oar_collectives_api, barrier));
  EXPECT_FALSE(OAR_STRUCT_HAS(&v12, oar_collectives_api, p2p_batch));
  EXPECT_FALSE(OAR_STRUCT_HAS(&v12, oar_collectives_api, comm_init_ranks));
}

TEST(AbiLayout, P2pOp) {  // 1.3
  EXPECT_STRUCT(oar_p2p_op, 32, 8);
  EXPECT_FIELD(oar_p2p_op, kind, 0, 4);
  EXPECT_FIELD(oar_p2p_op, peer, 4, 4);
  EXPECT_FIELD(oar_p2p_op, dtype, 8, 4);
  EXPECT_FIELD(oar_p2p_op, reserved, 12, 4);
  EXPECT_FIELD(oar_p2p_op, buffer, 16, 8);
  EXPECT_FIELD(oar_p2p_op, count, 24, 8);
  EXPECT_EQ(OAR_P2P_SEND, 0);
  EXPECT_EQ(OAR_P2P_RECV, 1);
}

TEST(AbiLayout, PluginApi) {
  EXPECT_STRUCT(oar_plugin_api, 304, 8);
  EXPECT_FIELD(oar_plugin_api, struct_size, 0, 8);
  EXPECT_FIELD(oar_plugin_api, abi_major, 8, 4);
  EXPECT_FIELD(oar_plugin_api, abi_minor, 12, 4);
  EXPECT_FIELD(oar_plugin_api, plugin_name, 16, 8);
  EXPECT_FIELD(oar_plugin_api, plugin_version, 24, 8);
  EXPECT_FIELD(oar_plugin_api, device_type, 32, 8);
  EXPECT_FIELD(oar_plugin_api, shutdown, 40, 8);
  EXPECT_FIELD(oar_plugin_api, device_count, 48, 8);
  EXPECT_FIELD(oar_plugin_api, device_get_properties, 56, 8);
  EXPECT_FIELD(oar_plugin_api, device_get_capabilities, 64, 8);
  EXPECT_FIELD(oar_plugin_api, device_synchronize, 72, 8);
  EXPECT_FIELD(oar_plugin_api, memory_allocate, 80, 8);
  EXPECT_FIELD(oar_plugin_api, memory_free, 88, 8);
  EXPECT_FIELD(oar_plugin_api, memory_allocate_host_pinned, 96, 8);
  EXPECT_FIELD(oar_plugin_api, memory_free_host_pinned, 104, 8);
  EXPECT_FIELD(oar_plugin_api, memory_copy_h2d, 112, 8);
  EXPECT_FIELD(oar_plugin_api, memory_copy_d2h, 120, 8);
  EXPECT_FIELD(oar_plugin_api, memory_copy_d2d, 128, 8);
  EXPECT_FIELD(oar_plugin_api, memory_copy_h2d_async, 136, 8);
  EXPECT_FIELD(oar_plugin_api, memory_copy_d2h_async, 144, 8);
  EXPECT_FIELD(oar_plugin_api, memory_copy_d2d_async, 152, 8);
  EXPECT_FIELD(oar_plugin_api, memory_set, 160, 8);
  EXPECT_FIELD(oar_plugin_api, memory_get_stats, 168, 8);
  EXPECT_FIELD(oar_plugin_api, stream_create, 176, 8);
  EXPECT_FIELD(oar_plugin_api, stream_destroy, 184, 8);
  EXPECT_FIELD(oar_plugin_api, stream_synchronize, 192, 8);
  EXPECT_FIELD(oar_plugin_api, stream_query, 200, 8);
  EXPECT_FIELD(oar_plugin_api, stream_wait_event, 208, 8);
  EXPECT_FIELD(oar_plugin_api, event_create, 216, 8);
  EXPECT_FIELD(oar_plugin_api, event_destroy, 224, 8);
  EXPECT_FIELD(oar_plugin_api, event_record, 232, 8);
  EXPECT_FIELD(oar_plugin_api, event_synchronize, 240, 8);
  EXPECT_FIELD(oar_plugin_api, event_query, 248, 8);
  EXPECT_FIELD(oar_plugin_api, event_elapsed_ms, 256, 8);
  EXPECT_FIELD(oar_plugin_api, register_kernels, 264, 8);
  EXPECT_FIELD(oar_plugin_api, collectives, 272, 8);
  EXPECT_FIELD(oar_plugin_api, memory_copy_peer, 280, 8);  // appended in 1.1
  EXPECT_FIELD(oar_plugin_api, flag_count, 288, 8);        // appended in 1.2
  EXPECT_FIELD(oar_plugin_api, flags, 296, 8);             // appended in 1.2
}
