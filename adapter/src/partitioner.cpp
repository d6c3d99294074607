// Subgraph partitioning (see partitioner.h).
#include "partitioner.h"

#include <algorithm>
#include <set>

#include "oar/error.h"
#include "oar/file_io.h"
#include "oar/flags.h"
#include "oar/log.h"
#include "subgraph_model.h"

namespace oar::adapter {

using graph::Graph;
using graph::Node;
using graph::Value;

namespace {

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(" \t\r\n"), b = s.find_last_not_of(" \t\r\n");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

void split_pins(const std::string& text, char sep, std::vector<std::string>& out) {
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(sep, start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    if (size_t hash = item.find('#'); sep == '\n' && hash != std::string::npos) item.resize(hash);
    item = trim(item);
    if (!item.empty()) out.push_back(item);
    start = end + 1;
  }
}

// The pin that keeps a node on the plugin device, or "".
std::string matching_pin(const std::vector<std::string>& pins, const std::string& op, const std::string& name) {
  for (const std::string& pin : pins) {
    if (pin.rfind("op:", 0) == 0 ? pin.substr(3) == op
        : pin.rfind("node:", 0) == 0 ? pin.substr(5) == name
                                     : (pin == op || pin == name))
      return pin;
  }
  return "";
}

}  // namespace

std::vector<std::string> collect_pins(const std::vector<std::string>& extra) {
  std::vector<std::string> pins;
  split_pins(Flags::instance().get("OAR_ADAPTER_DENY"), ',', pins);
  const std::string file = Flags::instance().get("OAR_ADAPTER_DENY_FILE");
  if (!file.empty()) {
    try {
      split_pins(read_file(file), '\n', pins);
    } catch (const IOError& e) {
      throw IOError(str("OAR_ADAPTER_DENY_FILE: ", e.what()));
    }
  }
  for (const std::string& p : extra) split_pins(p, ',', pins);
  for (const std::string& p : pins)
    if ((p.rfind("op:", 0) == 0 && p.size() == 3) || (p.rfind("node:", 0) == 0 && p.size() == 5))
      throw ValueError(str("adapter pin '", p, "' names nothing (write op:<type> or node:<name>)"));
  return pins;
}

Placement partition_subgraphs(const Graph& graph, const DriverContext& context, const PartitionRules& rules) {
  const Driver& driver = context.driver();
  const size_t n = graph.node_count();
  Placement placement;
  placement.nodes.resize(n);

  // 1. The driver's answer for each node, in the context of the whole graph.
  if (n == 0) return placement;
  std::vector<int32_t> all(n);
  for (size_t i = 0; i < n; ++i) all[i] = int32_t(i);
  // The graph's outputs are the model's; a graph none of whose outputs a node
  // defines (it returns its inputs) still needs model outputs to be valid.
  auto whole = std::make_unique<SubgraphModel>(graph, all);
  if (whole->model()->output_count == 0) whole = std::make_unique<SubgraphModel>(graph, all, true);
  std::vector<char> supported(n, 0);
  for (size_t i = 0; i < n; ++i) {
    NodePlacement& p = placement.nodes[i];
    p.node = int32_t(i);
    p.name = node_name(graph, i);
    p.op = graph.nodes()[i]->op->name;
    if (std::string pin = matching_pin(rules.deny, p.op, p.name); !pin.empty()) {
      p.reason = str("pinned to the plugin device by '", pin, "'");
      continue;
    }
    int32_t ok = 0;
    char reason[512] = {0};
    driver.check(driver.api.query_operation(context.handle(), whole->model(), uint32_t(i), &ok, reason, sizeof(reason)),
                 "query_operation");
    reason[sizeof(reason) - 1] = '\0';
    supported[i] = ok != 0;
    if (!ok) p.reason = str(driver.name, ": ", reason[0] ? reason : "unsupported (no reason given)");
  }

  // A pin that names nothing here is most likely a typo: say so.
  for (const std::string& pin : rules.deny) {
    bool used = false;
    for (const NodePlacement& p : placement.nodes) used |= matching_pin({pin}, p.op, p.name) == pin;
    if (!used) log_message(LogLevel::kWarning, str("adapter pin '", pin, "' matches no node of the graph (node names: <op>_<index>, as --explain prints them)"));
  }

  // 2. Grow subgraphs in execution order. A node joins the subgraph of one of
  // its producers unless another producer outside that subgraph depends on
  // it (the contracted subgraph would then feed itself: a cycle).
  std::vector<int32_t> group(n, -1);
  std::vector<std::set<int32_t>> depends(n);  // subgraphs each node depends on, transitively
  std::vector<int32_t> producer_of;  // by value id: index of the defining node, -1 for none
  {
    size_t max_id = 0;
    for (const auto& node : graph.nodes())
      for (const Value* v : node->outputs) max_id = std::max(max_id, size_t(v->id));
    for (const Value* v : graph.inputs()) max_id = std::max(max_id, size_t(v->id));
    for (const Value* v : graph.tensors()) max_id = std::max(max_id, size_t(v->id));
    producer_of.assign(max_id + 1, -1);
    for (size_t i = 0; i < n; ++i)
      for (const Value* v : graph.nodes()[i]->outputs) producer_of[size_t(v->id)] = int32_t(i);
  }
  int32_t groups = 0;
  for (size_t i = 0; i < n; ++i) {
    const Node& node = *graph.nodes()[i];
    std::vector<int32_t> producers;
    for (const Value* v : node.inputs)
      if (v != nullptr && producer_of[size_t(v->id)] >= 0) producers.push_back(producer_of[size_t(v->id)]);
    for (int32_t p : producers) {
      depends[i].insert(depends[size_t(p)].begin(), depends[size_t(p)].end());
      if (group[size_t(p)] >= 0) depends[i].insert(group[size_t(p)]);
    }
    if (!supported[i]) continue;
    for (int32_t p : producers) {
      int32_t g = group[size_t(p)];
      if (g < 0) continue;
      bool cycle = false;
      for (int32_t q : producers)
        if (group[size_t(q)] != g && depends[size_t(q)].count(g)) cycle = true;
      if (!cycle) {
        group[i] = g;
        break;
      }
    }
    if (group[i] < 0) group[i] = groups++;
  }

  // 3. Subgraphs, and the threshold.
  std::vector<SubgraphPlacement> candidates(static_cast<size_t>(groups));
  for (size_t i = 0; i < n; ++i)
    if (group[i] >= 0) {
      candidates[size_t(group[i])].nodes.push_back(int32_t(i));
      candidates[size_t(group[i])].macs += node_macs(*graph.nodes()[i]);
    }
  for (auto& sg : candidates) {
    bool small = int64_t(sg.nodes.size()) < rules.min_nodes && sg.macs < rules.min_macs;
    if (small) {
      for (int32_t i : sg.nodes)
        placement.nodes[size_t(i)].reason =
            str("its subgraph (", sg.nodes.size(), " node", sg.nodes.size() == 1 ? "" : "s", ", ",
                sg.macs / 1e6, " MMAC) is under the offload threshold (OAR_ADAPTER_MIN_NODES=", rules.min_nodes,
                ", OAR_ADAPTER_MIN_MACS=", rules.min_macs, ")");
      continue;
    }
    int32_t index = int32_t(placement.subgraphs.size());
    for (int32_t i : sg.nodes) {
      placement.nodes[size_t(i)].target = PlacementTarget::kDriver;
      placement.nodes[size_t(i)].subgraph = index;
      placement.nodes[size_t(i)].reason = str("supported by ", driver.name);
    }
    placement.subgraphs.push_back(std::move(sg));
  }
  return placement;
}

}  // namespace oar::adapter
