// offload() and the executor of a partitioned graph (see offload.h): units in
// a topological order of the contracted graph, each either a compiled driver
// program or a sub-graph run by the plugin device's graph::Executor; tensors
// cross between them through host copies.
#include <algorithm>
#include <atomic>
#include <mutex>
#include <queue>
#include <set>

#include "driver_registry.h"
#include "oar/adapter/offload.h"
#include "oar/autograd.h"
#include "oar/error.h"
#include "oar/flags.h"
#include "oar/graph/executor.h"
#include "oar/graph/passes.h"
#include "oar/log.h"
#include "partitioner.h"
#include "program_cache.h"
#include "subgraph_model.h"

namespace oar::adapter {

using graph::Graph;
using graph::Node;
using graph::Value;
using graph::ValueKind;

namespace {

std::atomic<int64_t> g_compiles{0}, g_cache_hits{0}, g_cache_rebuilds{0}, g_compile_failures{0};

struct Unit {
  int32_t subgraph = -1;                 // >= 0: a driver unit
  std::vector<int32_t> nodes;            // graph node indices, in execution order
  std::vector<const Value*> inputs, outputs;
  // driver unit
  std::unique_ptr<SubgraphModel> model;
  oar_adapter_program_t program = nullptr;
  // The ABI lets a program run on one thread at a time; runs of one
  // OffloadedGraph from several threads take turns on it.
  std::unique_ptr<std::mutex> program_mutex = std::make_unique<std::mutex>();
  // plugin unit
  std::unique_ptr<graph::Executor> executor;
};

class OffloadedGraphImpl : public OffloadedGraph {
 public:
  OffloadedGraphImpl(std::shared_ptr<const Graph> graph, Device device, const OffloadOptions& options);
  ~OffloadedGraphImpl() override {
    for (auto& u : units_)
      if (u.program != nullptr) context_->driver().api.program_destroy(u.program);
  }
  std::vector<Tensor> run(const std::vector<Tensor>& inputs) override;
  const Placement& placement() const override { return placement_; }
  const Graph& graph() const override { return *graph_; }

 private:
  void compile_subgraphs(const std::string& cache_dir);
  void build_units();
  void build_plugin_unit(Unit& unit);
  std::vector<Tensor> run_driver_unit(Unit& unit, const std::vector<Tensor>& inputs);

