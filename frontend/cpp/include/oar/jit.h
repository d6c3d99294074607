// oar::jit: eager C++ code as a static graph. `trace` runs a function once
// under a graph::Tracer and returns a TracedFunction that runs the recorded
// graph through a graph::Executor. Calling it with inputs of other shapes or
// dtypes traces again (one graph per input signature), so shape-dependent C++
// control flow stays correct; control flow that depends on tensor *values*
// is refused at trace time with a GraphError (see oar/graph/trace.h).
// save/load write a graph with its weights to a file and read it back.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "oar/graph/executor.h"
#include "oar/graph/graph.h"
#include "oar/nn/module.h"

namespace oar::jit {

using GraphFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

class TracedFunction {
 public:
  // Runs the graph for these inputs' shapes and dtypes (tracing it first if
  // this signature is new) on `device`, the device of the first input by default.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs);
  // The graph traced for these inputs' signature (traced now if new).
  std::shared_ptr<const graph::Graph> graph_for(const std::vector<Tensor>& inputs);
  // Number of graphs traced so far (one per input signature).
  size_t trace_count() const { return traces_; }

 private:
  friend TracedFunction trace(GraphFunction fn, const std::vector<Tensor>& example_inputs,
                              std::map<std::string, Tensor> names);
  struct Compiled {
    std::shared_ptr<const graph::Graph> graph;
    std::map<std::string, std::unique_ptr<graph::Executor>> executors;  // by device
  };
  Compiled& compiled_for(const std::vector<Tensor>& inputs);

  GraphFunction fn_;
  std::map<std::string, Tensor> names_;  // qualified name -> parameter, for captured values
  std::map<std::string, std::shared_ptr<Compiled>> by_signature_;
  size_t traces_ = 0;
};

// Traces `fn` on `example_inputs` now (errors surface here) and returns the
// traced function. `names` names tensors the function captures (parameters).
TracedFunction trace(GraphFunction fn, const std::vector<Tensor>& example_inputs,
                     std::map<std::string, Tensor> names = {});
// Traces a module's forward; its parameters and buffers are captured by
// reference under their qualified names, so training the module eagerly is
// seen by the traced function.
TracedFunction trace(const std::shared_ptr<nn::Module>& module, const std::vector<Tensor>& example_inputs);

// ---- saved graphs (docs/serialization.md) ----
// A saved graph is an OARSTATE file (oar/serialize.h: atomic write, checksum,
// version) whose u8 entry "oar.graph" holds the graph text
// (oar/graph/text_format.h) and whose entries "value.<id>" hold its captured
// and constant tensors. Load errors (missing, truncated, corrupt or newer
// files, a state file that is not a graph) are IOErrors naming the file.
inline constexpr const char* kGraphEntry = "oar.graph";
void save(const graph::Graph& graph, const std::string& path);
std::shared_ptr<graph::Graph> load(const std::string& path, Device device = Device::cpu());

// Runs `fn` once on `inputs` under a tracer and returns the graph, after graph::optimize.
std::unique_ptr<graph::Graph> trace_graph(const GraphFunction& fn, const std::vector<Tensor>& inputs,
                                          const std::map<std::string, Tensor>& names = {});

}  // namespace oar::jit
