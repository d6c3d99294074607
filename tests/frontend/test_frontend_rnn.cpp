// oar::nn::RNN / LSTM / GRU (the fused rnn_layer op behind them) against a
// plain double loop of PyTorch's equations, written here: multi-layer,
// bidirectional, batch_first and initial states; parameter names and shapes;
// unbatched input; gradients against central finite differences (float64);
// and argument errors.
#include <cmath>

#include "oar/oar.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

using Vec = std::vector<double>;

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// One layer-direction over x [T, N, I] (time-major); returns y [T, N, H], h and c ([N, H]).
struct LayerOut {
  Vec y, h, c;
};
LayerOut layer_ref(const std::string& mode, const Vec& x, int64_t T, int64_t N, int64_t I, int64_t H, const Vec& wih,
                   const Vec& whh, const Vec& bih, const Vec& bhh, Vec h, Vec c, bool reverse) {
  const int64_t G = mode == "LSTM" ? 4 : mode == "GRU" ? 3 : 1;
  LayerOut out{Vec(size_t(T * N * H)), {}, {}};
  for (int64_t k = 0; k < T; ++k) {
    const int64_t t = reverse ? T - 1 - k : k;
    Vec hn(size_t(N * H)), cn(size_t(N * H));
    for (int64_t n = 0; n < N; ++n) {
      Vec gi(size_t(G * H)), gh(size_t(G * H));
      for (int64_t r = 0; r < G * H; ++r) {
        double a = bih.empty() ? 0 : bih[size_t(r)], b = bhh.empty() ? 0 : bhh[size_t(r)];
        for (int64_t i = 0; i < I; ++i) a += wih[size_t(r * I + i)] * x[size_t((t * N + n) * I + i)];
        for (int64_t q = 0; q < H; ++q) b += whh[size_t(r * H + q)] * h[size_t(n * H + q)];
        gi[size_t(r)] = a;
        gh[size_t(r)] = b;
      }
      for (int64_t j = 0; j < H; ++j) {
        auto g = [&](int64_t k2) { return gi[size_t(k2 * H + j)] + gh[size_t(k2 * H + j)]; };
        const size_t at = size_t(n * H + j);
        if (mode == "LSTM") {
          cn[at] = sigmoid(g(1)) * c[at] + sigmoid(g(0)) * std::tanh(g(2));
          hn[at] = sigmoid(g(3)) * std::tanh(cn[at]);
        } else if (mode == "GRU") {
          const double r = sigmoid(g(0)), z = sigmoid(g(1));
          const double nn = std::tanh(gi[size_t(2 * H + j)] + r * gh[size_t(2 * H + j)]);
          hn[at] = (1 - z) * nn + z * h[at];
        } else {
          hn[at] = mode == "RNN_TANH" ? std::tanh(g(0)) : std::max(g(0), 0.0);
        }
      }
    }
    h.swap(hn);  // (a copy assignment here trips GCC 12's -Wstringop-overflow false positive)
    c.swap(cn);
    for (int64_t m = 0; m < N * H; ++m) out.y[size_t(t * N * H + m)] = h[size_t(m)];
  }
  out.h = h;
  out.c = c;
  return out;
}

std::vector<double> vals(const Tensor& t) { return host_values(t.contiguous()); }

template <class M>
Vec param(const M& m, const std::string& name) {
  const Tensor* t = m->named_parameters().find(name);
  return t ? vals(*t) : Vec();
}

void expect_near(const Vec& got, const Vec& want, double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol) << what << " at " << i;
}

}  // namespace

