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
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "oar/graph/executor.h"
#include "oar/graph/graph.h"

namespace oar::inference {

class Predictor {
 public:
  explicit Predictor(const std::string& path, Device device = Device::default_device());

  void set_device(Device device);
  Device device() const { return device_; }
  std::vector<Tensor> run(const std::vector<Tensor>& inputs);

  const graph::Graph& graph() const { return *graph_; }
  std::vector<std::string> input_names() const;
  std::vector<TensorMeta> input_metas() const;

 private:
  std::shared_ptr<graph::Graph> graph_;
  Device device_;
  std::unique_ptr<graph::Executor> executor_;
};

}  // namespace oar::inference
