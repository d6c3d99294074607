// The registry of op schemas, filled from the catalog at start-up. Lookup by
// name throws NotImplementedError for an op that does not exist, naming the
// closest known op; a schema's `id` indexes fast per-op tables elsewhere.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "oar/op_schema.h"

namespace oar {

class OpRegistry {
 public:
  static OpRegistry& instance();
  const OpSchema& get(const std::string& name) const;
  const OpSchema* find(const std::string& name) const;
  const std::vector<std::unique_ptr<OpSchema>>& all() const { return schemas_; }
  void add(OpSchema schema);  // throws if the name is taken
  // The same, with the example calls the generated tests use (OpSchema::examples).
  void add(OpSchema schema, std::vector<std::string> examples);

 private:
  OpRegistry();
  std::vector<std::unique_ptr<OpSchema>> schemas_;
  std::unordered_map<std::string, OpSchema*> by_name_;
};

// Catalog sections (runtime/src/catalog/*.cpp), each adding its ops.
void register_elementwise_ops(OpRegistry& r);
void register_reduction_ops(OpRegistry& r);
void register_creation_ops(OpRegistry& r);
void register_indexing_ops(OpRegistry& r);
void register_nn_ops(OpRegistry& r);
void register_view_ops(OpRegistry& r);
void register_fused_ops(OpRegistry& r);
void register_optimizer_ops(OpRegistry& r);
void register_scan_ops(OpRegistry& r);
void register_linalg_ops(OpRegistry& r);
void register_attention_ops(OpRegistry& r);
void register_rnn_ops(OpRegistry& r);

// The elementwise functors (kernel_primitives' .def files) a fused_elementwise
// program may use: same-dtype unary and binary ones, with their parameter attributes.
struct FusableFunctor {
  int arity;
  const char* p0_attr;
  const char* p1_attr;
};
const std::map<std::string, FusableFunctor>& fusable_functors();

}  // namespace oar
