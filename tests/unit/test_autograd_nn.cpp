// Gradient rules of the nn ops (runtime/src/autograd/rules_nn.cpp), checked
// against central finite differences in f64: every rule by gradcheck, the
// rules of backward ops by gradcheck of the backward op itself and by
// gradgradcheck of the forward op (second order), on every device; plus f32
// against f64 gradients of conv/matmul, the padding row of embedding, the
// norms' fused and composed (create_graph) paths agreeing, and the typed
// error for differentiating a backward op that has no rule.
#include <algorithm>
#include <numeric>
#include <random>

#include "gradcheck.h"

using namespace oar;
using namespace oar::testing;

namespace {

using Ints = std::vector<int64_t>;

Tensor op(const char* name, const std::vector<Tensor>& in, const Attrs& a = {}) { return call1(name, in, a); }

Tensor rnd(const Shape& s, uint32_t seed, Device dev, double lo = -1, double hi = 1) {
  return make_tensor(random_values(numel_of(s), lo, hi, seed, DType::f64), s, DType::f64, dev);
}
Tensor ints(const std::vector<double>& v, const Shape& s, Device dev) { return make_tensor(v, s, DType::i64, dev); }

// Distinct values 0.05 apart in shuffled order: no ties for max pooling, even
// after finite-difference perturbations.
Tensor distinct(const Shape& s, uint32_t seed, Device dev) {
  std::vector<double> v(size_t(numel_of(s)));
  std::iota(v.begin(), v.end(), 0.0);
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  for (auto& x : v) x = x * 0.05 - 1.0;
  return make_tensor(v, s, DType::f64, dev);
}

// A single-output function of the inputs (op name + attrs).
TensorFn fn(const char* name, const Attrs& a) {
  return [name, a](const std::vector<Tensor>& in) { return std::vector<Tensor>{op(name, in, a)}; };
}
// All outputs of the op.
TensorFn fn_all(const char* name, const Attrs& a) {
  return [name, a](const std::vector<Tensor>& in) { return call(std::string(name), in, a); };
}
// y * y: makes the upstream gradient of the op depend on x, so second order
// exercises the backward op's rule in grad_y too.
TensorFn squared(TensorFn f) {
  return [f](const std::vector<Tensor>& in) {
    Tensor y = f(in)[0];
    return std::vector<Tensor>{op("mul", {y, y})};
  };
}

Attrs conv_attrs(Ints stride, Ints padding, Ints dilation, int64_t groups) {
  return {{"stride", stride}, {"padding", padding}, {"dilation", dilation}, {"groups", groups}};
}

struct ConvCase {
  Shape x, w;
  Attrs attrs;
  bool bias;
};

std::vector<ConvCase> conv_cases() {
  return {{{2, 3, 5, 5}, {4, 3, 3, 3}, conv_attrs({1, 1}, {0, 0}, {1, 1}, 1), true},
          {{2, 3, 5, 5}, {4, 3, 3, 3}, conv_attrs({2, 2}, {1, 1}, {1, 1}, 1), true},
          {{2, 3, 5, 5}, {2, 3, 2, 3}, conv_attrs({1, 2}, {0, 1}, {2, 1}, 1), false},
          {{2, 3, 5, 5}, {6, 1, 3, 3}, conv_attrs({1, 1}, {1, 1}, {1, 1}, 3), true},
          {{2, 2, 6, 6}, {3, 2, 3, 3}, conv_attrs({2, 2}, {0, 0}, {1, 1}, 1), true}};  // row 5 unused
}

Shape conv_out(const ConvCase& k) {
  autograd::NoGradGuard g;
  return op("conv2d", {Tensor::zeros(k.x, DType::f64), Tensor::zeros(k.w, DType::f64), Tensor()}, k.attrs).shape();
}

}  // namespace

