/*
 * oar device plugin ABI: kernels.
 *
 * A kernel is a plain C function registered under
 * (op name, device type, dtype signature, priority). The core owns op
 * semantics (schemas, shape and dtype inference, output allocation) and calls
 * the kernel with views of already-allocated tensors, typed attributes, the
 * stream to run on, and a host callback table for errors and workspace.
 *
 * Tensor views carry element strides (not bytes) and an element offset from
 * `data`, so a plugin whose memory handles are not host pointers (OpenCL
 * cl_mem) still receives the handle unchanged.
 */
#ifndef OAR_KERNEL_H
#define OAR_KERNEL_H

#include "oar_abi_types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OAR_MAX_DIMS 16

typedef struct oar_tensor_view {
  size_t struct_size;
  void* data;             /* allocation handle/pointer returned by memory_allocate */
  int64_t offset;         /* in elements, from data */
  oar_dtype_t dtype;
  int32_t ndim;           /* 0 for a scalar */
  const int64_t* shape;   /* ndim entries */
  const int64_t* strides; /* ndim entries, in elements; may be 0 (broadcast) or negative */
} oar_tensor_view;

typedef int32_t oar_attr_kind_t;
enum {
  OAR_ATTR_INT = 0,
  OAR_ATTR_FLOAT = 1,
  OAR_ATTR_BOOL = 2,
  OAR_ATTR_STRING = 3,
  OAR_ATTR_INTS = 4,
  OAR_ATTR_FLOATS = 5,
  OAR_ATTR_DTYPE = 6
};

typedef struct oar_attr {
  size_t struct_size;
  const char* name;
  oar_attr_kind_t kind;
  int64_t i;            /* INT, BOOL (0/1), DTYPE */
  double f;             /* FLOAT */
  const char* s;        /* STRING */
  const int64_t* ints;  /* INTS */
  const double* floats; /* FLOATS */
  int64_t count;        /* entries in ints/floats */
} oar_attr;

struct oar_host_api;

typedef struct oar_kernel_context {
  size_t struct_size;
  const struct oar_host_api* host;
  const char* op_name;
  int32_t device_index;
  oar_stream_t stream;
  const oar_tensor_view* inputs;
  int32_t num_inputs;
  const oar_tensor_view* outputs; /* allocated by the core; the kernel writes them */
  int32_t num_outputs;
  const oar_attr* attrs;
  int32_t num_attrs;
  void* host_context; /* opaque, passed back to host callbacks (workspace) */
} oar_kernel_context;

/* Returns OAR_STATUS_OK, or a code after calling host->set_error(...). */
typedef oar_status_t (*oar_kernel_fn)(const oar_kernel_context* ctx);

/* Optional: may this kernel run these arguments? On "no", write a reason
 * (NUL-terminated, truncated to reason_size) and return 0; the core then tries
 * the next implementation (lower priority) or reports the reason. */
typedef int32_t (*oar_kernel_supports_fn)(const oar_kernel_context* ctx, char* reason,
                                          size_t reason_size);

typedef struct oar_kernel_def {
  size_t struct_size;
  const char* op_name;
  const oar_dtype_t* dtypes; /* signature: dtype of each input, in order */
  int32_t num_dtypes;
  int32_t priority;          /* higher wins; a reference kernel uses 0 */
  const char* impl_name;     /* shown by oar-info, e.g. "onednn" or "kp-loop" */
  oar_kernel_fn fn;
  oar_kernel_supports_fn supports; /* may be NULL: supports everything */
} oar_kernel_def;

typedef struct oar_kernel_registrar {
  size_t struct_size;
  void* registry; /* opaque, pass back */
  const char* device_type;
  oar_status_t (*register_kernel)(void* registry, const oar_kernel_def* def);
} oar_kernel_registrar;

#ifdef __cplusplus
}
#endif

#endif /* OAR_KERNEL_H */
