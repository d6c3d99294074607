/*
 * oar device plugin ABI v1: the tables a device plugin and the core exchange.
 *
 * A plugin is a shared library exporting one C symbol:
 *
 *   oar_status_t oar_plugin_entry(const oar_host_api* host,
 *                                 const oar_plugin_api** out_plugin);
 *
 * The core passes its host table (its ABI version and struct_size, error and
 * logging callbacks); the plugin checks the host's major version, and on a
 * mismatch calls host->set_error() with both versions and returns
 * OAR_STATUS_VERSION_MISMATCH. Otherwise it stores a pointer to its static
 * oar_plugin_api table in *out_plugin. Plugins get all of that from the SDK's
 * OAR_PLUGIN_DEFINE_ENTRY (oar/plugin_sdk/plugin_entry.h). The core in turn
 * refuses a table whose major version differs from its own, and reads
 * appended (newer minor) fields only when struct_size says they are present.
 *
 * Which entries are required and which optional is written once, in
 * oar_plugin_entries.def; the loader and `oar-info --abi` both read it.
 *
 * Semantics every plugin must keep:
 *  - Errors: every call returns oar_status_t; a non-OK return is preceded by
 *    host->set_error(code, message). A plugin never aborts the process.
 *  - Memory: memory_allocate returns memory aligned to at least
 *    capabilities.alloc_alignment (>= 64 bytes). A size of 0 returns NULL, OK.
 *  - Streams (optional since 1.2: the core uses only the default stream):
 *    work on one stream runs in submission order. The NULL stream is
 *    the device's default stream. stream_query returns OK when all submitted
 *    work is done and OAR_STATUS_NOT_READY otherwise.
 *  - Events: event_record captures the work submitted to a stream so far;
 *    event_synchronize blocks until it is done; stream_wait_event makes later
 *    work on a stream wait for it without blocking the host;
 *    event_elapsed_ms needs two recorded, completed events and the
 *    OAR_CAPABILITY_EVENT_TIMING capability.
 *  - Synchronous copies (memory_copy_*) are complete when they return, and are
 *    ordered after all work on the default stream. Async copies are ordered on
 *    the given stream only.
 */
#ifndef OAR_PLUGIN_H
#define OAR_PLUGIN_H

#include "oar_abi_types.h"
#include "oar_kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- host (core) -> plugin ---- */
typedef struct oar_host_api {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  /* Record the message for the failing call on this thread. */
  void (*set_error)(oar_status_t code, const char* message);
  void (*log)(oar_log_level_t level, const char* message);
  /* Current value of an OAR_* flag as text; returns 0 and writes "" if unknown. */
  int32_t (*get_flag)(const char* name, char* buffer, size_t buffer_size);
  /* Scratch memory on the kernel's device, freed by the core after the kernel
   * returns (stream-ordered). ctx is oar_kernel_context.host_context. */
  oar_status_t (*workspace_allocate)(void* host_context, uint64_t size, void** out_ptr);
} oar_host_api;

/* ---- capability query ---- */
typedef uint64_t oar_capability_flags_t;
#define OAR_CAPABILITY_ASYNC_COPY ((oar_capability_flags_t)1 << 0)
#define OAR_CAPABILITY_EVENT_TIMING ((oar_capability_flags_t)1 << 1)
#define OAR_CAPABILITY_COLLECTIVES ((oar_capability_flags_t)1 << 2)
#define OAR_CAPABILITY_GRAPH_OFFLOAD ((oar_capability_flags_t)1 << 3)
#define OAR_CAPABILITY_PINNED_HOST_MEMORY ((oar_capability_flags_t)1 << 4)
#define OAR_CAPABILITY_PEER_COPY ((oar_capability_flags_t)1 << 5)
/* Device memory handles are plain host pointers the core may dereference. */
#define OAR_CAPABILITY_HOST_ACCESSIBLE_MEMORY ((oar_capability_flags_t)1 << 6)

