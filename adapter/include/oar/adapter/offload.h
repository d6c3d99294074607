// oar::adapter: subgraph offload of a graph to a vendor driver (the C++ side
// of adapter/; docs/adapter.md).
//
// offload() asks the driver, node by node, whether it can run each node (and
// why not), cuts maximal acyclic subgraphs of supported nodes, drops those
// under the size/compute threshold and the nodes the user pinned to the plugin
// device, compiles each remaining subgraph through the driver (or loads it
// from the compiled-subgraph cache) and returns an OffloadedGraph: it runs the
// subgraphs on the driver and everything else on the plugin device, copying
// tensors between the two. Its Placement says which node went where and why.
//
//   oar::adapter::OffloadOptions opt;
//   opt.driver = "openvino";
//   auto run = oar::adapter::offload(graph, oar::Device::parse("cpu"), opt);
//   std::cout << run->placement().explain();
//   std::vector<oar::Tensor> y = run->run({x});
//
// Nodes reach the driver as they are in the graph: graph::unfuse first (the
// Predictor does) so that a driver sees conv2d + relu rather than the
// device-specific conv2d_act or fused_elementwise; what stays on the plugin
// device is fused again for it.
//
// A subgraph whose compile fails runs on the plugin device with a warning, or
// raises under OAR_FALLBACK=error. With no driver named (OffloadOptions::driver
// empty and OAR_ADAPTER unset) nothing is offloaded.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "oar/graph/graph.h"

namespace oar::adapter {

struct OffloadOptions {
  std::string driver;                         // "" : OAR_ADAPTER; "none": no offload whatever OAR_ADAPTER says
  std::map<std::string, std::string> options; // driver options by flag name (OAR_<DRIVER>_*); others from the flags
  // Pins: op types or node names kept on the plugin device ("softmax",
  // "node:conv2d_3", "op:reshape"); added to OAR_ADAPTER_DENY and the file OAR_ADAPTER_DENY_FILE.
  std::vector<std::string> deny;
  int64_t min_nodes = -1;  // -1: OAR_ADAPTER_MIN_NODES
  double min_macs = -1;    // -1: OAR_ADAPTER_MIN_MACS
  std::string cache_dir;   // "" : OAR_ADAPTER_CACHE_DIR ("" there too: no cache)
};

enum class PlacementTarget { kDriver, kPlugin };

struct NodePlacement {
  int32_t node = -1;          // index in graph.nodes()
  std::string name;           // the node's name (its op and index: "conv2d_3"), as pins name it
  std::string op;
  PlacementTarget target = PlacementTarget::kPlugin;
  int32_t subgraph = -1;      // index into Placement::subgraphs when on the driver
  std::string reason;         // why it is where it is
};

struct SubgraphPlacement {
  std::vector<int32_t> nodes;  // node indices
  double macs = 0;             // estimated multiply-accumulates
  int32_t inputs = 0;          // tensors copied to the driver per run
  int32_t outputs = 0;         // tensors copied back per run
  bool from_cache = false;     // the program was loaded, not compiled
};

struct Placement {
  std::string driver;         // the driver's name, version and options as text
  std::string device;         // the plugin device
  std::vector<NodePlacement> nodes;
  std::vector<SubgraphPlacement> subgraphs;
  size_t offloaded_nodes() const;
  double offloaded_fraction() const;  // of all nodes
  // One line per node and a summary: what `oar-predict --explain` prints.
  std::string explain() const;
};

struct AdapterStats {
  int64_t compiles = 0;       // programs compiled by a driver
  int64_t cache_hits = 0;     // programs loaded from the cache
  int64_t cache_rebuilds = 0; // cache entries found stale or corrupt, then rebuilt
  int64_t compile_failures = 0;
};
// Process-wide counters (tests and oar-info read them).
AdapterStats stats();

class OffloadedGraph {
 public:
  virtual ~OffloadedGraph() = default;
  // Inputs as Executor::run takes them (count, shapes and dtypes checked).
  virtual std::vector<Tensor> run(const std::vector<Tensor>& inputs) = 0;
  virtual const Placement& placement() const = 0;
  virtual const graph::Graph& graph() const = 0;
};

// The graph must verify and have no updates (an inference graph). Its
// captured tensors are read once, now (their values are frozen into the
// offloaded programs).
std::unique_ptr<OffloadedGraph> offload(std::shared_ptr<const graph::Graph> graph, Device device,
                                        const OffloadOptions& options = {});

// The driver OffloadOptions/OAR_ADAPTER selects, "" for none (also for "none").
std::string selected_driver(const OffloadOptions& options = {});

// Drivers found on disk (OAR_ADAPTER_PATH, then lib/oar/adapters beside
// liboar_core.so): loaded ones with name, vendor, version and options, and
// skipped ones with the reason. Loads them on first call.
struct DriverInfo {
  std::string path;
  std::string name, vendor, version;
  std::vector<std::string> options;  // flag names
  bool loaded = false;
  std::string reason;  // why it was skipped
};
std::vector<DriverInfo> drivers();

}  // namespace oar::adapter
