// Module machinery: forward pre-hooks and hooks (fire, modify inputs and
// outputs, removal, self-removal), load_state_dict (strict and non-strict,
// missing/unexpected keys, shape and dtype mismatches naming the key), and
// the tensor operators and functional helpers the modules are built on.
#include <cmath>

#include "oar/oar.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;
namespace F = oar::nn::functional;

namespace {

std::vector<double> vals(const Tensor& t) { return host_values(t); }

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(FrontendHooks, PreHookAndHookModifyAndRemove) {
  nn::Linear fc(2, 2);
  Tensor x = Tensor::from_vector<float>({1, 2}, {1, 2});
  auto plain = vals(fc(x));
  auto doubled = vals(fc(x * 2.0));
  int pre_calls = 0, post_calls = 0;
  std::vector<std::vector<double>> post_inputs;
  auto pre = fc->register_forward_pre_hook([&](nn::Module& m, const std::vector<Tensor>& in) {
    ++pre_calls;
    EXPECT_EQ(&m, fc.get());
    return std::vector<Tensor>{in[0] * 2.0};
  });
  auto post = fc->register_forward_hook([&](nn::Module&, const std::vector<Tensor>& in, const Tensor& out) {
    ++post_calls;
    post_inputs.push_back(vals(in[0]));
    return out + 1.0;
  });
  auto hooked = vals(fc(x));
  ASSERT_EQ(hooked.size(), 2u);
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(hooked[i], doubled[i] + 1.0, 1e-6);
  EXPECT_EQ(pre_calls, 1);
  EXPECT_EQ(post_calls, 1);
  EXPECT_EQ(post_inputs[0], (std::vector<double>{2, 4})) << "the hook sees the replaced inputs";
  // forward() itself bypasses hooks, as in PyTorch.
  EXPECT_EQ(vals(fc->forward(x)), plain);
  pre.remove();
  auto only_post = vals(fc(x));
  for (size_t i = 0; i < 2; ++i) EXPECT_NEAR(only_post[i], plain[i] + 1.0, 1e-6);
  post.remove();
  post.remove();  // idempotent
  EXPECT_EQ(vals(fc(x)), plain);
  EXPECT_EQ(pre_calls, 1);
  EXPECT_EQ(post_calls, 2);
  EXPECT_EQ(post_inputs[1], (std::vector<double>{1, 2}));
}

TEST(FrontendHooks, ObservingHooksAndSelfRemovalInSequential) {
  nn::Sequential seq(nn::Linear(3, 4), nn::ReLU(), nn::Linear(4, 1));
  std::vector<std::string> order;
  std::vector<Shape> shapes;
  std::vector<nn::RemovableHandle> handles;
  for (size_t i = 0; i < seq->size(); ++i)
    handles.push_back(seq->ptr(i)->register_forward_hook(
        [&, i](nn::Module&, const std::vector<Tensor>&, const Tensor& out) {
          order.push_back(std::to_string(i));
          shapes.push_back(out.shape());
          return Tensor();  // undefined: keep the output
        }));
  // A hook that removes itself after its first call.
  auto once = std::make_shared<nn::RemovableHandle>();
  int once_calls = 0;
  *once = seq->register_forward_pre_hook([&, once](nn::Module&, const std::vector<Tensor>&) {
    ++once_calls;
    once->remove();
    return std::vector<Tensor>{};
  });
  Tensor x = Tensor::ones({2, 3});
  seq(x);
  seq(x);
  EXPECT_EQ(order, (std::vector<std::string>{"0", "1", "2", "0", "1", "2"}));
  EXPECT_EQ(shapes[0], (Shape{2, 4}));
  EXPECT_EQ(shapes[2], (Shape{2, 1}));
  EXPECT_EQ(once_calls, 1);
  for (auto& h : handles) h.remove();
  seq(x);
  EXPECT_EQ(order.size(), 6u);
}

TEST(FrontendModule, LoadStateDictStrictAndErrors) {
  manual_seed(1);
  nn::Sequential a(nn::Linear(3, 2), nn::BatchNorm2d(2));
  manual_seed(2);
  nn::Sequential b(nn::Linear(3, 2), nn::BatchNorm2d(2));
  ASSERT_NE(vals(a->ptr_as<nn::LinearImpl>(0)->weight), vals(b->ptr_as<nn::LinearImpl>(0)->weight));
  Tensor b_weight = b->ptr_as<nn::LinearImpl>(0)->weight;
  auto result = b->load_state_dict(a->state_dict());
  EXPECT_TRUE(result.missing_keys.empty());
  EXPECT_EQ(vals(b_weight), vals(a->ptr_as<nn::LinearImpl>(0)->weight)) << "copied into the existing tensor";
  EXPECT_TRUE(b_weight.requires_grad());

  StateDict sd = a->state_dict();
  sd.erase("1.running_var");
  sd.insert("extra.weight", Tensor::zeros({1}));
  std::string msg = message_of([&] { b->load_state_dict(sd); });
  EXPECT_NE(msg.find("Missing key(s) in state_dict: \"1.running_var\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("Unexpected key(s) in state_dict: \"extra.weight\""), std::string::npos) << msg;
  EXPECT_THROW(b->load_state_dict(sd), ValueError);
  auto loose = b->load_state_dict(sd, /*strict=*/false);
  EXPECT_EQ(loose.missing_keys, (std::vector<std::string>{"1.running_var"}));
  EXPECT_EQ(loose.unexpected_keys, (std::vector<std::string>{"extra.weight"}));

  StateDict bad_shape = a->state_dict();
  bad_shape["0.bias"] = Tensor::zeros({3});
  auto before = vals(b_weight);
  msg = message_of([&] { b->load_state_dict(bad_shape); });
  EXPECT_NE(msg.find("0.bias"), std::string::npos) << msg;
  EXPECT_THROW(b->load_state_dict(bad_shape), ShapeError);
  StateDict bad_dtype = a->state_dict();
  bad_dtype["0.weight"] = bad_dtype["0.weight"].to(DType::f64);
  msg = message_of([&] { b->load_state_dict(bad_dtype); });
  EXPECT_NE(msg.find("0.weight"), std::string::npos) << msg;
  EXPECT_THROW(b->load_state_dict(bad_dtype, /*strict=*/false), DTypeError);
}

TEST(FrontendOps, OperatorsAndScalars) {
  Tensor a = Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2});
  Tensor b = Tensor::from_vector<float>({10, 20}, {2});
  EXPECT_EQ(vals(a + b), (std::vector<double>{11, 22, 13, 24}));
  EXPECT_EQ(vals(a - b), (std::vector<double>{-9, -18, -7, -16}));
  EXPECT_EQ(vals(a * b), (std::vector<double>{10, 40, 30, 80}));
  EXPECT_EQ(vals(b / a.select(0, 0)), (std::vector<double>{10, 10}));
  EXPECT_EQ(vals(-a), (std::vector<double>{-1, -2, -3, -4}));
  EXPECT_EQ(vals(a * 0.5), (std::vector<double>{0.5, 1, 1.5, 2}));
  EXPECT_EQ(vals(1.0 - a), (std::vector<double>{0, -1, -2, -3}));
  EXPECT_EQ(vals(12.0 / a), (std::vector<double>{12, 6, 4, 3}));
  EXPECT_EQ(vals(2.0 + a), vals(a + 2.0));
  EXPECT_EQ((a * 2.0).dtype(), DType::f32) << "a scalar does not widen the tensor";
  EXPECT_EQ((Tensor::ones({2}, DType::f16) + 1.0).dtype(), DType::f16);
  Tensor ints = Tensor::from_vector<int64_t>({1, 2}, {2});
  EXPECT_EQ((ints + 1.0).dtype(), DType::i64);
  EXPECT_EQ(vals(ints * 0.5), (std::vector<double>{0.5, 1.0}));
  EXPECT_EQ(vals(matmul(a, a.t())), (std::vector<double>{5, 11, 11, 25}));
  EXPECT_THROW(a + Tensor::ones({3}), ShapeError);
  // Autograd flows through the operators.
  Tensor w = Tensor::from_vector<double>({1, -2}, {2});
  w.set_requires_grad(true);
  Tensor loss = sum((w * 3.0 - 1.0) / 2.0);
  loss.backward();
  EXPECT_EQ(vals(w.grad()), (std::vector<double>{1.5, 1.5}));
}