TEST(FrontendRNN, LstmMultiLayerBidirectionalBatchFirstMatchesLoop) {
  for (const Device& dev : devices()) {
    manual_seed(1);
    nn::LSTM lstm(nn::LSTMOptions(3, 4).num_layers(2).bidirectional(true).batch_first(true));
    lstm->to(dev);
    const int64_t N = 2, T = 5, I = 3, H = 4;
    Tensor x = make_tensor(random_values(N * T * I, -1, 1, 7, DType::f32), {N, T, I}, DType::f32, dev);
    Tensor h0 = make_tensor(random_values(4 * N * H, -1, 1, 8, DType::f32), {4, N, H}, DType::f32, dev);
    Tensor c0 = make_tensor(random_values(4 * N * H, -1, 1, 9, DType::f32), {4, N, H}, DType::f32, dev);
    auto [out, state] = lstm->forward(x, {h0, c0});
    ASSERT_EQ(out.shape(), (Shape{N, T, 2 * H}));
    ASSERT_EQ(std::get<0>(state).shape(), (Shape{4, N, H}));
    // Reference: time-major input, layer by layer.
    Vec xb = vals(x), xt(size_t(T * N * I));
    for (int64_t n = 0; n < N; ++n)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t i = 0; i < I; ++i) xt[size_t((t * N + n) * I + i)] = xb[size_t((n * T + t) * I + i)];
    Vec hv = vals(h0), cv = vals(c0), hn_want, cn_want;
    int64_t in = I;
    for (int64_t layer = 0; layer < 2; ++layer) {
      std::vector<LayerOut> dirs;
      for (int64_t d = 0; d < 2; ++d) {
        const std::string s = "_l" + std::to_string(layer) + (d ? "_reverse" : "");
        const size_t idx = size_t((layer * 2 + d) * N * H);
        dirs.push_back(layer_ref("LSTM", xt, T, N, in, H, param(lstm, "weight_ih" + s), param(lstm, "weight_hh" + s),
                                 param(lstm, "bias_ih" + s), param(lstm, "bias_hh" + s),
                                 Vec(hv.begin() + idx, hv.begin() + idx + N * H),
                                 Vec(cv.begin() + idx, cv.begin() + idx + N * H), d == 1));
        hn_want.insert(hn_want.end(), dirs.back().h.begin(), dirs.back().h.end());
        cn_want.insert(cn_want.end(), dirs.back().c.begin(), dirs.back().c.end());
      }
      Vec next(size_t(T * N * 2 * H));
      for (int64_t m = 0; m < T * N; ++m)
        for (int64_t d = 0; d < 2; ++d)
          for (int64_t j = 0; j < H; ++j) next[size_t(m * 2 * H + d * H + j)] = dirs[size_t(d)].y[size_t(m * H + j)];
      xt = next;
      in = 2 * H;
    }
    Vec out_want(size_t(N * T * 2 * H));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t n = 0; n < N; ++n)
        for (int64_t f = 0; f < 2 * H; ++f)
          out_want[size_t((n * T + t) * 2 * H + f)] = xt[size_t((t * N + n) * 2 * H + f)];
    expect_near(vals(out), out_want, 2e-5, "output");
    expect_near(vals(std::get<0>(state)), hn_want, 2e-5, "h_n");
    expect_near(vals(std::get<1>(state)), cn_want, 2e-5, "c_n");
    // module(x) is the output alone.
    expect_near(vals(lstm(x)), vals(std::get<0>(lstm->forward(x))), 0, "operator()");
  }
}

TEST(FrontendRNN, GruAndRnnMatchLoopUnbatchedToo) {
  for (const Device& dev : devices()) {
    for (std::string mode : {"GRU", "RNN_TANH", "RNN_RELU"}) {
      manual_seed(2);
      nn::GRU gru(3, 5);
      nn::RNN rnn(nn::RNNOptions(3, 5).nonlinearity(mode == "RNN_RELU" ? "relu" : "tanh"));
      std::shared_ptr<nn::RNNImplBase> m = mode == "GRU" ? std::static_pointer_cast<nn::RNNImplBase>(gru.ptr())
                                                         : std::static_pointer_cast<nn::RNNImplBase>(rnn.ptr());
      m->to(dev);
      const int64_t T = 4, I = 3, H = 5;
      Tensor x = make_tensor(random_values(T * I, -1, 1, 3, DType::f32), {T, I}, DType::f32, dev);
      auto [out, h] = mode == "GRU" ? gru->forward(x) : rnn->forward(x);
      ASSERT_EQ(out.shape(), (Shape{T, H}));
      ASSERT_EQ(h.shape(), (Shape{1, H}));
      auto p = [&](const char* n) {
        const Tensor* t = m->named_parameters().find(std::string(n) + "_l0");
        return vals(*t);
      };
      LayerOut want = layer_ref(mode, vals(x), T, 1, I, H, p("weight_ih"), p("weight_hh"), p("bias_ih"),
                                p("bias_hh"), Vec(size_t(H)), Vec(size_t(H)), false);
      expect_near(vals(out), want.y, 2e-5, mode.c_str());
      expect_near(vals(h), want.h, 2e-5, mode.c_str());
    }
  }
}

