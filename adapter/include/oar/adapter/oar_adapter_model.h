/*
 * oar adapter ABI: the model a driver receives, as plain C arrays.
 *
 * A vendor chip that compiles whole subgraphs (an NPU SDK, OpenVINO, ...) is
 * reached through an adapter *driver*: a shared library loaded at run time
 * (oar_adapter_driver.h). The core cuts a graph into subgraphs and hands each
 * one over as an oar_adapter_model: operands (typed, shaped, possibly
 * quantized, possibly constant) and operations (an op type from oar's op
 * catalog, docs/ops.md, with operand indices and typed attributes). Nothing
 * here is a C++ type; everything the core hands over stays valid for the
 * duration of the call that received it (a driver copies what it keeps).
 *
 * Versioning is that of the device plugin ABI (docs/abi.md): every struct
 * starts with struct_size, minor versions only append fields, readers check
 * OAR_STRUCT_HAS before reading a field a peer may lack. Arrays of structs
 * are passed as arrays of *pointers*, so a struct may grow without changing
 * the stride a reader built against an older minor version uses.
 *
 * Model rules (oar_adapter_sdk::validate_model in driver_sdk.hpp checks them all and
 * names the first broken one; a driver answers a broken model with
 * OAR_STATUS_INVALID_ARGUMENT, never a crash):
 *  - operand indices in operations and in the model's inputs/outputs are in
 *    [0, operand_count); -1 marks an absent optional operation input;
 *  - every operand is written at most once: by exactly one operation
 *    (TEMPORARY, OUTPUT), or by the caller (INPUT, CONSTANT); INPUT and
 *    OUTPUT operands are exactly those listed as the model's inputs/outputs;
 *  - quantization: positive finite scales, as many as the channel axis has
 *    entries, zero points inside the quantized type's range;
 *  - a CONSTANT has data of exactly (element count x element size) bytes;
 *  - a static dim is >= 0; a symbolic dim (OAR_ADAPTER_DIM_DYNAMIC) has
 *    0 <= min <= max;
 *  - operations may come in any order but must not form a cycle.
 */
#ifndef OAR_ADAPTER_MODEL_H
#define OAR_ADAPTER_MODEL_H

#include "oar/abi/oar_abi_types.h"
#include "oar/abi/oar_kernel.h" /* oar_attr: typed attributes, the same as kernels get */

#ifdef __cplusplus
extern "C" {
#endif

#define OAR_ADAPTER_ABI_VERSION_MAJOR 1
#define OAR_ADAPTER_ABI_VERSION_MINOR 0

/* ---- operand lifetimes ---- */
typedef int32_t oar_adapter_lifetime_t;
enum {
  OAR_ADAPTER_LIFETIME_INPUT = 0,     /* supplied on each execution (model inputs) */
  OAR_ADAPTER_LIFETIME_OUTPUT = 1,    /* returned on each execution (model outputs) */
  OAR_ADAPTER_LIFETIME_CONSTANT = 2,  /* data given with the model (weights) */
  OAR_ADAPTER_LIFETIME_TEMPORARY = 3  /* produced and consumed inside the model */
};

/* ---- what the axes mean (data is always dense row-major in `dims` order) ---- */
typedef int32_t oar_adapter_layout_t;
enum {
  OAR_ADAPTER_LAYOUT_PLAIN = 0, /* no image meaning (vectors, matrices, ...) */
  OAR_ADAPTER_LAYOUT_NCHW = 1,  /* batch, channels, height, width (oar's activations) */
  OAR_ADAPTER_LAYOUT_NHWC = 2,
  OAR_ADAPTER_LAYOUT_OIHW = 3   /* convolution weights: out channels, in channels / groups, kh, kw */
};

/* ---- quantization of an int8/uint8 (or int32 bias) operand ---- */
typedef int32_t oar_adapter_quant_scheme_t;
enum {
  OAR_ADAPTER_QUANT_NONE = 0,
  /* real = scale * (q - zero_point), one scale and zero point for the tensor */
  OAR_ADAPTER_QUANT_PER_TENSOR = 1,
  /* one scale (and zero point) per index along channel_axis */
  OAR_ADAPTER_QUANT_PER_CHANNEL = 2
};

typedef struct oar_adapter_quant {
  size_t struct_size;
  oar_adapter_quant_scheme_t scheme;
  int32_t channel_axis;       /* PER_CHANNEL only */
  uint32_t scale_count;       /* 1 for PER_TENSOR, dims[channel_axis] for PER_CHANNEL */
  const float* scales;        /* scale_count entries, each > 0 */
  const int32_t* zero_points; /* scale_count entries, or NULL: all zero (symmetric) */
} oar_adapter_quant;

/* ---- one dimension ---- */
#define OAR_ADAPTER_DIM_DYNAMIC ((int64_t)-1)
typedef struct oar_adapter_dim {
  int64_t size;       /* >= 0, or OAR_ADAPTER_DIM_DYNAMIC */
  int64_t min;        /* a dynamic dim's range; equal to size for a static dim */
  int64_t max;
  const char* symbol; /* dynamic dims with the same symbol are equal ("batch"); may be NULL */
} oar_adapter_dim;    /* a fixed four-field record: it never grows (no struct_size) */

typedef struct oar_adapter_operand {
  size_t struct_size;
  const char* name;               /* for messages; may be NULL */
  oar_dtype_t dtype;              /* F32, F16, BF16, I8, U8, I32, I64, BOOL, F64 */
  oar_adapter_layout_t layout;
  oar_adapter_lifetime_t lifetime;
  uint32_t rank;                  /* 0: a scalar */
  const oar_adapter_dim* dims;    /* rank entries */
  const oar_adapter_quant* quant; /* NULL: not quantized */
  const void* data;               /* CONSTANT: dense row-major bytes; NULL otherwise */
  uint64_t data_size;             /* bytes at data */
} oar_adapter_operand;

typedef struct oar_adapter_operation {
  size_t struct_size;
  const char* type;         /* an op of oar's catalog: "conv2d", "relu", "linear", ... */
  const char* name;         /* the graph node's name, for messages and pins; may be NULL */
  uint32_t input_count;
  const int32_t* inputs;    /* operand indices; -1: an absent optional input */
  uint32_t output_count;
  const int32_t* outputs;   /* operand indices */
  uint32_t attr_count;
  const oar_attr* const* attrs; /* the catalog's attributes, normalized (defaults filled in) */
} oar_adapter_operation;

typedef struct oar_adapter_model {
  size_t struct_size;
  uint32_t operand_count;
  const oar_adapter_operand* const* operands;
  uint32_t operation_count;
  const oar_adapter_operation* const* operations;
  uint32_t input_count;     /* the INPUT operands, in the order execute() receives them */
  const int32_t* inputs;
  uint32_t output_count;    /* the OUTPUT operands, in the order execute() fills them */
  const int32_t* outputs;
} oar_adapter_model;

/* ---- a tensor handed to execute(): host memory, dense row-major ---- */
typedef struct oar_adapter_buffer {
  size_t struct_size;
  void* data;
  uint64_t size;        /* bytes at data */
  oar_dtype_t dtype;
  uint32_t rank;
  const int64_t* dims;  /* the concrete shape of this execution */
} oar_adapter_buffer;

#ifdef __cplusplus
}
#endif

#endif /* OAR_ADAPTER_MODEL_H */
