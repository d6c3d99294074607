#include "oar/dtype.h"

#include <algorithm>
#include <array>
#include <atomic>

#include "oar/error.h"

namespace oar {

namespace {
struct DTypeInfo {
  const char* name;
  size_t size;
  int category;  // 0 bool, 1 integer, 2 floating
  int rank;      // order within the category for promotion
};
constexpr std::array<DTypeInfo, kNumDTypes> kInfo = {{
    {"f32", 4, 2, 2},
    {"f64", 8, 2, 3},
    {"f16", 2, 2, 1},
    {"bf16", 2, 2, 1},
    {"i8", 1, 1, 1},
    {"u8", 1, 1, 1},
    {"i32", 4, 1, 3},
    {"i64", 8, 1, 4},
    {"bool", 1, 0, 0},
}};
const DTypeInfo& info(DType d) { return kInfo.at(static_cast<size_t>(d)); }
}  // namespace

bool is_valid_dtype(int32_t v) { return v >= 0 && v < kNumDTypes; }
size_t dtype_size(DType d) { return info(d).size; }
const char* dtype_name(DType d) {
  return is_valid_dtype(static_cast<int32_t>(d)) ? info(d).name : "invalid";
}
bool is_floating(DType d) { return info(d).category == 2; }
bool is_integral(DType d) { return info(d).category == 1; }

DType dtype_from_name(std::string_view name) {
  struct Alias {
    const char* name;
    DType dtype;
  };
  static constexpr Alias kAliases[] = {
      {"f32", DType::f32},      {"float32", DType::f32},  {"float", DType::f32},
      {"f64", DType::f64},      {"float64", DType::f64},  {"double", DType::f64},
      {"f16", DType::f16},      {"float16", DType::f16},  {"half", DType::f16},
      {"bf16", DType::bf16},    {"bfloat16", DType::bf16}, {"i8", DType::i8},
      {"int8", DType::i8},      {"u8", DType::u8},        {"uint8", DType::u8},
      {"i32", DType::i32},      {"int32", DType::i32},    {"int", DType::i32},
      {"i64", DType::i64},      {"int64", DType::i64},    {"long", DType::i64},
      {"bool", DType::boolean}, {"boolean", DType::boolean},
  };
  for (const auto& a : kAliases)
    if (name == a.name) return a.dtype;
  throw DTypeError(str("unknown dtype '", name,
                       "'; expected one of f32, f64, f16, bf16, i8, u8, i32, i64, bool"));
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  const auto& ia = info(a);
  const auto& ib = info(b);
  if (ia.category != ib.category) return ia.category > ib.category ? a : b;
  if (ia.category == 2) {
    if (ia.rank == 1 && ib.rank == 1) return DType::f32;  // f16 with bf16
    return ia.rank > ib.rank ? a : b;
  }
  // integers: u8 with i8 needs i16, which oar lacks; PyTorch's next is i16, we use i32.
  if ((a == DType::u8 && b == DType::i8) || (a == DType::i8 && b == DType::u8)) return DType::i32;
  return ia.rank > ib.rank ? a : b;
}

namespace {
std::atomic<DType> g_default_float{DType::f32};
}

DType default_float_dtype() { return g_default_float.load(std::memory_order_relaxed); }

void set_default_float_dtype(DType dtype) {
  if (!is_valid_dtype(static_cast<int32_t>(dtype)) || !is_floating(dtype))
    throw DTypeError(str("the default float dtype must be floating point, got ",
                         is_valid_dtype(static_cast<int32_t>(dtype)) ? dtype_name(dtype) : "an invalid dtype"));
  g_default_float.store(dtype, std::memory_order_relaxed);
}

DType scalar_operand_dtype(DType tensor_dtype, ScalarKind kind) {
  if (kind == ScalarKind::kFloat && !is_floating(tensor_dtype)) return default_float_dtype();
  if (kind == ScalarKind::kInteger && tensor_dtype == DType::boolean) return DType::i64;
  return tensor_dtype;
}

const char* error_kind_name(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::kShape: return "ShapeError";
    case ErrorKind::kDType: return "DTypeError";
    case ErrorKind::kDevice: return "DeviceError";
    case ErrorKind::kIndex: return "IndexError";
    case ErrorKind::kValue: return "ValueError";
    case ErrorKind::kNotImplemented: return "NotImplementedError";
    case ErrorKind::kPlugin: return "PluginError";
    case ErrorKind::kIO: return "IOError";
    case ErrorKind::kInternal: return "InternalError";
    case ErrorKind::kGraph: return "GraphError";
  }
  return "Error";
}

}  // namespace oar
