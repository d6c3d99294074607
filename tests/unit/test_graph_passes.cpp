// Each graph pass on its own, on hand-built graphs: it acts (node counts and
// ops change as intended), the graph still verifies, and running it gives the
// same results as before the pass (executor, every present device).
#include <cmath>

#include "oar/autograd.h"
#include "oar/dispatch.h"
#include "oar/allocator.h"
#include "oar/runtime.h"
#include "oar/graph/executor.h"
#include "oar/graph/passes.h"
#include "test_util.h"

using namespace oar;
using namespace oar::graph;
using namespace oar::testing;

namespace {

Tensor random_tensor(const Shape& shape, uint32_t seed) {
  return make_tensor(random_values(numel_of(shape), -1, 1, seed), shape, DType::f32, Device::cpu());
}

std::vector<Tensor> run(const std::shared_ptr<Graph>& g, const std::vector<Tensor>& inputs, Device device) {
  Executor exec(g, device);
  std::vector<Tensor> moved;
  for (const Tensor& t : inputs) moved.push_back(t.to(device));
  return exec.run(moved);
}

std::vector<std::string> ops_of(const Graph& g) {
  std::vector<std::string> ops;
  for (const auto& n : g.nodes()) ops.push_back(n->op->name);
  return ops;
}

bool has_op(const Graph& g, const std::string& op) {
  auto ops = ops_of(g);
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

}  // namespace

TEST(GraphPasses, DeadCodeRemovesUnreadChainsAndKeepsOutputsAndUpdates) {
  auto g = std::make_shared<Graph>();
  Value* x = g->add_input("x", {{4}, DType::f32});
  Value* state = g->add_captured("state", Tensor::zeros({4}, DType::f32, Device::cpu()));
  Value* unused = g->add_captured("unused", Tensor::ones({4}, DType::f32, Device::cpu()));
  Node* a = g->add_node("exp", {x}, {});
  Node* dead1 = g->add_node("sin", {a->outputs[0]}, {});
  g->add_node("cos", {dead1->outputs[0]}, {});  // dead, and makes dead1 dead
  g->add_node("mul", {x, unused}, {});           // dead: its captured input goes too
  Node* upd = g->add_node("add", {state, x}, {});
  g->add_update(state, upd->outputs[0]);
  g->set_outputs({a->outputs[0]});
  EXPECT_EQ(eliminate_dead_code(*g), 3u);
  g->verify();
  EXPECT_EQ(ops_of(*g), (std::vector<std::string>{"exp", "add"}));
  EXPECT_EQ(g->tensors().size(), 1u);
  Tensor xv = random_tensor({4}, 1);
  auto out = run(g, {xv}, Device::cpu());
  expect_close(host_values(out[0]), host_values(call1("exp", {xv})), 1e-6, 1e-6, "exp");
  expect_close(host_values(state->tensor), host_values(xv), 0, 0, "update kept");
}

TEST(GraphPasses, CommonSubexpressionsMergeButRandomOpsDoNot) {
  auto g = std::make_shared<Graph>();
  Value* x = g->add_input("x", {{1000}, DType::f32});
  Node* a1 = g->add_node("exp", {x}, {});
  Node* a2 = g->add_node("exp", {x}, {});
  Node* b1 = g->add_node("mul", {a1->outputs[0], x}, {});
  Node* b2 = g->add_node("mul", {a2->outputs[0], x}, {});  // the same once a2 is a1
  Node* c = g->add_node("clamp", {x}, {{"min", 0.0}});
  Node* c2 = g->add_node("clamp", {x}, {{"min", 0.5}});  // other attributes: kept
  Node* d1 = g->add_node("dropout", {x}, {{"p", 0.5}});
  Node* d2 = g->add_node("dropout", {x}, {{"p", 0.5}});
  g->set_outputs({b1->outputs[0], b2->outputs[0], c->outputs[0], c2->outputs[0], d1->outputs[0], d2->outputs[0]});
  EXPECT_EQ(eliminate_common_subexpressions(*g), 2u);
  g->verify();
  EXPECT_EQ(g->node_count(), 6u);
  auto out = run(g, {random_tensor({1000}, 2)}, Device::cpu());
  EXPECT_EQ(host_values(out[0]), host_values(out[1]));
  EXPECT_NE(host_values(out[2]), host_values(out[3]));
  EXPECT_NE(host_values(out[4]), host_values(out[5]));  // two dropouts, two masks
}

TEST(GraphPasses, ConstantFoldingEvaluatesConstantSubgraphsOnly) {
  auto g = std::make_shared<Graph>();
  Value* x = g->add_input("x", {{3}, DType::f32});
  Value* c1 = g->add_constant("c1", Tensor::from_vector<float>({1, 2, 3}, {3}));
  Value* c2 = g->add_constant("c2", Tensor::from_vector<float>({4, 5, 6}, {3}));
  Value* p = g->add_captured("p", Tensor::from_vector<float>({1, 1, 1}, {3}));
  Node* sum = g->add_node("add", {c1, c2}, {});                                    // folds
  Node* filled = g->add_node("fill", {}, {{"shape", std::vector<int64_t>{3}}, {"value", 2.0}});  // folds
  Node* scaled = g->add_node("mul", {sum->outputs[0], filled->outputs[0]}, {});  // folds once its inputs did
  Node* by_ref = g->add_node("mul", {p, c1}, {});                               // captured: stays
  Node* noise = g->add_node("uniform", {}, {{"shape", std::vector<int64_t>{3}}}); // random: stays
  Node* out = g->add_node("add", {x, scaled->outputs[0]}, {});
  Node* out2 = g->add_node("add", {by_ref->outputs[0], noise->outputs[0]}, {});
  g->set_outputs({out->outputs[0], out2->outputs[0]});
  EXPECT_EQ(fold_constants(*g), 3u);
  g->verify();
  EXPECT_EQ(ops_of(*g), (std::vector<std::string>{"mul", "uniform", "add", "add"}));
  auto res = run(g, {Tensor::from_vector<float>({1, 1, 1}, {3})}, Device::cpu());
  EXPECT_EQ(host_values(res[0]), (std::vector<double>{11, 15, 19}));
}

TEST(GraphPasses, BatchNormFoldsIntoConvolutionWithTheSameResults) {
  auto g = std::make_shared<Graph>();
  Value* x = g->add_input("x", {{2, 3, 6, 6}, DType::f32});
  Value* w = g->add_constant("w", random_tensor({4, 3, 3, 3}, 3));
  Value* b = g->add_constant("b", random_tensor({4}, 4));
  Value* gamma = g->add_constant("gamma", random_tensor({4}, 5));
  Value* beta = g->add_constant("beta", random_tensor({4}, 6));
  Value* mean = g->add_constant("mean", random_tensor({4}, 7));
  Value* var = g->add_constant("var", make_tensor(random_values(4, 0.5, 1.5, 8), {4}, DType::f32, Device::cpu()));
  Node* conv = g->add_node("conv2d", {x, w, b}, {{"padding", std::vector<int64_t>{1, 1}}});
  Node* bn = g->add_node("batch_norm", {conv->outputs[0], gamma, beta, mean, var}, {{"eps", 1e-3}});
  Node* act = g->add_node("relu", {bn->outputs[0]}, {});
  g->set_outputs({act->outputs[0]});
  Tensor xv = random_tensor({2, 3, 6, 6}, 9);
  std::vector<std::vector<double>> before;
  for (Device dev : devices()) before.push_back(host_values(run(g, {xv}, dev)[0]));
  EXPECT_EQ(fold_batch_norm_into_conv(*g), 1u);
  g->verify();
  EXPECT_EQ(ops_of(*g), (std::vector<std::string>{"conv2d", "relu"}));
  size_t i = 0;
  for (Device dev : devices())
    expect_close(host_values(run(g, {xv}, dev)[0]), before[i++], 1e-5, 1e-5, "folded on " + dev.str());

  // Not folded: training-mode statistics, or captured (changing) parameters.
  auto h = std::make_shared<Graph>();
  Value* hx = h->add_input("x", {{2, 3, 6, 6}, DType::f32});
  Value* hw = h->add_captured("w", random_tensor({4, 3, 3, 3}, 3));
  Node* hconv = h->add_node("conv2d", {hx, hw, nullptr}, {});
  Node* hbn = h->add_node("batch_norm", {hconv->outputs[0], nullptr, nullptr, nullptr, nullptr}, {{"training", true}});
  h->set_outputs({hbn->outputs[0]});
  EXPECT_EQ(fold_batch_norm_into_conv(*h), 0u);
  EXPECT_TRUE(has_op(*h, "batch_norm"));
}

TEST(GraphPasses, FreezeCopiesCapturedTensorsAndRefusesStatefulGraphs) {
  Tensor weight = Tensor::from_vector<float>({2, 2}, {2});
  auto g = std::make_shared<Graph>();
  Value* x = g->add_input("x", {{2}, DType::f32});
  Value* w = g->add_captured("w", weight);
  Node* y = g->add_node("mul", {x, w}, {});
  g->set_outputs({y->outputs[0]});
  EXPECT_EQ(freeze(*g), 1u);
  weight.copy_(Tensor::from_vector<float>({5, 5}, {2}));  // the frozen graph no longer follows it
  EXPECT_EQ(host_values(run(g, {Tensor::ones({2}, DType::f32, Device::cpu())}, Device::cpu())[0]),
            (std::vector<double>{2, 2}));

  Graph stateful;
  Value* s = stateful.add_captured("s", Tensor::zeros({2}, DType::f32, Device::cpu()));
  Node* inc = stateful.add_node("add", {s, s}, {});
  stateful.add_update(s, inc->outputs[0]);
  stateful.set_outputs({inc->outputs[0]});
  EXPECT_THROW(freeze(stateful), GraphError);
}

TEST(GraphPasses, IdentityViewsAreRemovedOthersKept) {
  auto g = std::make_shared<Graph>();
  Value* x = g->add_input("x", {{2, 3}, DType::f32});
  Node* same = g->add_node("reshape", {x}, {{"shape", std::vector<int64_t>{2, 3}}});
  Node* flat = g->add_node("reshape", {same->outputs[0]}, {{"shape", std::vector<int64_t>{6}}});
  Node* perm_id = g->add_node("permute", {x}, {{"dims", std::vector<int64_t>{0, 1}}});
  Node* perm = g->add_node("permute", {perm_id->outputs[0]}, {{"dims", std::vector<int64_t>{1, 0}}});
  Node* all = g->add_node("slice", {x}, {{"dim", int64_t(1)}, {"start", int64_t(0)}, {"end", int64_t(3)}});
  Node* part = g->add_node("slice", {all->outputs[0]}, {{"dim", int64_t(1)}, {"start", int64_t(1)}, {"end", int64_t(3)}});
  g->set_outputs({flat->outputs[0], perm->outputs[0], part->outputs[0]});
  EXPECT_EQ(eliminate_identity_views(*g), 3u);
  g->verify();
  EXPECT_EQ(ops_of(*g), (std::vector<std::string>{"reshape", "permute", "slice"}));
  Tensor xv = random_tensor({2, 3}, 10);
  auto out = run(g, {xv}, Device::cpu());
  EXPECT_EQ(host_values(out[0]), host_values(xv));
  EXPECT_EQ(host_values(out[1]), host_values(xv.t().contiguous()));
  EXPECT_EQ(host_values(out[2]), host_values(xv.slice(1, 1, 3).contiguous()));
}

TEST(GraphPasses, ExecutorWritesElementwiseResultsInPlaceOnlyWhereSafe) {
  auto g = std::make_shared<Graph>();
  Value* x = g->add_input("x", {{4, 5}, DType::f32});
  Node* a = g->add_node("exp", {x}, {});
  Node* b = g->add_node("sin", {a->outputs[0]}, {});                  // a dies here: b may take its buffer
  Node* c = g->add_node("add", {b->outputs[0], x}, {});               // b dies here; x is the caller's: never
  Node* view = g->add_node("reshape", {c->outputs[0]}, {{"shape", std::vector<int64_t>{20}}});
  Node* e = g->add_node("mul", {c->outputs[0], c->outputs[0]}, {});   // c is read twice and viewed: not in place
  g->set_outputs({view->outputs[0], e->outputs[0]});
  Tensor xv = random_tensor({4, 5}, 11);
  Tensor want_c = call1("add", {call1("sin", {call1("exp", {xv})}), xv});
  std::vector<double> x_before = host_values(xv);
  for (Device dev : devices()) {
    Executor exec(g, dev);
    EXPECT_GE(exec.inplace_step_count(), 2u) << dev.str();
    Tensor xd = xv.to(dev);
    auto out = exec.run({xd});
    expect_close(host_values(out[0]), host_values(want_c), 1e-6, 1e-6, "view of c on " + dev.str());
    expect_close(host_values(out[1]), host_values(call1("mul", {want_c, want_c})), 1e-6, 1e-6, "c*c on " + dev.str());
    EXPECT_EQ(host_values(xd), x_before) << "the input was overwritten on " << dev.str();
  }
}

// A training graph's optimizer step writes the parameter and its moments in
// place (no fresh buffers, nothing for the updates to copy), except a state
// whose old value a later node still reads; the values are eager's either way.
TEST(GraphPasses, OptimizerUpdatesRunInPlaceWhereNothingReadsTheOldState) {
  Attrs adam{{"lr", 0.01},           {"beta1", 0.9},       {"beta2", 0.999},
             {"eps", 1e-8},          {"weight_decay", 0.1}, {"amsgrad", false},
             {"maximize", false},    {"decoupled_weight_decay", false}, {"steps", std::vector<double>{1.0}}};
  Tensor w0 = random_tensor({3, 4}, 21), g0 = random_tensor({3, 4}, 22), m0 = random_tensor({3, 4}, 23);
  Tensor v0 = call1("mul", {m0, m0});
  for (Device dev : devices())
    for (bool old_w_read_later : {false, true}) {
      Tensor w = w0.to(dev).clone(), m = m0.to(dev).clone(), v = v0.to(dev).clone();
      auto g = std::make_shared<Graph>();
      Value* grad = g->add_input("grad", {{3, 4}, DType::f32});
      Value *wv = g->add_captured("w", w), *mv = g->add_captured("m", m), *vv = g->add_captured("v", v);
      Node* step = g->add_node("adam_step", {nullptr, wv, grad, mv, vv}, adam);
      g->add_update(wv, step->outputs[0]);
      g->add_update(mv, step->outputs[1]);
      g->add_update(vv, step->outputs[2]);
      Node* out = g->add_node("mul", {old_w_read_later ? wv : grad, grad}, {});  // after the step in node order
      g->set_outputs({out->outputs[0]});
      g->verify();

      Executor exec(g, dev);
      EXPECT_EQ(exec.update_in_place_count(), old_w_read_later ? 2u : 3u) << dev.str();
      uint32_t version = w.version();
      auto result = exec.run({g0.to(dev)});
      EXPECT_GT(w.version(), version) << "an update in place still counts as a write, on " << dev.str();

      Tensor we = w0.to(dev).clone(), me = m0.to(dev).clone(), ve = v0.to(dev).clone();
      call_out(OpRegistry::instance().get("adam_step"), {Tensor(), we, g0.to(dev), me, ve}, adam, {we, me, ve});
      std::string where = dev.str() + (old_w_read_later ? ", old w read later" : "");
      expect_close(host_values(w), host_values(we), 1e-7, 1e-7, "w on " + where);
      expect_close(host_values(m), host_values(me), 1e-7, 1e-7, "m on " + where);
      expect_close(host_values(v), host_values(ve), 1e-7, 1e-7, "v on " + where);
      Tensor first = old_w_read_later ? w0 : g0;  // the node after the step saw the old w
      expect_close(host_values(result[0]), host_values(call1("mul", {first, g0})), 1e-6, 1e-6, "output on " + where);
    }
}

TEST(GraphPasses, BiasAddsFuseIntoLinearAndConvolution) {
  auto g = std::make_shared<Graph>();
  Value* x = g->add_input("x", {{5, 3}, DType::f32});
  Value* w = g->add_captured("w", random_tensor({4, 3}, 12));
  Value* b = g->add_captured("b", random_tensor({4}, 13));
  Node* wt = g->add_node("permute", {w}, {{"dims", std::vector<int64_t>{1, 0}}});
  Node* mm = g->add_node("matmul", {x, wt->outputs[0]}, {});
  Node* biased = g->add_node("add", {b, mm->outputs[0]}, {});  // bias on the left works too
  Value* img = g->add_input("img", {{2, 3, 5, 5}, DType::f32});
  Value* k = g->add_captured("k", random_tensor({4, 3, 3, 3}, 14));
  Value* cb = g->add_captured("cb", random_tensor({1, 4, 1, 1}, 15));
  Node* conv = g->add_node("conv2d", {img, k, nullptr}, {});
  Node* conv_b = g->add_node("add", {conv->outputs[0], cb}, {});
  Node* shared = g->add_node("matmul", {x, wt->outputs[0]}, {});  // read twice below: not fused
  Node* s1 = g->add_node("add", {shared->outputs[0], b}, {});
  Node* s2 = g->add_node("mul", {shared->outputs[0], shared->outputs[0]}, {});
  g->set_outputs({biased->outputs[0], conv_b->outputs[0], s1->outputs[0], s2->outputs[0]});
  std::vector<Tensor> in{random_tensor({5, 3}, 16), random_tensor({2, 3, 5, 5}, 17)};
  std::vector<std::vector<double>> before;
  for (Device dev : devices())
    for (const Tensor& t : run(g, in, dev)) before.push_back(host_values(t));
  EXPECT_EQ(fuse_bias(*g), 2u);
  g->verify();
  auto ops = ops_of(*g);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "linear"), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "add"), 1);  // the shared matmul's
  size_t i = 0;
  for (Device dev : devices())
    for (const Tensor& t : run(g, in, dev)) expect_close(host_values(t), before[i++], 1e-5, 1e-5, "fused on " + dev.str());
}

