// Catalog: one layer, one direction of a recurrent network as a fused op
// (rnn_layer), and its backward kernel. The frontends compose layers,
// directions, dropout between layers and batch_first around it
// (oar.nn.RNN/LSTM/GRU). Modes and equations are PyTorch's: RNN_TANH,
// RNN_RELU, LSTM (gates i, f, g, o), GRU (gates r, z, n; b_hn inside
// r * (W_hn h + b_hn)). Optional `lengths` [N] makes sequence n stop after
// lengths[n] steps (a packed batch): past its end its state passes through
// and its output is 0; a reversed layer starts it at its own last step.
#include "catalog_util.h"

namespace oar {

using namespace catalog;

namespace {

constexpr const char* kFn = "rnn_layer";

int64_t gates_of(const std::string& mode) {
  if (mode == "RNN_TANH" || mode == "RNN_RELU") return 1;
  if (mode == "LSTM") return 4;
  if (mode == "GRU") return 3;
  throw ValueError(str(kFn, ": mode must be 'RNN_TANH', 'RNN_RELU', 'LSTM' or 'GRU', got '", mode, "'"));
}

// x [T, N, I], hx [N, H], w_ih [G*H, I], w_hh [G*H, H], cx [N, H] (LSTM only), biases [G*H], lengths [N].
void check_layer(const InferContext& c) {
  const std::string mode = c.attrs.get_string("mode");
  const int64_t G = gates_of(mode);
  enum { kX, kH0, kWih, kWhh, kC0, kBih, kBhh, kLengths };
  const DType dt = c.dtype(kX);
  if (dt != DType::f32 && dt != DType::f64)
    throw DTypeError(str(kFn, " (fused kernel): input must be float32 or float64, got ", dtype_name(dt)));
  for (size_t i : {kH0, kWih, kWhh, kC0, kBih, kBhh})
    if (c.input(i).defined() && c.dtype(i) != dt)
      throw DTypeError(str(kFn, ": '", c.schema.inputs[i].name, "' must have the input's dtype ", dtype_name(dt),
                           ", got ", dtype_name(c.dtype(i))));
  require_ndim(c, kX, 3);
  require_ndim(c, kH0, 2);
  require_ndim(c, kWih, 2);
  require_ndim(c, kWhh, 2);
  const Shape &x = c.shape(kX), &whh = c.shape(kWhh);
  const int64_t N = x[1], I = x[2], H = whh[1];
  if (whh[0] != G * H)
    throw ShapeError(str(kFn, ": weight_hh has shape ", shape_str(whh), ", expected [", G, "*hidden_size, hidden_size]",
                         " for mode ", mode));
  if (c.shape(kWih) != Shape{G * H, I})
    throw ShapeError(str(kFn, ": weight_ih has shape ", shape_str(c.shape(kWih)), ", expected ",
                         shape_str(Shape{G * H, I}), " (", G, "*hidden_size, input_size) for input ", shape_str(x)));
  if (c.shape(kH0) != Shape{N, H})
    throw ShapeError(str(kFn, ": hx has shape ", shape_str(c.shape(kH0)), ", expected ", shape_str(Shape{N, H}),
                         " (batch, hidden_size)"));
  if (c.input(kC0).defined()) {
    if (mode != "LSTM") throw ValueError(str(kFn, ": cx is an LSTM's cell state, but mode is ", mode));
    if (c.shape(kC0) != Shape{N, H})
      throw ShapeError(str(kFn, ": cx has shape ", shape_str(c.shape(kC0)), ", expected ", shape_str(Shape{N, H})));
  }
  for (size_t i : {kBih, kBhh})
    if (c.input(i).defined() && c.shape(i) != Shape{G * H})
      throw ShapeError(str(kFn, ": '", c.schema.inputs[i].name, "' has shape ", shape_str(c.shape(i)),
                           ", expected [", G * H, "]"));
  if (c.input(kLengths).defined()) {
    require_integral_index(c, kLengths);
    if (c.shape(kLengths) != Shape{N})
      throw ShapeError(str(kFn, ": lengths has shape ", shape_str(c.shape(kLengths)), ", expected [", N, "]"));
  }
}

std::vector<InputSpec> layer_inputs() {
  return {InputSpec{"input"},           InputSpec{"hx"},
          InputSpec{"weight_ih"},       InputSpec{"weight_hh"},
          optional_input("cx"),         optional_input("bias_ih"),
          optional_input("bias_hh"),    optional_input("lengths")};
}

std::vector<AttrSpec> layer_attrs() {
  return {attr("mode", AttrType::kString), attr("reverse", AttrType::kBool, false)};
}

}  // namespace

void register_rnn_ops(OpRegistry& r) {
  r.add(make_schema("rnn_layer", layer_inputs(), {"output", "h_n", "c_n"}, layer_attrs(),
                    [](const InferContext& c) -> std::vector<TensorMeta> {
                      check_layer(c);
                      const Shape& x = c.shape(0);
                      const int64_t H = c.shape(3)[1];
                      const DType dt = c.dtype(0);
                      return {{Shape{x[0], x[1], H}, dt}, {Shape{x[1], H}, dt}, {Shape{x[1], H}, dt}};
                    },
                    "one recurrent layer in one direction over x [T, N, I] from hx (and cx): output [T, N, H] "
                    "holds h after each step, h_n/c_n the final states (c_n is zero but for LSTM); reverse runs "
                    "from the last step; lengths [N] ends sequences early (packed batches)",
                    DTypePolicy::kNone),
        {"[4,3,5] [3,6] [24,5] [24,6] [3,6] [24] [24] - mode='LSTM'",
         "[3,2,4] [2,5] [15,4] [15,5] - [15] [15] - mode='GRU' reverse=true",
         "[5,2,3] [2,4] [4,3] [4,4] - [4] [4] - mode='RNN_TANH'",
         "[3,2,3] [2,4] [4,3] [4,4] - - - - mode='RNN_RELU' reverse=true",
         "[3,2,4] [2,5] [20,4] [20,5] [2,5] - - - mode='LSTM' reverse=true"});
  {
    std::vector<InputSpec> in = layer_inputs();
    for (const char* g : {"grad_output", "grad_h_n", "grad_c_n"}) in.push_back(optional_input(g));
    r.add(backward_kernel(
              make_schema("rnn_layer_backward", std::move(in),
                          {"grad_input", "grad_hx", "grad_cx", "grad_weight_ih", "grad_weight_hh", "grad_bias_ih",
                           "grad_bias_hh"},
                          layer_attrs(),
                          [](const InferContext& c) -> std::vector<TensorMeta> {
                            check_layer(c);
                            for (size_t i = 8; i < 11; ++i)
                              if (c.input(i).defined() && c.dtype(i) != c.dtype(0))
                                throw DTypeError(str("rnn_layer_backward: '", c.schema.inputs[i].name,
                                                     "' must have the input's dtype"));
                            const DType dt = c.dtype(0);
                            const Shape& x = c.shape(0);
                            const Shape& h = c.shape(1);
                            const int64_t GH = c.shape(3)[0];
                            if (c.input(8).defined() && c.shape(8) != Shape{x[0], x[1], h[1]})
                              throw ShapeError(str("rnn_layer_backward: grad_output has shape ",
                                                   shape_str(c.shape(8)), ", expected ",
                                                   shape_str(Shape{x[0], x[1], h[1]})));
                            for (size_t i : {9, 10})
                              if (c.input(i).defined() && c.shape(i) != h)
                                throw ShapeError(str("rnn_layer_backward: '", c.schema.inputs[i].name,
                                                     "' has shape ", shape_str(c.shape(i)), ", expected ",
                                                     shape_str(h)));
                            return {{x, dt},          {h, dt}, {h, dt}, {c.shape(2), dt}, {c.shape(3), dt},
                                    {Shape{GH}, dt}, {Shape{GH}, dt}};
                          },
                          "gradients of rnn_layer, recomputing its forward (grad_cx is zero but for LSTM; the "
                          "bias gradients are computed whether or not the layer has biases)",
                          DTypePolicy::kNone),
              Gradient::kFirstOrderOnly),
          {"[3,2,4] [2,5] [20,4] [20,5] [2,5] [20] [20] - [3,2,5] [2,5] [2,5] mode='LSTM'",
           "[3,2,4] [2,5] [15,4] [15,5] - [15] [15] - [3,2,5] - - mode='GRU' reverse=true"});
  }
}

}  // namespace oar
