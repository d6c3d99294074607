// The oar._C extension module: binds the core's tensors, ops and autograd.
#include "bindings.h"

NB_MODULE(_C, m) {
  m.doc() = "oar core bindings (tensors, op dispatch, autograd)";
  oar::py::bind_errors(m);
  oar::py::bind_tensor(m);
  oar::py::bind_functions(m);
  oar::py::bind_data(m);
  oar::py::bind_jit(m);
  oar::py::bind_onnx(m);
}