TEST(GraphPasses, ElementwiseChainsFuseWhereTheDeviceHasTheKernel) {
  auto build = [](DType dt) {
    auto g = std::make_shared<Graph>();
    Value* x = g->add_input("x", {{6, 4}, dt});
    Value* y = g->add_input("y", {{4, 6}, dt});
    Value* s = g->add_captured("s", Tensor::full({}, 0.5, dt, Device::cpu()));
    Node* yt = g->add_node("permute", {y}, {{"dims", std::vector<int64_t>{1, 0}}});  // a strided operand
    Node* m = g->add_node("mul", {x, s}, {});
    Node* a = g->add_node("add", {m->outputs[0], yt->outputs[0]}, {});
    Node* c = g->add_node("clamp", {a->outputs[0]}, {{"min", -0.25}, {"max", 0.75}});
    Node* e = g->add_node("exp", {c->outputs[0]}, {});
    Node* keep = g->add_node("sin", {a->outputs[0]}, {});  // a is read twice: the chain ends at a
    g->set_outputs({e->outputs[0], keep->outputs[0]});
    return g;
  };
  for (DType dt : {DType::f32, DType::f16}) {
    std::vector<Tensor> in{make_tensor(random_values(24, -1, 1, 20), {6, 4}, dt, Device::cpu()),
                           make_tensor(random_values(24, -1, 1, 21), {4, 6}, dt, Device::cpu())};
    for (Device dev : devices()) {
      std::vector<std::vector<double>> want;  // unfused, on the same device: fusion must not change a bit
      for (const Tensor& t : run(build(dt), in, dev)) want.push_back(host_values(t));
      auto g = build(dt);
      size_t fused = fuse_elementwise(*g, dev.type);
      g->verify();
      bool has_kernel = dev.type_name() == "cpu";
      if (has_kernel) {
        EXPECT_EQ(fused, 2u) << dev.str();  // mul+add, then clamp+exp: two fused nodes, two nodes fewer
        auto ops = ops_of(*g);
        EXPECT_EQ(std::count(ops.begin(), ops.end(), "fused_elementwise"), 2);
      }
      auto out = run(g, in, dev);
      for (size_t i = 0; i < out.size(); ++i)
        EXPECT_EQ(host_values(out[i]), want[i]) << "fused and unfused differ on " << dev.str() << " " << dtype_name(dt);
    }
  }
}