typedef uint32_t oar_memory_stats_fields_t;
#define OAR_MEMORY_STAT_IN_USE ((oar_memory_stats_fields_t)1 << 0)
#define OAR_MEMORY_STAT_PEAK ((oar_memory_stats_fields_t)1 << 1)
#define OAR_MEMORY_STAT_LIMIT ((oar_memory_stats_fields_t)1 << 2)
#define OAR_MEMORY_STAT_TOTAL ((oar_memory_stats_fields_t)1 << 3)
#define OAR_MEMORY_STAT_FREE ((oar_memory_stats_fields_t)1 << 4)

typedef struct oar_device_capabilities {
  size_t struct_size;
  uint64_t dtype_mask;                    /* bit (1 << oar_dtype_t) per supported dtype */
  oar_capability_flags_t flags;
  oar_memory_stats_fields_t memory_stats_fields;
  uint64_t alloc_alignment;               /* bytes, >= 64 */
} oar_device_capabilities;

typedef struct oar_device_properties {
  size_t struct_size;
  char name[128];
  char vendor[64];
  uint64_t total_memory; /* bytes, 0 if unknown */
  int32_t compute_units;
  /* ---- appended in ABI 1.2 ---- */
  /* The DLPack DLDeviceType of this device's memory (kDLCPU = 1, kDLCUDA = 2,
   * kDLOpenCL = 4, kDLROCM = 10, ...). 0, which is no DLPack code, means "not
   * declared": the core then uses kDLExtDev (12). It sits in what was tail
   * padding, so sizeof is unchanged; the caller zero-fills the struct. */
  int32_t dlpack_device_type;
} oar_device_properties;

typedef struct oar_memory_stats {
  size_t struct_size;
  uint64_t in_use;
  uint64_t peak;
  uint64_t limit;
  uint64_t total;
  uint64_t free;
} oar_memory_stats;

/* ---- optional collectives group (declared in v1, implemented by later plugins) ---- */
typedef int32_t oar_reduce_op_t;
enum { OAR_REDUCE_SUM = 0, OAR_REDUCE_PROD = 1, OAR_REDUCE_MAX = 2, OAR_REDUCE_MIN = 3, OAR_REDUCE_AVG = 4 };

#define OAR_COMM_UNIQUE_ID_BYTES 128
typedef struct oar_comm_unique_id {
  uint8_t bytes[OAR_COMM_UNIQUE_ID_BYTES];
} oar_comm_unique_id;

/* One transfer of a p2p_batch (1.3). A fixed layout, frozen like the other
 * structs of the ABI: a later change adds a new entry, not a field. */
typedef int32_t oar_p2p_kind_t;
enum { OAR_P2P_SEND = 0, OAR_P2P_RECV = 1 };
typedef struct oar_p2p_op {
  oar_p2p_kind_t kind;  /* OAR_P2P_SEND reads buffer, OAR_P2P_RECV writes it */
  int32_t peer;         /* the other rank; never this rank */
  oar_dtype_t dtype;
  int32_t reserved;     /* 0 */
  void* buffer;
  uint64_t count;       /* elements of dtype */
} oar_p2p_op;

