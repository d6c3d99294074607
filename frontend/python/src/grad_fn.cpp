// tensor.grad_fn as PyTorch code uses it: an object with name(),
// next_functions (walked by tutorials and graph printers) and, on the
// AccumulateGrad nodes of leaves, .variable. Names follow PyTorch's pattern:
// an op's node is CamelCase with a 0 suffix (mulBackward -> MulBackward0), a
// custom Function's keeps its class name (MyFnBackward), as PyTorch's do.
#include <cctype>
#include <cstdio>

#include <nanobind/stl/pair.h>

#include "bindings.h"
#include "oar/grad_fn.h"

namespace oar::py {

namespace {

// name(): PyTorch 1.13 qualifies the leaves' node ("torch::autograd::AccumulateGrad"); the repr does not.
std::string torch_style_name(const std::string& n) {
  if (n == "CopySlicesBackward") return "CopySlices";
  if (n == "AccumulateGrad") return "torch::autograd::AccumulateGrad";
  if (n.empty() || !std::islower(static_cast<unsigned char>(n[0]))) return n;  // AccumulateGrad, custom Functions
  std::string out;
  bool upper = true;
  for (char c : n) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? char(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out + "0";
}

nb::object grad_fn_object(GradFn f) {
  if (!f.defined()) return nb::none();
  return nb::cast(std::move(f));
}

}  // namespace

void bind_grad_fn(nb::module_& m, nb::class_<Tensor>& t) {
  nb::class_<GradFn>(m, "GradFn")
      .def("name", [](const GradFn& f) { return torch_style_name(f.name()); })
      .def_prop_ro("next_functions", [](const GradFn& f) {
        nb::list out;
        for (auto& [node, nr] : f.next_functions()) out.append(nb::make_tuple(grad_fn_object(node), nr));
        return nb::tuple(out);
      })
      .def_prop_ro("variable", [](const GradFn& f) -> nb::object {
        Tensor v = f.variable();
        if (!v.defined()) throw nb::attribute_error(("'" + torch_style_name(f.name()) + "' object has no attribute 'variable'").c_str());
        return nb::cast(v);
      })
      .def("__eq__", [](const GradFn& a, nb::handle b) {
        return nb::isinstance<GradFn>(b) && nb::inst_ptr<GradFn>(b)->id() == a.id();
      }, nb::arg().none())
      .def("__hash__", [](const GradFn& f) { return std::hash<const void*>()(f.id()); })
      .def("__repr__", [](const GradFn& f) {
        char address[32];
        std::snprintf(address, sizeof(address), "%p", f.id());
        std::string name = f.name() == "AccumulateGrad" ? f.name() : torch_style_name(f.name());
        return "<" + name + " object at " + address + ">";
      });
  t.def_prop_ro("grad_fn", [](const Tensor& x) { return grad_fn_object(GradFn::of(x)); });
}

}  // namespace oar::py
