// oar::jit::trace and TracedFunction (see oar/jit.h).
#include "oar/jit.h"

#include "oar/error.h"
#include "oar/graph/passes.h"
#include "oar/graph/text_format.h"
#include "oar/graph/trace.h"
#include "oar/serialize.h"

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
  std::unique_ptr<graph::Graph> graph = tracer.finish(outputs);
  graph::optimize(*graph, inputs.empty() ? Device::default_device() : inputs[0].device());
  return graph;
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

void save(const graph::Graph& graph, const std::string& path) {
  graph.verify();
  std::string text = graph::to_text(graph);
  StateDict entries;
  entries.insert(kGraphEntry, Tensor::from_host(text.data(), int64_t(text.size()), {int64_t(text.size())}, DType::u8,
                                                Device::cpu()));
  for (const graph::Value* v : graph.tensors()) entries.insert(str("value.", v->id), v->tensor);
  oar::save(entries, path);
}

std::shared_ptr<graph::Graph> load(const std::string& path, Device device) {
  StateDict entries = oar::load(path, Device::cpu());
  if (!entries.contains(kGraphEntry))
    throw IOError(str("load '", path, "': an oar state file (weights), not a saved graph: it has no '", kGraphEntry,
                      "' entry"));
  const Tensor& text_tensor = entries[kGraphEntry];
  if (text_tensor.dtype() != DType::u8 || text_tensor.dim() != 1)
    throw IOError(str("load '", path, "': entry '", kGraphEntry, "' is not u8 text"));
  std::string text(static_cast<const char*>(text_tensor.data_ptr()), size_t(text_tensor.numel()));
  auto graph = graph::from_text(
      text,
      [&](int32_t id) {
        std::string key = str("value.", id);
        return entries.contains(key) ? entries[key].to(device) : Tensor();
      },
      path);
  return std::shared_ptr<graph::Graph>(std::move(graph));
}

}  // namespace oar::jit
