// ONNX RNN, GRU and LSTM. The forms PyTorch's nn.RNN/GRU/LSTM export
// (default activations or Relu for RNN, no clip, no peepholes, GRU with
// linear_before_reset, float32/float64) become one fused rnn_layer per
// direction, sequence_lens its lengths. Anything else is unrolled over the
// (static) sequence length: the input projection of all steps is one matmul,
// each step adds the recurrent matmul and applies the gate equations of the
// ONNX spec with its activation list, clip, biases, peepholes, directions,
// layouts and sequence_lens (shorter sequences keep their state and output
// zeros).
#include <algorithm>

#include "import_context.h"

namespace oar::onnx::detail {

namespace {

struct Activation {
  std::string name;
  double alpha, beta;
};

// The activation functions ONNX names, with their default parameters.
Value* activate(NodeContext& c, const Activation& a, Value* x) {
  DType d = c.dtype(x);
  const std::string& n = a.name;
  if (n == "Sigmoid") return c.op("sigmoid", {x});
  if (n == "Tanh") return c.op("tanh", {x});
  if (n == "Relu") return c.op("relu", {x});
  if (n == "Softsign") return x_over_one_plus_abs(c, x);
  if (n == "Softplus") return c.op("log", {c.add(c.scalar(1, d), c.op("exp", {x}))});
  if (n == "Affine") return c.add(c.mul(c.scalar(a.alpha, d), x), c.scalar(a.beta, d));
  if (n == "LeakyRelu") return c.op("leaky_relu", {x}, {{"negative_slope", a.alpha}});
  if (n == "ThresholdedRelu") return c.where(c.op("gt", {x, c.scalar(a.alpha, d)}), x, c.scalar(0, d));
  if (n == "ScaledTanh") return c.mul(c.scalar(a.alpha, d), c.op("tanh", {c.mul(c.scalar(a.beta, d), x)}));
  if (n == "HardSigmoid")
    return c.op("clamp", {c.add(c.mul(c.scalar(a.alpha, d), x), c.scalar(a.beta, d))}, {{"min", 0.0}, {"max", 1.0}});
  if (n == "Elu") {
    Value* neg = c.mul(c.scalar(a.alpha, d), c.sub(c.op("exp", {x}), c.scalar(1, d)));
    return c.where(c.op("gt", {x, c.scalar(0, d)}), x, neg);
  }
  c.unsupported(str("activation '", n, "'"));
}

// The activations of each direction: `per_direction` names each, defaults when absent.
std::vector<Activation> activations(NodeContext& c, const std::vector<std::string>& defaults, int64_t directions) {
  std::vector<std::string> names;
  if (const auto* a = c.find_attr("activations"))
    for (const auto& s : a->strings()) names.push_back(s);
  if (names.empty())
    for (int64_t d = 0; d < directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  if (names.size() != defaults.size() * size_t(directions))
    c.invalid(str("expects ", defaults.size() * size_t(directions), " activations, got ", names.size()));
  std::vector<double> alphas = c.attr_floats("activation_alpha"), betas = c.attr_floats("activation_beta");
  std::vector<Activation> out;
  size_t ai = 0, bi = 0;
  for (const auto& raw : names) {
    std::string n = raw;
    for (const char* known : {"Sigmoid", "Tanh", "Relu", "Softsign", "Softplus", "Affine", "LeakyRelu",
                              "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu"}) {
      std::string k = known;
      if (std::equal(n.begin(), n.end(), k.begin(), k.end(), [](char x, char y) { return std::tolower(x) == std::tolower(y); }))
        n = k;
    }
    double alpha = n == "LeakyRelu" ? 0.01 : n == "HardSigmoid" ? 0.2 : 1.0;
    double beta = n == "HardSigmoid" ? 0.5 : n == "Affine" ? 0.0 : 1.0;
    bool takes_alpha = n == "LeakyRelu" || n == "ThresholdedRelu" || n == "ScaledTanh" || n == "HardSigmoid" ||
                       n == "Elu" || n == "Affine";
    bool takes_beta = n == "ScaledTanh" || n == "HardSigmoid" || n == "Affine";
    if (takes_alpha && ai < alphas.size()) alpha = alphas[ai++];
    if (takes_beta && bi < betas.size()) beta = betas[bi++];
    out.push_back({n, alpha, beta});
  }
  return out;
}

enum class Cell { kRnn, kGru, kLstm };

// Y [S, D, B, H], Y_h and Y_c [D, B, H] (batch first with layout 1) from each
// direction's outputs [S, B, H] and final states [B, H]; no Y_c when `cs` is empty.
std::vector<Value*> node_outputs(NodeContext& c, const std::vector<Value*>& ys, const std::vector<Value*>& hs,
                                 const std::vector<Value*>& cs, int64_t layout) {
  Value* y = c.op("stack", ys, {{"dim", int64_t(1)}});
  Value* yh = c.op("stack", hs, {{"dim", int64_t(0)}});
  Value* yc = cs.empty() ? nullptr : c.op("stack", cs, {{"dim", int64_t(0)}});
  if (layout) {
    y = c.permute(y, {2, 0, 1, 3});
    yh = c.permute(yh, {1, 0, 2});
    if (yc != nullptr) yc = c.permute(yc, {1, 0, 2});
  }
  std::vector<Value*> outs{y, yh};
  if (yc != nullptr) outs.push_back(yc);
  return outs;
}

// The rnn_layer mode of a node that fits the fused op, or "" when it does not.
std::string fused_mode(NodeContext& c, Cell cell, const std::vector<Activation>& acts,
                       const std::vector<std::string>& defaults, double clip, DType d) {
  if (clip > 0 || (d != DType::f32 && d != DType::f64)) return "";
  if (cell == Cell::kLstm && c.has_input(7)) return "";  // peepholes
  if (cell == Cell::kGru && c.attr_int("linear_before_reset", 0) == 0) return "";
  if (cell == Cell::kRnn) {  // one activation for every direction: Tanh or Relu
    for (const Activation& a : acts)
      if (a.name != acts[0].name) return "";
    return acts[0].name == "Tanh" ? "RNN_TANH" : acts[0].name == "Relu" ? "RNN_RELU" : "";
  }
  for (size_t k = 0; k < acts.size(); ++k)
    if (acts[k].name != defaults[k % defaults.size()]) return "";
  return cell == Cell::kLstm ? "LSTM" : "GRU";
}

// `v` ([G*H, ...] or [G*H], ONNX gate order) with PyTorch's gate order: LSTM
// i, o, f, c -> i, f, g, o; GRU z, r, h -> r, z, n.
Value* torch_gate_order(NodeContext& c, Cell cell, Value* v, int64_t hidden) {
  std::vector<int64_t> order = cell == Cell::kLstm ? std::vector<int64_t>{0, 2, 3, 1}
                               : cell == Cell::kGru ? std::vector<int64_t>{1, 0, 2}
                                                    : std::vector<int64_t>{0};
  if (order.size() == 1) return v;
  std::vector<Value*> parts;
  for (int64_t k : order) parts.push_back(c.slice(v, 0, k * hidden, (k + 1) * hidden));
  return c.op("concat", parts, {{"dim", int64_t(0)}});
}

std::vector<Value*> recurrent_op(NodeContext& c, Cell cell) {
  const int64_t gates = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
  Value* x = c.required_input(0);
  Value* w = c.required_input(1);  // [D, G*H, I]
  Value* r = c.required_input(2);  // [D, G*H, H]
  Value* b = c.input(3);           // [D, 2*G*H]
  int64_t hidden = c.attr_int("hidden_size");
  int64_t layout = c.attr_int("layout", 0);
  std::string direction = c.attr_string("direction", "forward");
  int64_t dirs = direction == "bidirectional" ? 2 : 1;
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    c.invalid(str("unknown direction '", direction, "'"));
  double clip = c.attr_float("clip", 0.0);
  if (cell == Cell::kLstm && c.attr_int("input_forget", 0) != 0) c.unsupported("input_forget");
  bool linear_before_reset = cell == Cell::kGru && c.attr_int("linear_before_reset", 0) != 0;
  std::vector<std::string> defaults = cell == Cell::kRnn   ? std::vector<std::string>{"Tanh"}
                                      : cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                           : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
  std::vector<Activation> acts = activations(c, defaults, dirs);
  if (layout) x = c.permute(x, {1, 0, 2});  // -> [S, B, I]
  const int64_t steps = c.shape(x)[0], batch = c.shape(x)[1];
  DType d = c.dtype(x);
  auto initial = [&](size_t i, int64_t dir) -> Value* {
    if (!c.has_input(i)) return c.op("fill", {}, {{"shape", Shape{batch, hidden}}, {"value", 0.0}, {"dtype", d}});
    Value* v = c.input(i);
    return c.op("select", {v}, {{"dim", int64_t(layout ? 1 : 0)}, {"index", dir}});
  };
  const std::string mode = fused_mode(c, cell, acts, defaults, clip, d);
  if (!mode.empty()) {
    Value* lengths = c.has_input(4) ? c.input(4) : nullptr;
    std::vector<Value*> ys, hs, cs;
    for (int64_t dir = 0; dir < dirs; ++dir) {
      auto pick = [&](Value* v) { return c.op("select", {v}, {{"dim", int64_t(0)}, {"index", dir}}); };
      Value* bih = nullptr;
      Value* bhh = nullptr;
      if (b != nullptr) {
        Value* bd = pick(b);
        bih = torch_gate_order(c, cell, c.slice(bd, 0, 0, gates * hidden), hidden);
        bhh = torch_gate_order(c, cell, c.slice(bd, 0, gates * hidden, 2 * gates * hidden), hidden);
      }
      std::vector<Value*> o = c.ops(
          "rnn_layer",
          {x, initial(5, dir), torch_gate_order(c, cell, pick(w), hidden), torch_gate_order(c, cell, pick(r), hidden),
           cell == Cell::kLstm ? initial(6, dir) : nullptr, bih, bhh, lengths},
          {{"mode", mode}, {"reverse", direction == "reverse" || dir == 1}});
      ys.push_back(o[0]);
      hs.push_back(o[1]);
      cs.push_back(o[2]);
    }
    if (cell != Cell::kLstm) cs.clear();
    return node_outputs(c, ys, hs, cs, layout);
  }
  std::vector<int64_t> lens;
  if (c.has_input(4)) lens = c.constant_ints(4, "sequence_lens");
  bool partial = std::any_of(lens.begin(), lens.end(), [&](int64_t l) { return l != steps; });
  auto gate = [&](Value* v, int64_t k) { return c.slice(v, 1, k * hidden, (k + 1) * hidden); };
  auto clipped = [&](Value* v) { return clip > 0 ? c.op("clamp", {v}, {{"min", -clip}, {"max", clip}}) : v; };

  std::vector<Value*> ys, last_h, last_c;
  for (int64_t dir = 0; dir < dirs; ++dir) {
    bool reverse = direction == "reverse" || dir == 1;
    if (reverse && partial) c.unsupported("reverse directions with sequence_lens shorter than the input");
    const Activation* f = &acts[size_t(dir) * defaults.size()];
    Value* wd = c.permute(c.op("select", {w}, {{"dim", int64_t(0)}, {"index", dir}}), {1, 0});  // [I, G*H]
    Value* rd = c.permute(c.op("select", {r}, {{"dim", int64_t(0)}, {"index", dir}}), {1, 0});  // [H, G*H]
    Value* xw = c.op("matmul", {x, wd});  // [S, B, G*H]
    Value* wb = nullptr;
    Value* rb = nullptr;
    if (b != nullptr) {
      Value* bd = c.op("select", {b}, {{"dim", int64_t(0)}, {"index", dir}});
      wb = c.slice(bd, 0, 0, gates * hidden);
      rb = c.slice(bd, 0, gates * hidden, 2 * gates * hidden);
      // the recurrent bias of GRU's candidate gate may have to stay apart (linear_before_reset)
      if (!linear_before_reset) xw = c.add(xw, c.add(wb, rb));
      else xw = c.add(xw, wb);
    }
    Value* p = cell == Cell::kLstm && c.has_input(7) ? c.op("select", {c.input(7)}, {{"dim", int64_t(0)}, {"index", dir}}) : nullptr;
    Value* h = initial(5, dir);
    Value* cs = cell == Cell::kLstm ? initial(6, dir) : nullptr;
    std::vector<Value*> outs(static_cast<size_t>(steps));
    for (int64_t i = 0; i < steps; ++i) {
      int64_t t = reverse ? steps - 1 - i : i;
      Value* xt = c.op("select", {xw}, {{"dim", int64_t(0)}, {"index", t}});  // [B, G*H]
      // GRU's candidate gate multiplies the reset state first unless linear_before_reset
      Value* hr = c.op("matmul", {h, cell == Cell::kGru && !linear_before_reset ? c.slice(rd, 1, 0, 2 * hidden) : rd});
      Value* h_new;
      Value* c_new = nullptr;
      if (cell == Cell::kRnn) {
        h_new = activate(c, f[0], clipped(c.add(xt, hr)));
      } else if (cell == Cell::kGru) {
        // gate order z, r, h
        Value* rec = hr;  // H_{t-1} R^T (+ Rb when it stays apart from the input projection)
        if (linear_before_reset && rb != nullptr) rec = c.add(rec, c.unsqueeze(rb, 0));
        Value* z = activate(c, f[0], clipped(c.add(gate(xt, 0), gate(rec, 0))));
        Value* rt = activate(c, f[0], clipped(c.add(gate(xt, 1), gate(rec, 1))));
        Value* cand;
        if (linear_before_reset) {
          cand = activate(c, f[1], clipped(c.add(gate(xt, 2), c.mul(rt, gate(rec, 2)))));
        } else {
          Value* rh = c.op("matmul", {c.mul(rt, h), c.slice(rd, 1, 2 * hidden, 3 * hidden)});
          cand = activate(c, f[1], clipped(c.add(gate(xt, 2), rh)));
        }
        Value* one = c.scalar(1, d);
        h_new = c.add(c.mul(c.sub(one, z), cand), c.mul(z, h));
      } else {
        // gate order i, o, f, c; peepholes P = [Pi, Po, Pf]
        Value* g = c.add(xt, hr);
        Value* gi = gate(g, 0);
        Value* gf = gate(g, 2);
        if (p != nullptr) {
          gi = c.add(gi, c.mul(c.slice(p, 0, 0, hidden), cs));
          gf = c.add(gf, c.mul(c.slice(p, 0, 2 * hidden, 3 * hidden), cs));
        }
        Value* it = activate(c, f[0], clipped(gi));
        Value* ft = activate(c, f[0], clipped(gf));
        Value* ct = activate(c, f[1], clipped(gate(g, 3)));
        c_new = c.add(c.mul(ft, cs), c.mul(it, ct));
        Value* go = gate(g, 1);
        if (p != nullptr) go = c.add(go, c.mul(c.slice(p, 0, hidden, 2 * hidden), c_new));
        Value* ot = activate(c, f[0], clipped(go));
        h_new = c.mul(ot, activate(c, f[2], c_new));
      }
      Value* y = h_new;
      if (partial) {
        // finished sequences keep their state and emit zeros
        std::vector<uint8_t> live(static_cast<size_t>(batch));
        for (int64_t k = 0; k < batch; ++k) live[size_t(k)] = t < lens[size_t(k)];
        Value* mask = c.constant(Tensor::from_host(live.data(), batch, {batch, 1}, DType::boolean, Device::cpu()));
        y = c.where(mask, h_new, c.scalar(0, d));
        h_new = c.where(mask, h_new, h);
        if (c_new != nullptr) c_new = c.where(mask, c_new, cs);
      }
      h = h_new;
      cs = c_new;
      outs[size_t(t)] = y;
    }
    ys.push_back(c.op("stack", outs, {{"dim", int64_t(0)}}));  // [S, B, H]
    last_h.push_back(h);
    if (cs != nullptr) last_c.push_back(cs);
  }
  return node_outputs(c, ys, last_h, last_c, layout);
}

}  // namespace

void register_rnn_mappers(MapperTable& t) {
  t.add("RNN", [](NodeContext& c) { return recurrent_op(c, Cell::kRnn); });
  t.add("GRU", [](NodeContext& c) { return recurrent_op(c, Cell::kGru); });
  t.add("LSTM", [](NodeContext& c) { return recurrent_op(c, Cell::kLstm); });
}

}  // namespace oar::onnx::detail
