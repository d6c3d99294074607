// Neural-network recipes: convolution, linear / matmul, pooling, inference
// batch_norm, softmax. NCHW and OIHW are OpenVINO's own layouts, so operands
// pass through unchanged.
#include <openvino/op/add.hpp>
#include <openvino/op/avg_pool.hpp>
#include <openvino/op/batch_norm.hpp>
#include <openvino/op/constant.hpp>
#include <openvino/op/convolution.hpp>
#include <openvino/op/group_conv.hpp>
#include <openvino/op/log_softmax.hpp>
#include <openvino/op/matmul.hpp>
#include <openvino/op/max_pool.hpp>
#include <openvino/op/reshape.hpp>
#include <openvino/op/softmax.hpp>

#include "model_builder.h"

namespace oar_openvino {

namespace {

using oar_adapter_sdk::attr_int;
using oar_adapter_sdk::attr_string;

std::vector<Value> conv2d(const OpCall& c, bool fused) {
  const auto stride = pair_attr(c.op, "stride", {1, 1});
  const auto padding = pair_attr(c.op, "padding", {0, 0});
  const auto dilation = pair_attr(c.op, "dilation", {1, 1});
  const int64_t groups = attr_int(c.op, "groups", 1);
  const ov::Strides strides{size_t(stride[0]), size_t(stride[1])};
  const ov::Strides dilations{size_t(dilation[0]), size_t(dilation[1])};
  const ov::CoordinateDiff pads{padding[0], padding[1]};
  Value y;
  if (groups == 1) {
    y = std::make_shared<ov::op::v1::Convolution>(c.in(0), c.in(1), strides, pads, pads, dilations);
  } else {
    // GroupConvolution wants [G, Cout/G, Cin/G, kh, kw]; depthwise is the Cin/G == 1 case.
    const std::vector<int64_t> w = c.input_dims(1);
    const Value grouped = std::make_shared<ov::op::v1::Reshape>(
        c.in(1), constant_i64({groups, w[0] / groups, w[1], w[2], w[3]}), false);
    y = std::make_shared<ov::op::v1::GroupConvolution>(c.in(0), grouped, strides, pads, pads, dilations);
  }
  if (c.has(2)) {
    const int64_t channels = c.input_dims(1)[0];
    y = std::make_shared<ov::op::v1::Add>(
        y, std::make_shared<ov::op::v1::Reshape>(c.in(2), constant_i64({1, channels, 1, 1}), false));
  }
  if (fused) y = apply_activation(y, attr_string(c.op, "activation", "relu"));
  return {y};
}

std::vector<Value> linear(const OpCall& c, bool fused) {
  // x [..., in] @ weight[out, in]^T + bias[out]
  Value y = std::make_shared<ov::op::v0::MatMul>(c.in(0), c.in(1), false, true);
  if (c.has(2)) y = std::make_shared<ov::op::v1::Add>(y, c.in(2));
  if (fused) y = apply_activation(y, attr_string(c.op, "activation", "relu"));
  return {y};
}

struct PoolGeometry {
  ov::Strides strides;
  ov::Shape pads, kernel;
  ov::op::RoundingType rounding;
};

PoolGeometry pool_geometry(const OpCall& c) {
  const auto kernel = pair_attr(c.op, "kernel_size", {1, 1});
  const auto stride = pair_attr(c.op, "stride", kernel, true);  // [] means stride = kernel_size
  const auto padding = pair_attr(c.op, "padding", {0, 0});
  // CEIL_TORCH is PyTorch's ceil rule: the last window starts inside the input or its left padding.
  const bool ceil_mode = attr_int(c.op, "ceil_mode", 0) != 0;
  return {ov::Strides{size_t(stride[0]), size_t(stride[1])}, ov::Shape{size_t(padding[0]), size_t(padding[1])},
          ov::Shape{size_t(kernel[0]), size_t(kernel[1])},
          ceil_mode ? ov::op::RoundingType::CEIL_TORCH : ov::op::RoundingType::FLOOR};
}

std::vector<Value> max_pool2d(const OpCall& c) {
  const PoolGeometry g = pool_geometry(c);
  auto pool = std::make_shared<ov::op::v14::MaxPool>(c.in(0), g.strides, ov::Strides{1, 1}, g.pads, g.pads, g.kernel,
                                                     g.rounding, ov::op::PadType::EXPLICIT);
  return {pool->output(0)};
}

std::vector<Value> avg_pool2d(const OpCall& c) {
  const PoolGeometry g = pool_geometry(c);
  const bool exclude_pad = attr_int(c.op, "count_include_pad", 1) == 0;
  return {std::make_shared<ov::op::v14::AvgPool>(c.in(0), g.strides, g.pads, g.pads, g.kernel, exclude_pad, g.rounding,
                                                 ov::op::PadType::EXPLICIT)};
}

std::vector<Value> batch_norm(const OpCall& c) {
  // Inference form only (support.cpp): running statistics, absent weight / bias mean 1 / 0.
  const size_t channels = size_t(c.input_dims(0)[1]);
  const Value gamma = c.has(1) ? c.in(1) : Value(std::make_shared<ov::op::v0::Constant>(c.type(), ov::Shape{channels},
                                                                                        std::vector<float>(channels, 1.0f)));
  const Value beta = c.has(2) ? c.in(2) : Value(std::make_shared<ov::op::v0::Constant>(c.type(), ov::Shape{channels},
                                                                                       std::vector<float>(channels, 0.0f)));
  const double eps = oar_adapter_sdk::attr_float(c.op, "eps", 1e-5);
  Value y = std::make_shared<ov::op::v5::BatchNormInference>(c.in(0), gamma, beta, c.in(3), c.in(4), eps);
  std::vector<Value> outputs(c.op->output_count);
  outputs[0] = y;  // save_mean / save_var stay unmade: support.cpp refuses a model that reads them
  return outputs;
}

std::vector<Value> softmax(const OpCall& c, bool log) {
  const int64_t rank = int64_t(c.input_dims(0).size());
  const int64_t axis = normalize_axis(attr_int(c.op, "dim", -1), rank, std::string(c.op->type) + ": dim");
  if (log) return {std::make_shared<ov::op::v5::LogSoftmax>(c.in(0), axis)};
  return {std::make_shared<ov::op::v8::Softmax>(c.in(0), axis)};
}

}  // namespace

void add_nn_ops(OpTable& t) {
  t["conv2d"] = [](const OpCall& c) { return conv2d(c, false); };
  t["conv2d_act"] = [](const OpCall& c) { return conv2d(c, true); };
  t["linear"] = [](const OpCall& c) { return linear(c, false); };
  t["linear_act"] = [](const OpCall& c) { return linear(c, true); };
  t["matmul"] = [](const OpCall& c) -> std::vector<Value> {
    return {std::make_shared<ov::op::v0::MatMul>(c.in(0), c.in(1))};
  };
  t["max_pool2d"] = max_pool2d;
  t["avg_pool2d"] = avg_pool2d;
  t["batch_norm"] = batch_norm;
  t["softmax"] = [](const OpCall& c) { return softmax(c, false); };
  t["log_softmax"] = [](const OpCall& c) { return softmax(c, true); };
}

}  // namespace oar_openvino