TEST(GraphPasses, FusedChainsStillCarryGradients) {
  auto g = std::make_shared<Graph>();
  Value* x = g->add_input("x", {{5}, DType::f32});
  Node* a = g->add_node("mul", {x, x}, {});
  Node* b = g->add_node("sin", {a->outputs[0]}, {});
  g->set_outputs({b->outputs[0]});
  EXPECT_EQ(fuse_elementwise(*g, Runtime::get().cpu_type()), 1u);
  Tensor xv = random_tensor({5}, 22).set_requires_grad(true);
  Executor exec(g, Device::cpu());
  Tensor y = exec.run({xv})[0];
  autograd::backward({call1("sum", {y})});
  std::vector<double> xs = host_values(xv), grad = host_values(xv.grad());
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(grad[i], std::cos(xs[i] * xs[i]) * 2 * xs[i], 1e-5);
}

TEST(GraphPasses, ActivationsFuseIntoConvolutionWhereTheDeviceHasTheKernel) {
  auto build = [](const std::string& act, bool shared) {
    auto g = std::make_shared<Graph>();
    Value* x = g->add_input("x", {{2, 3, 7, 7}, DType::f32});
    Value* w = g->add_captured("w", random_tensor({5, 3, 3, 3}, 30));
    Value* b = g->add_captured("b", random_tensor({5}, 31));
    Node* conv = g->add_node("conv2d", {x, w, b}, {{"stride", std::vector<int64_t>{2, 2}}, {"padding", std::vector<int64_t>{1, 1}}});
    Node* a = g->add_node(act, {conv->outputs[0]}, {});
    std::vector<Value*> outs{a->outputs[0]};
    if (shared) outs.push_back(conv->outputs[0]);  // the convolution is read twice: not fused
    g->set_outputs(outs);
    return g;
  };
  Tensor xv = random_tensor({2, 3, 7, 7}, 32).set_requires_grad(true);
  for (const std::string act : {"relu", "sigmoid", "tanh"})
    for (Device dev : devices()) {
      auto plain = build(act, false);
      std::vector<double> want = host_values(run(plain, {xv.detach()}, dev)[0]);
      auto g = build(act, false);
      size_t fused = fuse_activation(*g, dev.type);
      g->verify();
      EXPECT_EQ(fused, dev.type_name() == "cpu" ? 1u : 0u) << act << " on " << dev.str();
      expect_close(host_values(run(g, {xv.detach()}, dev)[0]), want, 1e-5, 1e-5, act + " fused on " + dev.str());
      auto shared = build(act, true);
      EXPECT_EQ(fuse_activation(*shared, dev.type), 0u);
    }
  // Gradients flow through a fused node (its parts record them).
  auto g = build("tanh", false);
  ASSERT_EQ(fuse_activation(*g, Runtime::get().cpu_type()), 1u);
  auto plain = build("tanh", false);
  Tensor gx_fused = autograd::grad({call1("sum", {Executor(g, Device::cpu()).run({xv})[0]})}, {xv})[0];
  Tensor gx_plain = autograd::grad({call1("sum", {Executor(plain, Device::cpu()).run({xv})[0]})}, {xv})[0];
  expect_close(host_values(gx_fused), host_values(gx_plain), 1e-6, 1e-6, "grad through conv2d_act");
}

