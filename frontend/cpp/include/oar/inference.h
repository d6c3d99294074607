// oar::inference: the deployment API. A Predictor loads a graph saved with
// oar::jit::save / oar.jit.save, freezes its tensors as constants (so the
// graph no longer refers to any model object), and runs it on a device:
//
//   oar::inference::Predictor p("digits.oarg");
//   p.set_device(oar::Device::parse("opencl"));
//   std::vector<oar::Tensor> out = p.run({images});
//
// Inputs are checked against the saved graph (count, shape, dtype; typed
// errors naming the input). Runs never record autograd history.
//
// Subgraph offload (adapter/, docs/adapter.md): with OAR_ADAPTER set, or a
// driver named in the adapter options, the Predictor hands the subgraphs the
// driver supports to it and runs the rest on the device; placement() says
// which node went where and why. A graph from elsewhere (an imported ONNX
// model) goes in through the second constructor.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "oar/graph/executor.h"
#include "oar/graph/graph.h"
#include "oar/adapter/offload.h"

namespace oar::inference {

class Predictor {
 public:
  explicit Predictor(const std::string& path, Device device = Device::default_device(),
                     adapter::OffloadOptions adapter = {});
  explicit Predictor(std::shared_ptr<graph::Graph> graph, Device device = Device::default_device(),
                     adapter::OffloadOptions adapter = {});

  void set_device(Device device);
  Device device() const { return device_; }
  std::vector<Tensor> run(const std::vector<Tensor>& inputs);

  const graph::Graph& graph() const { return *graph_; }
  std::vector<std::string> input_names() const;
  std::vector<TensorMeta> input_metas() const;
  // The offload's placement; nullptr when no adapter driver is selected.
  const adapter::Placement* placement() const;

 private:
  void prepare(const std::string& what);
  void build();
  std::shared_ptr<graph::Graph> graph_;
  Device device_;
  adapter::OffloadOptions adapter_;
  std::unique_ptr<graph::Executor> executor_;
  std::unique_ptr<adapter::OffloadedGraph> offloaded_;
};

}  // namespace oar::inference
