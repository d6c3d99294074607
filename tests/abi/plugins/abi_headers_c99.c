/*
 * Compile-only check that the ABI headers are valid C99 (built with
 * -std=c99 -pedantic-errors) and that a C compiler lays their structs out
 * exactly as the C++ core does: the same golden x86_64 LP64 numbers as
 * tests/abi/test_abi_layout.cpp, checked with the C99 negative-array idiom
 * (_Static_assert is C11). A mismatch is a compile error naming the field.
 */
#include "oar/abi/oar_abi_types.h"
#include "oar/abi/oar_kernel.h"
#include "oar/abi/oar_plugin.h"
#include "oar/plugin_sdk/plugin_entry.h" /* the SDK entry helper is C99 too */

#if defined(__x86_64__) && defined(__LP64__)

#define OAR_CHECK_SIZE(type, size) \
  typedef char oar_size_of_##type[(sizeof(type) == (size)) ? 1 : -1];
#define OAR_CHECK_FIELD(type, field, offset, size)                  \
  typedef char oar_layout_of_##type##_##field                       \
      [(offsetof(type, field) == (offset) &&                        \
        sizeof(((type*)0)->field) == (size)) ? 1 : -1];

OAR_CHECK_SIZE(oar_tensor_view, 48)
OAR_CHECK_FIELD(oar_tensor_view, struct_size, 0, 8)
OAR_CHECK_FIELD(oar_tensor_view, data, 8, 8)
OAR_CHECK_FIELD(oar_tensor_view, offset, 16, 8)
OAR_CHECK_FIELD(oar_tensor_view, dtype, 24, 4)
OAR_CHECK_FIELD(oar_tensor_view, ndim, 28, 4)
OAR_CHECK_FIELD(oar_tensor_view, shape, 32, 8)
OAR_CHECK_FIELD(oar_tensor_view, strides, 40, 8)

OAR_CHECK_SIZE(oar_attr, 72)
OAR_CHECK_FIELD(oar_attr, struct_size, 0, 8)
OAR_CHECK_FIELD(oar_attr, name, 8, 8)
OAR_CHECK_FIELD(oar_attr, kind, 16, 4)
OAR_CHECK_FIELD(oar_attr, i, 24, 8)
OAR_CHECK_FIELD(oar_attr, f, 32, 8)
OAR_CHECK_FIELD(oar_attr, s, 40, 8)
OAR_CHECK_FIELD(oar_attr, ints, 48, 8)
OAR_CHECK_FIELD(oar_attr, floats, 56, 8)
OAR_CHECK_FIELD(oar_attr, count, 64, 8)

OAR_CHECK_SIZE(oar_kernel_context, 96)
OAR_CHECK_FIELD(oar_kernel_context, struct_size, 0, 8)
OAR_CHECK_FIELD(oar_kernel_context, host, 8, 8)
OAR_CHECK_FIELD(oar_kernel_context, op_name, 16, 8)
OAR_CHECK_FIELD(oar_kernel_context, device_index, 24, 4)
OAR_CHECK_FIELD(oar_kernel_context, stream, 32, 8)
OAR_CHECK_FIELD(oar_kernel_context, inputs, 40, 8)
OAR_CHECK_FIELD(oar_kernel_context, num_inputs, 48, 4)
OAR_CHECK_FIELD(oar_kernel_context, outputs, 56, 8)
OAR_CHECK_FIELD(oar_kernel_context, num_outputs, 64, 4)
OAR_CHECK_FIELD(oar_kernel_context, attrs, 72, 8)
OAR_CHECK_FIELD(oar_kernel_context, num_attrs, 80, 4)
OAR_CHECK_FIELD(oar_kernel_context, host_context, 88, 8)

OAR_CHECK_SIZE(oar_kernel_def, 56)
OAR_CHECK_FIELD(oar_kernel_def, struct_size, 0, 8)
OAR_CHECK_FIELD(oar_kernel_def, op_name, 8, 8)
OAR_CHECK_FIELD(oar_kernel_def, dtypes, 16, 8)
OAR_CHECK_FIELD(oar_kernel_def, num_dtypes, 24, 4)
OAR_CHECK_FIELD(oar_kernel_def, priority, 28, 4)
OAR_CHECK_FIELD(oar_kernel_def, impl_name, 32, 8)
OAR_CHECK_FIELD(oar_kernel_def, fn, 40, 8)
OAR_CHECK_FIELD(oar_kernel_def, supports, 48, 8)

