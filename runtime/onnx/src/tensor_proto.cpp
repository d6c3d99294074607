// TensorProto <-> Tensor. ONNX stores values either as little-endian
// raw_data or in typed repeated fields whose choice depends on the element
// type (16-bit floats travel as their bit patterns in int32_data, unsigned
// 32/64-bit types in uint64_data); both forms are read, raw_data is written.
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "oar/error.h"
#include "oar/onnx/onnx.h"
#include "proto_io.h"

namespace oar::onnx {

using detail::onnx_type_name;

DType dtype_from_onnx(int32_t t, const std::string& context) {
  switch (t) {
    case ::onnx::TensorProto::FLOAT: return DType::f32;
    case ::onnx::TensorProto::DOUBLE: return DType::f64;
    case ::onnx::TensorProto::FLOAT16: return DType::f16;
    case ::onnx::TensorProto::BFLOAT16: return DType::bf16;
    case ::onnx::TensorProto::INT8: return DType::i8;
    case ::onnx::TensorProto::UINT8: return DType::u8;
    case ::onnx::TensorProto::INT32: return DType::i32;
    case ::onnx::TensorProto::INT64: return DType::i64;
    case ::onnx::TensorProto::BOOL: return DType::boolean;
    // No oar dtype of these widths: widened to the signed type that holds
    // every value (docs/onnx.md); wrap-around modulo 2^16 or 2^32 is lost.
    case ::onnx::TensorProto::INT16:
    case ::onnx::TensorProto::UINT16: return DType::i32;
    case ::onnx::TensorProto::UINT32:
    case ::onnx::TensorProto::UINT64: return DType::i64;
    default:
      throw DTypeError(str(context.empty() ? "" : context + ": ", "ONNX element type ", onnx_type_name(t), " (", t,
                           ") has no oar dtype (oar has f32 f64 f16 bf16 i8 u8 i32 i64 bool)"));
  }
}

int32_t dtype_to_onnx(DType d) {
  switch (d) {
    case DType::f32: return ::onnx::TensorProto::FLOAT;
    case DType::f64: return ::onnx::TensorProto::DOUBLE;
    case DType::f16: return ::onnx::TensorProto::FLOAT16;
    case DType::bf16: return ::onnx::TensorProto::BFLOAT16;
    case DType::i8: return ::onnx::TensorProto::INT8;
    case DType::u8: return ::onnx::TensorProto::UINT8;
    case DType::i32: return ::onnx::TensorProto::INT32;
    case DType::i64: return ::onnx::TensorProto::INT64;
    case DType::boolean: return ::onnx::TensorProto::BOOL;
  }
  throw DTypeError(str("dtype ", int(d), " has no ONNX element type"));
}

namespace {

// Narrows the typed field's values into the dtype's storage.
template <class Dst, class Src>
std::vector<uint8_t> narrow_values(const Src& values) {
  std::vector<uint8_t> bytes(size_t(values.size()) * sizeof(Dst));
  Dst* out = reinterpret_cast<Dst*>(bytes.data());
  for (int i = 0; i < values.size(); ++i) out[i] = static_cast<Dst>(values[i]);
  return bytes;
}

// The values of an INT16/UINT16/UINT32/UINT64 tensor widened to `Wide`
// (i32 or i64), from raw_data (little-endian, the source width) or the typed
// field ONNX keeps them in. UINT64 values above INT64_MAX are refused.
template <class Src, class Wide, class Field>
std::vector<uint8_t> widen(const ::onnx::TensorProto& p, const Field& field, int64_t n, const std::string& where) {
  std::vector<uint8_t> bytes(size_t(n) * sizeof(Wide));
  Wide* out = reinterpret_cast<Wide*>(bytes.data());
  auto put = [&](int64_t i, uint64_t bits) {
    if constexpr (std::is_same_v<Src, uint64_t>)
      if (bits > uint64_t(INT64_MAX))
        throw ValueError(str(where, ": UINT64 value ", bits, " at element ", i,
                             " does not fit oar's i64 (UINT64 tensors are read as i64)"));
    out[i] = Wide(Src(bits));
  };
  if (p.has_raw_data()) {
    const std::string& raw = p.raw_data();
    if (raw.size() != size_t(n) * sizeof(Src))
      throw ValueError(str(where, ": raw_data holds ", raw.size(), " bytes but dims need ", size_t(n) * sizeof(Src),
                           " (truncated or corrupt?)"));
    for (int64_t i = 0; i < n; ++i) {
      Src v;
      std::memcpy(&v, raw.data() + size_t(i) * sizeof(Src), sizeof(Src));
      put(i, uint64_t(v));
    }
  } else {
    if (field.size() != n)
      throw ValueError(str(where, ": holds ", field.size(), " values but dims need ", n, " (truncated or corrupt?)"));
    for (int64_t i = 0; i < n; ++i) put(i, uint64_t(field[int(i)]));
  }
  return bytes;
}

}  // namespace

Tensor tensor_from_proto(const ::onnx::TensorProto& p, const std::string& context) {
  std::string where = context.empty() ? str("tensor '", p.name(), "'") : context;
  if (p.data_location() == ::onnx::TensorProto::EXTERNAL)
    throw NotImplementedError(str(where, ": tensors with external data are not supported"));
  if (p.has_segment()) throw NotImplementedError(str(where, ": segmented tensors are not supported"));
  DType dtype = dtype_from_onnx(p.data_type(), where);
  Shape shape(p.dims().begin(), p.dims().end());
  for (int64_t d : shape)
    if (d < 0) throw ValueError(str(where, ": negative dimension in dims ", shape_str(shape)));
  int64_t n = numel_of(shape);
  size_t item = dtype_size(dtype);

  std::vector<uint8_t> bytes;
  int64_t count = -1;
  switch (p.data_type()) {
    case ::onnx::TensorProto::INT16: bytes = widen<int16_t, int32_t>(p, p.int32_data(), n, where); break;
    case ::onnx::TensorProto::UINT16: bytes = widen<uint16_t, int32_t>(p, p.int32_data(), n, where); break;
    case ::onnx::TensorProto::UINT32: bytes = widen<uint32_t, int64_t>(p, p.uint64_data(), n, where); break;
    case ::onnx::TensorProto::UINT64: bytes = widen<uint64_t, int64_t>(p, p.uint64_data(), n, where); break;
    default: break;
  }
  if (!bytes.empty()) return Tensor::from_host(bytes.data(), n, shape, dtype, Device::cpu());
  if (p.has_raw_data()) {
    const std::string& raw = p.raw_data();
    if (raw.size() != size_t(n) * item)
      throw ValueError(str(where, ": raw_data holds ", raw.size(), " bytes but dims ", shape_str(shape), " of ",
                           onnx_type_name(p.data_type()), " need ", size_t(n) * item, " (truncated or corrupt?)"));
    bytes.assign(raw.begin(), raw.end());
    count = n;
  } else {
    switch (dtype) {
      case DType::f32: bytes = narrow_values<float>(p.float_data()); count = p.float_data_size(); break;
      case DType::f64: bytes = narrow_values<double>(p.double_data()); count = p.double_data_size(); break;
      case DType::i64: bytes = narrow_values<int64_t>(p.int64_data()); count = p.int64_data_size(); break;
      case DType::i32: bytes = narrow_values<int32_t>(p.int32_data()); count = p.int32_data_size(); break;
      case DType::i8: bytes = narrow_values<int8_t>(p.int32_data()); count = p.int32_data_size(); break;
      case DType::u8: bytes = narrow_values<uint8_t>(p.int32_data()); count = p.int32_data_size(); break;
      case DType::boolean: bytes = narrow_values<uint8_t>(p.int32_data()); count = p.int32_data_size(); break;
      // 16-bit floats are stored as their bit patterns, one per int32.
      case DType::f16:
      case DType::bf16: bytes = narrow_values<uint16_t>(p.int32_data()); count = p.int32_data_size(); break;
    }
    if (count != n)
      throw ValueError(str(where, ": holds ", count, " values but dims ", shape_str(shape), " need ", n,
                           " (truncated or corrupt?)"));
  }
  if (dtype == DType::boolean)
    for (uint8_t& b : bytes) b = b != 0;
  return Tensor::from_host(bytes.data(), n, shape, dtype, Device::cpu());
}

void tensor_to_proto(const Tensor& tensor, ::onnx::TensorProto& p) {
  p.set_data_type(dtype_to_onnx(tensor.dtype()));
  p.clear_dims();
  for (int64_t d : tensor.shape()) p.add_dims(d);
  std::string raw(size_t(tensor.numel()) * tensor.itemsize(), '\0');
  if (!raw.empty()) tensor.copy_to_host(raw.data(), tensor.dtype());
  p.set_raw_data(std::move(raw));
}

Tensor load_tensor(const std::string& path) {
  std::string bytes = detail::read_file(path);
  ::onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes))
    throw IOError(str(path, ": not a valid TensorProto (protobuf parse failed; truncated or corrupt?)"));
  return tensor_from_proto(proto, path);
}

}  // namespace oar::onnx
