// Shared pieces of the oar._C extension: conversions between Python objects
// and oar values (dtypes, devices, attributes, scalars, index expressions),
// and the registration functions of each binding file.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "oar/autograd.h"
#include "oar/core.h"

namespace nb = nanobind;

namespace oar::py {

DType to_dtype(nb::handle h);          // oar.float32, "float32", numpy dtype, Python type
Device to_device(nb::handle h);        // "cpu", "cuda:0", oar.device
AttrValue to_attr(nb::handle h);       // int, float, bool, str, list/tuple of int/float, dtype
Attrs to_attrs(const nb::dict& d);
// A Python number as a 0-d tensor of oar::scalar_operand_dtype (the kind comes
// from the Python type: bool, int or float).
Tensor scalar_tensor(nb::handle value, const Tensor& like);
bool is_python_scalar(nb::handle h);
// Builds a tensor from nested lists / numbers / numpy arrays (copying).
Tensor tensor_from_data(nb::handle data, std::optional<DType> dtype, Device device);
nb::object to_python_value(const Tensor& t);  // tolist() / item()
nb::object wrap_outputs(std::vector<Tensor> outs);
// torch.matmul: a 1-D operand is a row (left) or a column (right), its dim dropped.
Tensor matmul_any(const Tensor& a, const Tensor& b);

// Indexing with NumPy's rules (indexing.cpp); `accumulate` sums into repeated
// positions (index_put_) instead of the last write winning.
Tensor index_get(const Tensor& self, nb::handle key);
void index_set(Tensor& self, nb::handle key, nb::handle value, bool accumulate);

void bind_errors(nb::module_& m);
void bind_tensor_numpy(nb::class_<Tensor>& t);     // numpy(), __array__, constructors
void bind_tensor_autograd(nb::class_<Tensor>& t);  // requires_grad_, grad, hooks, _version
void bind_grad_fn(nb::module_& m, nb::class_<Tensor>& t);  // oar._C.GradFn, Tensor.grad_fn
void bind_tensor(nb::module_& m);
void bind_functions(nb::module_& m);
void bind_data(nb::module_& m);
void bind_jit(nb::module_& m);
void bind_onnx(nb::module_& m);
void bind_optim(nb::module_& m);  // needs the C++ frontend (oar_cpp)
void bind_adapter(nb::module_& m);  // oar_cpp's Predictor with liboar_adapter

// What register_hook returns (tensors and grad_fn nodes). Removing a hook
// disables it and drops the Python callable; the C++ side keeps an empty slot
// (hooks are stored in registration order).
struct HookHandle {
  std::shared_ptr<nb::object> fn;
  void remove() {
    if (fn && fn->is_valid()) *fn = nb::object();
  }
};

}  // namespace oar::py
