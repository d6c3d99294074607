// The OpenVINO adapter driver's results, op by op: every mapped op against
// the plain-loop references of reference_ops.hpp, f16 / bf16 tensors and the
// precision modes, and the reasons it gives for what it cannot run. Skips
// when the driver was not built (no OpenVINO).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "test_openvino_util.hpp"

namespace {

using namespace oar_test;
using namespace oar_test::openvino;

struct ConvCase {
  const char* what;
  Dims x, w;
  bool bias;
  Dims stride, padding, dilation;
  int64_t groups;
  const char* activation;  // nullptr: conv2d
};

TEST_F(OpenVinoDriver, Conv2dMatchesReference) {
  const ConvCase cases[] = {
      {"3x3 with bias", {2, 3, 7, 7}, {4, 3, 3, 3}, true, {1, 1}, {0, 0}, {1, 1}, 1, nullptr},
      {"groups 2, stride 2, padding 1", {2, 4, 8, 8}, {6, 2, 3, 3}, false, {2, 2}, {1, 1}, {1, 1}, 2, nullptr},
      {"depthwise", {1, 4, 9, 9}, {4, 1, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 4, nullptr},
      {"depthwise multiplier 2", {1, 3, 6, 6}, {6, 1, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 3, nullptr},
      {"dilation 2, padding [2, 1]", {1, 2, 9, 9}, {3, 2, 3, 3}, true, {1, 1}, {2, 1}, {2, 2}, 1, nullptr},
      {"1x1 stride [2]", {2, 3, 5, 5}, {4, 3, 1, 1}, false, {2}, {0, 0}, {1, 1}, 1, nullptr},
      {"conv2d_act relu", {2, 3, 7, 7}, {4, 3, 3, 3}, true, {1, 1}, {1, 1}, {1, 1}, 1, "relu"},
      {"conv2d_act sigmoid groups 2", {2, 4, 8, 8}, {6, 2, 3, 3}, false, {2, 2}, {1, 1}, {1, 1}, 2, "sigmoid"},
      {"conv2d_act tanh", {1, 2, 6, 6}, {3, 2, 3, 3}, true, {1, 1}, {0, 0}, {1, 1}, 1, "tanh"},
  };
  for (const ConvCase& k : cases) {
    SCOPED_TRACE(k.what);
    const Floats x = random_floats(CModel::count(k.x), 7), w = random_floats(CModel::count(k.w), 3);
    const Floats b = random_floats(k.w[0], 5);
    Dims yd;
    Floats want = ref::conv2d(x, k.x, w, k.w, k.bias ? &b : nullptr, k.stride, k.padding, k.dilation, k.groups, &yd);
    if (k.activation != nullptr) want = ref::unary(want, [&](double v) { return ref::activation(k.activation, v); });
    CModel m;
    int xi = m.input(OAR_DTYPE_F32, k.x, OAR_ADAPTER_LAYOUT_NCHW);
    int wi = m.constant(OAR_DTYPE_F32, k.w, w.data(), OAR_ADAPTER_LAYOUT_OIHW);
    int bi = k.bias ? m.constant(OAR_DTYPE_F32, {k.w[0]}, b.data()) : -1;
    int yi = m.output(OAR_DTYPE_F32, yd, OAR_ADAPTER_LAYOUT_NCHW);
    std::vector<CModel::Attr> attrs = {CModel::ints("stride", k.stride), CModel::ints("padding", k.padding),
                                       CModel::ints("dilation", k.dilation), CModel::integer("groups", k.groups)};
    if (k.activation != nullptr) attrs.push_back(CModel::string("activation", k.activation));
    m.operation(k.activation ? "conv2d_act" : "conv2d", {xi, wi, bi}, {yi}, attrs);
    EXPECT_EQ(query(m, 0), "");
    expect_close(run(m, {HostTensor(OAR_DTYPE_F32, k.x, x)}), want, kTolFp32, k.what);
  }
}

struct PoolCase {
  const char* what;
  bool is_max;
  Dims x, kernel, stride, padding;
  bool ceil_mode, count_include_pad;
};

TEST_F(OpenVinoDriver, PoolingMatchesReference) {
  const PoolCase cases[] = {
      {"max 2x2", true, {2, 3, 6, 6}, {2, 2}, {}, {0, 0}, false, true},
      {"max 3x3 stride 2 padding 1", true, {1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}, false, true},
      {"max ceil_mode", true, {1, 2, 7, 6}, {2, 2}, {}, {0, 0}, true, true},
      {"max ceil_mode, last window would start in the padding", true, {1, 2, 5, 5}, {2, 2}, {2, 2}, {1, 1}, true, true},
      {"max [3, 1] stride [1, 2]", true, {1, 2, 5, 5}, {3, 1}, {1, 2}, {0, 0}, false, true},
      {"avg 2x2", false, {2, 3, 6, 6}, {2, 2}, {}, {0, 0}, false, true},
      {"avg padding, count_include_pad", false, {1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}, false, true},
      {"avg padding, count_include_pad=false", false, {1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}, false, false},
      {"avg ceil_mode without padding", false, {1, 2, 7, 6}, {2, 2}, {}, {0, 0}, true, true},
      {"avg ceil_mode, padding, count_include_pad=false", false, {1, 2, 8, 8}, {3, 3}, {2, 2}, {1, 1}, true, false},
  };
  for (const PoolCase& k : cases) {
    SCOPED_TRACE(k.what);
    const Floats x = random_floats(CModel::count(k.x), 7);
    Dims yd;
    const Floats want = k.is_max ? ref::max_pool2d(x, k.x, k.kernel, k.stride, k.padding, k.ceil_mode, &yd)
                                 : ref::avg_pool2d(x, k.x, k.kernel, k.stride, k.padding, k.ceil_mode, k.count_include_pad, &yd);
    std::vector<CModel::Attr> attrs = {CModel::ints("kernel_size", k.kernel), CModel::ints("stride", k.stride),
                                       CModel::ints("padding", k.padding), CModel::boolean("ceil_mode", k.ceil_mode)};
    if (!k.is_max) attrs.push_back(CModel::boolean("count_include_pad", k.count_include_pad));
    CModel m = one_op(k.is_max ? "max_pool2d" : "avg_pool2d", OAR_DTYPE_F32, k.x, yd, attrs, OAR_ADAPTER_LAYOUT_NCHW);
    EXPECT_EQ(query(m, 0), "");
    expect_close(run(m, {HostTensor(OAR_DTYPE_F32, k.x, x)}), want, kTolFp32, k.what);
  }
}

TEST_F(OpenVinoDriver, LinearAndMatmulMatchReference) {
  struct Case {
    const char* what;
    Dims x;
    int64_t out;
    bool bias;
    const char* activation;
  };
  const Case cases[] = {{"2-D with bias", {3, 4}, 5, true, nullptr},
                        {"3-D without bias", {2, 3, 4}, 5, false, nullptr},
                        {"1-D with bias", {4}, 3, true, nullptr},
                        {"linear_act sigmoid", {3, 4}, 5, false, "sigmoid"},
                        {"linear_act tanh", {2, 3, 4}, 5, true, "tanh"}};
  for (const Case& k : cases) {
    SCOPED_TRACE(k.what);
    const int64_t in = k.x.back(), rows = CModel::count(k.x) / in;
    const Floats x = random_floats(CModel::count(k.x), 7), w = random_floats(k.out * in, 11);
    const Floats b = random_floats(k.out, 13);
    Floats want = ref::linear(x, rows, in, w, k.out, k.bias ? &b : nullptr);
    if (k.activation != nullptr) want = ref::unary(want, [&](double v) { return ref::activation(k.activation, v); });
    Dims yd = k.x;
    yd.back() = k.out;
    CModel m;
    int xi = m.input(OAR_DTYPE_F32, k.x);
    int wi = m.constant(OAR_DTYPE_F32, {k.out, in}, w.data());
    int bi = k.bias ? m.constant(OAR_DTYPE_F32, {k.out}, b.data()) : -1;
    int yi = m.output(OAR_DTYPE_F32, yd);
    std::vector<CModel::Attr> attrs;
    if (k.activation != nullptr) attrs.push_back(CModel::string("activation", k.activation));
    m.operation(k.activation ? "linear_act" : "linear", {xi, wi, bi}, {yi}, attrs);
    expect_close(run(m, {HostTensor(OAR_DTYPE_F32, k.x, x)}), want, kTolFp32, k.what);
  }
  // matmul with broadcast batch dims: [2, 3, 4] @ [4, 5], both inputs
  const Floats a = random_floats(24, 31), b = random_floats(20, 37);
  const Floats want = ref::matmul(a, 2 * 3, 4, b, 5);
  CModel m;
  int ai = m.input(OAR_DTYPE_F32, {2, 3, 4});
  int bi = m.input(OAR_DTYPE_F32, {4, 5});
  int yi = m.output(OAR_DTYPE_F32, {2, 3, 5});
  m.operation("matmul", {ai, bi}, {yi});
  expect_close(run(m, {HostTensor(OAR_DTYPE_F32, {2, 3, 4}, a), HostTensor(OAR_DTYPE_F32, {4, 5}, b)}), want, kTolFp32,
               "matmul");
}

// One unary op on [3, 5] against f.
struct UnaryCase {
  const char* op;
  std::vector<CModel::Attr> attrs;
  std::function<double(double)> f;
  float lo, hi;
};

TEST_F(OpenVinoDriver, UnaryOpsMatchReference) {
  const UnaryCase cases[] = {
      {"relu", {}, ref::relu, -2, 2},
      {"sigmoid", {}, ref::sigmoid, -4, 4},
      {"tanh", {}, [](double v) { return std::tanh(v); }, -3, 3},
      {"exp", {}, [](double v) { return std::exp(v); }, -3, 3},
      {"log", {}, [](double v) { return std::log(v); }, 0.1f, 5},
      {"sqrt", {}, [](double v) { return std::sqrt(v); }, 0.0f, 5},
      {"gelu", {CModel::string("approximate", "none")}, ref::gelu, -4, 4},
      {"gelu", {CModel::string("approximate", "tanh")}, ref::gelu_tanh, -4, 4},
      {"silu", {}, ref::silu, -4, 4},
      {"leaky_relu", {CModel::real("negative_slope", -0.3)}, [](double v) { return ref::leaky_relu(v, -0.3); }, -2, 2},
      {"clamp", {CModel::real("min", -1.0), CModel::real("max", 0.5)}, [](double v) { return ref::clamp(v, -1.0, 0.5); }, -2, 2},
      {"clamp", {CModel::real("min", 0.25), CModel::real("max", INFINITY)},
       [](double v) { return ref::clamp(v, 0.25, INFINITY); }, -2, 2},
      {"clamp", {CModel::real("min", 1.0), CModel::real("max", 0.0)}, [](double v) { return ref::clamp(v, 1.0, 0.0); }, -2, 2},
  };
  for (const UnaryCase& k : cases) {
    SCOPED_TRACE(k.op);
    const Floats x = random_floats(15, 22, k.lo, k.hi);
    CModel m = one_op(k.op, OAR_DTYPE_F32, {3, 5}, {3, 5}, k.attrs);
    EXPECT_EQ(query(m, 0), "");
    expect_close(run(m, {HostTensor(OAR_DTYPE_F32, {3, 5}, x)}), ref::unary(x, k.f), kTolFp32, k.op);
  }
}

TEST_F(OpenVinoDriver, BinaryOpsBroadcast) {
  const std::map<std::string, std::function<double(double, double)>> ops = {
      {"add", std::plus<double>()},
      {"sub", std::minus<double>()},
      {"mul", std::multiplies<double>()},
      {"div", std::divides<double>()}};
  const Floats a = random_floats(24, 31), b = random_floats(3, 22, 0.5f, 2.0f);
  for (const auto& [op, f] : ops) {
    SCOPED_TRACE(op);
    Dims yd;
    const Floats want = ref::broadcast(a, {2, 3, 4}, b, {3, 1}, f, &yd);
    CModel m;
    int ai = m.input(OAR_DTYPE_F32, {2, 3, 4});
    int bi = m.constant(OAR_DTYPE_F32, {3, 1}, b.data());
    int yi = m.output(OAR_DTYPE_F32, yd);
    m.operation(op, {ai, bi}, {yi});
    expect_close(run(m, {HostTensor(OAR_DTYPE_F32, {2, 3, 4}, a)}), want, kTolFp32, op);
  }
}

TEST_F(OpenVinoDriver, IntegerArithmeticAndClamp) {
  const Floats a = {1, -2, 3, 40000, -7, 8}, b = {10, 20, -30};
  CModel m;
  int ai = m.input(OAR_DTYPE_I32, {2, 3});
  int bi = m.input(OAR_DTYPE_I32, {3});
  int si = m.temporary(OAR_DTYPE_I32, {2, 3});
  int yi = m.output(OAR_DTYPE_I32, {2, 3});
  m.operation("mul", {ai, bi}, {si});
  m.operation("clamp", {si}, {yi}, {CModel::real("min", -60.5), CModel::real("max", 100.5)});
  const Floats got = run(m, {HostTensor(OAR_DTYPE_I32, {2, 3}, a), HostTensor(OAR_DTYPE_I32, {3}, b)});
  // exact: -60.5 clamps integers at -60, 100.5 at 100
  EXPECT_EQ(got, (Floats{10, -40, -60, 100, -60, -60}));
  // integers "computed as f32": exp of an i32 input gives f32
  CModel e;
  int xi = e.input(OAR_DTYPE_I32, {3});
  int ei = e.output(OAR_DTYPE_F32, {3});
  e.operation("exp", {xi}, {ei});
  expect_close(run(e, {HostTensor(OAR_DTYPE_I32, {3}, {0, 1, 2})}), {1.0f, float(std::exp(1.0)), float(std::exp(2.0))},
               kTolFp32, "exp(i32)");
}

TEST_F(OpenVinoDriver, SoftmaxAndLogSoftmax) {
  for (const char* op : {"softmax", "log_softmax"}) {
    for (int64_t dim : {int64_t(-1), int64_t(1)}) {
      SCOPED_TRACE(std::string(op) + " dim " + std::to_string(dim));
      const Dims d = {2, 3, 4};
      const Floats x = random_floats(24, 31, -3, 3);
      const Floats want = std::string(op) == "log_softmax" ? ref::log_softmax(x, d, dim) : ref::softmax(x, d, dim);
      CModel m = one_op(op, OAR_DTYPE_F32, d, d, {CModel::integer("dim", dim)});
      expect_close(run(m, {HostTensor(OAR_DTYPE_F32, d, x)}), want, kTolFp32, op);
    }
  }
}

TEST_F(OpenVinoDriver, ReshapePermuteConcat) {
  const Floats x = random_floats(24, 31);
  {
    CModel m = one_op("reshape", OAR_DTYPE_F32, {2, 3, 4}, {4, 6}, {CModel::ints("shape", {4, -1})});
    EXPECT_EQ(run(m, {HostTensor(OAR_DTYPE_F32, {2, 3, 4}, x)}), x);
  }
  {
    Dims yd;
    const Dims perm = {-1, 0, 1};
    const Floats want = ref::permute(x, {2, 3, 4}, perm, &yd);
    CModel m = one_op("permute", OAR_DTYPE_F32, {2, 3, 4}, yd, {CModel::ints("dims", perm)});
    EXPECT_EQ(run(m, {HostTensor(OAR_DTYPE_F32, {2, 3, 4}, x)}), want);
  }
  {
    const Floats a = random_floats(6, 13), b = random_floats(8, 31), c = {5, 6};
    const Floats want = ref::concat({a, b, c}, {{2, 3}, {2, 4}, {2, 1}}, -1);
    CModel m;
    int ai = m.input(OAR_DTYPE_F32, {2, 3});
    int bi = m.input(OAR_DTYPE_F32, {2, 4});
    int ci = m.constant(OAR_DTYPE_F32, {2, 1}, c.data());
    int yi = m.output(OAR_DTYPE_F32, {2, 8});
    m.operation("concat", {ai, bi, ci}, {yi}, {CModel::integer("dim", -1)});
    EXPECT_EQ(run(m, {HostTensor(OAR_DTYPE_F32, {2, 3}, a), HostTensor(OAR_DTYPE_F32, {2, 4}, b)}), want);
  }
  {
    // i64 through a shape op, with a 1-D empty constant skipped as oar skips it
    CModel m;
    int ai = m.input(OAR_DTYPE_I64, {3});
    int ei = m.constant(OAR_DTYPE_I64, {0}, nullptr);
    int bi = m.input(OAR_DTYPE_I64, {2});
    int yi = m.output(OAR_DTYPE_I64, {5});
    m.operation("concat", {ai, ei, bi}, {yi}, {CModel::integer("dim", 0)});
    EXPECT_EQ(query(m, 0), "");
    EXPECT_EQ(run(m, {HostTensor(OAR_DTYPE_I64, {3}, {1, 2, 3}), HostTensor(OAR_DTYPE_I64, {2}, {4, 5})}),
              (Floats{1, 2, 3, 4, 5}));
  }
}

TEST_F(OpenVinoDriver, BatchNormInference) {
  struct Case {
    const char* what;
    Dims x;
    bool affine;
  };
  for (const Case& k : {Case{"NCHW with weight and bias", {4, 3, 5, 5}, true}, Case{"[N, C] without", {6, 3}, false}}) {
    SCOPED_TRACE(k.what);
    const int64_t C = k.x[1];
    const Floats x = random_floats(CModel::count(k.x), 7), w = random_floats(3, 32, 0.5f, 2),
                 b = random_floats(3, 34), mean = random_floats(3, 40), var = random_floats(3, 44, 0.5f, 2);
    const double eps = 1e-3;
    const Floats want = ref::batch_norm(x, k.x, k.affine ? &w : nullptr, k.affine ? &b : nullptr, mean, var, eps);
    CModel m;
    int xi = m.input(OAR_DTYPE_F32, k.x);
    int wi = k.affine ? m.constant(OAR_DTYPE_F32, {C}, w.data()) : -1;
    int bi = k.affine ? m.constant(OAR_DTYPE_F32, {C}, b.data()) : -1;
    int mi = m.constant(OAR_DTYPE_F32, {C}, mean.data());
    int vi = m.constant(OAR_DTYPE_F32, {C}, var.data());
    int yi = m.output(OAR_DTYPE_F32, k.x);
    int sm = m.temporary(OAR_DTYPE_F32, {C});
    int sv = m.temporary(OAR_DTYPE_F32, {C});
    m.operation("batch_norm", {xi, wi, bi, mi, vi}, {yi, sm, sv},
                {CModel::boolean("training", false), CModel::real("eps", eps)});
    EXPECT_EQ(query(m, 0), "");
    expect_close(run(m, {HostTensor(OAR_DTYPE_F32, k.x, x)}), want, kTolFp32, k.what);
  }
}

TEST_F(OpenVinoDriver, MeanOverDims) {
  struct Case {
    Dims dims;
    bool keepdim;
  };
  const Floats x = random_floats(60, 67);
  for (const Case& k : {Case{{1}, false}, Case{{0, 2}, true}, Case{{-1}, true}, Case{{}, false}}) {
    SCOPED_TRACE(::testing::PrintToString(k.dims) + (k.keepdim ? " keepdim" : ""));
    Dims yd;
    const Floats want = ref::mean(x, {3, 4, 5}, k.dims, k.keepdim, &yd);
    CModel m = one_op("mean", OAR_DTYPE_F32, {3, 4, 5}, yd, {CModel::ints("dims", k.dims), CModel::boolean("keepdim", k.keepdim)});
    expect_close(run(m, {HostTensor(OAR_DTYPE_F32, {3, 4, 5}, x)}), want, kTolFp32, "mean");
  }
}

TEST_F(OpenVinoDriver, HalfAndBfloat16Tensors) {
  SmallConv conv;
  for (auto [dtype, tolerance] : {std::pair<oar_dtype_t, Bound>{OAR_DTYPE_F16, kTolF16Tensor}, {OAR_DTYPE_BF16, kTolBf16Tensor}}) {
    SCOPED_TRACE(dtype == OAR_DTYPE_F16 ? "f16" : "bf16");
    CModel m = conv.model(dtype);
    expect_close(run(m, {HostTensor(dtype, {1, 3, 8, 8}, conv.x)}), conv.want(dtype), tolerance, "conv2d");
    // promotion: an f32 input added to a tensor of this dtype, result f32
    const Floats a = random_floats(6, 13), b = random_floats(6, 59);
    CModel add;
    int ai = add.input(OAR_DTYPE_F32, {2, 3});
    int bi = add.input(dtype, {2, 3});
    int yi = add.output(OAR_DTYPE_F32, {2, 3});
    add.operation("add", {ai, bi}, {yi});
    const Floats want = ref::add(a, {2, 3}, rounded(b, dtype), {2, 3});
    expect_close(run(add, {HostTensor(OAR_DTYPE_F32, {2, 3}, a), HostTensor(dtype, {2, 3}, b)}), want, kTolFp32, "add");
  }
}

TEST_F(OpenVinoDriver, PrecisionModes) {
  SmallConv conv;
  CModel m = conv.model(OAR_DTYPE_F32);
  const Floats x = random_floats(48, 55), w = random_floats(40, 99);
  CModel lin;
  int xi = lin.input(OAR_DTYPE_F32, {6, 8});
  int wi = lin.constant(OAR_DTYPE_F32, {5, 8}, w.data());
  int yi = lin.output(OAR_DTYPE_F32, {6, 5});
  lin.operation("linear", {xi, wi, -1}, {yi});
  const Floats lin_want = ref::linear(x, 6, 8, w, 5, nullptr);
  for (auto [precision, tolerance] : {std::pair<const char*, Bound>{"fp32", kTolFp32}, {"bf16", kTolBf16}, {"fp16", kTolFp16}}) {
    SCOPED_TRACE(precision);
    const Options options = {{"OAR_OPENVINO_PRECISION", precision}};
    expect_close(run(m, {HostTensor(OAR_DTYPE_F32, {1, 3, 8, 8}, conv.x)}, options), conv.want(OAR_DTYPE_F32), tolerance,
                 "conv2d");
    expect_close(run(lin, {HostTensor(OAR_DTYPE_F32, {6, 8}, x)}, options), lin_want, tolerance, "linear");
  }
}

TEST_F(OpenVinoDriver, UnsupportedOperationsSayWhy) {
  {
    CModel m;
    int wi = m.input(OAR_DTYPE_F32, {10, 4});
    int ii = m.input(OAR_DTYPE_I64, {3});
    int yi = m.output(OAR_DTYPE_F32, {3, 4});
    m.operation("embedding", {wi, ii}, {yi}, {CModel::integer("padding_idx", -1)});
    EXPECT_CONTAINS(query(m, 0), "embedding is not mapped to OpenVINO ops yet");
    ContextPtr c = context();
    compile(c.get(), m, OAR_STATUS_UNSUPPORTED);
    EXPECT_CONTAINS(last_error(), "operation 0 (embedding)");
  }
  auto batch_norm = [](CModel& m, bool training, int* save_mean) {
    const Floats ones = {1, 1, 1};
    int xi = m.input(OAR_DTYPE_F32, {2, 3, 4, 4});
    int mi = m.constant(OAR_DTYPE_F32, {3}, ones.data()), vi = m.constant(OAR_DTYPE_F32, {3}, ones.data());
    int yi = m.output(OAR_DTYPE_F32, {2, 3, 4, 4});
    *save_mean = m.temporary(OAR_DTYPE_F32, {3});
    m.operation("batch_norm", {xi, -1, -1, mi, vi}, {yi, *save_mean, m.temporary(OAR_DTYPE_F32, {3})},
                {CModel::boolean("training", training), CModel::real("eps", 1e-5)});
  };
  {
    CModel m;
    int sm;
    batch_norm(m, true, &sm);
    EXPECT_CONTAINS(query(m, 0), "batch_norm: training=true");
  }
  {
    CModel m;
    int sm;
    batch_norm(m, false, &sm);
    int zi = m.output(OAR_DTYPE_F32, {3});
    m.operation("relu", {sm}, {zi});
    EXPECT_CONTAINS(query(m, 0), "save_mean/save_var) is read by operation 1 (relu)");
  }
  {
    // ceil_mode + count_include_pad + padding where the last window passes the right padding
    const int64_t out = ref::pool2d_size(10, 3, 2, 1, true);
    CModel m = one_op("avg_pool2d", OAR_DTYPE_F32, {1, 1, 10, 10}, {1, 1, out, out},
                      {CModel::ints("kernel_size", {3, 3}), CModel::ints("stride", {2, 2}), CModel::ints("padding", {1, 1}),
                       CModel::boolean("ceil_mode", true), CModel::boolean("count_include_pad", true)});
    EXPECT_CONTAINS(query(m, 0), "avg_pool2d: with ceil_mode, count_include_pad and padding");
  }
  {
    CModel m = one_op("max_pool2d", OAR_DTYPE_F32, {1, 1, 8, 8}, {1, 1, 3, 3},
                      {CModel::ints("kernel_size", {2, 2}), CModel::ints("stride", {}), CModel::ints("padding", {0, 0}),
                       CModel::boolean("ceil_mode", false), CModel::ints("dilation", {2, 2})});
    EXPECT_CONTAINS(query(m, 0), "max_pool2d: dilation 2");
  }
  {
    // PyTorch gives one output for a kernel larger than the input in ceil mode; OpenVINO refuses the node
    CModel m = one_op("max_pool2d", OAR_DTYPE_F32, {1, 1, 3, 3}, {1, 1, 1, 1},
                      {CModel::ints("kernel_size", {4, 4}), CModel::ints("stride", {2, 2}), CModel::ints("padding", {0, 0}),
                       CModel::boolean("ceil_mode", true)});
    const std::string why = query(m, 0);
    EXPECT_CONTAINS(why, "operation 0 (max_pool2d): OpenVINO rejects it");
    EXPECT_CONTAINS(why, "larger than the data shape");
  }
  {
    CModel m = relu_model();
    m.dims_of(0)[0] = {OAR_ADAPTER_DIM_DYNAMIC, 1, 8, "batch"};
    m.dims_of(1)[0] = {OAR_ADAPTER_DIM_DYNAMIC, 1, 8, "batch"};
    EXPECT_CONTAINS(query(m, 0), "relu: dynamic dims are not supported yet");
  }
  {
    CModel m;
    int ai = m.input(OAR_DTYPE_F64, {3}), bi = m.input(OAR_DTYPE_F64, {3});
    int yi = m.output(OAR_DTYPE_F64, {3});
    m.operation("add", {ai, bi}, {yi});
    EXPECT_CONTAINS(query(m, 0), "add: f64 is not mapped");
  }
  {
    // a shape the model declares but OpenVINO does not compute
    CModel m = one_op("relu", OAR_DTYPE_F32, {2, 3}, {3, 3});
    EXPECT_CONTAINS(query(m, 0), "OpenVINO computes shape [2,3]");
  }
}

TEST_F(OpenVinoDriver, BrokenModelsAreInvalidArguments) {
  CModel m = relu_model();
  m.inputs_of(0)[0] = 7;  // no operand 7
  EXPECT_EQ(query(m, 0, OAR_STATUS_INVALID_ARGUMENT), "error");
  EXPECT_CONTAINS(last_error(), "operand 7");
  ContextPtr c = context();
  compile(c.get(), m, OAR_STATUS_INVALID_ARGUMENT);
  CModel ok = relu_model();
  EXPECT_EQ(query(ok, 3, OAR_STATUS_OUT_OF_RANGE), "error");
  // an attribute of the wrong kind
  CModel clamp = one_op("clamp", OAR_DTYPE_F32, {3}, {3}, {CModel::string("min", "low")});
  EXPECT_EQ(query(clamp, 0, OAR_STATUS_INVALID_ARGUMENT), "error");
  EXPECT_CONTAINS(last_error(), "clamp: attribute 'min'");
  CModel pool = one_op("max_pool2d", OAR_DTYPE_F32, {1, 1, 4, 4}, {1, 1, 2, 2}, {CModel::string("kernel_size", "2")});
  EXPECT_EQ(query(pool, 0, OAR_STATUS_INVALID_ARGUMENT), "error");
  EXPECT_CONTAINS(last_error(), "max_pool2d: attribute 'kernel_size'");
}

}  // namespace
