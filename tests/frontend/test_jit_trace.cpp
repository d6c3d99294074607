// Tracing eager C++ code into a graph and running it (oar::jit::trace,
// graph::Tracer, graph::Executor), on every present device: outputs and
// gradients equal eager (the digits CNN within 1e-5), in-place writes become
// updates (batch-norm running statistics), random ops draw fresh numbers per
// run, other input shapes trace again, and what a graph cannot express
// (host reads of traced values, writes into views) is a GraphError.
#include <cmath>

#include "oar/graph/executor.h"
#include "oar/graph/text_format.h"
#include "oar/graph/trace.h"
#include "oar/oar.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;

namespace {

struct DigitsCNNImpl : nn::Module {
  DigitsCNNImpl() {
    features = register_module("features", nn::Sequential(nn::Conv2d(1, 16, 3, 1, 1), nn::BatchNorm2d(16), nn::ReLU(),
                                                          nn::MaxPool2d(2), nn::Conv2d(16, 32, 3, 1, 1),
                                                          nn::BatchNorm2d(32), nn::ReLU(), nn::MaxPool2d(2)));
    classifier = register_module("classifier", nn::Sequential(nn::Flatten(), nn::Linear(32 * 2 * 2, 64), nn::ReLU(),
                                                              nn::Linear(64, 10)));
  }
  Tensor forward(const Tensor& x) override { return classifier(features(x)); }
  nn::Sequential features{nullptr}, classifier{nullptr};
};
using DigitsCNN = nn::ModuleHolder<DigitsCNNImpl>;

Tensor random_tensor(const Shape& shape, uint32_t seed, Device device) {
  return make_tensor(random_values(numel_of(shape), -1, 1, seed), shape, DType::f32, device);
}

void expect_same(const Tensor& got, const Tensor& want, double tol, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  expect_close(host_values(got), host_values(want), tol, tol, what);
}

std::string graph_error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const GraphError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(JitTrace, RecordsOpsAndViewsAndRunsLikeEager) {
  auto fn = [](const std::vector<Tensor>& in) {
    Tensor h = nn::functional::relu(matmul(in[0], in[1].t()) + sum(in[0], {1}, true));
    return std::vector<Tensor>{h.reshape({-1}), h.slice(1, 1, 3)};
  };
  for (Device dev : devices()) {
    Tensor x = random_tensor({4, 3}, 1, dev), w = random_tensor({5, 3}, 2, dev);
    std::unique_ptr<graph::Graph> graph;
    {
      graph::Tracer tracer({x, w});  // the recording itself, before jit's passes
      graph = tracer.finish(fn({x, w}));
    }
    std::string text = graph->dump();
    for (const char* op : {"matmul", "permute", "sum", "add", "relu", "reshape", "slice"})
      EXPECT_NE(text.find(std::string("= ") + op + "("), std::string::npos) << op << " missing in\n" << text;
    EXPECT_EQ(graph->inputs().size(), 2u);
    EXPECT_EQ(graph->outputs().size(), 2u);
    graph::Executor exec(std::shared_ptr<const graph::Graph>(std::move(graph)), dev);
    EXPECT_EQ(exec.eager_node_count(), 0u) << dev.str();
    Tensor x2 = random_tensor({4, 3}, 3, dev), w2 = random_tensor({5, 3}, 4, dev);
    auto got = exec.run({x2, w2});
    auto want = fn({x2, w2});
    expect_same(got[0], want[0], 1e-6, dev.str() + " out0");
    expect_same(got[1], want[1], 1e-6, dev.str() + " out1");

    // jit::trace_graph also optimizes: on the CPU the add + relu chain becomes one fused node.
    auto optimized = jit::trace_graph(fn, {x, w});
    if (dev.type_name() == "cpu") {
      EXPECT_NE(optimized->dump().find("fused_elementwise"), std::string::npos);
    }
    graph::Executor fast(std::shared_ptr<const graph::Graph>(std::move(optimized)), dev);
    expect_same(fast.run({x2, w2})[0], want[0], 1e-6, dev.str() + " optimized");
  }
}

TEST(JitTrace, DigitsCnnMatchesEagerOutputsAndGradients) {
  for (Device dev : devices()) {
    manual_seed(7);
    DigitsCNN model;
    model->to(dev);
    Tensor x = random_tensor({16, 1, 8, 8}, 11, dev);
    model->eval();
    auto traced = jit::trace(model.ptr(), {x});
    Tensor x2 = random_tensor({16, 1, 8, 8}, 12, dev);
    Tensor eager = model(x2);
    Tensor graphed;
    {
      autograd::NoGradGuard no_grad;
      graphed = traced({x2})[0];
    }
    expect_same(graphed, eager, 1e-5, dev.str() + " eval outputs");

    // With autograd on, the graph's outputs carry gradients like eager ones.
    std::vector<Tensor> params;
    for (auto& [name, p] : model->named_parameters()) params.push_back(p);
    auto eager_grads = autograd::grad({sum(square(model(x2)))}, params);
    auto graph_grads = autograd::grad({sum(square(traced({x2})[0]))}, params);
    ASSERT_EQ(eager_grads.size(), graph_grads.size());
    for (size_t i = 0; i < params.size(); ++i) expect_same(graph_grads[i], eager_grads[i], 1e-5, dev.str() + " grad");
    EXPECT_EQ(traced.trace_count(), 1u);
  }
}

TEST(JitTrace, TrainingModeBatchNormUpdatesRunningStatsThroughUpdates) {
  for (Device dev : devices()) {
    manual_seed(3);
    DigitsCNN eager_model, graph_model;
    eager_model->to(dev);
    graph_model->to(dev);
    graph_model->load_state_dict(eager_model->state_dict());
    Tensor x = random_tensor({8, 1, 8, 8}, 5, dev);
    autograd::NoGradGuard no_grad;
    auto traced = jit::trace(graph_model.ptr(), {x});  // tracing leaves the running statistics as they were
    for (int step = 0; step < 2; ++step) {
      Tensor xi = random_tensor({8, 1, 8, 8}, uint32_t(20 + step), dev);
      expect_same(traced({xi})[0], eager_model(xi), 1e-5, dev.str() + " train-mode output");
    }
    auto want = eager_model->named_buffers();
    auto got = graph_model->named_buffers();
    for (auto& [name, t] : want) expect_same(got[name], t, 1e-5, dev.str() + " buffer " + name);
  }
}

TEST(JitTrace, RandomOpsDrawFreshNumbersEachRun) {
  Tensor x = Tensor::ones({1000}, DType::f32, Device::cpu());
  auto traced = jit::trace([](const std::vector<Tensor>& in) { return std::vector<Tensor>{nn::functional::dropout(in[0], 0.5, true)}; },
                           {x});
  auto a = host_values(traced({x})[0]), b = host_values(traced({x})[0]);
  EXPECT_NE(a, b);
  int kept = 0;
  for (double v : a) kept += v != 0;
  EXPECT_GT(kept, 400);
  EXPECT_LT(kept, 600);
}

TEST(JitTrace, OtherShapesTraceAgain) {
  int python_calls = 0;
  auto traced = jit::trace(
      [&](const std::vector<Tensor>& in) {
        ++python_calls;
        return std::vector<Tensor>{in[0].size(0) > 2 ? in[0] * 2.0 : in[0] - 1.0};  // shape-dependent branch
      },
      {Tensor::ones({3}, DType::f32, Device::cpu())});
  EXPECT_EQ(host_values(traced({Tensor::ones({3}, DType::f32, Device::cpu())})[0]), std::vector<double>(3, 2.0));
  EXPECT_EQ(host_values(traced({Tensor::ones({2}, DType::f32, Device::cpu())})[0]), std::vector<double>(2, 0.0));
  EXPECT_EQ(traced.trace_count(), 2u);
  EXPECT_EQ(python_calls, 2);
}

TEST(JitTrace, DataDependentControlFlowIsAGraphError) {
  Tensor x = Tensor::ones({3}, DType::f32, Device::cpu());
  std::string msg = graph_error_of([&] {
    jit::trace([](const std::vector<Tensor>& in) {
      return std::vector<Tensor>{sum(in[0]).item() > 0 ? in[0] : -in[0]};
    }, {x});
  });
  EXPECT_NE(msg.find("host"), std::string::npos) << msg;
  EXPECT_NE(msg.find("f32[]"), std::string::npos) << msg;
}

TEST(JitTrace, InPlaceWritesBecomeUpdatesAndViewWritesAreRefused) {
  Tensor total = Tensor::zeros({2}, DType::f32, Device::cpu());
  Tensor x = Tensor::ones({2}, DType::f32, Device::cpu());
  auto traced = jit::trace([&](const std::vector<Tensor>& in) {
    total.copy_(total + in[0]);
    return std::vector<Tensor>{total * 1.0};
  }, {x});
  // Tracing undid its write (total is still 0); each graph run adds.
  EXPECT_EQ(host_values(total), std::vector<double>(2, 0.0));
  auto out = traced({x * 2.0});
  EXPECT_EQ(host_values(out[0]), std::vector<double>(2, 2.0));
  EXPECT_EQ(host_values(total), std::vector<double>(2, 2.0));
  traced({x});
  EXPECT_EQ(host_values(total), std::vector<double>(2, 3.0));
  EXPECT_NE(traced.graph_for({x})->dump().find("update"), std::string::npos);

  std::string msg = graph_error_of([&] {
    jit::trace([&](const std::vector<Tensor>& in) {
      total.slice(0, 0, 1).copy_(in[0].slice(0, 0, 1));
      return std::vector<Tensor>{total * 1.0};
    }, {x});
  });
  EXPECT_NE(msg.find("view"), std::string::npos) << msg;
}

TEST(JitTrace, ExecutorRejectsInputsOfTheWrongShapeOrDtype) {
  Tensor x = Tensor::ones({2, 3}, DType::f32, Device::cpu());
  auto graph = jit::trace_graph([](const std::vector<Tensor>& in) { return std::vector<Tensor>{in[0] + 1.0}; }, {x});
  graph::Executor exec(std::shared_ptr<const graph::Graph>(std::move(graph)), Device::cpu());
  EXPECT_THROW(exec.run({Tensor::ones({3, 2}, DType::f32, Device::cpu())}), ShapeError);
  EXPECT_THROW(exec.run({Tensor::ones({2, 3}, DType::f64, Device::cpu())}), DTypeError);
  EXPECT_THROW(exec.run({}), ValueError);
}

TEST(JitSave, TextFormatRoundTripsEveryAttributeTypeAndRejectsDamage) {
  graph::Graph g;
  graph::Value* x = g.add_input("x", {{2, 3}, DType::f32});
  graph::Value* w = g.add_constant("w name with spaces", Tensor::full({2, 3}, 0.1, DType::f32, Device::cpu()));
  graph::Node* sum = g.add_node("add", {x, w}, {});
  graph::Node* clamp = g.add_node("clamp", {sum->outputs[0]}, {{"min", 0.1}, {"max", 1.0 / 3.0}});
  graph::Node* sliced = g.add_node("slice", {clamp->outputs[0]}, {{"dim", int64_t(1)}, {"start", int64_t(0)}, {"end", int64_t(2)}});
  graph::Node* cast = g.add_node("cast", {sliced->outputs[0]}, {{"dtype", DType::f64}});
  g.set_outputs({cast->outputs[0]});
  std::string text = graph::to_text(g);
  auto back = graph::from_text(text, [&](int32_t id) { return id == w->id ? w->tensor : Tensor(); }, "mem");
  EXPECT_EQ(graph::to_text(*back), text);  // floats in hex: bit for bit
  EXPECT_EQ(back->dump(), g.dump());

  auto parse_error = [&](const std::string& t) {
    try {
      graph::from_text(t, [&](int32_t id) { return id == w->id ? w->tensor : Tensor(); }, "mem");
    } catch (const IOError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(parse_error("oar-graph 7\n").find("newer"), std::string::npos);
  EXPECT_NE(parse_error(text.substr(0, text.size() / 2)).find("mem"), std::string::npos);
  std::string bad_op = text;
  bad_op.replace(bad_op.find("3:add"), 5, "3:xyz");
  EXPECT_NE(parse_error(bad_op).find("unknown op 'xyz'"), std::string::npos);
  std::string bad_shape = text;
  bad_shape.replace(bad_shape.find("out 1 2 f32 2 2 3"), 17, "out 1 2 f32 2 2 4");
  EXPECT_NE(parse_error(bad_shape).find("inference"), std::string::npos) << parse_error(bad_shape);
}

TEST(JitSave, PredictorRunsASavedGraphOnEveryDevice) {
  manual_seed(5);
  DigitsCNN model;
  model->eval();
  Tensor x = random_tensor({4, 1, 8, 8}, 9, Device::cpu());
  auto traced = jit::trace(model.ptr(), {x});
  std::string path = ::testing::TempDir() + "/digits_predictor.oarg";
  jit::save(*traced.graph_for({x}), path);
  Tensor want = model(x);
  inference::Predictor predictor(path, Device::cpu());
  EXPECT_EQ(predictor.input_names(), std::vector<std::string>{"input0"});
  for (Device dev : devices()) {
    predictor.set_device(dev);
    auto out = predictor.run({x.to(dev)});
    expect_same(out[0], want, 1e-5, "predictor on " + dev.str());
    EXPECT_FALSE(out[0].requires_grad());
  }
  EXPECT_THROW(inference::Predictor(path + ".missing"), IOError);
}
