// oar::inference::Predictor (see oar/inference.h).
#include "oar/inference.h"

#include "oar/autograd.h"
#include "oar/graph/passes.h"
#include "oar/jit.h"

namespace oar::inference {

Predictor::Predictor(const std::string& path, Device device) : graph_(jit::load(path, device)), device_(device) {
  if (!graph_->updates().empty())
    throw ValueError(str("Predictor '", path, "': the graph writes into its inputs or parameters (",
                         graph_->updates().size(), " updates, e.g. train-mode batch norm); save it in eval mode"));
  // Deployment: the weights belong to the graph alone, and batch norms fold into convolutions.
  for (graph::Value* v : graph_->tensors()) v->kind = graph::ValueKind::kConstant;
  graph::optimize_for_inference(*graph_, device_);
  executor_ = std::make_unique<graph::Executor>(graph_, device_);
}

void Predictor::set_device(Device device) {
  if (device == device_) return;
  executor_ = std::make_unique<graph::Executor>(graph_, device);
  device_ = device;
}

std::vector<Tensor> Predictor::run(const std::vector<Tensor>& inputs) {
  autograd::NoGradGuard no_grad;
  return executor_->run(inputs);
}

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