TEST(AutogradNN, Matmul) {
  for (Device dev : devices()) {
    struct Case { Shape a, b; bool transpose; };
    for (const Case& k : std::vector<Case>{{{3, 4}, {4, 5}, false},
                                           {{2, 1, 3, 4}, {3, 4, 2}, false},  // both batch dims broadcast
                                           {{3, 4}, {2, 4, 5}, false},
                                           {{2, 4, 3}, {5, 4}, true}}) {  // transposed (strided) operands
      TensorFn f = [k](const std::vector<Tensor>& in) {
        Tensor a = k.transpose ? in[0].transpose(-1, -2) : in[0];
        Tensor b = k.transpose ? in[1].transpose(-1, -2) : in[1];
        return std::vector<Tensor>{op("matmul", {a, b})};
      };
      std::vector<Tensor> in{rnd(k.a, 1, dev), rnd(k.b, 2, dev)};
      std::string what = str("matmul ", shape_str(k.a), " @ ", shape_str(k.b));
      gradcheck(f, in, {true, true}, what);
      gradgradcheck(f, in, {true, true}, what);
    }
  }
}

TEST(AutogradNN, Conv2d) {
  for (Device dev : devices()) {
    int i = 0;
    for (const ConvCase& k : conv_cases()) {
      Tensor b = k.bias ? rnd({k.w[0]}, 3, dev) : Tensor();
      std::vector<Tensor> in{rnd(k.x, 1, dev), rnd(k.w, 2, dev), b};
      std::string what = str("conv2d case ", i++);
      gradcheck(fn("conv2d", k.attrs), in, {true, true, k.bias}, what);
    }
    // second order on smaller shapes: every input element costs two graph builds
    for (const ConvCase& k : {ConvCase{{1, 2, 4, 4}, {3, 2, 2, 2}, conv_attrs({1, 1}, {1, 1}, {1, 1}, 1), true},
                              ConvCase{{1, 4, 5, 5}, {2, 2, 2, 3}, conv_attrs({2, 1}, {1, 0}, {2, 1}, 2), true}}) {
      std::vector<Tensor> in{rnd(k.x, 1, dev), rnd(k.w, 2, dev), rnd({k.w[0]}, 3, dev)};
      gradgradcheck(fn("conv2d", k.attrs), in, {true, true, true}, str("conv2d ", shape_str(k.w)));
    }
  }
}

// The backward ops' own rules, checked directly (they are linear in grad_y).
TEST(AutogradNN, Conv2dBackwardOps) {
  for (Device dev : devices()) {
    int i = 0;
    for (const ConvCase& k : conv_cases()) {
      Tensor gy = rnd(conv_out(k), 4, dev);
      Attrs data = k.attrs, weight = k.attrs;
      data.set("input_shape", k.x);
      weight.set("weight_shape", k.w);
      std::string what = str("conv2d backward ops, case ", i++);
      gradcheck(fn("conv2d_backward_data", data), {gy, rnd(k.w, 5, dev)}, {true, true}, what + " data");
      gradcheck(fn("conv2d_backward_weight", weight), {gy, rnd(k.x, 6, dev)}, {true, true}, what + " weight");
    }
  }
}

// f32 gradients on each device against f64 ones from the same (f32-exact) inputs.
TEST(AutogradNN, Float32MatchesFloat64) {
  ConvCase k = conv_cases()[3];
  for (Device dev : devices()) {
    for (bool is_conv : {true, false}) {
      std::vector<Tensor> base = is_conv ? std::vector<Tensor>{rnd(k.x, 1, dev), rnd(k.w, 2, dev), rnd({k.w[0]}, 3, dev)}
                                         : std::vector<Tensor>{rnd({2, 3, 4}, 1, dev), rnd({4, 5}, 2, dev)};
      std::vector<std::vector<double>> grads[2];
      for (DType dt : {DType::f32, DType::f64}) {
        std::vector<Tensor> in;
        for (const Tensor& t : base) {
          Tensor v = t.to(DType::f32).to(dt);
          v.set_requires_grad(true);
          in.push_back(v);
        }
        Tensor y = is_conv ? op("conv2d", in, k.attrs) : op("matmul", in);
        Tensor w = rnd(y.shape(), 9, dev).to(DType::f32).to(dt);
        auto g = autograd::grad({op("sum", {op("mul", {y, w})})}, in);
        for (const Tensor& t : g) {
          EXPECT_EQ(t.dtype(), dt);
          grads[dt == DType::f64].push_back(host_values(t));
        }
      }
      for (size_t j = 0; j < grads[0].size(); ++j)
        expect_close(grads[0][j], grads[1][j], 1e-4, 1e-4, str(is_conv ? "conv2d" : "matmul", " f32 grad ", j));
    }
  }
}

