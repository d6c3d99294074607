// oar._C's graph API for oar.jit: a tracer Python code runs under, the graph
// it yields (dump, verify, node list) and the executor that runs a graph.
// The Python side (oar/jit.py) adds guards, caching and module handling.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/unique_ptr.h>

#include <memory>
#include <unordered_set>

#include "bindings.h"
#include "oar/graph/executor.h"
#include "oar/graph/graph.h"
#include "oar/graph/passes.h"
#include "oar/graph/text_format.h"
#include "oar/graph/trace.h"
#ifdef OAR_HAVE_CPP_FRONTEND
#include "oar/jit.h"
#endif

namespace oar::py {

namespace {

using graph::Executor;
using graph::Graph;
using graph::Tracer;

// A tracer owned by Python: closed explicitly (finish or close) rather than
// by garbage collection, so an exception in traced code cannot leave it active.
struct PyTracer {
  std::unique_ptr<Tracer> tracer;
  Tracer& get() {
    if (!tracer) throw ValueError("this tracer is closed");
    return *tracer;
  }
};

nb::list node_ops(const Graph& g) {
  nb::list ops;
  for (const auto& n : g.nodes()) ops.append(n->op->name);
  return ops;
}

std::string fingerprint(const Graph& g) {
  std::string text = graph::to_text(g);
  std::unordered_set<const graph::Value*> written;
  for (const auto& u : g.updates()) written.insert(u.target);
  for (const graph::Value* v : g.tensors()) {
    // Unnamed, unwritten and small: a Python number the traced code turned into a tensor.
    if (written.count(v) || v->name.rfind("captured", 0) != 0 || v->tensor.numel() > 64) continue;
    text += v->name;
    text += '=';
    for (double x : v->tensor.to_vector<double>()) text += std::to_string(x) + ",";
    text += "\n";
  }
  return text;
}

}  // namespace

void bind_jit(nb::module_& m) {
  nb::class_<Graph>(m, "Graph")
      .def("dump", &Graph::dump)
      .def("__str__", &Graph::dump)
      .def("verify", &Graph::verify)
      .def("optimize", [](Graph& g, nb::handle device, bool fuse) { graph::optimize(g, to_device(device), fuse); },
           nb::arg("device"), nb::arg("fuse") = true,
           "constant folding, identity views, bias fusion, common subexpressions, dead code, and (fuse=True) "
           "activation and elementwise fusion where `device` has those kernels (graph/passes.h)")
      .def_prop_ro("node_count", &Graph::node_count)
      .def_prop_ro("input_count", [](const Graph& g) { return g.inputs().size(); })
      .def_prop_ro("output_count", [](const Graph& g) { return g.outputs().size(); })
      .def_prop_ro("update_count", [](const Graph& g) { return g.updates().size(); })
      .def("ops", &node_ops, "op names of the nodes in execution order")
      .def("fingerprint", &fingerprint,
           "the graph text plus the values of the small tensors the traced code created (scalars): "
           "equal fingerprints mean two traces recorded the same computation")
      .def("input_names", [](const Graph& g) {
        std::vector<std::string> names;
        for (const auto* v : g.inputs()) names.push_back(v->name);
        return names;
      });

  nb::class_<PyTracer>(m, "Tracer")
      .def("__init__",
           [](PyTracer* self, const std::vector<Tensor>& inputs, const std::vector<std::string>& names) {
             new (self) PyTracer{std::make_unique<Tracer>(inputs, names)};
           },
           nb::arg("inputs"), nb::arg("names") = std::vector<std::string>{})
      .def("name_tensor", [](PyTracer& t, const Tensor& x, const std::string& name) { t.get().name_tensor(x, name); })
      .def("finish",
           [](PyTracer& t, const std::vector<Tensor>& outputs) {
             std::shared_ptr<Graph> g(t.get().finish(outputs));
             t.tracer.reset();
             return g;
           })
      .def("close", [](PyTracer& t) { t.tracer.reset(); }, "stops recording without a graph (after an error)");

  nb::class_<Executor>(m, "Executor")
      .def("__init__",
           [](Executor* self, std::shared_ptr<Graph> g, nb::handle device) {
             new (self) Executor(std::move(g), to_device(device));
           })
      .def("run", &Executor::run)
      .def_prop_ro("eager_node_count", &Executor::eager_node_count)
      .def_prop_ro("device", &Executor::device);

  m.def("is_tracing", [] { return Tracer::active() != nullptr; });
#ifdef OAR_HAVE_CPP_FRONTEND
  m.def("save_graph", [](const Graph& g, const std::string& path) { jit::save(g, path); });
  m.def("load_graph", [](const std::string& path, nb::handle device) { return jit::load(path, to_device(device)); });
#endif
}

}  // namespace oar::py
