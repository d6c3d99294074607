// oar._C's subgraph offload (liboar_adapter, docs/adapter.md) for
// oar.inference and oar.adapter: a Predictor over a graph with adapter
// options, its placement as plain Python data, the drivers found and the
// process-wide compile/cache counters.
#include <nanobind/stl/map.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "oar/adapter/offload.h"
#include "oar/inference.h"

namespace oar::py {

namespace {

nb::dict placement_dict(const adapter::Placement& p) {
  nb::dict d;
  d["driver"] = p.driver;
  d["device"] = p.device;
  nb::list nodes;
  for (const auto& n : p.nodes) {
    nb::dict e;
    e["node"] = n.node;
    e["name"] = n.name;
    e["op"] = n.op;
    e["target"] = n.target == adapter::PlacementTarget::kDriver ? "driver" : "plugin";
    e["subgraph"] = n.subgraph;
    e["reason"] = n.reason;
    nodes.append(e);
  }
  d["nodes"] = nodes;
  nb::list subgraphs;
  for (const auto& s : p.subgraphs) {
    nb::dict e;
    e["nodes"] = s.nodes;
    e["macs"] = s.macs;
    e["inputs"] = s.inputs;
    e["outputs"] = s.outputs;
    e["from_cache"] = s.from_cache;
    subgraphs.append(e);
  }
  d["subgraphs"] = subgraphs;
  d["offloaded_fraction"] = p.offloaded_fraction();
  d["explain"] = p.explain();
  return d;
}

}  // namespace

void bind_adapter(nb::module_& m) {
  nb::class_<inference::Predictor>(m, "Predictor")
      .def("__init__",
           [](inference::Predictor* self, std::shared_ptr<graph::Graph> g, nb::handle device, const std::string& driver,
              const std::map<std::string, std::string>& options, const std::vector<std::string>& deny,
              int64_t min_nodes, double min_macs, const std::string& cache_dir) {
             adapter::OffloadOptions o;
             o.driver = driver;
             o.options = options;
             o.deny = deny;
             o.min_nodes = min_nodes;
             o.min_macs = min_macs;
             o.cache_dir = cache_dir;
             new (self) inference::Predictor(std::move(g), to_device(device), o);
           },
           nb::arg("graph"), nb::arg("device"), nb::arg("driver") = "",
           nb::arg("options") = std::map<std::string, std::string>{}, nb::arg("deny") = std::vector<std::string>{},
           nb::arg("min_nodes") = -1, nb::arg("min_macs") = -1.0, nb::arg("cache_dir") = "")
      .def("run", &inference::Predictor::run)
      .def_prop_ro("device", &inference::Predictor::device)
      .def_prop_ro("placement", [](const inference::Predictor& p) -> nb::object {
        const adapter::Placement* pl = p.placement();
        return pl ? nb::object(placement_dict(*pl)) : nb::none();
      });
  m.def("adapter_drivers", [] {
    nb::list out;
    for (const auto& d : adapter::drivers()) {
      nb::dict e;
      e["name"] = d.name;
      e["path"] = d.path;
      e["loaded"] = d.loaded;
      e["vendor"] = d.vendor;
      e["version"] = d.version;
      e["options"] = d.options;
      e["reason"] = d.reason;
      out.append(e);
    }
    return out;
  });
  m.def("adapter_stats", [] {
    adapter::AdapterStats s = adapter::stats();
    nb::dict d;
    d["compiles"] = s.compiles;
    d["cache_hits"] = s.cache_hits;
    d["cache_rebuilds"] = s.cache_rebuilds;
    d["compile_failures"] = s.compile_failures;
    return d;
  });
  m.def("adapter_selected", [](const std::string& driver) {
    adapter::OffloadOptions o;
    o.driver = driver;
    return adapter::selected_driver(o);
  });
}

}  // namespace oar::py
