#include "oar/dlpack.h"

#include "pooled.h"

#include "oar/error.h"
#include "oar/runtime.h"

namespace oar {

namespace {
// kDLBool arrived after DLPack 0.6 (Debian's header); NumPy exports bool with it.
constexpr uint8_t kDLBoolCode = 6;

struct ExportContext {
  Tensor tensor;  // keeps the storage alive
  std::vector<int64_t> shape, strides;
};

void delete_export(DLManagedTensor* self) {
  delete static_cast<ExportContext*>(self->manager_ctx);
  delete self;
}

}  // namespace

DLDeviceType dlpack_device_type(Device device) {
  const LoadedPlugin& p = Runtime::get().plugin_for(device);
  int32_t code = p.properties[device.index].dlpack_device_type;
  return code > 0 ? DLDeviceType(code) : kDLExtDev;  // 0: not declared
}

Device device_from_dlpack(DLDevice device) {
  DLDeviceType want = device.device_type;
  if (want == kDLCUDAHost || want == kDLROCMHost) want = kDLCPU;
  const Runtime& rt = Runtime::get();
  auto holds = [&](const LoadedPlugin& p) {
    return device.device_id >= 0 && device.device_id < p.device_count &&
           dlpack_device_type(Device{p.device_type_id, device.device_id}) == want;
  };
  // Host memory belongs to the cpu device, whatever else also declares kDLCPU
  // (hipcpu's device memory is host memory too, and may load first).
  if (want == kDLCPU)
    for (const auto& p : rt.plugins())
      if (p->device_type == "cpu" && holds(*p)) return Device{p->device_type_id, device.device_id};
  for (const auto& p : rt.plugins())
    if (holds(*p)) return Device{p->device_type_id, device.device_id};
  throw DeviceError(str("from_dlpack: no loaded device holds DLPack device type ", int(device.device_type),
                        " index ", device.device_id, " (oar-info lists the devices)"));
}

DLDataType to_dlpack_dtype(DType d) {
  switch (d) {
    case DType::f32: return {kDLFloat, 32, 1};
    case DType::f64: return {kDLFloat, 64, 1};
    case DType::f16: return {kDLFloat, 16, 1};
    case DType::bf16: return {kDLBfloat, 16, 1};
    case DType::i8: return {kDLInt, 8, 1};
    case DType::u8: return {kDLUInt, 8, 1};
    case DType::i32: return {kDLInt, 32, 1};
    case DType::i64: return {kDLInt, 64, 1};
    case DType::boolean: return {kDLBoolCode, 8, 1};
  }
  throw DTypeError("to_dlpack: invalid dtype");
}

DType from_dlpack_dtype(DLDataType t) {
  if (t.lanes != 1) throw DTypeError(str("from_dlpack: vector dtypes (lanes=", t.lanes, ") are not supported"));
  if (t.code == kDLFloat && t.bits == 32) return DType::f32;
  if (t.code == kDLFloat && t.bits == 64) return DType::f64;
  if (t.code == kDLFloat && t.bits == 16) return DType::f16;
  if (t.code == kDLBfloat && t.bits == 16) return DType::bf16;
  if (t.code == kDLInt && t.bits == 8) return DType::i8;
  if (t.code == kDLUInt && t.bits == 8) return DType::u8;
  if (t.code == kDLInt && t.bits == 32) return DType::i32;
  if (t.code == kDLInt && t.bits == 64) return DType::i64;
  if (t.code == kDLBoolCode && t.bits == 8) return DType::boolean;
  throw DTypeError(str("from_dlpack: unsupported dtype (code ", int(t.code), ", bits ", int(t.bits),
                       "); oar supports f32, f64, f16, bf16, i8, u8, i32, i64, bool"));
}

DLManagedTensor* to_dlpack(const Tensor& tensor) {
  if (!tensor.defined()) throw ValueError("to_dlpack: undefined tensor");
  auto ctx = std::make_unique<ExportContext>();
  ctx->tensor = tensor;
  ctx->shape = tensor.shape();
  ctx->strides = tensor.strides();
  auto managed = std::make_unique<DLManagedTensor>();
  DLTensor& dl = managed->dl_tensor;
  Device dev = tensor.device();
  bool host = Runtime::get().host_accessible(dev);
  // A kDLCPU consumer reads the memory with no stream to order on: a device
  // whose host memory is written asynchronously (hipcpu) finishes first.
  if (dlpack_device_type(dev) == kDLCPU && dev.type_name() != "cpu") Runtime::get().synchronize(dev);
  // Host memory is exported as a pointer to the first element; other devices
  // keep their allocation handle and carry the offset in byte_offset.
  dl.data = host ? tensor.data_ptr() : tensor.storage_data();
  dl.byte_offset = host ? 0 : uint64_t(tensor.offset()) * tensor.itemsize();
  dl.device = {dlpack_device_type(dev), dev.index};
  dl.ndim = int32_t(tensor.dim());
  dl.dtype = to_dlpack_dtype(tensor.dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  managed->manager_ctx = ctx.release();
  managed->deleter = delete_export;
  return managed.release();
}

Tensor from_dlpack(DLManagedTensor* managed) {
  if (managed == nullptr) throw ValueError("from_dlpack: null DLManagedTensor");
  // Until the storage owns it, make sure the producer's deleter runs on failure.
  struct Guard {
    DLManagedTensor* m;
    ~Guard() {
      if (m && m->deleter) m->deleter(m);
    }
  } guard{managed};
  const DLTensor& dl = managed->dl_tensor;
  DType dtype = from_dlpack_dtype(dl.dtype);
  if (dl.ndim < 0 || dl.ndim > OAR_MAX_DIMS) throw ShapeError(str("from_dlpack: bad ndim ", dl.ndim));
  if (dl.ndim > 0 && dl.shape == nullptr) throw ShapeError("from_dlpack: null shape");
  Shape shape(dl.shape, dl.shape + dl.ndim);
  check_shape_nonnegative(shape);
  Shape strides = dl.strides ? Shape(dl.strides, dl.strides + dl.ndim) : contiguous_strides(shape);
  Device device = device_from_dlpack(dl.device);
  size_t item = dtype_size(dtype);
  if (dl.byte_offset % item != 0) throw ValueError("from_dlpack: byte_offset is not a multiple of the element size");
  int64_t lo = 0, hi = 0;
  bool empty = numel_of(shape) == 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) continue;
    int64_t span = (shape[i] - 1) * strides[i];
    (span < 0 ? lo : hi) += span;
  }
  if (lo < 0) throw ValueError("from_dlpack: negative strides reaching before the data pointer are not supported");
  int64_t offset = int64_t(dl.byte_offset / item);
  size_t nbytes = empty ? 0 : size_t(offset + hi + 1) * item;
  DataPtr data{dl.data, managed, [](void* ctx, void*) {
                 auto* m = static_cast<DLManagedTensor*>(ctx);
                 if (m->deleter) m->deleter(m);
               }};
  auto storage = detail::make_pooled<StorageImpl>(device, data, nbytes);
  storage->mark_external();
  guard.m = nullptr;  // the storage owns the producer's tensor now
  auto impl = detail::make_pooled<TensorImpl>();
  impl->storage = std::move(storage);
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = offset;
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

}  // namespace oar
