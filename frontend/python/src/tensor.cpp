// oar.Tensor: properties, views, indexing, arithmetic with Python scalars,
// autograd methods, NumPy/DLPack exchange.
#include <dlpack/dlpack.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <sstream>
#include <unordered_map>

#include "bindings.h"
#include "oar/graph/trace.h"
#include "oar/dlpack.h"

namespace oar::py {

namespace {

Tensor as_tensor(nb::handle h, const Tensor& like) {
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  if (is_python_scalar(h)) return scalar_tensor(h, like);
  if (nb::hasattr(h, "__array_interface__")) return tensor_from_data(h, std::nullopt, like.device());  // NumPy
  throw DTypeError(str("unsupported operand type ", nb::cast<std::string>(nb::repr(h.type())), " for a tensor op"));
}

// Operators look their schema up once (the GIL serialises this cache).
const OpSchema& schema_of(const char* op) {
  static std::unordered_map<const char*, const OpSchema*> cache;
  auto it = cache.find(op);
  if (it != cache.end()) return *it->second;
  const OpSchema& s = OpRegistry::instance().get(op);
  cache.emplace(op, &s);
  return s;
}

// bool + bool and bool * bool are logical or / and, as in PyTorch (the
// arithmetic kernels take no bool).
const char* bool_form(const char* op, const std::vector<Tensor>& in) {
  if (in[0].dtype() != DType::boolean || in[1].dtype() != DType::boolean) return op;
  if (std::strcmp(op, "add") == 0) return "logical_or";
  if (std::strcmp(op, "mul") == 0) return "logical_and";
  return op;
}

// Argument lists are built in place: every Tensor copy is an atomic refcount
// update, and this is the hot path of every Python operator.
Tensor binary(const char* op, const Tensor& a, nb::handle b) {
  std::vector<Tensor> in;
  in.reserve(2);
  in.push_back(a);
  if (nb::isinstance<Tensor>(b)) in.push_back(*nb::inst_ptr<Tensor>(b));
  else in.push_back(as_tensor(b, a));
  auto outs = call(schema_of(bool_form(op, in)), in);
  return std::move(outs[0]);
}
Tensor rbinary(const char* op, const Tensor& a, nb::handle b) {  // b op a
  std::vector<Tensor> in;
  in.reserve(2);
  in.push_back(as_tensor(b, a));
  in.push_back(a);
  auto outs = call(schema_of(bool_form(op, in)), in);
  return std::move(outs[0]);
}

// Complex operands belong to the frontend's complex layer (oar/_complex): an
// oar.ComplexTensor (marked _oar_complex) gets NotImplemented, so Python asks
// its reflected operator; a Python complex number goes to the layer's
// _binary. Checked only after the tensor and real-number fast paths.
bool is_complex_number(nb::handle h) {  // a Python complex, or a NumPy complex scalar or array
  if (PyComplex_Check(h.ptr())) return true;
  if (!nb::hasattr(h, "dtype")) return false;
  nb::object dtype = h.attr("dtype");
  return nb::hasattr(dtype, "kind") && nb::isinstance<nb::str>(dtype.attr("kind")) &&
         nb::cast<std::string>(dtype.attr("kind")) == "c";
}

nb::object complex_or_not_implemented(const char* op, nb::handle lhs, nb::handle rhs, nb::handle other) {
  if (is_complex_number(other))
    return nb::module_::import_("oar._complex._tensor").attr("_binary")(op, lhs, rhs);
  if (nb::hasattr(other, "_oar_complex")) return nb::borrow(Py_NotImplemented);
  return nb::object();
}

template <bool Reflected>
nb::object arithmetic(const char* op, nb::handle self, nb::handle other) {
  const Tensor& a = *nb::inst_ptr<Tensor>(self);
  if (!nb::isinstance<Tensor>(other) && !PyFloat_Check(other.ptr()) && !PyLong_Check(other.ptr())) {
    nb::object r = Reflected ? complex_or_not_implemented(op, other, self, other)
                             : complex_or_not_implemented(op, self, other, other);
    if (r.is_valid()) return r;
  }
  return nb::cast(Reflected ? rbinary(op, a, other) : binary(op, a, other));
}

// In-place update as PyTorch users write it (p -= lr * g, out += shortcut):
// computed out of place, then made this tensor's value (recorded by autograd).
Tensor& assign(Tensor& self, Tensor value) {
  auto category = [](DType d) { return d == DType::boolean ? 0 : is_floating(d) ? 2 : 1; };
  if (category(value.dtype()) > category(self.dtype()))  // PyTorch refuses int_t += 0.5
    throw DTypeError(str("result type ", dtype_name(value.dtype()), " can't be cast to the desired output type ",
                         dtype_name(self.dtype()), " of an in-place operation"));
  self.update_(std::move(value));
  return self;
}

// What an in-place operator computes from (a clone when autograd needs x's
// current values after the write; Tensor::inplace_source).
Tensor source_for(const Tensor& x, nb::handle other) {
  if (nb::isinstance<Tensor>(other)) return x.inplace_source({*nb::inst_ptr<Tensor>(other)});
  return x.inplace_source();
}

nb::tuple shape_tuple(const Shape& s) {
  nb::list l;
  for (int64_t d : s) l.append(d);
  return nb::tuple(l);
}

Shape shape_arg(nb::args args) {
  // reshape(2, 3) or reshape((2, 3)) or reshape([2, 3])
  Shape s;
  if (args.size() == 1 && (nb::isinstance<nb::tuple>(args[0]) || nb::isinstance<nb::list>(args[0]))) {
    for (nb::handle e : args[0]) s.push_back(nb::cast<int64_t>(e));
  } else {
    for (nb::handle e : args) s.push_back(nb::cast<int64_t>(e));
  }
  return s;
}

std::string dtype_repr(DType d) {
  static const char* names[] = {"float32", "float64", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool"};
  return std::string("oar.") + names[int(d)];
}

void capsule_deleter(PyObject* capsule) {
  // Only an unconsumed capsule still owns its tensor (DLPack protocol).
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (m && m->deleter) m->deleter(m);
  }
}

}  // namespace

// torch.matmul's rules for 1-D operands: a vector is a row (left) or a column
// (right) for the product and that dim is dropped from the result.
Tensor matmul_any(const Tensor& a, const Tensor& b) {
  if (a.dim() == 0 || b.dim() == 0)
    throw ShapeError(str("matmul: both operands need at least 1 dimension, got ", shape_str(a.shape()), " and ",
                         shape_str(b.shape())));
  bool row = a.dim() == 1, col = b.dim() == 1;
  Tensor y = call1("matmul", {row ? a.unsqueeze(0) : a, col ? b.unsqueeze(1) : b});
  if (col) y = y.squeeze(-1);
  if (row) y = y.squeeze(row && col ? 0 : -2);
  return y;
}

void bind_tensor(nb::module_& m) {
  nb::enum_<DType>(m, "dtype")
      .value("float32", DType::f32)
      .value("float64", DType::f64)
      .value("float16", DType::f16)
      .value("bfloat16", DType::bf16)
      .value("int8", DType::i8)
      .value("uint8", DType::u8)
      .value("int32", DType::i32)
      .value("int64", DType::i64)
      .value("bool", DType::boolean)
      .def_prop_ro("is_floating_point", [](DType d) { return is_floating(d); })
      .def_prop_ro("itemsize", [](DType d) { return dtype_size(d); })
      .def("__repr__", [](DType d) { return dtype_repr(d); })
      .def("__str__", [](DType d) { return dtype_repr(d); });

  nb::class_<Device>(m, "device")
      .def("__init__", [](Device* self, const std::string& s) { new (self) Device(Device::parse(s)); })
      .def("__init__", [](Device* self, const std::string& type, int index) {
        new (self) Device(Device::parse(type + ":" + std::to_string(index)));
      })
      .def_prop_ro("type", [](const Device& d) { return d.type_name(); })
      .def_prop_ro("index", [](const Device& d) { return d.index; })
      // The host has one device, which PyTorch prints without an index ('cpu'); others keep theirs.
      .def("__str__", [](const Device& d) { return d.type_name() == "cpu" ? d.type_name() : d.str(); })
      .def("__repr__", [](const Device& d) {
        if (d.type_name() == "cpu") return std::string("device(type='cpu')");
        return "device(type='" + d.type_name() + "', index=" + std::to_string(d.index) + ")";
      })
      .def("__eq__", [](const Device& a, nb::handle b) {
        try {
          return a == to_device(b);
        } catch (const Error&) {
          return false;
        }
      })
      .def("__hash__", [](const Device& d) { return std::hash<Device>()(d); });

  nb::class_<Tensor> t(m, "Tensor");
  t.def_prop_ro("shape", [](const Tensor& x) { return shape_tuple(x.shape()); })
      .def("size", [](const Tensor& x, std::optional<int64_t> d) -> nb::object {
        if (d) return nb::int_(x.size(*d));
        return shape_tuple(x.shape());
      }, nb::arg("dim") = nb::none())
      .def("stride", [](const Tensor& x) { return shape_tuple(x.strides()); })
      .def_prop_ro("dtype", &Tensor::dtype)
      .def_prop_ro("device", &Tensor::device)
      .def_prop_ro("ndim", &Tensor::dim)
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("element_size", &Tensor::itemsize)
      .def("is_contiguous", &Tensor::is_contiguous)
      .def("is_floating_point", [](const Tensor& x) { return is_floating(x.dtype()); })
      .def("data_ptr", [](const Tensor& x) { return reinterpret_cast<uintptr_t>(x.data_ptr()); })
      .def("storage_offset", &Tensor::offset)
      .def("_storage_nbytes", [](const Tensor& x) { return x.storage()->nbytes(); })
      // views
      .def("view", [](const Tensor& x, nb::args a) { return x.view(shape_arg(a)); })
      .def("reshape", [](const Tensor& x, nb::args a) { return x.reshape(shape_arg(a)); })
      .def("expand", [](const Tensor& x, nb::args a) { return x.expand(shape_arg(a)); })
      .def("permute", [](const Tensor& x, nb::args a) { return x.permute(shape_arg(a)); })
      .def("flatten", &Tensor::flatten, nb::arg("start_dim") = 0, nb::arg("end_dim") = -1)
      .def("transpose", &Tensor::transpose)
      .def("t", &Tensor::t)
      .def_prop_ro("T", [](const Tensor& x) {
        std::vector<int64_t> p(size_t(x.dim()));
        for (size_t i = 0; i < p.size(); ++i) p[i] = int64_t(p.size() - 1 - i);
        return x.permute(p);
      })
      .def("squeeze", [](const Tensor& x, std::optional<int64_t> d) { return d ? x.squeeze(*d) : x.squeeze(); },
           nb::arg("dim") = nb::none())
      .def("unsqueeze", &Tensor::unsqueeze)
      .def("narrow", &Tensor::narrow)
      .def("select", &Tensor::select)
      .def("contiguous", &Tensor::contiguous)
      .def("clone", &Tensor::clone)
      .def("detach", &Tensor::detach)
      .def("detach_", [](nb::handle self) {
        nb::inst_ptr<Tensor>(self)->detach_();
        return nb::borrow(self);
      })
      .def("as_strided", [](const Tensor& x, const Shape& size, const Shape& stride, std::optional<int64_t> offset) {
        return x.as_strided(size, stride, offset ? *offset : x.offset());
      }, nb::arg("size"), nb::arg("stride"), nb::arg("storage_offset") = nb::none())
      // t._set_view_(v): t now shows v, a view of its memory (the in-place view ops: unsqueeze_, t_, ...).
      .def("_set_view_", [](nb::handle self, const Tensor& view) {
        nb::inst_ptr<Tensor>(self)->set_view_(view);
        return nb::borrow(self);
      })
      // t.data = other replaces what t shows (PyTorch's set_data); no copy.
      .def_prop_rw("data", &Tensor::detach, [](Tensor& x, const Tensor& v) { x.set_data(v); })
      .def("to", [](const Tensor& x, nb::handle target, nb::handle dtype) {
        Tensor r = x;
        if (!target.is_none()) {
          bool is_dtype = nb::isinstance<DType>(target);
          if (is_dtype) r = r.to(nb::cast<DType>(target));
          else if (nb::isinstance<Tensor>(target)) r = r.to(nb::cast<Tensor>(target).device()).to(nb::cast<Tensor>(target).dtype());
          else r = r.to(to_device(target));
        }
        if (!dtype.is_none()) r = r.to(to_dtype(dtype));
        return r;
      }, nb::arg("device") = nb::none(), nb::arg("dtype") = nb::none())
      .def("cpu", [](const Tensor& x) { return x.to(Device::cpu()); })
      .def("float", [](const Tensor& x) { return x.to(DType::f32); })
      .def("double", [](const Tensor& x) { return x.to(DType::f64); })
      .def("half", [](const Tensor& x) { return x.to(DType::f16); })
      .def("bfloat16", [](const Tensor& x) { return x.to(DType::bf16); })
      .def("long", [](const Tensor& x) { return x.to(DType::i64); })
      .def("int", [](const Tensor& x) { return x.to(DType::i32); })
      .def("bool", [](const Tensor& x) { return x.to(DType::boolean); })
      .def("type", [](const Tensor& x, nb::handle d) { return x.to(to_dtype(d)); })
      // values
      .def("item", [](const Tensor& x) {
        if (x.numel() != 1) throw ValueError(str("item(): the tensor has ", x.numel(), " elements, not 1"));
        return to_python_value(x.reshape({}));
      })
      .def("tolist", &to_python_value)
      .def("__dlpack__", [](const Tensor& x, nb::handle, nb::handle, nb::handle, nb::handle) {
        DLManagedTensor* mt = to_dlpack(x.detach());
        return nb::steal(PyCapsule_New(mt, "dltensor", capsule_deleter));
      }, nb::arg("stream") = nb::none(), nb::arg("max_version") = nb::none(), nb::arg("dl_device") = nb::none(),
         nb::arg("copy") = nb::none())
      .def("__dlpack_device__", [](const Tensor& x) {
        // The plugin's declared code, from the core: no device table here.
        return std::make_pair(int(dlpack_device_type(x.device())), x.device().index);
      })
      // autograd
      .def_prop_rw("requires_grad", &Tensor::requires_grad, [](Tensor& x, bool r) { x.set_requires_grad(r); })
      .def_prop_ro("is_leaf", &Tensor::is_leaf)
      .def("backward", [](const Tensor& x, std::optional<Tensor> g, bool retain_graph, bool create_graph) {
        x.backward(g ? *g : Tensor(), retain_graph, create_graph);
      }, nb::arg("gradient") = nb::none(), nb::arg("retain_graph") = false, nb::arg("create_graph") = false)
      .def("retain_grad", &Tensor::retain_grad)
      // in-place updates (copy into this tensor's memory)
      .def("copy_", [](Tensor& x, const Tensor& s) -> Tensor& { return x.copy_(s); }, nb::rv_policy::reference)
      .def("zero_", [](Tensor& x) -> Tensor& { return assign(x, Tensor::zeros({}, x.dtype(), x.device())); }, nb::rv_policy::reference)
      .def("fill_", [](Tensor& x, double v) -> Tensor& { return assign(x, Tensor::full({}, v, x.dtype(), x.device())); }, nb::rv_policy::reference)
      .def("add_", [](Tensor& x, nb::handle o, double alpha) -> Tensor& {
        Tensor b = as_tensor(o, x);
        if (alpha != 1.0) b = call1("mul", {b, Tensor::full({}, alpha, is_floating(b.dtype()) ? b.dtype() : DType::f64, x.device())});
        return assign(x, call1("add", {x.inplace_source({b}), b}));
      }, nb::arg("other"), nb::arg("alpha") = 1.0, nb::rv_policy::reference)
      .def("sub_", [](Tensor& x, nb::handle o) -> Tensor& { return assign(x, binary("sub", source_for(x, o), o)); }, nb::rv_policy::reference)
      .def("mul_", [](Tensor& x, nb::handle o) -> Tensor& { return assign(x, binary("mul", source_for(x, o), o)); }, nb::rv_policy::reference)
      .def("div_", [](Tensor& x, nb::handle o) -> Tensor& { return assign(x, binary("div", source_for(x, o), o)); }, nb::rv_policy::reference)
      .def("__iadd__", [](Tensor& x, nb::handle o) -> Tensor& { return assign(x, binary("add", source_for(x, o), o)); }, nb::rv_policy::reference)
      .def("__isub__", [](Tensor& x, nb::handle o) -> Tensor& { return assign(x, binary("sub", source_for(x, o), o)); }, nb::rv_policy::reference)
      .def("__imul__", [](Tensor& x, nb::handle o) -> Tensor& { return assign(x, binary("mul", source_for(x, o), o)); }, nb::rv_policy::reference)
      .def("__itruediv__", [](Tensor& x, nb::handle o) -> Tensor& { return assign(x, binary("div", source_for(x, o), o)); }, nb::rv_policy::reference)
      // arithmetic
      .def("__add__", [](nb::handle a, nb::handle b) { return arithmetic<false>("add", a, b); })
      .def("__radd__", [](nb::handle a, nb::handle b) { return arithmetic<true>("add", a, b); })
      .def("__sub__", [](nb::handle a, nb::handle b) { return arithmetic<false>("sub", a, b); })
      .def("__rsub__", [](nb::handle a, nb::handle b) { return arithmetic<true>("sub", a, b); })
      .def("__mul__", [](nb::handle a, nb::handle b) { return arithmetic<false>("mul", a, b); })
      .def("__rmul__", [](nb::handle a, nb::handle b) { return arithmetic<true>("mul", a, b); })
      .def("__truediv__", [](nb::handle a, nb::handle b) { return arithmetic<false>("div", a, b); })
      .def("__rtruediv__", [](nb::handle a, nb::handle b) { return arithmetic<true>("div", a, b); })
      .def("__pow__", [](const Tensor& a, nb::handle b) { return binary("pow", a, b); })
      .def("__rpow__", [](const Tensor& a, nb::handle b) { return rbinary("pow", a, b); })
      .def("__matmul__", [](const Tensor& a, nb::handle b) -> nb::object {
        if (!nb::isinstance<Tensor>(b) && nb::hasattr(b, "_oar_complex")) return nb::borrow(Py_NotImplemented);
        return nb::cast(matmul_any(a, nb::cast<Tensor>(b)));
      })
      .def("__rmatmul__", [](const Tensor& b, const Tensor& a) { return matmul_any(a, b); })
      .def("__neg__", [](const Tensor& a) { return call1("neg", {a}); })
      .def("__abs__", [](const Tensor& a) { return call1("abs", {a}); })
      // t == None is False and t != None True, as in PyTorch (code writes `if mask == None`).
      .def("__eq__", [](const Tensor& a, nb::handle b) -> nb::object {
        if (b.is_none()) return nb::bool_(false);
        return nb::cast(binary("eq", a, b));
      }, nb::arg().none())
      .def("__ne__", [](const Tensor& a, nb::handle b) -> nb::object {
        if (b.is_none()) return nb::bool_(true);
        return nb::cast(binary("ne", a, b));
      }, nb::arg().none())
      .def("__lt__", [](const Tensor& a, nb::handle b) { return binary("lt", a, b); })
      .def("__le__", [](const Tensor& a, nb::handle b) { return binary("le", a, b); })
      .def("__gt__", [](const Tensor& a, nb::handle b) { return binary("gt", a, b); })
      .def("__ge__", [](const Tensor& a, nb::handle b) { return binary("ge", a, b); })
      .def("__and__", [](const Tensor& a, nb::handle b) { return binary("logical_and", a, b); })
      .def("__or__", [](const Tensor& a, nb::handle b) { return binary("logical_or", a, b); })
      .def("__xor__", [](const Tensor& a, nb::handle b) { return binary("logical_xor", a, b); })
      .def("__invert__", [](const Tensor& a) { return call1("logical_not", {a}); })
      .def("__hash__", [](const Tensor& a) { return reinterpret_cast<uintptr_t>(a.impl_ptr().get()); })
      .def("__len__", [](const Tensor& a) {
        if (a.dim() == 0) throw DTypeError("len() of a 0-d tensor");
        return a.shape()[0];
      })
      .def("__bool__", [](const Tensor& a) {
        if (a.numel() != 1)
          throw ValueError(str("the truth value of a tensor with ", a.numel(), " elements is ambiguous"));
        return a.item() != 0;
      })
      .def("__float__", [](const Tensor& a) {
        if (a.numel() != 1) throw ValueError("only one-element tensors can be converted to Python scalars");
        return a.item();
      })
      .def("__int__", [](const Tensor& a) {
        if (a.numel() != 1) throw ValueError("only one-element tensors can be converted to Python scalars");
        return is_floating(a.dtype()) ? int64_t(a.item()) : a.to_vector<int64_t>()[0];  // exact beyond 2**53
      })
      .def("__index__", [](const Tensor& a) {
        if (a.numel() != 1 || is_floating(a.dtype()) || a.dtype() == DType::boolean)
          throw DTypeError("only one-element integer tensors can be used as an index");
        return a.to_vector<int64_t>()[0];
      })
      .def("__getitem__", [](const Tensor& x, nb::handle key) { return index_get(x, key); }, nb::arg("key").none())
      .def("__setitem__", [](Tensor& x, nb::handle key, nb::handle value) { index_set(x, key, value, false); },
           nb::arg("key").none(), nb::arg("value"))
      .def("index_put_", [](nb::handle self, nb::tuple indices, nb::handle values, bool accumulate) {
        index_set(*nb::inst_ptr<Tensor>(self), indices, values, accumulate);
        return nb::borrow(self);
      }, nb::arg("indices"), nb::arg("values"), nb::arg("accumulate") = false)
      .def("__repr__", [](const Tensor& x) {
        std::ostringstream os;
        nb::object np = nb::module_::import_("numpy");
        // Through NumPy (zero-copy) so large tensors print summarised; NumPy has no bfloat16.
        Tensor host = x.detach().to(Device::cpu());
        if (host.dtype() == DType::bf16) host = host.to(DType::f32);
        nb::object arr = np.attr("from_dlpack")(nb::cast(host.contiguous()));
        std::string body = nb::cast<std::string>(nb::str(arr));
        os << "tensor(" << body;
        if (x.dtype() != DType::f32 && x.dtype() != DType::i64 && x.dtype() != DType::boolean)
          os << ", dtype=" << dtype_repr(x.dtype());
        if (x.device() != Device::cpu()) os << ", device='" << x.device().str() << "'";
        if (!x.grad_fn_name().empty()) os << ", grad_fn=<" << x.grad_fn_name() << ">";
        else if (x.requires_grad()) os << ", requires_grad=True";
        os << ")";
        return os.str();
      });
  bind_tensor_numpy(t);
  bind_tensor_autograd(t);
  bind_grad_fn(m, t);
}

}  // namespace oar::py
