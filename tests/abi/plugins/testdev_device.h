/*
 * A minimal fake device for the ABI tests, written in pure C99 against the
 * plugin headers alone: one device (or a few, for the peer-copy scenario) of
 * type "testdev" whose memory is plain host memory. It proves that a plugin needs nothing but the C ABI, and gives
 * the newer_minor and missing_required plugins a complete v1.0 table to start
 * from (each then changes what its scenario needs).
 */
#ifndef OAR_TESTDEV_DEVICE_H
#define OAR_TESTDEV_DEVICE_H

#include "oar/abi/oar_plugin.h"
#include "oar/plugin_sdk/plugin_entry.h"

/* Remembers the host table; every failing call reports through it. */
void testdev_set_host(const oar_host_api* host);
const oar_host_api* testdev_host(void);

/* Returns `code` after host->set_error(code, message). */
oar_status_t testdev_fail(oar_status_t code, const char* message);

/* Fills device_type ("testdev") and every v1.0 entry that the fake device
 * implements (all required ones plus shutdown, memory_get_stats, streams,
 * events, memory_set and memory_copy_d2d) into a table the SDK's entry
 * helper (oar/plugin_sdk/plugin_entry.h) has started: struct_size, versions
 * and plugin_name are its job. register_kernels registers nothing. */
void testdev_fill_entries(oar_plugin_api* api);

/* A register_kernels that registers testdev_neg_f32 as "neg" for f32. */
oar_status_t testdev_register_neg(const oar_kernel_registrar* registrar);

/* Scenario knobs, set before testdev_fill_entries runs: how many
 * devices there are (default 1; all share host memory) and the capability
 * flags each reports (default OAR_CAPABILITY_HOST_ACCESSIBLE_MEMORY). */
void testdev_set_device_count(int32_t count);
void testdev_set_capability_flags(oar_capability_flags_t flags);

/* Returns OK for a valid device index, else INVALID_ARGUMENT after set_error. */
oar_status_t testdev_check_device(int32_t device);

/* Bytes currently allocated through memory_allocate (for leak checks). */
uint64_t testdev_bytes_in_use(void);

#endif /* OAR_TESTDEV_DEVICE_H */
