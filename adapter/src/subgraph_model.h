// A set of graph nodes as the C model a driver receives (oar_adapter_model),
// owning every array, string and constant it points to. Values read by the
// nodes but defined elsewhere become INPUT operands (or CONSTANT ones, with
// their data on the host, for constant and captured tensors); values the
// nodes define and someone outside reads become OUTPUT operands.
//
// `canonical()` is a text form of everything the model says (constant data
// by SHA-1), the stable part of a compiled-subgraph cache key.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "oar/adapter/oar_adapter_model.h"
#include "oar/graph/graph.h"

namespace oar::adapter {

// The name pins and placements use for node `index`: "<op>_<index>".
std::string node_name(const graph::Graph& graph, size_t index);

// Estimated multiply-accumulates of one node (convolutions and GEMMs by their
// inner products, anything else one per output element).
double node_macs(const graph::Node& node);

class SubgraphModel {
 public:
  // `nodes`: indices into graph.nodes(), in execution order. `outputs_all`:
  // every value the nodes define is a model output (the whole-graph model the
  // partitioner queries); otherwise only those read outside or graph outputs.
  SubgraphModel(const graph::Graph& graph, const std::vector<int32_t>& nodes, bool outputs_all = false);
  SubgraphModel(const SubgraphModel&) = delete;
  SubgraphModel& operator=(const SubgraphModel&) = delete;

  const oar_adapter_model* model() const { return &model_; }
  // The graph values behind the model's inputs and outputs, in model order.
  const std::vector<const graph::Value*>& input_values() const { return input_values_; }
  const std::vector<const graph::Value*>& output_values() const { return output_values_; }
  const std::string& canonical() const { return canonical_; }

 private:
  int32_t operand_for(const graph::Value* v, oar_adapter_lifetime_t lifetime);
  void build_canonical();

  std::deque<std::string> strings_;
  std::deque<std::vector<oar_adapter_dim>> dims_;
  std::deque<std::vector<int32_t>> index_lists_;
  std::deque<Attrs> attrs_;
  std::deque<std::vector<oar_attr>> abi_attrs_;
  std::deque<std::vector<const oar_attr*>> attr_pointers_;
  std::vector<Tensor> host_constants_;
  std::vector<std::unique_ptr<oar_adapter_operand>> operands_;
  std::vector<std::unique_ptr<oar_adapter_operation>> operations_;
  std::vector<const oar_adapter_operand*> operand_pointers_;
  std::vector<const oar_adapter_operation*> operation_pointers_;
  std::vector<int32_t> inputs_, outputs_;
  std::vector<int32_t> operand_of_value_;  // by value id; -1: none yet
  std::vector<const graph::Value*> input_values_, output_values_;
  oar_adapter_model model_{};
  std::string canonical_;
};

}  // namespace oar::adapter
