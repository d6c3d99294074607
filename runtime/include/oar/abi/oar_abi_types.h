/*
 * oar device plugin ABI: shared C99 types.
 *
 * Everything that crosses the core/plugin boundary is defined here or in
 * oar_plugin.h / oar_kernel.h: fixed-width integers, fixed-width "enums"
 * (int32_t typedefs plus constants, so their size never depends on the
 * compiler), and opaque handles. No C++ type crosses the boundary.
 *
 * Versioning (see docs/abi.md): a major version change breaks the layout and is
 * refused by both sides; a minor version only appends fields at the end of
 * structs. Every struct starts with `struct_size`, and a reader checks it (with
 * OAR_STRUCT_HAS) before touching a field that a peer built against an older
 * minor version may not have.
 */
#ifndef OAR_ABI_TYPES_H
#define OAR_ABI_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OAR_ABI_VERSION_MAJOR 1
#define OAR_ABI_VERSION_MINOR 3

/* The symbol every plugin exports (see oar_plugin.h for its signature). */
#define OAR_PLUGIN_ENTRY_SYMBOL "oar_plugin_entry"

#if defined(_WIN32)
#define OAR_PLUGIN_EXPORT __declspec(dllexport)
#else
#define OAR_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* True when a struct written by a peer is large enough to hold `field`. */
#define OAR_STRUCT_HAS(ptr, type, field) \
  ((ptr) != NULL && (ptr)->struct_size >= offsetof(type, field) + sizeof(((type*)0)->field))

/* ---- status codes: every ABI call returns one; non-OK carries a message ---- */
typedef int32_t oar_status_t;
enum {
  OAR_STATUS_OK = 0,
  OAR_STATUS_INVALID_ARGUMENT = 1,
  OAR_STATUS_OUT_OF_MEMORY = 2,
  OAR_STATUS_UNIMPLEMENTED = 3,
  OAR_STATUS_UNSUPPORTED = 4, /* valid request this device cannot serve */
  OAR_STATUS_VERSION_MISMATCH = 5,
  OAR_STATUS_DEVICE_ERROR = 6,
  OAR_STATUS_NOT_READY = 7, /* stream/event query: work still pending */
  OAR_STATUS_TIMEOUT = 8,
  OAR_STATUS_INTERNAL = 9,
  OAR_STATUS_OUT_OF_RANGE = 10 /* an index or axis outside its bounds */
};

/* ---- data types ---- */
typedef int32_t oar_dtype_t;
enum {
  OAR_DTYPE_F32 = 0,
  OAR_DTYPE_F64 = 1,
  OAR_DTYPE_F16 = 2,
  OAR_DTYPE_BF16 = 3,
  OAR_DTYPE_I8 = 4,
  OAR_DTYPE_U8 = 5,
  OAR_DTYPE_I32 = 6,
  OAR_DTYPE_I64 = 7,
  OAR_DTYPE_BOOL = 8,
  OAR_DTYPE_COUNT = 9
};

/* ---- opaque handles (owned by the plugin that created them) ---- */
typedef struct oar_stream_s* oar_stream_t; /* NULL = the device's default stream */
typedef struct oar_event_s* oar_event_t;
typedef struct oar_comm_s* oar_comm_t;

/* ---- log levels for oar_host_api.log ---- */
typedef int32_t oar_log_level_t;
enum { OAR_LOG_DEBUG = 0, OAR_LOG_INFO = 1, OAR_LOG_WARNING = 2, OAR_LOG_ERROR = 3 };

#ifdef __cplusplus
}
#endif

#endif /* OAR_ABI_TYPES_H */
