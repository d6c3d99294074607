// tensor.grad_fn as PyTorch code uses it: an object with name(),
// next_functions (walked by tutorials and graph printers) and, on the
// AccumulateGrad nodes of leaves, .variable. Names follow PyTorch's pattern:
// an op's node is CamelCase with a 0 suffix (mulBackward -> MulBackward0), a
// custom Function's keeps its class name (MyFnBackward), as PyTorch's do.
// register_hook / register_prehook put Python hooks on the node. Each name is
// its own subclass of GradFn (type(t.grad_fn).__name__ == "MulBackward0").
#include <cctype>
#include <cstdio>

#include <nanobind/stl/pair.h>

#include <memory>

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

// One Python class per node name, subclassing GradFn, so that type(t.grad_fn).__name__ is "MulBackward0" as
// in PyTorch (graph printers label nodes that way). Held by the module (_C._grad_fn_classes).
nb::handle g_node_classes;

std::string class_name(const GradFn& f) {
  std::string n = torch_style_name(f.name());
  size_t colon = n.rfind(':');
  return colon == std::string::npos ? n : n.substr(colon + 1);  // torch::autograd::AccumulateGrad -> AccumulateGrad
}

nb::object grad_fn_object(GradFn f) {
  if (!f.defined()) return nb::none();
  nb::dict classes = nb::borrow<nb::dict>(g_node_classes);
  nb::str name(class_name(f).c_str());
  if (!classes.contains(name)) {
    nb::dict body;
    body["__module__"] = "oar.autograd";
    body["__slots__"] = nb::tuple();
    classes[name] = nb::handle(reinterpret_cast<PyObject*>(&PyType_Type))(name, nb::make_tuple(nb::type<GradFn>()), body);
  }
  return classes[name](std::move(f));
}

// Gradients as a hook sees them: a tuple with None for an absent one.
nb::tuple grad_tuple(const std::vector<Tensor>& grads) {
  nb::list out;
  for (const auto& g : grads) out.append(g.defined() ? nb::cast(g) : nb::none());
  return nb::tuple(out);
}

// A hook's result: None keeps the gradients; a tuple/list (None entries allowed) replaces them.
std::vector<Tensor> replacement_grads(nb::handle r, const char* what) {
  std::vector<Tensor> out;
  if (r.is_none()) return out;
  if (!nb::isinstance<nb::tuple>(r) && !nb::isinstance<nb::list>(r))
    throw nb::type_error((std::string(what) + " must return None or a tuple of gradients").c_str());
  for (nb::handle g : r) out.push_back(g.is_none() ? Tensor() : nb::cast<Tensor>(g));
  return out;
}

// Runs a Python node hook under the GIL; a removed one (see HookHandle) keeps the gradients.
template <class... Grads>
std::vector<Tensor> call_hook(const std::shared_ptr<nb::object>& slot, const char* what, const Grads&... grads) {
  nb::gil_scoped_acquire gil;
  if (!slot->is_valid()) return {};
  return replacement_grads((*slot)(grad_tuple(grads)...), what);
}

}  // namespace

void bind_grad_fn(nb::module_& m, nb::class_<Tensor>& t) {
  nb::dict classes;
  m.attr("_grad_fn_classes") = classes;
  g_node_classes = classes;
  nb::class_<GradFn>(m, "GradFn")
      .def(nb::init<const GradFn&>())
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
      .def("register_hook", [](const GradFn& f, nb::callable fn) {
        auto slot = std::make_shared<nb::object>(fn);
        f.register_hook([slot](const std::vector<Tensor>& grad_inputs, const std::vector<Tensor>& grad_outputs) {
          return call_hook(slot, "a grad_fn hook", grad_inputs, grad_outputs);
        });
        return HookHandle{slot};
      })
      .def("register_prehook", [](const GradFn& f, nb::callable fn) {
        auto slot = std::make_shared<nb::object>(fn);
        f.register_prehook([slot](const std::vector<Tensor>& grad_outputs) {
          return call_hook(slot, "a grad_fn pre-hook", grad_outputs);
        });
        return HookHandle{slot};
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
