// The oar._C extension module: binds the core's tensors, ops and autograd.
#include "bindings.h"

NB_MODULE(_C, m) {
  m.doc() = "oar core bindings (tensors, op dispatch, autograd)";
  // Tensors alive at exit may hold Python callables (tensor hooks inside the
  // autograd graph) that the interpreter never collects; nanobind would report
  // those as leaks on every such script. Real leaks are found with tests.
  nb::set_leak_warnings(false);
  oar::py::bind_errors(m);
  oar::py::bind_tensor(m);
  oar::py::bind_functions(m);
  oar::py::bind_data(m);
  oar::py::bind_jit(m);
  oar::py::bind_onnx(m);
  oar::py::bind_optim(m);
  oar::py::bind_adapter(m);
}