TEST(AutogradNN, Pooling) {
  struct Case { Ints kernel, stride, padding; bool ceil; };
  std::vector<Case> cases{{{2}, {}, {0}, false},
                          {{3}, {2}, {1}, false},
                          {{3, 2}, {1, 2}, {1, 0}, false},
                          {{3}, {2}, {0}, true},    // the last window hangs past the input
                          {{2}, {1}, {1}, false}};  // overlapping windows with padding
  for (Device dev : devices()) {
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& k = cases[i];
      for (const char* name : {"max_pool2d", "avg_pool2d"}) {
        bool avg = name[0] == 'a';
        for (bool include_pad : avg ? std::vector<bool>{true, false} : std::vector<bool>{true}) {
          Attrs a{{"kernel_size", k.kernel}, {"stride", k.stride}, {"padding", k.padding}, {"ceil_mode", k.ceil}};
          if (avg) a.set("count_include_pad", include_pad);
          std::string what = str(name, " case ", i, include_pad ? "" : " exclude pad");
          Tensor x = distinct({1, 2, 6, 6}, uint32_t(i), dev);
          gradcheck(fn(name, a), {x}, {true}, what);
          gradgradcheck(squared(fn(name, a)), {x}, {true}, what + " squared");
          Tensor gy;
          {
            autograd::NoGradGuard g;
            gy = rnd(op(name, {x}, a).shape(), 5, dev);
          }
          gradcheck(fn((std::string(name) == "avg_pool2d" ? "avg_pool2d_backward" : "max_pool2d_backward"), a),
                    {gy, x}, {true, false}, what + " backward op");
        }
      }
    }
  }
}

TEST(AutogradNN, BatchNorm) {
  for (Device dev : devices()) {
    for (Shape s : {Shape{5, 3}, Shape{4, 3, 2}, Shape{2, 3, 2, 2}}) {
      for (bool affine : {true, false}) {
        Tensor w = affine ? rnd({3}, 2, dev, 0.5, 1.5) : Tensor(), b = affine ? rnd({3}, 3, dev) : Tensor();
        Tensor rm = rnd({3}, 4, dev), rv = rnd({3}, 5, dev, 0.5, 1.5);
        std::vector<Tensor> in{rnd(s, 1, dev), w, b, rm, rv};
        std::string what = str("batch_norm ", shape_str(s), affine ? " affine" : "");
        Attrs train{{"training", true}, {"eps", 1e-3}}, eval{{"training", false}, {"eps", 1e-3}};
        // every output is weighted: save_mean/save_var gradients are checked too
        gradcheck(fn_all("batch_norm", train), in, {true, affine, affine, false, false}, what + " train");
        gradcheck(fn_all("batch_norm", eval), in, {true, affine, affine, true, true}, what + " eval");
        if (s.size() == 3) {
          gradgradcheck(fn_all("batch_norm", train), in, {true, affine, affine, false, false}, what + " train");
          gradgradcheck(fn_all("batch_norm", eval), in, {true, affine, affine, true, true}, what + " eval");
        }
      }
    }
  }
}

TEST(AutogradNN, LayerNorm) {
  for (Device dev : devices()) {
    struct Case { Shape x; int64_t k; bool affine; };
    for (const Case& c : std::vector<Case>{{{3, 4}, 1, true}, {{2, 3, 4}, 2, true}, {{2, 3, 4}, 2, false},
                                           {{2, 5}, 2, true}}) {
      Shape norm(c.x.end() - c.k, c.x.end());
      Tensor w = c.affine ? rnd(norm, 2, dev, 0.5, 1.5) : Tensor(), b = c.affine ? rnd(norm, 3, dev) : Tensor();
      std::vector<Tensor> in{rnd(c.x, 1, dev), w, b};
      Attrs a{{"normalized_ndim", c.k}, {"eps", 1e-3}};
      std::string what = str("layer_norm ", shape_str(c.x), " normalized_ndim ", c.k);
      gradcheck(fn_all("layer_norm", a), in, {true, c.affine, c.affine}, what);
      gradgradcheck(fn_all("layer_norm", a), in, {true, c.affine, c.affine}, what);
    }
  }
}

