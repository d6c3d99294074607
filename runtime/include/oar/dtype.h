// Element types of oar tensors and the rules that combine them.
// DType values equal the ABI's oar_dtype_t constants so they cross the plugin
// boundary unchanged. Promotion follows PyTorch: bool < integers < floating
// types; within a category the wider type wins; mixing f16 and bf16 gives f32;
// mixing u8 with a signed integer gives the next signed type that holds both.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "oar/abi/oar_abi_types.h"

namespace oar {

enum class DType : int32_t {
  f32 = OAR_DTYPE_F32,
  f64 = OAR_DTYPE_F64,
  f16 = OAR_DTYPE_F16,
  bf16 = OAR_DTYPE_BF16,
  i8 = OAR_DTYPE_I8,
  u8 = OAR_DTYPE_U8,
  i32 = OAR_DTYPE_I32,
  i64 = OAR_DTYPE_I64,
  boolean = OAR_DTYPE_BOOL,
};
constexpr int kNumDTypes = OAR_DTYPE_COUNT;

size_t dtype_size(DType dtype);
const char* dtype_name(DType dtype);  // "f32", "bool", ...
// Accepts oar names and common aliases ("float32", "float", "int64", "long").
// Throws DTypeError naming the bad string.
DType dtype_from_name(std::string_view name);
bool is_floating(DType dtype);
bool is_integral(DType dtype);  // bool excluded
bool is_valid_dtype(int32_t value);
DType promote_types(DType a, DType b);

// The floating dtype integers become where an op needs floating point (true
// division, sqrt, mean of integers, an integer tensor with a Python float):
// f32 unless changed, as PyTorch's torch.set_default_dtype changes it. One
// setting for the process; must be f32, f64, f16 or bf16 (DTypeError otherwise).
DType default_float_dtype();
void set_default_float_dtype(DType dtype);

// A number (not a tensor) combined with a tensor takes the tensor's dtype unless
// that would lose its kind: a float with an integer/bool tensor gives the
// default float dtype, an integer with a bool tensor gives i64 (PyTorch's
// "wrapped number" rule).
enum class ScalarKind { kBool, kInteger, kFloat };
DType scalar_operand_dtype(DType tensor_dtype, ScalarKind kind);
inline constexpr DType all_dtypes[] = {DType::f32, DType::f64, DType::f16, DType::bf16, DType::i8,
                                       DType::u8,  DType::i32, DType::i64, DType::boolean};

inline std::ostream& operator<<(std::ostream& os, DType d) { return os << dtype_name(d); }

}  // namespace oar
