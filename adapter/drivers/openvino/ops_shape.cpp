// Shape recipes (reshape, permute, concat) and mean. Shapes are static, so
// every target shape and axis list is resolved here into a constant.
#include <openvino/op/concat.hpp>
#include <openvino/op/reduce_mean.hpp>
#include <openvino/op/reshape.hpp>
#include <openvino/op/transpose.hpp>

#include "model_builder.h"

namespace oar_openvino {

namespace {

using oar_adapter_sdk::attr_int;
using oar_adapter_sdk::attr_ints;
using oar_adapter_sdk::unsupported;

std::vector<Value> reshape(const OpCall& c) {
  std::vector<int64_t> shape = attr_ints(c.op, "shape");
  const int64_t count = oar_adapter_sdk::element_count(c.input_dims(0));
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && infer_at < 0) {
      infer_at = int64_t(i);
    } else if (shape[i] < 0) {
      throw unsupported("reshape: shape entry " + std::to_string(shape[i]) + " (only one -1 is allowed)");
    } else {
      known *= shape[i];
    }
  }
  if (infer_at >= 0) {
    if (known == 0 || count % known != 0)
      throw unsupported("reshape: -1 cannot be resolved for " + std::to_string(count) + " elements");
    shape[size_t(infer_at)] = count / known;
  } else if (known != count) {
    throw unsupported("reshape: shape holds " + std::to_string(known) + " elements, the input " + std::to_string(count));
  }
  // special_zero off: a 0 in oar's shape is a real 0, not "copy this dim".
  return {std::make_shared<ov::op::v1::Reshape>(c.in(0), constant_i64(shape), false)};
}

std::vector<Value> permute(const OpCall& c) {
  std::vector<int64_t> dims = attr_ints(c.op, "dims");
  const int64_t rank = int64_t(c.input_dims(0).size());
  if (int64_t(dims.size()) != rank)
    throw unsupported("permute: dims has " + std::to_string(dims.size()) + " entries for rank " + std::to_string(rank));
  std::vector<bool> seen(size_t(rank), false);
  for (int64_t& d : dims) {
    d = normalize_axis(d, rank, "permute: dim");
    if (seen[size_t(d)]) throw unsupported("permute: dims is not a permutation");
    seen[size_t(d)] = true;
  }
  return {std::make_shared<ov::op::v1::Transpose>(c.in(0), constant_i64(dims))};
}

std::vector<Value> concat(const OpCall& c) {
  const int64_t rank = int64_t(c.output_operand(0).rank);
  const int64_t axis = normalize_axis(attr_int(c.op, "dim", 0), rank, "concat: dim");
  ov::OutputVector parts;
  for (size_t i = 0; i < c.op->input_count; ++i) {
    const std::vector<int64_t> d = c.input_dims(i);
    if (d.size() == 1 && d[0] == 0) continue;  // oar skips 1-D empty tensors
    parts.push_back(c.in(i));
  }
  if (parts.empty()) throw unsupported("concat: every input is empty");
  return {std::make_shared<ov::op::v0::Concat>(parts, axis)};
}

std::vector<Value> mean(const OpCall& c) {
  const int64_t rank = int64_t(c.input_dims(0).size());
  std::vector<int64_t> dims = attr_ints(c.op, "dims");
  if (dims.empty()) {
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);  // [] means every dim
  } else {
    std::vector<bool> seen(size_t(rank), false);
    for (int64_t& d : dims) {
      d = normalize_axis(d, rank, "mean: dim");
      if (rank > 0 && seen[size_t(d)]) throw unsupported("mean: dim " + std::to_string(d) + " is listed twice");
      if (rank > 0) seen[size_t(d)] = true;
    }
    if (rank == 0) dims.clear();  // a scalar's mean is itself
  }
  const bool keepdim = attr_int(c.op, "keepdim", 0) != 0;
  return {std::make_shared<ov::op::v1::ReduceMean>(c.in(0), constant_i64(dims), keepdim)};
}

}  // namespace

void add_shape_ops(OpTable& t) {
  t["reshape"] = reshape;
  t["permute"] = permute;
  t["concat"] = concat;
  t["mean"] = mean;
}

}  // namespace oar_openvino
