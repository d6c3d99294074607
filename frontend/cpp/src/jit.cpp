// oar::jit::trace and TracedFunction (see oar/jit.h).
#include "oar/jit.h"

#include "oar/error.h"
#include "oar/graph/trace.h"

namespace oar::jit {

namespace {

std::string signature_of(const std::vector<Tensor>& inputs) {
  std::string sig;
  for (const Tensor& t : inputs) {
    if (!t.defined()) throw ValueError("traced function: an input is an undefined tensor");
    sig += str(dtype_name(t.dtype()), shape_str(t.shape()), t.requires_grad() ? "g" : "", ";");
  }
  return sig;
}

}  // namespace

std::unique_ptr<graph::Graph> trace_graph(const GraphFunction& fn, const std::vector<Tensor>& inputs,
                                          const std::map<std::string, Tensor>& names) {
  // The trace sees inputs without history: the graph starts at them.
  std::vector<Tensor> detached;
  for (const Tensor& t : inputs) {
    if (!t.defined()) throw ValueError("trace: an input is an undefined tensor");
    detached.push_back(t.detach());
  }
  graph::Tracer tracer(detached);
  for (const auto& [name, t] : names) tracer.name_tensor(t, name);
  std::vector<Tensor> outputs = fn(detached);
  return tracer.finish(outputs);
}

TracedFunction::Compiled& TracedFunction::compiled_for(const std::vector<Tensor>& inputs) {
  std::string sig = signature_of(inputs);
  auto it = by_signature_.find(sig);
  if (it == by_signature_.end()) {
    auto compiled = std::make_shared<Compiled>();
    compiled->graph = trace_graph(fn_, inputs, names_);
    ++traces_;
    it = by_signature_.emplace(sig, std::move(compiled)).first;
  }
  return *it->second;
}

std::shared_ptr<const graph::Graph> TracedFunction::graph_for(const std::vector<Tensor>& inputs) {
  return compiled_for(inputs).graph;
}

std::vector<Tensor> TracedFunction::operator()(const std::vector<Tensor>& inputs) {
  Compiled& c = compiled_for(inputs);
  Device device = inputs.empty() ? Device::default_device() : inputs[0].device();
  auto& executor = c.executors[device.str()];
  if (!executor) executor = std::make_unique<graph::Executor>(c.graph, device);
  return executor->run(inputs);
}

TracedFunction trace(GraphFunction fn, const std::vector<Tensor>& example_inputs, std::map<std::string, Tensor> names) {
  if (!fn) throw ValueError("trace: no function");
  TracedFunction traced;
  traced.fn_ = std::move(fn);
  traced.names_ = std::move(names);
  traced.compiled_for(example_inputs);  // trace now, so errors surface at the call site
  return traced;
}

TracedFunction trace(const std::shared_ptr<nn::Module>& module, const std::vector<Tensor>& example_inputs) {
  if (!module) throw ValueError("trace: no module");
  std::map<std::string, Tensor> names;
  for (const auto& [name, t] : module->named_parameters()) names[name] = t;
  for (const auto& [name, t] : module->named_buffers()) names[name] = t;
  return trace([module](const std::vector<Tensor>& in) { return std::vector<Tensor>{module->call(in)}; },
               example_inputs, std::move(names));
}

}  // namespace oar::jit
