// The catalog sections of composite ops: PyTorch functions written with
// other catalog ops (flip, logsumexp, median, ...) that no device needs a
// kernel for. Each runs as its parts on every device; the parts carry the
// gradient, and a traced graph records the parts (so ONNX export and the
// fusion passes see ops they know). oar::<op> in C++ and oar.ops.<op> in
// Python come from these entries, with the conformance suite's op cases.
#pragma once

#include <utility>
#include <vector>

#include "oar/op_registry.h"

namespace oar {

// The reduced dims of a reduction over `dims` of shape `in` (every dim when
// `dims` is empty) and its output shape (composites_math.cpp).
std::pair<std::vector<int64_t>, Shape> reduced(const Shape& in, const std::vector<int64_t>& dims, bool keepdim);

void register_shape_composites(OpRegistry& r);   // composites_shape.cpp
void register_math_composites(OpRegistry& r);    // composites_math.cpp
void register_select_composites(OpRegistry& r);  // composites_select.cpp
void register_einsum_composite(OpRegistry& r);   // composites_einsum.cpp
void register_unique_composites(OpRegistry& r);  // composites_unique.cpp
void register_scatter_composites(OpRegistry& r); // composites_scatter.cpp
void register_reduce_composites(OpRegistry& r);  // composites_reduce.cpp
void register_linear_composites(OpRegistry& r);  // composites_linear.cpp
void register_index_composites(OpRegistry& r);   // composites_index.cpp
void register_sample_composites(OpRegistry& r);  // composites_sample.cpp

}  // namespace oar