  std::shared_ptr<const Graph> graph_;
  Device device_;
  std::unique_ptr<DriverContext> context_;
  Placement placement_;
  std::vector<std::unique_ptr<SubgraphModel>> models_;  // by subgraph
  std::vector<oar_adapter_program_t> programs_;         // by subgraph
  std::vector<Unit> units_;
  std::vector<std::vector<int32_t>> release_;  // value ids freed after each unit
  size_t slot_count_ = 0;
};

std::vector<std::pair<std::string, std::string>> option_values(const Driver& driver, const OffloadOptions& options) {
  for (const auto& [name, value] : options.options)
    if (std::find(driver.option_names.begin(), driver.option_names.end(), name) == driver.option_names.end()) {
      std::string known;
      for (const auto& n : driver.option_names) known += str(known.empty() ? "" : ", ", n);
      throw ValueError(str("adapter driver '", driver.name, "' has no option ", name, " (its options: ",
                           known.empty() ? "none" : known, ")"));
    }
  std::vector<std::pair<std::string, std::string>> values;
  for (const auto& name : driver.option_names) {
    auto it = options.options.find(name);
    std::string value = Flags::instance().get(name);
    if (it != options.options.end()) {
      // Validated as the flag would be (type, choices).
      for (const FlagValue& f : Flags::instance().list())
        if (f.definition.name == name) value = normalize_flag_value(f.definition, it->second);
    }
    values.emplace_back(name, value);
  }
  return values;
}

}  // namespace

OffloadedGraphImpl::OffloadedGraphImpl(std::shared_ptr<const Graph> graph, Device device, const OffloadOptions& options)
    : graph_(std::move(graph)), device_(device) {
  if (!graph_) throw ValueError("offload: no graph");
  graph_->verify();
  if (!graph_->updates().empty())
    throw ValueError(str("offload: the graph writes into its inputs or parameters (", graph_->updates().size(),
                         " updates, e.g. train-mode batch norm); offload an inference graph"));
  const std::string name = selected_driver(options);
  if (name.empty()) throw ValueError("offload: no adapter driver named (set OAR_ADAPTER or OffloadOptions::driver)");
  const Driver& driver = DriverRegistry::instance().get(name);
  context_ = std::make_unique<DriverContext>(driver, option_values(driver, options));

  PartitionRules rules;
  rules.deny = collect_pins(options.deny);
  rules.min_nodes = options.min_nodes >= 0 ? options.min_nodes : Flags::instance().get_int("OAR_ADAPTER_MIN_NODES");
  rules.min_macs = options.min_macs >= 0 ? options.min_macs : std::stod(Flags::instance().get("OAR_ADAPTER_MIN_MACS"));
  placement_ = partition_subgraphs(*graph_, *context_, rules);
  std::string opts;
  for (const auto& [k, v] : context_->options()) opts += str(opts.empty() ? "" : ", ", k, "=", v);
  placement_.driver = str(driver.name, " ", driver.version, opts.empty() ? "" : str(" (", opts, ")"));
  placement_.device = device_.str();

  compile_subgraphs(options.cache_dir.empty() ? Flags::instance().get("OAR_ADAPTER_CACHE_DIR") : options.cache_dir);
  build_units();
  if (!graph_->nodes().empty() && placement_.offloaded_fraction() < 0.5)
    log_message(LogLevel::kWarning,
                str("adapter '", driver.name, "': only ", placement_.offloaded_nodes(), " of ", graph_->node_count(),
                    " nodes were offloaded; the rest run on ", device_.str(),
                    " (oar-predict --explain or .placement says why)"));
}

void OffloadedGraphImpl::compile_subgraphs(const std::string& cache_dir) {
  const Driver& driver = context_->driver();
  ProgramCache cache(cache_dir, *context_);
  std::vector<SubgraphPlacement> kept;
  for (size_t s = 0; s < placement_.subgraphs.size(); ++s) {
    SubgraphPlacement sg = placement_.subgraphs[s];
    auto model = std::make_unique<SubgraphModel>(*graph_, sg.nodes);
    std::string why;
    oar_adapter_program_t program = cache.load(*model, &why);
    if (program != nullptr) {
      ++g_cache_hits;
      sg.from_cache = true;
    } else {
      if (!why.empty()) {
        ++g_cache_rebuilds;
        log_message(LogLevel::kWarning, str("adapter cache: stale or corrupt entry rebuilt: ", why));
      }
      oar_status_t status = driver.api.compile(context_->handle(), model->model(), &program);
      if (status != OAR_STATUS_OK) {
        ++g_compile_failures;
        std::string message = take_driver_error();
        std::string text = str("adapter driver '", driver.name, "' could not compile subgraph ", s, " (",
                               sg.nodes.size(), " nodes, from ", node_name(*graph_, size_t(sg.nodes.front())),
                               "): ", message.empty() ? "no message" : message);
        if (Flags::instance().get("OAR_FALLBACK") == "error")
          throw PluginError(str(text, " (OAR_FALLBACK=error)"));
        log_message(LogLevel::kWarning, str(text, "; its nodes run on ", device_.str()));
        for (int32_t i : sg.nodes) {
          NodePlacement& p = placement_.nodes[size_t(i)];
          p.target = PlacementTarget::kPlugin;
          p.subgraph = -1;
          p.reason = str("compile failed: ", message.empty() ? "no message" : message);
        }
        continue;
      }
      ++g_compiles;
      cache.store(*model, program);
    }
    sg.inputs = int32_t(model->input_values().size());
    sg.outputs = int32_t(model->output_values().size());
    for (int32_t i : sg.nodes) placement_.nodes[size_t(i)].subgraph = int32_t(kept.size());
    kept.push_back(sg);
    models_.push_back(std::move(model));
    programs_.push_back(program);
  }
  placement_.subgraphs = std::move(kept);
}

void OffloadedGraphImpl::build_units() {
  const size_t n = graph_->node_count();
  // The contracted graph: one unit per subgraph, one per remaining node; its
  // edges run from the unit defining a value to the units reading it.
  std::vector<int32_t> unit_of(n, -1);
  std::vector<Unit> raw(placement_.subgraphs.size());
  for (size_t s = 0; s < raw.size(); ++s) raw[s].subgraph = int32_t(s);
  for (size_t i = 0; i < n; ++i) {
    int32_t s = placement_.nodes[i].subgraph;
    if (placement_.nodes[i].target == PlacementTarget::kDriver && s >= 0) {
      unit_of[i] = s;
    } else {
      unit_of[i] = int32_t(raw.size());
      raw.emplace_back();
    }
    raw[size_t(unit_of[i])].nodes.push_back(int32_t(i));
  }
  size_t max_id = 0;
  for (const Value* v : graph_->inputs()) max_id = std::max(max_id, size_t(v->id));
  for (const Value* v : graph_->tensors()) max_id = std::max(max_id, size_t(v->id));
  for (const auto& node : graph_->nodes())
    for (const Value* v : node->outputs) max_id = std::max(max_id, size_t(v->id));
  slot_count_ = max_id + 1;
  std::vector<int32_t> defined_by(slot_count_, -1);
  for (size_t i = 0; i < n; ++i)
    for (const Value* v : graph_->nodes()[i]->outputs) defined_by[size_t(v->id)] = unit_of[i];
  std::vector<std::set<int32_t>> successors(raw.size());
  std::vector<int32_t> pending(raw.size(), 0);
  for (size_t i = 0; i < n; ++i)
    for (const Value* v : graph_->nodes()[i]->inputs) {
      if (v == nullptr) continue;
      int32_t from = defined_by[size_t(v->id)];
      if (from >= 0 && from != unit_of[i] && successors[size_t(from)].insert(unit_of[i]).second) ++pending[size_t(unit_of[i])];
    }
  // Kahn's algorithm, earliest first node first: close to the original order.
  using Item = std::pair<int32_t, int32_t>;  // (first node, unit)
  std::priority_queue<Item, std::vector<Item>, std::greater<Item>> ready;
  for (size_t u = 0; u < raw.size(); ++u)
    if (pending[u] == 0) ready.push({raw[u].nodes.front(), int32_t(u)});
  std::vector<int32_t> order;
  while (!ready.empty()) {
    int32_t u = ready.top().second;
    ready.pop();
    order.push_back(u);
    for (int32_t s : successors[size_t(u)])
      if (--pending[size_t(s)] == 0) ready.push({raw[size_t(s)].nodes.front(), s});
  }
  if (order.size() != raw.size()) throw InternalError("offload: the partition has a cycle (a partitioner bug)");
  // Consecutive plugin units merge into one sub-graph.
  for (int32_t u : order) {
    Unit& r = raw[size_t(u)];
    if (r.subgraph < 0 && !units_.empty() && units_.back().subgraph < 0) {
      units_.back().nodes.insert(units_.back().nodes.end(), r.nodes.begin(), r.nodes.end());
    } else {
      units_.push_back(std::move(r));
    }
  }
  // Each unit's inputs (defined outside it) and outputs (read outside it).
  std::vector<int32_t> unit_index(n, -1);
  for (size_t u = 0; u < units_.size(); ++u)
    for (int32_t i : units_[u].nodes) unit_index[size_t(i)] = int32_t(u);
  std::vector<int32_t> last_use(slot_count_, -1);
  for (size_t u = 0; u < units_.size(); ++u) {
    Unit& unit = units_[u];
    if (unit.subgraph >= 0) {
      unit.model = std::move(models_[size_t(unit.subgraph)]);
      unit.program = programs_[size_t(unit.subgraph)];
      programs_[size_t(unit.subgraph)] = nullptr;
      unit.inputs = unit.model->input_values();
      unit.outputs = unit.model->output_values();
    } else {
      build_plugin_unit(unit);
    }
    for (const Value* v : unit.inputs) last_use[size_t(v->id)] = int32_t(u);
  }
  for (const Value* v : graph_->outputs()) last_use[size_t(v->id)] = -1;
  release_.assign(units_.size(), {});
  for (size_t id = 0; id < slot_count_; ++id)
    if (last_use[id] >= 0) release_[size_t(last_use[id])].push_back(int32_t(id));
}

void OffloadedGraphImpl::build_plugin_unit(Unit& unit) {
  std::vector<char> inside(graph_->node_count(), 0);
  for (int32_t i : unit.nodes) inside[size_t(i)] = 1;
  std::vector<char> read_outside(slot_count_, 0);
  for (size_t i = 0; i < graph_->node_count(); ++i)
    if (!inside[i])
      for (const Value* v : graph_->nodes()[i]->inputs)
        if (v != nullptr) read_outside[size_t(v->id)] = 1;
  for (const Value* v : graph_->outputs()) read_outside[size_t(v->id)] = 1;

  auto g = std::make_shared<Graph>();
  std::vector<Value*> mapped(slot_count_, nullptr);
  std::vector<Value*> outputs;
  for (int32_t index : unit.nodes) {
    const Node& node = *graph_->nodes()[size_t(index)];
    std::vector<Value*> ins;
    for (const Value* v : node.inputs) {
      if (v == nullptr) {
        ins.push_back(nullptr);
        continue;
      }
      Value*& m = mapped[size_t(v->id)];
      if (m == nullptr) {
        if (v->kind == ValueKind::kConstant || v->kind == ValueKind::kCaptured) {
          m = g->add_constant(v->name, v->tensor);
        } else {
          m = g->add_input(v->name.empty() ? str("%", v->id) : v->name, v->meta);
          unit.inputs.push_back(v);
        }
      }
      ins.push_back(m);
    }
    Node* added = g->add_node(*node.op, ins, node.attrs);
    for (size_t o = 0; o < node.outputs.size(); ++o) {
      mapped[size_t(node.outputs[o]->id)] = added->outputs[o];
      if (read_outside[size_t(node.outputs[o]->id)]) {
        outputs.push_back(added->outputs[o]);
        unit.outputs.push_back(node.outputs[o]);
      }
    }
  }
  g->set_outputs(outputs);
  // What stays on the device gets the device's fusions (the driver saw them undone).
  graph::optimize(*g, device_);
  unit.executor = std::make_unique<graph::Executor>(g, device_);
}

std::vector<Tensor> OffloadedGraphImpl::run_driver_unit(Unit& unit, const std::vector<Tensor>& inputs) {
  const Driver& driver = context_->driver();
  std::vector<Tensor> host_inputs;
  std::vector<oar_adapter_buffer> buffers(inputs.size() + unit.outputs.size());
  std::vector<const oar_adapter_buffer*> in_ptrs, out_ptrs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    host_inputs.push_back(inputs[i].to(Device::cpu()).contiguous());
    const Tensor& t = host_inputs.back();
    buffers[i] = {sizeof(oar_adapter_buffer), t.numel() > 0 ? t.data_ptr() : nullptr,
                  uint64_t(t.numel()) * t.itemsize(), static_cast<oar_dtype_t>(t.dtype()), uint32_t(t.dim()),
                  t.shape().data()};
    in_ptrs.push_back(&buffers[i]);
  }
  std::vector<Tensor> outputs;
  for (size_t o = 0; o < unit.outputs.size(); ++o) {
    const TensorMeta& m = unit.outputs[o]->meta;
    outputs.push_back(Tensor::empty(m.shape, m.dtype, Device::cpu()));
    const Tensor& t = outputs.back();
    oar_adapter_buffer& b = buffers[inputs.size() + o];
    b = {sizeof(oar_adapter_buffer), t.numel() > 0 ? t.data_ptr() : nullptr, uint64_t(t.numel()) * t.itemsize(),
         static_cast<oar_dtype_t>(t.dtype()), uint32_t(t.dim()), t.shape().data()};
    out_ptrs.push_back(&b);
  }
  std::lock_guard<std::mutex> lock(*unit.program_mutex);
  driver.check(driver.api.execute(unit.program, in_ptrs.data(), uint32_t(in_ptrs.size()), out_ptrs.data(),
                                  uint32_t(out_ptrs.size())),
               "execute");
  return outputs;
}

