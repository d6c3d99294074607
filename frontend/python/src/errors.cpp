// oar errors as Python exceptions. Each oar error kind is a Python class that
// also derives from the builtin a Python user expects (ValueError, TypeError,
// IndexError, ...) and from RuntimeError, as PyTorch raises RuntimeError for
// most of these: `except ValueError` and `except RuntimeError` both work.
#include "bindings.h"

namespace oar::py {

namespace {
PyObject* g_types[10] = {nullptr};

PyObject* make_type(nb::module_& m, const char* name, std::initializer_list<PyObject*> bases) {
  nb::tuple b = nb::steal<nb::tuple>(PyTuple_New(Py_ssize_t(bases.size())));
  Py_ssize_t i = 0;
  for (PyObject* base : bases) {
    Py_INCREF(base);
    PyTuple_SET_ITEM(b.ptr(), i++, base);
  }
  std::string full = std::string("oar.") + name;
  PyObject* type = PyErr_NewException(full.c_str(), b.ptr(), nullptr);
  m.attr(name) = nb::handle(type);
  return type;
}
}  // namespace

void bind_errors(nb::module_& m) {
  PyObject* base = make_type(m, "OarError", {PyExc_RuntimeError});
  g_types[int(ErrorKind::kShape)] = make_type(m, "ShapeError", {base, PyExc_ValueError});
  g_types[int(ErrorKind::kDType)] = make_type(m, "DTypeError", {base, PyExc_TypeError});
  g_types[int(ErrorKind::kDevice)] = make_type(m, "DeviceError", {base});
  g_types[int(ErrorKind::kIndex)] = make_type(m, "IndexError", {base, PyExc_IndexError});
  g_types[int(ErrorKind::kValue)] = make_type(m, "ValueError", {base, PyExc_ValueError});
  g_types[int(ErrorKind::kNotImplemented)] = make_type(m, "NotImplementedError", {base, PyExc_NotImplementedError});
  g_types[int(ErrorKind::kPlugin)] = make_type(m, "PluginError", {base});
  g_types[int(ErrorKind::kIO)] = make_type(m, "IOError", {base});
  g_types[int(ErrorKind::kInternal)] = make_type(m, "InternalError", {base});
  g_types[int(ErrorKind::kGraph)] = make_type(m, "GraphError", {base});
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(g_types[int(e.kind())], e.what());
    }
  });
}

}  // namespace oar::py
