// oar::inference::Predictor (see oar/inference.h).
#include "oar/inference.h"

#include "oar/autograd.h"
#include "oar/graph/passes.h"
#include "oar/jit.h"

namespace oar::inference {

Predictor::Predictor(const std::string& path, Device device, adapter::OffloadOptions adapter)
    : graph_(jit::load(path, device)), device_(device), adapter_(std::move(adapter)) {
  prepare(str("Predictor '", path, "'"));
}

Predictor::Predictor(std::shared_ptr<graph::Graph> graph, Device device, adapter::OffloadOptions adapter)
    : graph_(std::move(graph)), device_(device), adapter_(std::move(adapter)) {
  if (!graph_) throw ValueError("Predictor: no graph");
  prepare("Predictor");
}

void Predictor::prepare(const std::string& what) {
  if (!graph_->updates().empty())
    throw ValueError(str(what, ": the graph writes into its inputs or parameters (", graph_->updates().size(),
                         " updates, e.g. train-mode batch norm); save it in eval mode"));
  // Deployment: the weights belong to the graph alone, and batch norms fold into convolutions.
  for (graph::Value* v : graph_->tensors()) v->kind = graph::ValueKind::kConstant;
  // An adapter driver sees the catalog's plain ops: the device's fusions are
  // undone here and redone on what stays on the device (adapter/offload.h).
  const bool offload = !adapter::selected_driver(adapter_).empty();
  graph::optimize_for_inference(*graph_, device_, !offload);
  if (offload) graph::unfuse(*graph_);
  build();
}

void Predictor::build() {
  offloaded_.reset();
  executor_.reset();
  if (!adapter::selected_driver(adapter_).empty()) offloaded_ = adapter::offload(graph_, device_, adapter_);
  else executor_ = std::make_unique<graph::Executor>(graph_, device_);
}

void Predictor::set_device(Device device) {
  if (device == device_) return;
  Device previous = device_;
  device_ = device;
  try {
    build();
  } catch (...) {
    device_ = previous;
    build();
    throw;
  }
}

std::vector<Tensor> Predictor::run(const std::vector<Tensor>& inputs) {
  autograd::NoGradGuard no_grad;
  return offloaded_ ? offloaded_->run(inputs) : executor_->run(inputs);
}

const adapter::Placement* Predictor::placement() const { return offloaded_ ? &offloaded_->placement() : nullptr; }

std::vector<std::string> Predictor::input_names() const {
  std::vector<std::string> names;
  for (const graph::Value* v : graph_->inputs()) names.push_back(v->name);
  return names;
}

std::vector<TensorMeta> Predictor::input_metas() const {
  std::vector<TensorMeta> metas;
  for (const graph::Value* v : graph_->inputs()) metas.push_back(v->meta);
  return metas;
}

}  // namespace oar::inference
