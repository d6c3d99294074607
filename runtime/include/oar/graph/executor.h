// Runs a Graph on one device. Construction does once what eager dispatch does
// per call: each node's attributes are normalized and put in ABI form, the
// dtype promotions become explicit casts, and the kernel list for the node's
// (op, device, dtypes) key is looked up. A run then only allocates outputs and
// launches kernels, freeing each intermediate after its last reader; an
// elementwise kernel writes into an input that dies at that step instead of a
// new buffer where that is safe (memory planning, in place).
//
// Nodes without a kernel on the device (composite ops, CPU fallback) and
// random ops (fresh numbers on each run) go through eager dispatch. Views run
// as their Tensor methods. When autograd is on and an input or captured tensor
// requires grad, a run goes through eager dispatch node by node so that the
// outputs carry gradients, like eager code; a training graph, which has its
// backward inside, runs with autograd off.
#pragma once

#include <memory>
#include <vector>

#include "oar/graph/graph.h"

namespace oar::graph {

// Checks run-time inputs against a graph's declared inputs: count (ValueError),
// defined, shape (ShapeError) and dtype (DTypeError), naming the input.
void check_run_inputs(const Graph& graph, const std::vector<Tensor>& inputs);

class Executor {
 public:
  // `graph` must verify. Constants are copied to `device` once; captured
  // tensors on another device are copied in on each run (and updates copied back).
  Executor(std::shared_ptr<const Graph> graph, Device device);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Runs the graph: `inputs` must match the graph's inputs in count, shape and
  // dtype (ValueError / ShapeError / DTypeError naming the input otherwise);
  // inputs on another device are copied here. Applies the updates, then returns
  // the outputs.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs);

  const Graph& graph() const { return *graph_; }
  Device device() const { return device_; }
  // How many nodes run through eager dispatch rather than a resolved kernel.
  size_t eager_node_count() const;
  // How many elementwise steps write their output into a dying input's buffer.
  size_t inplace_step_count() const;
  // How many updates (optimizer state) their step writes in place, with no copy.
  size_t update_in_place_count() const;

 private:
  struct Step;
  std::vector<Tensor> run_resolved(std::vector<Tensor>& slots);
  std::vector<Tensor> run_eager(std::vector<Tensor>& slots);
  void apply_updates(const std::vector<Tensor>& slots, const std::vector<Tensor>& inputs);
  void plan_updates_in_place(const std::vector<int32_t>& last);

  std::shared_ptr<const Graph> graph_;
  Device device_;
  std::vector<std::unique_ptr<Step>> steps_;
  std::vector<Tensor> constants_;  // by value id: constants on this device
  size_t slot_count_ = 0;
};

}  // namespace oar::graph
