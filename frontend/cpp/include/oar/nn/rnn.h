// Recurrent layers of oar::nn: RNN (tanh or relu), LSTM and GRU, multi-layer,
// bidirectional, batch_first, dropout between layers and initial states, with
// torch::nn's options, parameter names (weight_ih_l0, bias_hh_l1_reverse, ...),
// shapes and initialisation U(-1/sqrt(hidden), 1/sqrt(hidden)), so state
// dicts line up with PyTorch's. Each layer-direction is one call of the
// fused catalog op rnn_layer (oneDNN's RNN primitives on the CPU, the rnn
// kernel family on every device). As libtorch, forward(input, hx) returns the
// output and the final states; calling the module (lstm(x)) returns the
// output alone, through the forward hooks.
#pragma once

#include <string>
#include <tuple>
#include <vector>

#include "oar/nn/module.h"

namespace oar::nn {

// The options the three share (torch::nn::RNNOptions / LSTMOptions / GRUOptions).
template <class Derived>
class RNNOptionsBase {
 public:
  RNNOptionsBase(int64_t input_size, int64_t hidden_size) : input_size_(input_size), hidden_size_(hidden_size) {}
  Derived& num_layers(int64_t v) { num_layers_ = v; return self(); }
  Derived& bias(bool v) { bias_ = v; return self(); }
  Derived& batch_first(bool v) { batch_first_ = v; return self(); }
  Derived& dropout(double v) { dropout_ = v; return self(); }
  Derived& bidirectional(bool v) { bidirectional_ = v; return self(); }
  int64_t input_size() const { return input_size_; }
  int64_t hidden_size() const { return hidden_size_; }
  int64_t num_layers() const { return num_layers_; }
  bool bias() const { return bias_; }
  bool batch_first() const { return batch_first_; }
  double dropout() const { return dropout_; }
  bool bidirectional() const { return bidirectional_; }

 private:
  Derived& self() { return static_cast<Derived&>(*this); }
  int64_t input_size_, hidden_size_, num_layers_ = 1;
  bool bias_ = true, batch_first_ = false;
  double dropout_ = 0.0;
  bool bidirectional_ = false;
};

class RNNOptions : public RNNOptionsBase<RNNOptions> {
 public:
  using RNNOptionsBase::RNNOptionsBase;
  // "tanh" or "relu".
  RNNOptions& nonlinearity(std::string v) { nonlinearity_ = std::move(v); return *this; }
  const std::string& nonlinearity() const { return nonlinearity_; }

 private:
  std::string nonlinearity_ = "tanh";
};
class LSTMOptions : public RNNOptionsBase<LSTMOptions> {
 public:
  using RNNOptionsBase::RNNOptionsBase;
};
class GRUOptions : public RNNOptionsBase<GRUOptions> {
 public:
  using RNNOptionsBase::RNNOptionsBase;
};

// What RNN, LSTM and GRU share: parameters per layer and direction, and the
// layer loop over rnn_layer. `mode` is RNN_TANH, RNN_RELU, LSTM or GRU.
class RNNImplBase : public Module {
 public:
  void reset_parameters();
  // Parameters of layer `layer`, direction `direction`: weight_ih, weight_hh, bias_ih, bias_hh.
  std::vector<Tensor> all_weights(int64_t layer, int64_t direction) const;

  std::string mode;
  int64_t input_size, hidden_size, num_layers;
  bool bias, batch_first;
  double dropout;
  bool bidirectional;

 protected:
  RNNImplBase(std::string mode, int64_t input_size, int64_t hidden_size, int64_t num_layers, bool bias,
              bool batch_first, double dropout, bool bidirectional);
  // input [T, N, I] ([N, T, I] with batch_first, or unbatched [T, I]); states: h0 (and c0 for
  // LSTM), each [L * D, N, H] ([L * D, H] unbatched) or undefined for zeros. Returns the output
  // and the final states in the input's layout.
  std::pair<Tensor, std::vector<Tensor>> run(const Tensor& input, std::vector<Tensor> states);
  Tensor forward_inputs(const std::vector<Tensor>& inputs) override;
};

class RNNImpl : public RNNImplBase {
 public:
  explicit RNNImpl(const RNNOptions& options);
  RNNImpl(int64_t input_size, int64_t hidden_size) : RNNImpl(RNNOptions(input_size, hidden_size)) {}
  // (output, h_n)
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = Tensor());
};
using RNN = ModuleHolder<RNNImpl>;

class LSTMImpl : public RNNImplBase {
 public:
  explicit LSTMImpl(const LSTMOptions& options);
  LSTMImpl(int64_t input_size, int64_t hidden_size) : LSTMImpl(LSTMOptions(input_size, hidden_size)) {}
  // (output, (h_n, c_n)); hx = (h_0, c_0), both or neither defined.
  std::tuple<Tensor, std::tuple<Tensor, Tensor>> forward(const Tensor& input,
                                                        const std::tuple<Tensor, Tensor>& hx = {});
};
using LSTM = ModuleHolder<LSTMImpl>;

class GRUImpl : public RNNImplBase {
 public:
  explicit GRUImpl(const GRUOptions& options);
  GRUImpl(int64_t input_size, int64_t hidden_size) : GRUImpl(GRUOptions(input_size, hidden_size)) {}
  // (output, h_n)
  std::tuple<Tensor, Tensor> forward(const Tensor& input, const Tensor& hx = Tensor());
};
using GRU = ModuleHolder<GRUImpl>;

}  // namespace oar::nn