// With create_graph the norm rules use a formula written with ops; it must
// agree with the fused backward kernels used otherwise.
TEST(AutogradNN, NormComposedPathMatchesFused) {
  for (Device dev : devices()) {
    for (bool batch : {true, false}) {
      std::vector<Tensor> in{rnd({4, 3, 2}, 1, dev), rnd(batch ? Shape{3} : Shape{2}, 2, dev), rnd(batch ? Shape{3} : Shape{2}, 3, dev)};
      for (auto& t : in) t.set_requires_grad(true);
      Tensor wy = rnd({4, 3, 2}, 7, dev);
      std::vector<std::vector<Tensor>> got;
      for (bool create : {false, true}) {
        Tensor y = batch ? call("batch_norm", {in[0], in[1], in[2], Tensor(), Tensor()}, {{"training", true}})[0]
                         : call("layer_norm", in)[0];
        got.push_back(autograd::grad({op("sum", {op("mul", {y, wy})})}, in, {}, false, create));
      }
      for (size_t j = 0; j < 3; ++j)
        expect_close(host_values(got[1][j]), host_values(got[0][j]), 1e-10, 1e-10,
                     str(batch ? "batch_norm" : "layer_norm", " grad ", j));
    }
  }
}

TEST(AutogradNN, SoftmaxAndLogSoftmax) {
  for (Device dev : devices()) {
    for (const char* name : {"softmax", "log_softmax"}) {
      for (int64_t dim : {0, 1, -1}) {
        Attrs a{{"dim", dim}};
        Tensor x = rnd({3, 4, 2}, 1, dev, -2, 2);
        std::string what = str(name, " dim ", dim);
        gradcheck(fn(name, a), {x}, {true}, what);
        gradgradcheck(fn(name, a), {x}, {true}, what);
        // the backward op in both inputs (y need not be a softmax output)
        std::string bwd = std::string(name) + "_backward";
        gradcheck(fn(bwd.c_str(), a), {rnd({3, 4, 2}, 2, dev), rnd({3, 4, 2}, 3, dev, 0, 1)}, {true, true},
                  what + " backward op");
      }
    }
  }
}

TEST(AutogradNN, CrossEntropy) {
  for (Device dev : devices()) {
    struct Case { Shape logits; std::vector<double> target; Shape tshape; int64_t ignore; };
    std::vector<Case> cases{{{4, 5}, {1, 0, 4, -100}, {4}, -100},
                            {{2, 3, 2}, {0, 1, 2, 2}, {2, 2}, 1},  // spatial, class 1 ignored
                            {{5}, {3}, {}, -100}};
    for (const Case& k : cases)
      for (const char* red : {"mean", "sum", "none"})
        for (double ls : {0.0, 0.2}) {
          Attrs a{{"reduction", std::string(red)}, {"ignore_index", k.ignore}, {"label_smoothing", ls}};
          Tensor x = rnd(k.logits, 1, dev, -2, 2), t = ints(k.target, k.tshape, dev);
          std::string what = str("cross_entropy ", shape_str(k.logits), " ", red, " smoothing ", ls);
          gradcheck(fn("cross_entropy", a), {x, t}, {true, false}, what);
          gradgradcheck(fn("cross_entropy", a), {x, t}, {true, false}, what);
          Tensor gy = rnd(std::string(red) == "none" ? k.tshape : Shape{}, 4, dev);
          gradcheck(fn("cross_entropy_backward", a), {gy, x, t}, {true, true, false}, what + " backward op");
        }
  }
}