TEST(GraphPasses, ActivationsFuseIntoLinear) {
  for (bool big : {false, true}) {  // the small-GEMM loop and oneDNN's matmul with a post-op
    int64_t m = big ? 96 : 4, k = big ? 80 : 3, n = big ? 72 : 5;
    auto build = [&](const std::string& act) {
      auto g = std::make_shared<Graph>();
      Value* x = g->add_input("x", {{m, k}, DType::f32});
      Value* w = g->add_captured("w", random_tensor({n, k}, 40));
      Value* b = g->add_captured("b", random_tensor({n}, 41));
      Node* lin = g->add_node("linear", {x, w, b}, {});
      g->set_outputs({g->add_node(act, {lin->outputs[0]}, {})->outputs[0]});
      return g;
    };
    Tensor xv = random_tensor({m, k}, 42);
    for (const std::string act : {"relu", "sigmoid", "tanh"})
      for (Device dev : devices()) {
        std::vector<double> want = host_values(run(build(act), {xv}, dev)[0]);
        auto g = build(act);
        EXPECT_EQ(fuse_activation(*g, dev.type), dev.type_name() == "cpu" ? 1u : 0u);
        g->verify();
        expect_close(host_values(run(g, {xv}, dev)[0]), want, 1e-5, 1e-5, act + " linear fused on " + dev.str());
      }
  }
}