OAR_CHECK_SIZE(oar_kernel_registrar, 32)
OAR_CHECK_FIELD(oar_kernel_registrar, struct_size, 0, 8)
OAR_CHECK_FIELD(oar_kernel_registrar, registry, 8, 8)
OAR_CHECK_FIELD(oar_kernel_registrar, device_type, 16, 8)
OAR_CHECK_FIELD(oar_kernel_registrar, register_kernel, 24, 8)

OAR_CHECK_SIZE(oar_host_api, 48)
OAR_CHECK_FIELD(oar_host_api, struct_size, 0, 8)
OAR_CHECK_FIELD(oar_host_api, abi_major, 8, 4)
OAR_CHECK_FIELD(oar_host_api, abi_minor, 12, 4)
OAR_CHECK_FIELD(oar_host_api, set_error, 16, 8)
OAR_CHECK_FIELD(oar_host_api, log, 24, 8)
OAR_CHECK_FIELD(oar_host_api, get_flag, 32, 8)
OAR_CHECK_FIELD(oar_host_api, workspace_allocate, 40, 8)

OAR_CHECK_SIZE(oar_device_capabilities, 40)
OAR_CHECK_FIELD(oar_device_capabilities, struct_size, 0, 8)
OAR_CHECK_FIELD(oar_device_capabilities, dtype_mask, 8, 8)
OAR_CHECK_FIELD(oar_device_capabilities, flags, 16, 8)
OAR_CHECK_FIELD(oar_device_capabilities, memory_stats_fields, 24, 4)
OAR_CHECK_FIELD(oar_device_capabilities, alloc_alignment, 32, 8)

OAR_CHECK_SIZE(oar_device_properties, 216)
OAR_CHECK_FIELD(oar_device_properties, struct_size, 0, 8)
OAR_CHECK_FIELD(oar_device_properties, name, 8, 128)
OAR_CHECK_FIELD(oar_device_properties, vendor, 136, 64)
OAR_CHECK_FIELD(oar_device_properties, total_memory, 200, 8)
OAR_CHECK_FIELD(oar_device_properties, compute_units, 208, 4)
OAR_CHECK_FIELD(oar_device_properties, dlpack_device_type, 212, 4) /* 1.2 */

OAR_CHECK_SIZE(oar_flag_definition, 48) /* 1.2 */
OAR_CHECK_FIELD(oar_flag_definition, struct_size, 0, 8)
OAR_CHECK_FIELD(oar_flag_definition, name, 8, 8)
OAR_CHECK_FIELD(oar_flag_definition, type, 16, 4)
OAR_CHECK_FIELD(oar_flag_definition, default_value, 24, 8)
OAR_CHECK_FIELD(oar_flag_definition, doc, 32, 8)
OAR_CHECK_FIELD(oar_flag_definition, choices, 40, 8)

OAR_CHECK_SIZE(oar_memory_stats, 48)
OAR_CHECK_FIELD(oar_memory_stats, struct_size, 0, 8)
OAR_CHECK_FIELD(oar_memory_stats, in_use, 8, 8)
OAR_CHECK_FIELD(oar_memory_stats, peak, 16, 8)
OAR_CHECK_FIELD(oar_memory_stats, limit, 24, 8)
OAR_CHECK_FIELD(oar_memory_stats, total, 32, 8)
OAR_CHECK_FIELD(oar_memory_stats, free, 40, 8)

OAR_CHECK_SIZE(oar_comm_unique_id, 128)
OAR_CHECK_FIELD(oar_comm_unique_id, bytes, 0, 128)

OAR_CHECK_SIZE(oar_collectives_api, 112)
OAR_CHECK_FIELD(oar_collectives_api, struct_size, 0, 8)
OAR_CHECK_FIELD(oar_collectives_api, get_unique_id, 8, 8)
OAR_CHECK_FIELD(oar_collectives_api, comm_init, 16, 8)
OAR_CHECK_FIELD(oar_collectives_api, comm_destroy, 24, 8)
OAR_CHECK_FIELD(oar_collectives_api, comm_abort, 32, 8)
OAR_CHECK_FIELD(oar_collectives_api, all_reduce, 40, 8)
OAR_CHECK_FIELD(oar_collectives_api, broadcast, 48, 8)
OAR_CHECK_FIELD(oar_collectives_api, all_gather, 56, 8)
OAR_CHECK_FIELD(oar_collectives_api, reduce_scatter, 64, 8)
OAR_CHECK_FIELD(oar_collectives_api, send, 72, 8)
OAR_CHECK_FIELD(oar_collectives_api, recv, 80, 8)
OAR_CHECK_FIELD(oar_collectives_api, barrier, 88, 8)
OAR_CHECK_FIELD(oar_collectives_api, p2p_batch, 96, 8)
OAR_CHECK_FIELD(oar_collectives_api, comm_init_ranks, 104, 8)
OAR_CHECK_SIZE(oar_p2p_op, 32)
OAR_CHECK_FIELD(oar_p2p_op, kind, 0, 4)
OAR_CHECK_FIELD(oar_p2p_op, peer, 4, 4)
OAR_CHECK_FIELD(oar_p2p_op, dtype, 8, 4)
OAR_CHECK_FIELD(oar_p2p_op, reserved, 12, 4)
OAR_CHECK_FIELD(oar_p2p_op, buffer, 16, 8)
OAR_CHECK_FIELD(oar_p2p_op, count, 24, 8)

