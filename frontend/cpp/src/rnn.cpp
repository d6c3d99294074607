// RNN, LSTM and GRU modules (oar/nn/rnn.h): parameter registration in
// PyTorch's order and names, argument checks with PyTorch's messages, and the
// layer loop over the fused rnn_layer op.
#include "oar/nn/rnn.h"

#include <cmath>

#include "oar/error.h"
#include "oar/functional.h"
#include "oar/nn/init.h"
#include "oar/ops.h"

namespace oar::nn {

namespace {

int64_t gates_of(const std::string& mode) { return mode == "LSTM" ? 4 : mode == "GRU" ? 3 : 1; }

std::string suffix(int64_t layer, int64_t direction) {
  return "_l" + std::to_string(layer) + (direction == 1 ? "_reverse" : "");
}

}  // namespace

RNNImplBase::RNNImplBase(std::string mode_, int64_t input_size_, int64_t hidden_size_, int64_t num_layers_,
                         bool bias_, bool batch_first_, double dropout_, bool bidirectional_)
    : mode(std::move(mode_)), input_size(input_size_), hidden_size(hidden_size_), num_layers(num_layers_),
      bias(bias_), batch_first(batch_first_), dropout(dropout_), bidirectional(bidirectional_) {
  if (input_size < 0) throw ValueError(str(mode, ": input_size must be >= 0, got ", input_size));
  if (hidden_size <= 0) throw ValueError(str(mode, ": hidden_size must be positive, got ", hidden_size));
  if (num_layers <= 0) throw ValueError(str(mode, ": num_layers must be positive, got ", num_layers));
  if (!(dropout >= 0.0 && dropout <= 1.0))
    throw ValueError(str(mode, ": dropout should be a number in range [0, 1], got ", dropout));
  const int64_t D = bidirectional ? 2 : 1, G = gates_of(mode) * hidden_size;
  for (int64_t layer = 0; layer < num_layers; ++layer)
    for (int64_t d = 0; d < D; ++d) {
      const std::string s = suffix(layer, d);
      const int64_t in = layer == 0 ? input_size : hidden_size * D;
      register_parameter("weight_ih" + s, Tensor::empty({G, in}));
      register_parameter("weight_hh" + s, Tensor::empty({G, hidden_size}));
      if (bias) {
        register_parameter("bias_ih" + s, Tensor::empty({G}));
        register_parameter("bias_hh" + s, Tensor::empty({G}));
      }
    }
  reset_parameters();
}

void RNNImplBase::reset_parameters() {
  const double bound = 1.0 / std::sqrt(double(hidden_size));
  for (Tensor& p : parameters(false)) init::uniform_(p, -bound, bound);
}

std::vector<Tensor> RNNImplBase::all_weights(int64_t layer, int64_t direction) const {
  const StateDict params = named_parameters(false);
  const std::string s = suffix(layer, direction);
  std::vector<Tensor> out;
  for (const char* name : {"weight_ih", "weight_hh", "bias_ih", "bias_hh"}) {
    const Tensor* t = params.find(name + s);
    out.push_back(t ? *t : Tensor());
  }
  return out;
}

std::pair<Tensor, std::vector<Tensor>> RNNImplBase::run(const Tensor& input, std::vector<Tensor> states) {
  const int64_t D = bidirectional ? 2 : 1;
  if (input.dim() != 2 && input.dim() != 3)
    throw ShapeError(str(mode, ": expected input to be 2-D or 3-D, got ", input.dim(), "-D ", shape_str(input.shape())));
  if (input.shape().back() != input_size)
    throw ShapeError(str(mode, ": input.size(-1) must be equal to input_size. Expected ", input_size, ", got ",
                         input.shape().back()));
  const bool batched = input.dim() == 3;
  // Time-major [T, N, I].
  Tensor x = batched ? (batch_first ? input.transpose(0, 1) : input) : input.reshape({input.shape()[0], 1, input_size});
  const int64_t N = x.shape()[1];
  for (Tensor& s : states) {
    if (!s.defined()) continue;
    if (s.dim() != (batched ? 3 : 2))
      throw ShapeError(str(mode, ": for ", batched ? "batched 3-D" : "unbatched 2-D", " input, hx should also be ",
                           batched ? 3 : 2, "-D but got ", s.dim(), "-D tensor"));
    if (!batched) s = s.reshape({s.shape()[0], 1, s.shape()[1]});
    const Shape want{num_layers * D, N, hidden_size};
    if (s.shape() != want)
      throw ShapeError(str(mode, ": expected hidden size ", shape_str(want), ", got ", shape_str(s.shape())));
  }
  std::vector<std::vector<Tensor>> finals(states.size());
  for (int64_t layer = 0; layer < num_layers; ++layer) {
    std::vector<Tensor> outs;
    for (int64_t d = 0; d < D; ++d) {
      const std::vector<Tensor> w = all_weights(layer, d);
      const int64_t idx = layer * D + d;
      auto initial = [&](size_t k) {
        return states[k].defined() ? states[k].select(0, idx)
                                   : Tensor::zeros({N, hidden_size}, x.dtype(), x.device());
      };
      std::vector<Tensor> r = oar::rnn_layer(x, initial(0), w[0], w[1], mode == "LSTM" ? initial(1) : Tensor(), w[2],
                                             w[3], Tensor(), mode, d == 1);
      outs.push_back(r[0]);
      finals[0].push_back(r[1]);
      if (mode == "LSTM") finals[1].push_back(r[2]);
    }
    x = D == 1 ? outs[0] : oar::concat(outs, -1);
    if (dropout > 0 && is_training() && layer < num_layers - 1) x = functional::dropout(x, dropout, true);
  }
  std::vector<Tensor> out_states;
  for (auto& f : finals) {
    Tensor s = oar::stack(f, 0);
    out_states.push_back(batched ? s : s.reshape({s.shape()[0], hidden_size}));
  }
  Tensor out = batched ? (batch_first ? x.transpose(0, 1) : x) : x.reshape({x.shape()[0], x.shape()[2]});
  return {out, out_states};
}

// module(x) / module(x, h0): the output alone (hooks see it).
Tensor RNNImplBase::forward_inputs(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> states(mode == "LSTM" ? 2 : 1);
  for (size_t k = 1; k < inputs.size() && k <= states.size(); ++k) states[k - 1] = inputs[k];
  return run(inputs.at(0), states).first;
}

RNNImpl::RNNImpl(const RNNOptions& o)
    : RNNImplBase(o.nonlinearity() == "relu" ? "RNN_RELU" : "RNN_TANH", o.input_size(), o.hidden_size(),
                  o.num_layers(), o.bias(), o.batch_first(), o.dropout(), o.bidirectional()) {
  if (o.nonlinearity() != "tanh" && o.nonlinearity() != "relu")
    throw ValueError(str("RNN: unknown nonlinearity '", o.nonlinearity(), "'. Select from 'tanh' or 'relu'."));
}

std::tuple<Tensor, Tensor> RNNImpl::forward(const Tensor& input, const Tensor& hx) {
  auto [out, states] = run(input, {hx});
  return {out, states[0]};
}

LSTMImpl::LSTMImpl(const LSTMOptions& o)
    : RNNImplBase("LSTM", o.input_size(), o.hidden_size(), o.num_layers(), o.bias(), o.batch_first(), o.dropout(),
                  o.bidirectional()) {}

std::tuple<Tensor, std::tuple<Tensor, Tensor>> LSTMImpl::forward(const Tensor& input,
                                                                const std::tuple<Tensor, Tensor>& hx) {
  if (std::get<0>(hx).defined() != std::get<1>(hx).defined())
    throw ValueError("LSTM: hx must hold both h_0 and c_0, or neither");
  auto [out, states] = run(input, {std::get<0>(hx), std::get<1>(hx)});
  return {out, {states[0], states[1]}};
}

GRUImpl::GRUImpl(const GRUOptions& o)
    : RNNImplBase("GRU", o.input_size(), o.hidden_size(), o.num_layers(), o.bias(), o.batch_first(), o.dropout(),
                  o.bidirectional()) {}

std::tuple<Tensor, Tensor> GRUImpl::forward(const Tensor& input, const Tensor& hx) {
  auto [out, states] = run(input, {hx});
  return {out, states[0]};
}

}  // namespace oar::nn