// In-place planning is not only planned but happens: a chain of elementwise
// steps over a 4 MiB tensor needs one working buffer, not two at a time.
TEST(GraphPasses, InPlaceStepsReuseTheirBufferAtRunTime) {
  auto g = std::make_shared<Graph>();
  Value* x = g->add_input("x", {{1 << 20}, DType::f32});
  Value* v = x;
  for (const char* op : {"exp", "sin", "cos", "tanh", "neg"}) v = g->add_node(op, {v}, {})->outputs[0];
  g->set_outputs({v});
  Device cpu = Device::cpu();
  Executor exec(g, cpu);
  ASSERT_EQ(exec.inplace_step_count(), 4u);
  Tensor xv = Tensor::ones({1 << 20}, DType::f32, cpu);
  exec.run({xv});  // warm the allocator's cache
  CachingAllocator& alloc = Runtime::get().allocator(cpu);
  alloc.reset_peak();
  uint64_t before = alloc.stats().allocated;
  Tensor y = exec.run({xv})[0];
  uint64_t buffer = uint64_t(1 << 20) * 4;
  EXPECT_LT(alloc.stats().peak_allocated - before, buffer + buffer / 2) << "more than one working buffer was live";
  EXPECT_NEAR(host_values(y)[0], -std::tanh(std::cos(std::sin(std::exp(1.0)))), 1e-6);
}

