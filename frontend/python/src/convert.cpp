// Python <-> oar conversions used by every binding file.
#include <cmath>

#include "bindings.h"

namespace oar::py {

DType to_dtype(nb::handle h) {
  if (nb::isinstance<DType>(h)) return nb::cast<DType>(h);
  if (nb::isinstance<nb::str>(h)) return dtype_from_name(nb::cast<std::string>(h));
  if (h.ptr() == (PyObject*)&PyFloat_Type) return DType::f64;
  if (h.ptr() == (PyObject*)&PyLong_Type) return DType::i64;
  if (h.ptr() == (PyObject*)&PyBool_Type) return DType::boolean;
  // numpy dtypes and scalar types (np.float32, np.dtype('int64'))
  if (nb::hasattr(h, "dtype") && nb::hasattr(h.attr("dtype"), "name"))
    return dtype_from_name(nb::cast<std::string>(h.attr("dtype").attr("name")));
  if (nb::hasattr(h, "name") && nb::isinstance<nb::str>(h.attr("name")))
    return dtype_from_name(nb::cast<std::string>(h.attr("name")));
  throw DTypeError(str("cannot interpret ", nb::cast<std::string>(nb::repr(h)), " as a dtype"));
}

Device to_device(nb::handle h) {
  if (nb::isinstance<Device>(h)) return nb::cast<Device>(h);
  if (nb::isinstance<nb::str>(h)) return Device::parse(nb::cast<std::string>(h));
  throw DeviceError(str("cannot interpret ", nb::cast<std::string>(nb::repr(h)), " as a device"));
}

bool is_python_scalar(nb::handle h) {
  return PyBool_Check(h.ptr()) || PyLong_Check(h.ptr()) || PyFloat_Check(h.ptr());
}

AttrValue to_attr(nb::handle h) {
  if (PyBool_Check(h.ptr())) return h.ptr() == Py_True;
  if (PyLong_Check(h.ptr())) return nb::cast<int64_t>(h);
  if (PyFloat_Check(h.ptr())) return nb::cast<double>(h);
  if (nb::isinstance<nb::str>(h)) return nb::cast<std::string>(h);
  if (nb::isinstance<DType>(h)) return nb::cast<DType>(h);
  if (nb::isinstance<nb::list>(h) || nb::isinstance<nb::tuple>(h)) {
    bool all_int = true;
    for (nb::handle e : h) {
      if (PyFloat_Check(e.ptr())) all_int = false;
      else if (!PyLong_Check(e.ptr()))
        throw ValueError(str("attribute lists hold numbers only, got ", nb::cast<std::string>(nb::repr(e))));
    }
    if (all_int) {
      std::vector<int64_t> v;
      for (nb::handle e : h) v.push_back(nb::cast<int64_t>(e));
      return v;
    }
    std::vector<double> v;
    for (nb::handle e : h) v.push_back(nb::cast<double>(e));
    return v;
  }
  if (h.is_none()) throw ValueError("None is not a valid attribute value");
  return to_dtype(h);
}

Attrs to_attrs(const nb::dict& d) {
  Attrs attrs;
  for (auto [k, v] : d) {
    if (!nb::isinstance<nb::str>(k)) throw ValueError("attribute names must be strings");
    attrs.set(nb::cast<std::string>(k), to_attr(v));
  }
  return attrs;
}

Tensor scalar_tensor(nb::handle value, const Tensor& like) {
  ScalarKind kind;
  if (PyBool_Check(value.ptr())) kind = ScalarKind::kBool;
  else if (PyLong_Check(value.ptr())) kind = ScalarKind::kInteger;
  else if (PyFloat_Check(value.ptr())) kind = ScalarKind::kFloat;
  else throw DTypeError(str("unsupported operand ", nb::cast<std::string>(nb::repr(value))));
  DType dt = scalar_operand_dtype(like.dtype(), kind);
  // An integer tensor with a Python float computes in the default dtype (float64 after set_default_dtype).
  if (kind == ScalarKind::kFloat && !is_floating(like.dtype())) dt = default_float_dtype();
  return Tensor::full({}, nb::cast<double>(value), dt, like.device());
}

namespace {
// Elements of nested sequences, kept as doubles and (exactly) as int64s, so
// integers beyond 2**53 survive.
struct FlatValues {
  std::vector<double> reals;
  std::vector<int64_t> ints;
  bool empty() const { return reals.empty(); }
  void push(nb::handle item) {
    if (PyFloat_Check(item.ptr())) {
      double v = nb::cast<double>(item);
      reals.push_back(v);
      ints.push_back(int64_t(v));
      return;
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(item.ptr(), &overflow);
    if (overflow != 0)
      throw ValueError(str("tensor(): the integer ", nb::cast<std::string>(nb::repr(item)),
                           " does not fit in int64"));
    if (v == -1 && PyErr_Occurred()) throw nb::python_error();
    reals.push_back(double(v));
    ints.push_back(int64_t(v));
  }
};

// Walks nested sequences, collecting values and checking a rectangular shape.
void flatten(nb::handle h, size_t depth, Shape& shape, FlatValues& values, bool& any_float, bool& all_bool) {
  if (is_python_scalar(h) || (nb::hasattr(h, "item") && nb::hasattr(h, "dtype") && !nb::hasattr(h, "__len__"))) {
    if (depth != shape.size()) throw ValueError("tensor(): ragged nested sequence");
    nb::object item = nb::hasattr(h, "item") && !is_python_scalar(h) ? h.attr("item")() : nb::borrow(h);
    if (PyFloat_Check(item.ptr())) any_float = true;
    if (!PyBool_Check(item.ptr())) all_bool = false;
    if (!is_python_scalar(item))
      throw DTypeError(str("tensor(): unsupported element ", nb::cast<std::string>(nb::repr(item))));
    values.push(item);
    return;
  }
  if (!nb::isinstance<nb::list>(h) && !nb::isinstance<nb::tuple>(h))
    throw DTypeError(str("tensor(): cannot build a tensor from ", nb::cast<std::string>(nb::repr(h.type()))));
  size_t n = nb::len(h);
  if (depth == shape.size()) {
    if (!values.empty()) throw ValueError("tensor(): ragged nested sequence");
    shape.push_back(int64_t(n));
  } else if (shape[depth] != int64_t(n)) {
    throw ValueError(str("tensor(): ragged nested sequence: expected ", shape[depth], " elements at depth ", depth,
                         ", got ", n));
  }
  for (nb::handle e : h) flatten(e, depth + 1, shape, values, any_float, all_bool);
}
}  // namespace

Tensor tensor_from_data(nb::handle data, std::optional<DType> dtype, Device device) {
  if (nb::isinstance<Tensor>(data)) {
    Tensor t = nb::cast<Tensor>(data).detach();
    if (dtype) t = t.to(*dtype);
    return t.to(device).clone();
  }
  if (nb::hasattr(data, "__dlpack__") && nb::hasattr(data, "shape")) {  // numpy and friends: copy
    nb::object np = nb::module_::import_("numpy");
    // np.array, not ascontiguousarray: the latter turns a 0-d array into shape (1,)
    nb::object arr = np.attr("array")(data, nb::arg("copy") = true, nb::arg("order") = "C");
    nb::object fn = nb::module_::import_("oar._C").attr("from_dlpack");
    Tensor t = nb::cast<Tensor>(fn(arr));
    if (dtype) t = t.to(*dtype);
    return t.to(device);
  }
  Shape shape;
  FlatValues values;
  bool any_float = false, all_bool = true;
  flatten(data, 0, shape, values, any_float, all_bool);
  // As PyTorch: floats (and an empty list) give f32, all-bool gives bool, else i64.
  DType dt = dtype ? *dtype
                   : (any_float || values.empty() ? DType::f32 : (all_bool ? DType::boolean : DType::i64));
  int64_t n = int64_t(values.reals.size());
  if (any_float || is_floating(dt))
    return Tensor::from_host(values.reals.data(), n, shape, DType::f64, device).to(dt);
  return Tensor::from_host(values.ints.data(), n, shape, DType::i64, device).to(dt);
}

nb::object to_python_value(const Tensor& t) {
  // Integers are read as int64 (exact beyond 2**53), floats as doubles.
  bool floating = is_floating(t.dtype());
  std::vector<double> v = floating ? t.to_vector<double>() : std::vector<double>();
  std::vector<int64_t> iv = floating ? std::vector<int64_t>() : t.to_vector<int64_t>();
  auto scalar = [&](size_t i) -> nb::object {
    if (floating) return nb::float_(v[i]);
    if (t.dtype() == DType::boolean) return nb::bool_(iv[i] != 0);
    return nb::int_(iv[i]);
  };
  if (t.dim() == 0) return scalar(0);
  // Nested lists, built from the innermost dimension outwards.
  std::function<nb::object(size_t, size_t&)> build = [&](size_t d, size_t& pos) -> nb::object {
    nb::list l;
    for (int64_t i = 0; i < t.shape()[d]; ++i)
      l.append(d + 1 == size_t(t.dim()) ? scalar(pos++) : build(d + 1, pos));
    return l;
  };
  size_t pos = 0;
  return build(0, pos);
}

nb::object wrap_outputs(std::vector<Tensor> outs) {
  if (outs.size() == 1) return nb::cast(std::move(outs[0]));
  nb::list l;
  for (auto& t : outs) l.append(nb::cast(std::move(t)));
  return nb::tuple(l);
}

}  // namespace oar::py