typedef struct oar_collectives_api {
  size_t struct_size;
  oar_status_t (*get_unique_id)(oar_comm_unique_id* out_id);
  oar_status_t (*comm_init)(int32_t device, const oar_comm_unique_id* id, int32_t world_size,
                            int32_t rank, oar_comm_t* out_comm);
  oar_status_t (*comm_destroy)(oar_comm_t comm);
  /* Abort outstanding operations; used when a peer exceeds timeout_ms. */
  oar_status_t (*comm_abort)(oar_comm_t comm, int64_t timeout_ms);
  oar_status_t (*all_reduce)(oar_comm_t comm, const void* src, void* dst, uint64_t count,
                             oar_dtype_t dtype, oar_reduce_op_t op, oar_stream_t stream);
  oar_status_t (*broadcast)(oar_comm_t comm, const void* src, void* dst, uint64_t count,
                            oar_dtype_t dtype, int32_t root, oar_stream_t stream);
  oar_status_t (*all_gather)(oar_comm_t comm, const void* src, void* dst, uint64_t count,
                             oar_dtype_t dtype, oar_stream_t stream);
  oar_status_t (*reduce_scatter)(oar_comm_t comm, const void* src, void* dst, uint64_t count,
                                 oar_dtype_t dtype, oar_reduce_op_t op, oar_stream_t stream);
  oar_status_t (*send)(oar_comm_t comm, const void* src, uint64_t count, oar_dtype_t dtype,
                       int32_t peer, oar_stream_t stream);
  oar_status_t (*recv)(oar_comm_t comm, void* dst, uint64_t count, oar_dtype_t dtype,
                       int32_t peer, oar_stream_t stream);
  oar_status_t (*barrier)(oar_comm_t comm, oar_stream_t stream);
  /* ---- appended in 1.3 (optional: read through OAR_STRUCT_HAS) ---- */
  /* The sends and receives ops[0..count) as one group: they progress
   * together, so two ranks that each send to and receive from the other
   * cannot deadlock, whatever the sizes. Ordered on `stream`. */
  oar_status_t (*p2p_batch)(oar_comm_t comm, const struct oar_p2p_op* ops, uint32_t count,
                            oar_stream_t stream);
  /* Creates the communicators of `count` ranks this process hosts, rank
   * ranks[i] on device devices[i], in one call: one thread setting up the
   * ranks of several local devices one comm_init at a time would wait on
   * the first for peers it has not created yet. Waits at most timeout_ms
   * (<= 0: the plugin's default) for every peer of the world to join; on
   * OAR_STATUS_TIMEOUT or any error nothing is left allocated and every
   * out_comms[i] is NULL. */
  oar_status_t (*comm_init_ranks)(const oar_comm_unique_id* id, int32_t world_size, int32_t count,
                                  const int32_t* devices, const int32_t* ranks, int64_t timeout_ms,
                                  oar_comm_t* out_comms);
} oar_collectives_api;

/* ---- plugin-declared flags (ABI 1.2) ---- */
/* A plugin declares the OAR_* settings it reads; the core validates them, reads
 * their value from the environment, lists them (oar-info, docs/flags.md) and
 * serves them back through host->get_flag. */
typedef int32_t oar_flag_type_t;
enum {
  OAR_FLAG_TYPE_BOOL = 0,   /* 1/0, true/false, on/off, yes/no; read back as "1"/"0" */
  OAR_FLAG_TYPE_INT = 1,    /* base-10 64-bit integer */
  OAR_FLAG_TYPE_FLOAT = 2,  /* decimal floating-point number */
  OAR_FLAG_TYPE_STRING = 3, /* any text */
  OAR_FLAG_TYPE_CHOICE = 4  /* one word of `choices`, case-insensitive; read back lower case */
};

typedef struct oar_flag_definition {
  size_t struct_size;
  /* "OAR_<PLUGIN NAME IN UPPER CASE>_<WHAT>", e.g. OAR_OPENCL_CACHE_DIR for
   * the plugin named "opencl"; a core flag's name is refused. */
  const char* name;
  oar_flag_type_t type;
  const char* default_value; /* valid for `type`; "" allowed for STRING */
  const char* doc;           /* one line: what it does and when it is read */
  const char* choices;       /* CHOICE only: comma-separated lower-case words */
} oar_flag_definition;