TEST(FrontendOps, FunctionalLossesAndBatchNorm) {
  Tensor in = Tensor::from_vector<double>({0.5, -1, 2, 0, 1, 3}, {2, 3});
  Tensor tg = Tensor::from_vector<double>({1, 1, 1, 0, 0, 0}, {2, 3});
  const std::vector<double> d2 = {0.25, 4, 1, 0, 1, 9};
  expect_close(vals(F::mse_loss(in, tg, "none")), d2, 0, 1e-12, "mse none");
  EXPECT_NEAR(F::mse_loss(in, tg, "sum").item(), 15.25, 1e-12);
  EXPECT_NEAR(nn::MSELoss()(in, tg).item(), 15.25 / 6, 1e-12);
  EXPECT_THROW(F::mse_loss(in, tg, "avg"), ValueError);
  EXPECT_THROW(nn::MSELoss("avg"), ValueError);
  EXPECT_THROW(F::mse_loss(in, tg.select(0, 0)), ShapeError);

  // cross_entropy = -log_softmax[target], averaged; NLLLoss on log_softmax agrees.
  Tensor target = Tensor::from_vector<int64_t>({2, 0}, {2});
  auto iv = vals(in);
  double ce = 0;
  for (int r = 0; r < 2; ++r) {
    double lse = std::log(std::exp(iv[size_t(r * 3)]) + std::exp(iv[size_t(r * 3 + 1)]) + std::exp(iv[size_t(r * 3 + 2)]));
    ce += (lse - iv[size_t(r * 3 + (r == 0 ? 2 : 0))]) / 2;
  }
  EXPECT_NEAR(nn::CrossEntropyLoss()(in, target).item(), ce, 1e-12);
  EXPECT_NEAR(nn::NLLLoss()(F::log_softmax(in, 1), target).item(), ce, 1e-12);
  EXPECT_NEAR(nn::CrossEntropyLoss("sum")(in, target).item(), 2 * ce, 1e-12);
  EXPECT_THROW(nn::CrossEntropyLoss()(in), ValueError) << "a loss needs (input, target)";

  // Functional batch_norm with explicit buffers and momentum 0.5.
  Tensor x = Tensor::from_vector<double>({1, 2, 3, 5}, {4, 1});
  Tensor rm = Tensor::zeros({1}, DType::f64), rv = Tensor::ones({1}, DType::f64);
  Tensor y = F::batch_norm(x, rm, rv, Tensor(), Tensor(), /*training=*/true, /*momentum=*/0.5);
  // mean 2.75, biased var 2.1875, unbiased 2.916666...
  EXPECT_NEAR(rm.item(), 0.5 * 2.75, 1e-12);
  EXPECT_NEAR(rv.item(), 0.5 + 0.5 * (8.75 / 3.0), 1e-12);
  EXPECT_NEAR(vals(y)[0], (1 - 2.75) / std::sqrt(2.1875 + 1e-5), 1e-9);
  EXPECT_THROW(F::batch_norm(x, rm, Tensor()), ValueError);
}
