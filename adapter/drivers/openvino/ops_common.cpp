// Helpers the op recipes share, and the recipe lookup.
#include <openvino/op/constant.hpp>
#include <openvino/op/relu.hpp>
#include <openvino/op/sigmoid.hpp>
#include <openvino/op/tanh.hpp>

#include "model_builder.h"

namespace oar_openvino {

using oar_adapter_sdk::unsupported;

Value constant_i64(const std::vector<int64_t>& values) {
  return std::make_shared<ov::op::v0::Constant>(ov::element::i64, ov::Shape{values.size()}, values);
}

Value scalar(ov::element::Type type, double value) {
  return std::make_shared<ov::op::v0::Constant>(type, ov::Shape{}, std::vector<double>{value});
}

std::array<int64_t, 2> pair_attr(const oar_adapter_operation* op, const char* name, std::array<int64_t, 2> fallback,
                                 bool empty_is_fallback) {
  if (oar_adapter_sdk::find_attr(op, name) == nullptr) return fallback;
  std::vector<int64_t> v = oar_adapter_sdk::attr_ints(op, name);
  if (v.empty() && empty_is_fallback) return fallback;
  if (v.size() != 1 && v.size() != 2)
    throw unsupported(std::string(op->type) + ": attribute '" + name + "' needs 1 or 2 values, got " +
                      std::to_string(v.size()));
  return {v.front(), v.back()};
}

int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& what) {
  const int64_t bound = rank == 0 ? 1 : rank;  // a scalar accepts 0 and -1, as PyTorch does
  if (axis < -bound || axis >= bound)
    throw unsupported(what + " " + std::to_string(axis) + " is outside rank " + std::to_string(rank));
  return axis < 0 ? axis + bound : axis;
}

Value apply_activation(const Value& x, const std::string& activation) {
  if (activation == "relu") return std::make_shared<ov::op::v0::Relu>(x);
  if (activation == "sigmoid") return std::make_shared<ov::op::v0::Sigmoid>(x);
  if (activation == "tanh") return std::make_shared<ov::op::v0::Tanh>(x);
  throw unsupported("activation '" + activation + "' is not one of relu, sigmoid, tanh");
}

const OpBuilder* find_op_builder(const std::string& type) {
  static const OpTable table = [] {
    OpTable t;
    add_elementwise_ops(t);
    add_nn_ops(t);
    add_shape_ops(t);
    return t;
  }();
  auto it = table.find(type);
  return it == table.end() ? nullptr : &it->second;
}

}  // namespace oar_openvino
