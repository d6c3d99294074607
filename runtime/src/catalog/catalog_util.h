// Small builders shared by the catalog sections, so each op entry reads as a
// declaration: name, inputs, attributes, inference.
#pragma once

#include <limits>

#include "oar/dispatch.h"
#include "oar/error.h"
#include "oar/op_registry.h"
#include "oar/tensor.h"

namespace oar::catalog {

inline AttrSpec attr(const std::string& name, AttrType type) { return {name, type, std::nullopt}; }
inline AttrSpec attr(const std::string& name, AttrType type, AttrValue def) {
  return {name, type, std::move(def)};
}
inline InputSpec optional_input(const std::string& name) {
  InputSpec s{name};
  s.optional = true;
  s.in_signature = false;
  s.promoted = false;
  return s;
}
inline InputSpec unpromoted(const std::string& name) {
  InputSpec s{name};
  s.promoted = false;
  return s;
}
inline InputSpec variadic(const std::string& name) {
  InputSpec s{name};
  s.variadic = true;
  return s;
}

// Output shape of an elementwise op: the broadcast of all defined inputs.
inline Shape broadcast_all(const InferContext& c) {
  const Shape* first = nullptr;  // equal shapes (the common case) cost one copy at the end
  Shape out;
  bool broadcast = false;
  for (const auto& t : c.inputs) {
    if (!t.defined()) continue;
    if (first == nullptr) {
      first = &t.shape();
    } else if (broadcast || t.shape() != *first) {
      out = broadcast_shapes(broadcast ? out : *first, t.shape());
      broadcast = true;
    }
  }
  return broadcast || first == nullptr ? out : *first;
}

inline void require_floating(const InferContext& c, size_t i) {
  if (!is_floating(c.dtype(i)))
    throw DTypeError(str("op '", c.schema.name, "' requires a floating-point input '",
                         c.schema.inputs[std::min(i, c.schema.inputs.size() - 1)].name,
                         "', got ", dtype_name(c.dtype(i))));
}

inline void require_integral_index(const InferContext& c, size_t i) {
  DType d = c.dtype(i);
  if (d != DType::i64 && d != DType::i32)
    throw DTypeError(str("op '", c.schema.name, "': index input '",
                         c.schema.inputs[std::min(i, c.schema.inputs.size() - 1)].name,
                         "' must be i64 or i32, got ", dtype_name(d)));
}

inline void require_ndim(const InferContext& c, size_t i, int64_t ndim) {
  if (c.ndim(i) != ndim)
    throw ShapeError(str("op '", c.schema.name, "': input '",
                         c.schema.inputs[std::min(i, c.schema.inputs.size() - 1)].name,
                         "' must have ", ndim, " dimensions, got shape ", shape_str(c.shape(i))));
}

// A schema from its parts; sections wrap it with their usual dtype policy.
inline OpSchema make_schema(const std::string& name, std::vector<InputSpec> inputs,
                            std::vector<std::string> outputs, std::vector<AttrSpec> attrs, InferFn infer,
                            std::string doc, DTypePolicy policy, AmpCategory amp = AmpCategory::kNone) {
  OpSchema s;
  s.name = name;
  s.inputs = std::move(inputs);
  s.outputs = std::move(outputs);
  s.attrs = std::move(attrs);
  s.infer = std::move(infer);
  s.dtype_policy = policy;
  s.amp = amp;
  s.doc = std::move(doc);
  return s;
}

// A kernel that a gradient rule calls (conv2d_backward_data, ...): not a
// public op of the frontends. `gradient` says whether it has a rule itself.
inline OpSchema backward_kernel(OpSchema s, Gradient gradient = Gradient::kRule) {
  s.role = OpRole::kBackwardKernel;
  s.gradient = gradient;
  return s;
}
// A composite: the op written with other ops, which carry its gradient (a
// device may still register a kernel of its own for it).
inline OpSchema composite(OpSchema s, DecomposeFn fn) {
  s.decompose = std::move(fn);
  s.gradient = Gradient::kDecomposition;
  return s;
}
// An op whose outputs carry no gradient (comparisons, indices, random draws).
inline OpSchema no_gradient(OpSchema s) {
  s.gradient = Gradient::kNone;
  return s;
}

constexpr double kInf = std::numeric_limits<double>::infinity();

// Decompositions (composites, the optimizers' steps on devices without the
// fused kernels) written with other ops: a scalar operand and short calls.
inline Tensor scalar_like(double value, const Tensor& like) {
  return Tensor::full({}, value, like.dtype(), like.device());
}
inline Tensor op1(const char* name, const Tensor& a, const Attrs& attrs = {}) { return call1(name, {a}, attrs); }
inline Tensor op2(const char* name, const Tensor& a, const Tensor& b) { return call1(name, {a, b}); }

}  // namespace oar::catalog
