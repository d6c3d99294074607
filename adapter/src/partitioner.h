// Cutting a graph into subgraphs a driver runs (partition_subgraphs): ask the
// driver about every node, apply the user's pins, grow maximal subgraphs of
// supported nodes that create no cycle when each is contracted to one node,
// and drop those under the size/compute threshold. The result is a Placement
// (every node with its target and reason); compiling is the caller's.
#pragma once

#include <string>
#include <vector>

#include "driver_registry.h"
#include "oar/adapter/offload.h"

namespace oar::adapter {

struct PartitionRules {
  std::vector<std::string> deny;  // "softmax", "op:softmax", "node:conv2d_3"
  int64_t min_nodes = 2;
  double min_macs = 1e6;
};

// The pins of OAR_ADAPTER_DENY, the file OAR_ADAPTER_DENY_FILE (IOError naming
// it when unreadable) and `extra`.
std::vector<std::string> collect_pins(const std::vector<std::string>& extra);

Placement partition_subgraphs(const graph::Graph& graph, const DriverContext& context, const PartitionRules& rules);

}  // namespace oar::adapter