// unfuse is the inverse of the fusions: the plain catalog ops come back, in
// order, with the same results (what a subgraph-offload driver needs to see).
TEST(GraphPasses, UnfuseRestoresThePlainOpsWithTheSameResults) {
  auto build = [] {
    auto g = std::make_shared<Graph>();
    Value* x = g->add_input("x", {{2, 3, 6, 6}, DType::f32});
    Value* w = g->add_constant("w", random_tensor({4, 3, 3, 3}, 40));
    Value* fw = g->add_constant("fw", random_tensor({5, 144}, 41));
    Node* conv = g->add_node("conv2d", {x, w, nullptr}, {{"padding", std::vector<int64_t>{1, 1}}});
    Node* r = g->add_node("relu", {conv->outputs[0]}, {});
    Node* m = g->add_node("mul", {r->outputs[0], r->outputs[0]}, {});
    Node* c = g->add_node("clamp", {m->outputs[0]}, {{"min", -0.5}, {"max", 0.5}});
    Node* flat = g->add_node("reshape", {c->outputs[0]}, {{"shape", std::vector<int64_t>{2, 144}}});
    Node* fc = g->add_node("linear", {flat->outputs[0], fw, nullptr}, {});
    Node* s = g->add_node("sigmoid", {fc->outputs[0]}, {});
    g->set_outputs({s->outputs[0]});
    return g;
  };
  Tensor xv = random_tensor({2, 3, 6, 6}, 42);
  auto plain = build();
  std::vector<double> want = host_values(run(plain, {xv}, Device::cpu())[0]);
  auto g = build();
  int32_t cpu = Runtime::get().cpu_type();
  ASSERT_EQ(fuse_activation(*g, cpu), 2u);
  ASSERT_EQ(fuse_elementwise(*g, cpu), 1u);
  EXPECT_EQ(ops_of(*g), (std::vector<std::string>{"conv2d_act", "fused_elementwise", "reshape", "linear_act"}));
  EXPECT_EQ(unfuse(*g), 3u);
  g->verify();
  EXPECT_EQ(ops_of(*g), ops_of(*plain));
  expect_close(host_values(run(g, {xv}, Device::cpu())[0]), want, 1e-6, 1e-7, "unfused");
  EXPECT_EQ(unfuse(*g), 0u) << "nothing left to expand";
}