TEST(AutogradNN, NllLoss) {
  for (Device dev : devices()) {
    for (const char* red : {"mean", "sum", "none"}) {
      Attrs a{{"reduction", std::string(red)}, {"ignore_index", int64_t(2)}};
      Tensor x = rnd({4, 5}, 1, dev, -2, 0), t = ints({1, 2, 4, 0}, {4}, dev);
      std::string what = str("nll_loss ", red);
      gradcheck(fn("nll_loss", a), {x, t}, {true, false}, what);
      Tensor gy = rnd(std::string(red) == "none" ? Shape{4} : Shape{}, 4, dev);
      gradcheck(fn("nll_loss_backward", a), {gy, x, t}, {true, false, false}, what + " backward op");
      TensorFn f = [a](const std::vector<Tensor>& in) {
        return std::vector<Tensor>{op("nll_loss", {op("log_softmax", {in[0]}, {{"dim", int64_t(1)}}), in[1]}, a)};
      };
      gradgradcheck(f, {x, t}, {true, false}, what + " of log_softmax");
    }
  }
}

TEST(AutogradNN, Dropout) {
  for (Device dev : devices()) {
    Attrs a{{"p", 0.3}, {"seed", int64_t(1234)}, {"offset", int64_t(0)}};
    Tensor x = rnd({4, 5}, 1, dev);
    // a fixed seed draws the same mask every time, so finite differences see one function
    auto m1 = host_values(call("dropout", {x}, a)[1]), m2 = host_values(call("dropout", {x}, a)[1]);
    EXPECT_EQ(m1, m2);
    gradcheck(fn_all("dropout", a), {x}, {true}, "dropout");
    gradgradcheck(squared(fn("dropout", a)), {x}, {true}, "dropout squared");
    // and the gradient is mask / (1 - p) exactly
    Tensor xl = x.detach().clone();
    xl.set_requires_grad(true);
    auto outs = call("dropout", {xl}, a);
    auto g = host_values(autograd::grad({op("sum", {outs[0]})}, {xl})[0]);
    for (size_t i = 0; i < g.size(); ++i) EXPECT_DOUBLE_EQ(g[i], m1[i] / 0.7) << i;
  }
}

TEST(AutogradNN, Embedding) {
  for (Device dev : devices()) {
    Tensor w = rnd({6, 3}, 1, dev), idx = ints({0, 5, 2, 5, 1, 3}, {2, 3}, dev);
    for (int64_t pad : {int64_t(-1), int64_t(4)})  // 4 is not among the indices
      gradcheck(fn("embedding", {{"padding_idx", pad}}), {w, idx}, {true, false}, str("embedding pad ", pad));
    for (int64_t pad : {int64_t(-1), int64_t(5)}) {
      Attrs a{{"num_weights", int64_t(6)}, {"padding_idx", pad}};
      gradcheck(fn("embedding_backward", a), {rnd({2, 3, 3}, 2, dev), idx}, {true, false},
                str("embedding_backward pad ", pad));
      gradgradcheck(squared(fn("embedding", {{"padding_idx", pad}})), {w, idx}, {true, false},
                    str("embedding squared pad ", pad));
    }
    // the padding row receives no gradient though the forward reads it
    Tensor wl = w.detach().clone();
    wl.set_requires_grad(true);
    Tensor gy = rnd({2, 3, 3}, 3, dev);
    Tensor y = op("embedding", {wl, idx}, {{"padding_idx", int64_t(5)}});
    auto got = host_values(autograd::grad({op("sum", {op("mul", {y, gy})})}, {wl})[0]);
    std::vector<double> want(18, 0.0), g = host_values(gy), ix = host_values(idx);
    for (size_t i = 0; i < 6; ++i)
      for (size_t d = 0; d < 3; ++d)
        if (ix[i] != 5) want[size_t(ix[i]) * 3 + d] += g[i * 3 + d];
    expect_close(got, want, 1e-12, 1e-12, "embedding grad with padding_idx 5");
  }
}

// The fused norm backward ops have no rule of their own; differentiating them
// directly is a typed error rather than a silent zero.
TEST(AutogradNN, BackwardOpWithoutRuleThrows) {
  for (Device dev : devices()) {
    Tensor x = rnd({4, 3}, 1, dev), gy = rnd({4, 3}, 2, dev);
    gy.set_requires_grad(true);
    auto stats = call("batch_norm", {x, Tensor(), Tensor(), Tensor(), Tensor()}, {{"training", true}});
    auto r = call("batch_norm_backward", {gy, x, Tensor(), stats[1], stats[2]});
    EXPECT_THROW(autograd::grad({op("sum", {r[0]})}, {gy}), NotImplementedError);
  }
}
