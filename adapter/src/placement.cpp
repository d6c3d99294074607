// Placement summaries (see offload.h): counts and the text `oar-predict --explain` prints.
#include <sstream>

#include "oar/adapter/offload.h"
#include "oar/error.h"

namespace oar::adapter {

size_t Placement::offloaded_nodes() const {
  size_t k = 0;
  for (const auto& n : nodes) k += n.target == PlacementTarget::kDriver;
  return k;
}

double Placement::offloaded_fraction() const { return nodes.empty() ? 0.0 : double(offloaded_nodes()) / double(nodes.size()); }

std::string Placement::explain() const {
  std::ostringstream os;
  os << "adapter " << driver << " on " << device << ": " << offloaded_nodes() << " of " << nodes.size()
     << " nodes offloaded in " << subgraphs.size() << " subgraph" << (subgraphs.size() == 1 ? "" : "s") << "\n";
  for (size_t s = 0; s < subgraphs.size(); ++s) {
    const SubgraphPlacement& sg = subgraphs[s];
    os << "  subgraph " << s << ": " << sg.nodes.size() << " nodes, " << sg.macs / 1e6 << " MMAC, " << sg.inputs
       << " tensor" << (sg.inputs == 1 ? "" : "s") << " in, " << sg.outputs << " out"
       << (sg.from_cache ? ", loaded from the cache" : ", compiled") << "\n";
  }
  for (const NodePlacement& n : nodes) {
    os << "  " << n.name << " -> ";
    if (n.target == PlacementTarget::kDriver) os << "driver (subgraph " << n.subgraph << ")";
    else os << "plugin " << device;
    os << ": " << n.reason << "\n";
  }
  return os.str();
}

}  // namespace oar::adapter
