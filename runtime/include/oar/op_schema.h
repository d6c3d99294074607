// Op schemas: the typed description of an op (inputs, outputs, attributes with
// defaults), how the core prepares its inputs (dtype promotion, broadcasting,
// contiguity) and the shape/dtype inference that sizes its outputs. The
// catalog (runtime/src/catalog/) declares every op once with these types; the
// registry, oar-info, bindings and generated tests all read it from there.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "oar/device.h"
#include "oar/dtype.h"
#include "oar/shape.h"

namespace oar {

class Tensor;

enum class AttrType { kInt, kFloat, kBool, kString, kInts, kFloats, kDType };
const char* attr_type_name(AttrType t);

using AttrValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>,
                               std::vector<double>, DType>;

struct AttrSpec {
  std::string name;
  AttrType type;
  std::optional<AttrValue> default_value;  // nullopt: required
};

// Attribute values by name, in schema order once normalised by dispatch.
class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> items) : items_(items) {}
  Attrs& set(const std::string& name, AttrValue value);
  bool has(const std::string& name) const;
  const AttrValue& get(const std::string& name) const;  // throws ValueError if absent
  int64_t get_int(const std::string& name) const;
  double get_float(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;
  const std::vector<int64_t>& get_ints(const std::string& name) const;
  const std::vector<double>& get_floats(const std::string& name) const;
  DType get_dtype(const std::string& name) const;
  const std::vector<std::pair<std::string, AttrValue>>& items() const { return items_; }

 private:
  std::vector<std::pair<std::string, AttrValue>> items_;
};

// How dispatch prepares tensor inputs before inference and the kernel.
enum class DTypePolicy {
  kNone,             // inputs reach the kernel in their own dtypes
  kPromote,          // the `promoted` inputs are cast to their common dtype
  kPromoteToFloat,   // as kPromote, then integers/bool become f32
};

enum class AmpCategory { kNone, kLowerPrecision, kFullPrecision, kPromote };

// How an op's outputs get their gradient. Every op states it here, in the
// catalog, so a test can tell a forgotten gradient rule from a deliberate
// absence (tests/unit/test_op_gradients.cpp) and docs/ops.md can show it.
enum class Gradient {
  kRule,            // a rule in runtime/src/autograd/ (the default)
  kNone,            // the outputs carry no gradient: comparisons, arg-reductions, random draws
  kTensorMethod,    // a view or device copy: its Tensor method records its own node
  kDecomposition,   // a fusion or a public composite (topk): under autograd it runs as its decomposition, whose parts have rules
  kFirstOrderOnly,  // a backward kernel with no rule of its own: differentiating it (double grad) is an error
};
const char* gradient_name(Gradient g);

// Who calls an op: frontends expose public ops as oar.<op>, Tensor.<op> and
// oar::<op>; kernels behind a gradient rule, made by graph fusion or behind
// the optimizers (oar.optim, oar::optim) stay reachable only by name
// (oar.ops.<op>, oar::call).
enum class OpRole { kPublic, kBackwardKernel, kFusion, kOptimizer };

struct InputSpec {
  std::string name;
  bool variadic = false;  // a list of tensors (concat, stack); only the last input
  bool optional = false;  // may be an undefined Tensor
  bool promoted = true;   // takes part in dtype promotion
  bool in_signature = true;  // its dtype is part of the kernel key (false for optional inputs)
};

struct TensorMeta {
  Shape shape;
  DType dtype;
};

struct OpSchema;

struct InferContext {
  const OpSchema& schema;
  const std::vector<Tensor>& inputs;
  const Attrs& attrs;
  Device device;

  const Tensor& input(size_t i) const;
  const Shape& shape(size_t i) const;
  DType dtype(size_t i) const;
  int64_t ndim(size_t i) const;
};

using InferFn = std::function<std::vector<TensorMeta>(const InferContext&)>;
// The op written with other ops. Dispatch runs it on a device that has no
// kernel of its own for the op (before any CPU fallback), so a plugin gets a
// composite op such as linear from its matmul and add kernels without code.
// Returning no tensors for an op that has outputs declines: dispatch goes on
// to the CPU fallback (matmul decomposes integer products only).
using DecomposeFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs, const Attrs& attrs)>;
// For ops whose kernels update state in place (sgd_step, adam_step): the input
// whose buffer output `output` may be, or -1. A training graph's executor hands
// that buffer over when the graph's update writes the output back to it, so
// every device's kernel for the op must accept an output that is that input.
using OutputAliasFn = std::function<int64_t(size_t output, size_t n_inputs, const Attrs& attrs)>;

struct OpSchema {
  std::string name;
  std::vector<InputSpec> inputs;
  std::vector<std::string> outputs;  // empty + variadic_outputs: count from inference
  std::vector<AttrSpec> attrs;
  InferFn infer;
  DTypePolicy dtype_policy = DTypePolicy::kNone;
  bool broadcast = false;        // expand tensor inputs to the broadcast shape
  bool strided_inputs = false;   // kernels accept any strides; else inputs made contiguous
  bool variadic_outputs = false;
  bool needs_generator = false;  // dispatch fills attrs "seed" and "offset"
  bool creation = false;         // no tensor inputs; device comes from the call
  // A view op (reshape, permute, ...): no kernel anywhere; `decompose` runs the
  // Tensor method, which records its own gradient. Graphs name these ops.
  bool view = false;
  AmpCategory amp = AmpCategory::kNone;
  Gradient gradient = Gradient::kRule;
  OpRole role = OpRole::kPublic;
  DecomposeFn decompose;         // empty: the op needs a kernel (or the CPU fallback)
  OutputAliasFn output_alias;    // empty: outputs are fresh buffers (elementwise ops aside)
  std::string doc;
  // Example calls: what oar-conformance generates its op tests from (with
  // non-contiguous, negative-stride and empty variants of each) and
  // docs/ops.md shows. One call per string: the tensor inputs in order, each
  // a shape with an optional value range ("[2,3]", "[4]{0:5}" for indices in
  // [0, 5)), "-" for an omitted optional input, "( ... )" around a variadic
  // list, then attributes ("dim=1", "sizes=[2,3]", "mode='reflect'"); a
  // "large:" prefix keeps it to the full level. With none, the op is tested as
  // elementwise: generated shapes, scalars, broadcasting and a large tensor.
  // The grammar is parsed in tests/conformance/op_examples.cpp.
  std::vector<std::string> examples;
  int32_t id = -1;  // set by the registry
};

}  // namespace oar
