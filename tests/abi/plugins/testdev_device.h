/*
 * A minimal fake device for the ABI tests, written in pure C99 against the
 * plugin headers alone: one device of type "testdev" whose memory is plain
 * host memory. It proves that a plugin needs nothing but the C ABI, and gives
 * the newer_minor and missing_required plugins a complete v1.0 table to start
 * from (each then changes what its scenario needs).
 */
#ifndef OAR_TESTDEV_DEVICE_H
#define OAR_TESTDEV_DEVICE_H

#include "oar/abi/oar_plugin.h"

/* Remembers the host table; every failing call reports through it. */
void testdev_set_host(const oar_host_api* host);
const oar_host_api* testdev_host(void);

/* Returns `code` after host->set_error(code, message). */
oar_status_t testdev_fail(oar_status_t code, const char* message);

/* Fills every v1.0 entry that the fake device implements (all required ones
 * plus shutdown and memory_get_stats); register_kernels registers nothing. */
void testdev_fill_api(oar_plugin_api* api, const char* plugin_name);

/* Bytes currently allocated through memory_allocate (for leak checks). */
uint64_t testdev_bytes_in_use(void);

#endif /* OAR_TESTDEV_DEVICE_H */
