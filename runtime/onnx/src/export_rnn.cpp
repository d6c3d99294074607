// Export of the fused recurrent layer (rnn_layer) as ONNX's own RNN, GRU or
// LSTM node, the form PyTorch's exporter writes: one direction, W/R/B with
// a leading num_directions axis, gates reordered (PyTorch's LSTM i, f, g, o
// is ONNX's i, o, f, c; GRU's r, z, n is z, r, h with linear_before_reset),
// the lengths as sequence_lens, and the num_directions axis squeezed off the
// outputs.
#include "exporter.h"
#include "oar/onnx/onnx.h"

namespace oar::onnx::detail {

namespace {

using Ctx = ExportContext;

// PyTorch gate block order -> ONNX order, per mode.
std::vector<int64_t> onnx_gate_order(const std::string& mode) {
  if (mode == "LSTM") return {0, 3, 1, 2};
  if (mode == "GRU") return {1, 0, 2};
  return {0};
}

// `x` ([G*H, ...] or [G*H]) with its gate blocks in ONNX order.
std::string reorder_gates(Ctx& c, const std::string& x, int64_t H, const std::vector<int64_t>& order) {
  if (order.size() == 1) return x;
  std::vector<std::string> parts;
  for (size_t k = 0; k < order.size(); ++k) parts.push_back(c.b.fresh("gate"));
  auto& split = c.b.node("Split", {x, c.b.ints(std::vector<int64_t>(order.size(), H))}, parts);
  set_attr(split, "axis", int64_t(0));
  std::vector<std::string> ordered;
  for (int64_t k : order) ordered.push_back(parts[size_t(k)]);
  std::string out = c.b.fresh("gates");
  set_attr(c.b.node("Concat", ordered, {out}), "axis", int64_t(0));
  return out;
}

std::string unsqueeze0(Ctx& c, const std::string& x) { return c.b.op("Unsqueeze", {x, c.b.ints({0})}); }

void rnn_layer_op(Ctx& c) {
  const std::string mode = c.node.attrs.get_string("mode");
  const DType dt = c.in_dtype(0);
  const int64_t GH = c.in_shape(3)[0], H = c.in_shape(3)[1];
  const std::vector<int64_t> order = onnx_gate_order(mode);
  const std::string W = unsqueeze0(c, reorder_gates(c, c.in[2], H, order));
  const std::string R = unsqueeze0(c, reorder_gates(c, c.in[3], H, order));
  std::string B;
  if (!c.in[5].empty() || !c.in[6].empty()) {
    auto bias = [&](size_t i) {
      return c.in[i].empty() ? c.b.initializer(Tensor::zeros({GH}, dt, Device::cpu()), "zero_bias")
                             : reorder_gates(c, c.in[i], H, order);
    };
    B = c.b.fresh("B");
    set_attr(c.b.node("Concat", {bias(5), bias(6)}, {B}), "axis", int64_t(0));
    B = unsqueeze0(c, B);
  }
  const std::string lens = c.in[7].empty() ? "" : c.b.cast(c.in[7], c.in_dtype(7), DType::i32);
  std::vector<std::string> inputs = {c.in[0], W, R, B, lens, unsqueeze0(c, c.in[1])};
  if (mode == "LSTM") inputs.push_back(c.in[4].empty() ? "" : unsqueeze0(c, c.in[4]));
  while (!inputs.empty() && inputs.back().empty()) inputs.pop_back();

  const std::string Y = c.b.fresh("Y"), Yh = c.b.fresh("Y_h"), Yc = c.b.fresh("Y_c");
  std::vector<std::string> outputs = {Y, Yh};
  const bool cell_out = mode == "LSTM" && c.output_used(2);
  if (cell_out) outputs.push_back(Yc);
  auto& n = c.b.node(mode == "LSTM" ? "LSTM" : mode == "GRU" ? "GRU" : "RNN", inputs, outputs);
  set_attr(n, "hidden_size", H);
  set_attr(n, "direction", std::string(c.node.attrs.get_bool("reverse") ? "reverse" : "forward"));
  if (mode == "GRU") set_attr(n, "linear_before_reset", int64_t(1));
  if (mode == "RNN_RELU") {
    auto* a = n.add_attribute();
    a->set_name("activations");
    a->set_type(::onnx::AttributeProto::STRINGS);
    a->add_strings("Relu");
  }
  c.b.node("Squeeze", {Y, c.b.ints({1})}, {c.out[0]});
  c.b.node("Squeeze", {Yh, c.b.ints({0})}, {c.out[1]});
  if (cell_out) {
    c.b.node("Squeeze", {Yc, c.b.ints({0})}, {c.out[2]});
  } else if (mode != "LSTM" && c.output_used(2)) {  // c_n of a layer without a cell state: zeros
    auto& z = c.b.node("ConstantOfShape", {c.b.ints(c.out_meta(2).shape)}, {c.out[2]});
    auto* a = z.add_attribute();
    a->set_name("value");
    a->set_type(::onnx::AttributeProto::TENSOR);
    tensor_to_proto(Tensor::zeros({1}, dt, Device::cpu()), *a->mutable_t());
  }
}

}  // namespace

void add_rnn_emitters(std::unordered_map<std::string, Emitter>& e) { e["rnn_layer"] = rnn_layer_op; }

}  // namespace oar::onnx::detail