std::vector<Tensor> OffloadedGraphImpl::run(const std::vector<Tensor>& inputs) {
  autograd::NoGradGuard no_grad;
  graph::check_run_inputs(*graph_, inputs);
  std::vector<Tensor> slots(slot_count_);
  for (size_t i = 0; i < inputs.size(); ++i) slots[size_t(graph_->inputs()[i]->id)] = inputs[i];
  for (const Value* v : graph_->tensors()) slots[size_t(v->id)] = v->tensor;
  for (size_t u = 0; u < units_.size(); ++u) {
    Unit& unit = units_[u];
    std::vector<Tensor> ins;
    for (const Value* v : unit.inputs) ins.push_back(slots[size_t(v->id)]);
    std::vector<Tensor> outs = unit.subgraph >= 0 ? run_driver_unit(unit, ins) : unit.executor->run(ins);
    for (size_t o = 0; o < unit.outputs.size(); ++o) slots[size_t(unit.outputs[o]->id)] = std::move(outs[o]);
    for (int32_t id : release_[u]) slots[size_t(id)] = Tensor();
  }
  std::vector<Tensor> results;
  for (const Value* v : graph_->outputs()) results.push_back(slots[size_t(v->id)].to(device_));
  return results;
}

std::string selected_driver(const OffloadOptions& options) {
  std::string name = options.driver.empty() ? Flags::instance().get("OAR_ADAPTER") : options.driver;
  return name == "none" ? "" : name;
}

AdapterStats stats() { return {g_compiles.load(), g_cache_hits.load(), g_cache_rebuilds.load(), g_compile_failures.load()}; }

std::unique_ptr<OffloadedGraph> offload(std::shared_ptr<const Graph> graph, Device device, const OffloadOptions& options) {
  return std::make_unique<OffloadedGraphImpl>(std::move(graph), device, options);
}

}  // namespace oar::adapter