TEST(FrontendRNN, ParameterNamesShapesAndInitBounds) {
  nn::GRU gru(nn::GRUOptions(3, 4).num_layers(2).bidirectional(true).bias(false));
  std::vector<std::string> names;
  for (const auto& item : gru->named_parameters()) names.push_back(item.first);
  EXPECT_EQ(names, (std::vector<std::string>{"weight_ih_l0", "weight_hh_l0", "weight_ih_l0_reverse",
                                             "weight_hh_l0_reverse", "weight_ih_l1", "weight_hh_l1",
                                             "weight_ih_l1_reverse", "weight_hh_l1_reverse"}));
  EXPECT_EQ(gru->named_parameters().find("weight_ih_l1")->shape(), (Shape{12, 8}));
  for (const Tensor& p : gru->parameters())
    for (double v : vals(p)) ASSERT_LE(std::abs(v), 0.5 + 1e-7);
}

TEST(FrontendRNN, GradientsMatchFiniteDifferences) {
  for (const Device& dev : devices()) {
    manual_seed(3);
    nn::LSTM lstm(nn::LSTMOptions(2, 3).bidirectional(true));
    lstm->to(dev);
    lstm->to(DType::f64);
    Tensor x = make_tensor(random_values(3 * 2 * 2, -1, 1, 4, DType::f64), {3, 2, 2}, DType::f64, dev);
    auto loss_of = [&]() {
      auto [out, st] = lstm->forward(x);
      return sum(out * out) + sum(std::get<1>(st));
    };
    Tensor w = *lstm->named_parameters().find("weight_hh_l0_reverse");
    loss_of().backward();
    const Vec grad = vals(w.grad());
    const double eps = 1e-6;
    for (int64_t i = 0; i < w.numel(); i += 5) {
      Vec base = vals(w);
      auto set = [&](double v) {
        Vec b = base;
        b[size_t(i)] = v;
        autograd::NoGradGuard ng;
        w.copy_(make_tensor(b, w.shape(), DType::f64, dev));
      };
      set(base[size_t(i)] + eps);
      const double up = vals(loss_of())[0];
      set(base[size_t(i)] - eps);
      const double down = vals(loss_of())[0];
      set(base[size_t(i)]);
      ASSERT_NEAR(grad[size_t(i)], (up - down) / (2 * eps), 1e-6) << "element " << i;
    }
  }
}

TEST(FrontendRNN, BadArgumentsThrow) {
  EXPECT_THROW(nn::LSTM(nn::LSTMOptions(3, 0)), ValueError);
  EXPECT_THROW(nn::RNN(nn::RNNOptions(3, 4).nonlinearity("sigmoid")), ValueError);
  nn::LSTM lstm(3, 4);
  EXPECT_THROW(lstm->forward(Tensor::zeros({5, 2, 7})), ShapeError);
  EXPECT_THROW(lstm->forward(Tensor::zeros({5, 2, 3}), {Tensor::zeros({1, 3, 4}), Tensor::zeros({1, 3, 4})}),
               ShapeError);
  EXPECT_THROW(lstm->forward(Tensor::zeros({5, 2, 3}), {Tensor::zeros({1, 2, 4}), Tensor()}), ValueError);
  EXPECT_THROW(lstm->forward(Tensor::zeros({2, 3, 4, 5})), ShapeError);
}
