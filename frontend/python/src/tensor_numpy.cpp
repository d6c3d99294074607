// NumPy interop of oar.Tensor, as PyTorch has it: numpy() shares memory with a
// CPU tensor (writable both ways), __array__ and __array_priority__ let NumPy
// functions take tensors, and Tensor(...) builds tensors (so Python classes
// such as nn.Parameter can derive from Tensor).
#include <nanobind/ndarray.h>

#include "bindings.h"
#include "oar/graph/trace.h"
#include "oar/runtime.h"

namespace oar::py {

namespace {

nb::dlpack::dtype numpy_dtype(DType d) {
  using nb::dlpack::dtype_code;
  switch (d) {
    case DType::f32: return {uint8_t(dtype_code::Float), 32, 1};
    case DType::f64: return {uint8_t(dtype_code::Float), 64, 1};
    case DType::f16: return {uint8_t(dtype_code::Float), 16, 1};
    case DType::i8: return {uint8_t(dtype_code::Int), 8, 1};
    case DType::u8: return {uint8_t(dtype_code::UInt), 8, 1};
    case DType::i32: return {uint8_t(dtype_code::Int), 32, 1};
    case DType::i64: return {uint8_t(dtype_code::Int), 64, 1};
    case DType::boolean: return {uint8_t(dtype_code::Bool), 8, 1};
    default:
      throw DTypeError(str("NumPy has no ", d == DType::bf16 ? "bfloat16" : dtype_name(d),
                           " type; convert first, e.g. t.float().numpy()"));
  }
}

// A writable NumPy array over the tensor's memory. The array owns a detached
// alias, so the memory lives as long as the array and is never swapped away
// by an in-place update (an alias makes the memory visible).
nb::object numpy_view(const Tensor& x) {
  Tensor alias = x.detach();
  std::vector<size_t> shape(x.shape().begin(), x.shape().end());
  nb::dlpack::dtype dt = numpy_dtype(x.dtype());
  nb::object owner = nb::cast(alias);
  void* data = x.numel() == 0 ? nullptr : x.data_ptr();
  nb::ndarray<nb::numpy> arr(data, shape.size(), shape.data(), owner, x.strides().data(), dt,
                             nb::device::cpu::value);
  return nb::cast(arr, nb::rv_policy::reference);
}

Tensor host_readable(const Tensor& x) {
  Tensor host = x.detach();
  if (!Runtime::get().host_accessible(host.device())) host = host.to(Device::cpu());
  return host;
}

void init_tensor(Tensor* self, nb::args args) {
  // Tensor() / Tensor(2, 3) -> empty tensor of the default dtype; Tensor(t) -> alias of t
  // without history; Tensor(data) -> a copy of nested sequences or an array in the default dtype.
  if (args.size() == 0) {
    new (self) Tensor(Tensor::empty({0}, default_float_dtype()));
  } else if (args.size() == 1 && nb::isinstance<Tensor>(args[0])) {
    new (self) Tensor(nb::inst_ptr<Tensor>(args[0])->detach());
  } else if (PyLong_Check(args[0].ptr())) {
    Shape s;
    for (nb::handle e : args) s.push_back(nb::cast<int64_t>(e));
    new (self) Tensor(Tensor::empty(s, default_float_dtype()));
  } else if (args.size() == 1) {
    new (self) Tensor(tensor_from_data(args[0], default_float_dtype(), Device::default_device()));
  } else {
    throw nb::type_error("Tensor(): expected sizes, a sequence or a tensor");
  }
}

}  // namespace

void bind_tensor_numpy(nb::class_<Tensor>& t) {
  t.def("__init__", &init_tensor)
      .def("numpy", [](const Tensor& x, bool force) -> nb::object {
        if (graph::Tracer* tracer = graph::Tracer::active()) tracer->check_host_read(x, "numpy()");
        if (force) return numpy_view(host_readable(x.dtype() == DType::bf16 ? x.to(DType::f32) : x));
        if (x.requires_grad())
          throw ValueError("can't call numpy() on a tensor that requires grad; use detach().numpy()");
        if (!Runtime::get().host_accessible(x.device()))
          throw DeviceError(str("numpy(): the tensor is on ", x.device().str(), "; copy it with .cpu() first"));
        return numpy_view(x);
      }, nb::arg("force") = false)
      .def("__array__", [](const Tensor& x, nb::handle dtype, nb::handle copy) -> nb::object {
        if (graph::Tracer* tracer = graph::Tracer::active()) tracer->check_host_read(x, "__array__");
        bool needs_copy = !Runtime::get().host_accessible(x.device()) || x.dtype() == DType::bf16;
        if (needs_copy && !copy.is_none() && !nb::cast<bool>(copy))  // NumPy 2: copy=False must not copy
          throw ValueError(str("__array__(copy=False): a tensor on ", x.device().str(), " of dtype ",
                               dtype_name(x.dtype()), " cannot be viewed by NumPy without a copy"));
        Tensor host = host_readable(x);
        if (host.dtype() == DType::bf16) host = host.to(DType::f32);
        nb::object arr = numpy_view(host);
        if (!dtype.is_none()) arr = arr.attr("astype")(dtype);
        if (!copy.is_none() && nb::cast<bool>(copy)) arr = arr.attr("copy")();
        return arr;
      }, nb::arg("dtype") = nb::none(), nb::arg("copy") = nb::none());
  // NumPy defers mixed operations (ndarray + tensor) to the tensor.
  t.attr("__array_priority__") = 1000;
}

}  // namespace oar::py
