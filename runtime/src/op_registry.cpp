#include "oar/op_registry.h"

#include <algorithm>

#include "catalog/composites.h"
#include "oar/error.h"

namespace oar {

namespace {
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}
}  // namespace

OpRegistry& OpRegistry::instance() {
  static OpRegistry* registry = new OpRegistry();
  return *registry;
}

OpRegistry::OpRegistry() {
  register_elementwise_ops(*this);
  register_reduction_ops(*this);
  register_creation_ops(*this);
  register_indexing_ops(*this);
  register_nn_ops(*this);
  register_view_ops(*this);
  register_fused_ops(*this);
  register_optimizer_ops(*this);
  register_scan_ops(*this);
  register_linalg_ops(*this);
  register_attention_ops(*this);
  register_rnn_ops(*this);
  register_shape_composites(*this);
  register_math_composites(*this);
  register_select_composites(*this);
  register_einsum_composite(*this);
  register_unique_composites(*this);
  register_scatter_composites(*this);
  register_reduce_composites(*this);
  register_linear_composites(*this);
  register_index_composites(*this);
  register_sample_composites(*this);
}

void OpRegistry::add(OpSchema schema) {
  if (by_name_.count(schema.name))
    throw InternalError(str("op '", schema.name, "' is declared twice in the catalog"));
  schema.id = static_cast<int32_t>(schemas_.size());
  schemas_.push_back(std::make_unique<OpSchema>(std::move(schema)));
  by_name_[schemas_.back()->name] = schemas_.back().get();
}

void OpRegistry::add(OpSchema schema, std::vector<std::string> examples) {
  schema.examples = std::move(examples);
  add(std::move(schema));
}

const OpSchema* OpRegistry::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const OpSchema& OpRegistry::get(const std::string& name) const {
  if (const OpSchema* s = find(name)) return *s;
  std::string best;
  size_t best_d = 4;
  for (const auto& s : schemas_) {
    size_t d = edit_distance(name, s->name);
    if (d < best_d) best_d = d, best = s->name;
  }
  throw NotImplementedError(str("unknown op '", name, "'",
                                best.empty() ? std::string() : str(" (did you mean '", best, "'?)")));
}

}  // namespace oar