OAR_CHECK_SIZE(oar_plugin_api, 304)
OAR_CHECK_FIELD(oar_plugin_api, struct_size, 0, 8)
OAR_CHECK_FIELD(oar_plugin_api, abi_major, 8, 4)
OAR_CHECK_FIELD(oar_plugin_api, abi_minor, 12, 4)
OAR_CHECK_FIELD(oar_plugin_api, plugin_name, 16, 8)
OAR_CHECK_FIELD(oar_plugin_api, plugin_version, 24, 8)
OAR_CHECK_FIELD(oar_plugin_api, device_type, 32, 8)
OAR_CHECK_FIELD(oar_plugin_api, shutdown, 40, 8)
OAR_CHECK_FIELD(oar_plugin_api, device_count, 48, 8)
OAR_CHECK_FIELD(oar_plugin_api, device_get_properties, 56, 8)
OAR_CHECK_FIELD(oar_plugin_api, device_get_capabilities, 64, 8)
OAR_CHECK_FIELD(oar_plugin_api, device_synchronize, 72, 8)
OAR_CHECK_FIELD(oar_plugin_api, memory_allocate, 80, 8)
OAR_CHECK_FIELD(oar_plugin_api, memory_free, 88, 8)
OAR_CHECK_FIELD(oar_plugin_api, memory_allocate_host_pinned, 96, 8)
OAR_CHECK_FIELD(oar_plugin_api, memory_free_host_pinned, 104, 8)
OAR_CHECK_FIELD(oar_plugin_api, memory_copy_h2d, 112, 8)
OAR_CHECK_FIELD(oar_plugin_api, memory_copy_d2h, 120, 8)
OAR_CHECK_FIELD(oar_plugin_api, memory_copy_d2d, 128, 8)
OAR_CHECK_FIELD(oar_plugin_api, memory_copy_h2d_async, 136, 8)
OAR_CHECK_FIELD(oar_plugin_api, memory_copy_d2h_async, 144, 8)
OAR_CHECK_FIELD(oar_plugin_api, memory_copy_d2d_async, 152, 8)
OAR_CHECK_FIELD(oar_plugin_api, memory_set, 160, 8)
OAR_CHECK_FIELD(oar_plugin_api, memory_get_stats, 168, 8)
OAR_CHECK_FIELD(oar_plugin_api, stream_create, 176, 8)
OAR_CHECK_FIELD(oar_plugin_api, stream_destroy, 184, 8)
OAR_CHECK_FIELD(oar_plugin_api, stream_synchronize, 192, 8)
OAR_CHECK_FIELD(oar_plugin_api, stream_query, 200, 8)
OAR_CHECK_FIELD(oar_plugin_api, stream_wait_event, 208, 8)
OAR_CHECK_FIELD(oar_plugin_api, event_create, 216, 8)
OAR_CHECK_FIELD(oar_plugin_api, event_destroy, 224, 8)
OAR_CHECK_FIELD(oar_plugin_api, event_record, 232, 8)
OAR_CHECK_FIELD(oar_plugin_api, event_synchronize, 240, 8)
OAR_CHECK_FIELD(oar_plugin_api, event_query, 248, 8)
OAR_CHECK_FIELD(oar_plugin_api, event_elapsed_ms, 256, 8)
OAR_CHECK_FIELD(oar_plugin_api, register_kernels, 264, 8)
OAR_CHECK_FIELD(oar_plugin_api, collectives, 272, 8)
OAR_CHECK_FIELD(oar_plugin_api, memory_copy_peer, 280, 8) /* appended in 1.1 */
OAR_CHECK_FIELD(oar_plugin_api, flag_count, 288, 8)       /* appended in 1.2 */
OAR_CHECK_FIELD(oar_plugin_api, flags, 296, 8)            /* appended in 1.2 */
#endif /* x86_64 LP64 */

/* The entry function type must be nameable from C. */
typedef oar_plugin_entry_fn oar_c99_entry_check;