/* ---- plugin -> host ---- */
typedef struct oar_plugin_api {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char* plugin_name;    /* e.g. "cpu_mkldnn" */
  const char* plugin_version; /* free text, e.g. "1.0.0 (oneDNN 2.6.3)" */
  const char* device_type;    /* e.g. "cpu", "cuda", "opencl" */

  void (*shutdown)(void);

  /* devices */
  oar_status_t (*device_count)(int32_t* out_count);
  oar_status_t (*device_get_properties)(int32_t device, oar_device_properties* out);
  oar_status_t (*device_get_capabilities)(int32_t device, oar_device_capabilities* out);
  oar_status_t (*device_synchronize)(int32_t device);

  /* memory */
  oar_status_t (*memory_allocate)(int32_t device, uint64_t size, void** out_ptr);
  oar_status_t (*memory_free)(int32_t device, void* ptr);
  oar_status_t (*memory_allocate_host_pinned)(int32_t device, uint64_t size, void** out_ptr);
  oar_status_t (*memory_free_host_pinned)(int32_t device, void* ptr);
  /* offsets are in bytes from the allocation handle */
  oar_status_t (*memory_copy_h2d)(int32_t device, void* dst, uint64_t dst_offset,
                                  const void* src, uint64_t size);
  oar_status_t (*memory_copy_d2h)(int32_t device, void* dst, const void* src,
                                  uint64_t src_offset, uint64_t size);
  oar_status_t (*memory_copy_d2d)(int32_t device, void* dst, uint64_t dst_offset,
                                  const void* src, uint64_t src_offset, uint64_t size);
  oar_status_t (*memory_copy_h2d_async)(int32_t device, oar_stream_t stream, void* dst,
                                        uint64_t dst_offset, const void* src, uint64_t size);
  oar_status_t (*memory_copy_d2h_async)(int32_t device, oar_stream_t stream, void* dst,
                                        const void* src, uint64_t src_offset, uint64_t size);
  oar_status_t (*memory_copy_d2d_async)(int32_t device, oar_stream_t stream, void* dst,
                                        uint64_t dst_offset, const void* src,
                                        uint64_t src_offset, uint64_t size);
  oar_status_t (*memory_set)(int32_t device, oar_stream_t stream, void* ptr, uint64_t offset,
                             uint8_t value, uint64_t size);
  oar_status_t (*memory_get_stats)(int32_t device, oar_memory_stats* out);

  /* streams */
  oar_status_t (*stream_create)(int32_t device, oar_stream_t* out_stream);
  oar_status_t (*stream_destroy)(int32_t device, oar_stream_t stream);
  oar_status_t (*stream_synchronize)(int32_t device, oar_stream_t stream);
  oar_status_t (*stream_query)(int32_t device, oar_stream_t stream);
  oar_status_t (*stream_wait_event)(int32_t device, oar_stream_t stream, oar_event_t event);

  /* events */
  oar_status_t (*event_create)(int32_t device, oar_event_t* out_event);
  oar_status_t (*event_destroy)(int32_t device, oar_event_t event);
  oar_status_t (*event_record)(int32_t device, oar_event_t event, oar_stream_t stream);
  oar_status_t (*event_synchronize)(int32_t device, oar_event_t event);
  oar_status_t (*event_query)(int32_t device, oar_event_t event);
  oar_status_t (*event_elapsed_ms)(int32_t device, oar_event_t start, oar_event_t end,
                                   float* out_ms);

  /* kernels: called once after a successful entry */
  oar_status_t (*register_kernels)(const oar_kernel_registrar* registrar);

  /* optional groups: NULL when absent */
  const oar_collectives_api* collectives;

  /* ---- appended in ABI 1.1 (read only when struct_size holds them) ---- */
  /* Copies size bytes between two devices of this plugin (which may be the
   * same device), without staging through the host where the hardware allows.
   * Synchronous: complete when it returns, and ordered after all work on the
   * default streams of both devices. Offsets are in bytes from the handles. */
  oar_status_t (*memory_copy_peer)(int32_t dst_device, void* dst, uint64_t dst_offset,
                                   int32_t src_device, const void* src, uint64_t src_offset,
                                   uint64_t size);

  /* ---- appended in ABI 1.2 (read only when struct_size holds them) ---- */
  /* The flags this plugin reads, registered by the core after the entry
   * returns and before any other call: read them from device_count,
   * register_kernels or later, never inside the entry itself. Each points to
   * a definition with its own struct_size; a bad one is skipped with a reason
   * (oar-info shows it) and never stops the plugin from loading. */
  uint64_t flag_count;
  const oar_flag_definition* const* flags;
} oar_plugin_api;

typedef oar_status_t (*oar_plugin_entry_fn)(const oar_host_api* host,
                                            const oar_plugin_api** out_plugin);

#ifdef __cplusplus
}
#endif

#endif /* OAR_PLUGIN_H */
