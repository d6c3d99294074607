// fake_npu's results, op by op: each op against an independent NCHW
// reference (reference_ops.hpp) at each precision, and the reasons it gives
// for what it cannot run.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "test_fake_npu_util.hpp"

namespace {

using namespace oar_test;
using namespace oar_test::fake_npu;

bool differs(const Floats& a, const Floats& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i] != b[i]) return true;
  return false;
}

// ---- per-op cases: a model with one operation, its inputs and the reference of its output ----
struct OpCase {
  std::string name;
  Build build;
};

Build linear_case(const char* type, Dims xd, int64_t out, bool with_bias) {
  return [=](Built& c) {
    const int64_t in = xd.back(), rows = CModel::count(xd) / in;
    const Floats x = random_floats(CModel::count(xd), 4), w = random_floats(out * in, 5), b = random_floats(out, 6);
    const int xi = c.m.input(OAR_DTYPE_F32, xd, OAR_ADAPTER_LAYOUT_PLAIN, "x");
    const int wi = c.m.constant(OAR_DTYPE_F32, {out, in}, w.data());
    const int bi = with_bias ? c.m.constant(OAR_DTYPE_F32, {out}, b.data()) : -1;
    Dims yd = xd;
    yd.back() = out;
    const int yi = c.m.output(OAR_DTYPE_F32, yd);
    const bool act = std::string(type) == "linear_act";
    std::vector<CModel::Attr> attrs;
    if (act) attrs.push_back(CModel::string("activation", "relu"));
    c.m.operation(type, {xi, wi, bi}, {yi}, attrs);
    c.inputs = {x};
    c.ref = ref::linear(x, rows, in, w, out, with_bias ? &b : nullptr);
    if (act) c.ref = ref::unary(c.ref, ref::relu);
  };
}

Build matmul_case(bool constant_b) {
  return [=](Built& c) {
    const Floats a = random_floats(3 * 6, 7), b = random_floats(6 * 5, 8);
    const int ai = c.m.input(OAR_DTYPE_F32, {3, 6});
    const int bi = constant_b ? c.m.constant(OAR_DTYPE_F32, {6, 5}, b.data()) : c.m.input(OAR_DTYPE_F32, {6, 5});
    const int yi = c.m.output(OAR_DTYPE_F32, {3, 5});
    c.m.operation("matmul", {ai, bi}, {yi});
    c.inputs = constant_b ? std::vector<Floats>{a} : std::vector<Floats>{a, b};
    c.ref = ref::matmul(a, 3, 6, b, 5);
  };
}

// a is an input; b an input (same dims) or a constant that broadcasts.
Build add_case(Dims ad, Dims bd, bool constant_b) {
  return [=](Built& c) {
    const Floats a = random_floats(CModel::count(ad), 9), b = random_floats(CModel::count(bd), 10);
    const int ai = c.m.input(OAR_DTYPE_F32, ad, ad.size() == 4 ? kNCHW : OAR_ADAPTER_LAYOUT_PLAIN);
    const int bi = constant_b ? c.m.constant(OAR_DTYPE_F32, bd, b.data()) : c.m.input(OAR_DTYPE_F32, bd);
    const int yi = c.m.output(OAR_DTYPE_F32, ad, ad.size() == 4 ? kNCHW : OAR_ADAPTER_LAYOUT_PLAIN);
    c.m.operation("add", {bi, ai}, {yi});  // the broadcast operand first: either order works
    c.inputs = constant_b ? std::vector<Floats>{a} : std::vector<Floats>{a, b};
    c.ref = ref::add(b, bd, a, ad);
  };
}

Build relu_case(Dims xd) {
  return [=](Built& c) {
    const Floats x = random_floats(CModel::count(xd), 11);
    const int xi = c.m.input(OAR_DTYPE_F32, xd, xd.size() == 4 ? kNCHW : OAR_ADAPTER_LAYOUT_PLAIN);
    const int yi = c.m.output(OAR_DTYPE_F32, xd, xd.size() == 4 ? kNCHW : OAR_ADAPTER_LAYOUT_PLAIN);
    c.m.operation("relu", {xi}, {yi});
    c.inputs = {x};
    c.ref = ref::unary(x, ref::relu);
  };
}

// stride {} means the catalog's [] (= kernel_size).
Build pool_case(bool max, Dims xd, Dims k, Dims stride, Dims pad, bool cip = true) {
  return [=](Built& c) {
    const Floats x = random_floats(CModel::count(xd), 12);
    Dims yd;
    c.ref = max ? ref::max_pool2d(x, xd, k, stride, pad, false, &yd)
                : ref::avg_pool2d(x, xd, k, stride, pad, false, cip, &yd);
    const int xi = c.m.input(OAR_DTYPE_F32, xd, kNCHW);
    const int yi = c.m.output(OAR_DTYPE_F32, yd, kNCHW);
    std::vector<CModel::Attr> attrs = {CModel::ints("kernel_size", k), CModel::ints("stride", stride),
                                       CModel::ints("padding", pad), CModel::boolean("ceil_mode", false)};
    if (!max) attrs.push_back(CModel::boolean("count_include_pad", cip));
    c.m.operation(max ? "max_pool2d" : "avg_pool2d", {xi}, {yi}, attrs);
    c.inputs = {x};
  };
}

Build softmax_case(int64_t dim) {
  return [=](Built& c) {
    const Floats x = random_floats(4 * 7, 13, -3.0f, 3.0f);
    const int xi = c.m.input(OAR_DTYPE_F32, {4, 7});
    const int yi = c.m.output(OAR_DTYPE_F32, {4, 7});
    c.m.operation("softmax", {xi}, {yi}, {CModel::integer("dim", dim)});
    c.inputs = {x};
    c.ref = ref::softmax(x, {4, 7}, dim);
  };
}

const std::vector<OpCase>& op_cases() {
  static const std::vector<OpCase> cases = {
      {"conv2d_bias_stride_pad", conv_case("conv2d", {2, 3, 7, 7}, {4, 3, 3, 3}, true, {2, 2}, {1, 1}, 1)},
      {"conv2d_no_bias", conv_case("conv2d", {1, 3, 6, 5}, {5, 3, 3, 2}, false, {1, 1}, {0, 0}, 1)},
      {"conv2d_asymmetric", conv_case("conv2d", {1, 2, 9, 8}, {3, 2, 3, 1}, true, {2, 1}, {1, 0}, 1)},
      {"conv2d_depthwise", conv_case("conv2d", {1, 4, 6, 6}, {4, 1, 3, 3}, true, {1, 1}, {1, 1}, 4)},
      {"conv2d_depthwise_multiplier", conv_case("conv2d", {2, 3, 5, 5}, {6, 1, 3, 3}, false, {2, 2}, {1, 1}, 3)},
      {"conv2d_act", conv_case("conv2d_act", {1, 3, 5, 5}, {4, 3, 3, 3}, true, {1, 1}, {1, 1}, 1)},
      {"linear_bias", linear_case("linear", {3, 4}, 5, true)},
      {"linear_no_bias_3d", linear_case("linear", {2, 3, 4}, 5, false)},
      {"linear_act", linear_case("linear_act", {3, 8}, 6, true)},
      {"linear_act_no_bias", linear_case("linear_act", {4, 5}, 3, false)},
      {"matmul_constant_b", matmul_case(true)},
      {"matmul_input_b", matmul_case(false)},
      {"add_same_dims", add_case({2, 3, 4, 4}, {2, 3, 4, 4}, false)},
      {"add_per_channel", add_case({2, 3, 4, 4}, {1, 3, 1, 1}, true)},
      {"add_per_channel_3d", add_case({2, 3, 4, 4}, {3, 1, 1}, true)},
      {"add_scalar", add_case({2, 3, 4, 4}, {}, true)},
      {"add_row", add_case({3, 5}, {5}, true)},
      {"add_row_input", add_case({3, 5}, {1, 5}, false)},
      {"relu_4d", relu_case({2, 3, 4, 5})},
      {"relu_2d", relu_case({3, 7})},
      {"max_pool_default_stride", pool_case(true, {2, 3, 6, 6}, {2, 2}, {}, {0, 0})},
      {"max_pool_padded", pool_case(true, {1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1})},
      {"max_pool_rect", pool_case(true, {1, 2, 5, 5}, {3, 1}, {1, 2}, {0, 0})},
      {"avg_pool_default_stride", pool_case(false, {2, 3, 6, 6}, {2, 2}, {}, {0, 0})},
      {"avg_pool_padded", pool_case(false, {1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}, true)},
      {"avg_pool_exclude_pad", pool_case(false, {1, 2, 7, 7}, {3, 3}, {2, 2}, {1, 1}, false)},
      {"softmax_last", softmax_case(-1)},
      {"softmax_dim1", softmax_case(1)},
  };
  return cases;
}

class FakeNpuOp : public ::testing::TestWithParam<std::tuple<size_t, std::string>> {};

TEST_P(FakeNpuOp, MatchesReference) {
  ASSERT_NE(npu(), nullptr);
  const auto& [index, precision] = GetParam();
  const OpCase& c = op_cases()[index];
  Built b;
  c.build(b);
  const std::vector<Floats> out = compile_and_run(b.m, precision, b.inputs);
  ASSERT_EQ(out.size(), 1u);
  expect_close(out[0], b.ref, tolerance(precision), c.name);
  if (precision == "fp16") {
    EXPECT_TRUE(differs(out[0], b.ref)) << c.name << ": fp16 should round what it stores";
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, FakeNpuOp,
                         ::testing::Combine(::testing::Range<size_t>(0, op_cases().size()),
                                            ::testing::Values("fp32", "fp16", "int8")),
                         [](const ::testing::TestParamInfo<FakeNpuOp::ParamType>& info) {
                           return op_cases()[std::get<0>(info.param)].name + "_" + std::get<1>(info.param);
                         });

// ---- support ----
struct Unsupported {
  const char* name;
  std::function<void(CModel&)> build;
  const char* reason;  // a part of the expected reason
};

// conv2d [1, 4, 6, 6] * weight [4, 4 / groups, 3, 3]; `tweak` edits the attributes.
std::function<void(CModel&)> conv_model(int64_t groups, std::function<void(std::vector<CModel::Attr>&)> tweak,
                                        bool constant_weight = true, const char* type = "conv2d", int64_t out = 4) {
  return [=](CModel& m) {
    static const Floats w(4 * 4 * 9, 0.1f);
    const int x = m.input(OAR_DTYPE_F32, {1, 4, 6, 6}, kNCHW, "x");
    const int wi = constant_weight ? m.constant(OAR_DTYPE_F32, {4, 4 / groups, 3, 3}, w.data(), OAR_ADAPTER_LAYOUT_OIHW)
                                   : m.input(OAR_DTYPE_F32, {4, 4 / groups, 3, 3}, OAR_ADAPTER_LAYOUT_OIHW, "w");
    const int y = m.output(OAR_DTYPE_F32, {1, 4, out, out}, kNCHW);
    std::vector<CModel::Attr> attrs = {CModel::ints("stride", {1, 1}), CModel::ints("padding", {0, 0}),
                                       CModel::ints("dilation", {1, 1}), CModel::integer("groups", groups)};
    if (std::string(type) == "conv2d_act") attrs.push_back(CModel::string("activation", "relu"));
    if (tweak) tweak(attrs);
    m.operation(type, {x, wi, -1}, {y}, attrs);
  };
}

void set_attr(std::vector<CModel::Attr>& attrs, CModel::Attr a) {
  for (auto& old : attrs)
    if (old.name == a.name) old = a;
}

const std::vector<Unsupported>& unsupported_cases() {
  static const std::vector<Unsupported> cases = {
      {"reshape",
       [](CModel& m) {
         const int x = m.input(OAR_DTYPE_F32, {2, 6});
         const int y = m.output(OAR_DTYPE_F32, {3, 4});
         m.operation("reshape", {x}, {y}, {CModel::ints("shape", {3, 4})});
       },
       "reshape is not in fake_npu's op set (conv2d, conv2d_act, linear"},
      {"dynamic_dim",
       [](CModel& m) {
         relu_model(m, OAR_DTYPE_F32, {8, 5});
         m.dims_of(0)[0] = {OAR_ADAPTER_DIM_DYNAMIC, 1, 8, "batch"};
         m.dims_of(1)[0] = {OAR_ADAPTER_DIM_DYNAMIC, 1, 8, "batch"};
       },
       "fake_npu needs static shapes; operand 0 ('x') has a dynamic dim 0"},
      {"i64", [](CModel& m) { relu_model(m, OAR_DTYPE_I64, {4}); }, "operand 0 ('x') has dtype i64"},
      {"i8_without_quant", [](CModel& m) { relu_model(m, OAR_DTYPE_I8, {4}); }, "without quantization parameters"},
      {"weights_not_constant", conv_model(1, nullptr, false), "weights must be constant"},
      {"dilation", conv_model(1, [](auto& a) { set_attr(a, CModel::ints("dilation", {2, 2})); }, true, "conv2d", 2),
       "dilation [2, 2]"},
      {"grouped", conv_model(2, nullptr), "groups 2 is not supported (only 1 or depthwise)"},
      {"sigmoid", conv_model(1, [](auto& a) { set_attr(a, CModel::string("activation", "sigmoid")); }, true, "conv2d_act"),
       "activation 'sigmoid' is not supported"},
      {"ceil_mode",
       [](CModel& m) {
         const int x = m.input(OAR_DTYPE_F32, {1, 2, 7, 7}, kNCHW);
         const int y = m.output(OAR_DTYPE_F32, {1, 2, 4, 4}, kNCHW);  // ceil((7 - 2) / 2) + 1
         m.operation("max_pool2d", {x}, {y},
                     {CModel::ints("kernel_size", {2, 2}), CModel::ints("stride", {}), CModel::ints("padding", {0, 0}),
                      CModel::boolean("ceil_mode", true)});
       },
       "ceil_mode"},
      {"softmax_dim0",
       [](CModel& m) {
         const int x = m.input(OAR_DTYPE_F32, {3, 4});
         const int y = m.output(OAR_DTYPE_F32, {3, 4});
         m.operation("softmax", {x}, {y}, {CModel::integer("dim", 0)});
       },
       "softmax over dim 0"},
      {"add_column",
       [](CModel& m) {
         const int a = m.input(OAR_DTYPE_F32, {3, 5});
         const int b = m.input(OAR_DTYPE_F32, {3, 1});
         const int y = m.output(OAR_DTYPE_F32, {3, 5});
         m.operation("add", {a, b}, {y});
       },
       "add broadcasts [3, 1] onto [3, 5]"},
      {"add_vector_onto_nchw",  // numpy aligns [4] with W, not with the channels
       [](CModel& m) {
         const int a = m.input(OAR_DTYPE_F32, {1, 3, 4, 4}, kNCHW);
         const int b = m.input(OAR_DTYPE_F32, {4});
         const int y = m.output(OAR_DTYPE_F32, {1, 3, 4, 4}, kNCHW);
         m.operation("add", {a, b}, {y});
       },
       "add broadcasts [4] onto [1, 3, 4, 4]"},
      {"matmul_3d",
       [](CModel& m) {
         const int a = m.input(OAR_DTYPE_F32, {2, 3, 4});
         const int b = m.input(OAR_DTYPE_F32, {4, 5});
         const int y = m.output(OAR_DTYPE_F32, {2, 3, 5});
         m.operation("matmul", {a, b}, {y});
       },
       "2-D by 2-D only"},
  };
  return cases;
}

TEST(FakeNpuDriver, ExplainsWhatItCannotRun) {
  ASSERT_NE(npu(), nullptr);
  Context ctx;
  ASSERT_EQ(create_context(npu(), {}, ctx), OAR_STATUS_OK);
  for (const Unsupported& c : unsupported_cases()) {
    SCOPED_TRACE(c.name);
    CModel m;
    c.build(m);
    const Answer a = query(ctx, m.model(), 0);
    ASSERT_EQ(a.status, OAR_STATUS_OK) << last_error();
    EXPECT_EQ(a.supported, 0);
    EXPECT_NE(a.reason.find(c.reason), std::string::npos) << a.reason;
    Program p;
    p.api = npu();
    EXPECT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), OAR_STATUS_UNSUPPORTED);
    EXPECT_EQ(p.handle, nullptr);
    EXPECT_NE(last_error().find("operation 0"), std::string::npos) << last_error();
    EXPECT_NE(last_error().find(c.reason), std::string::npos) << last_error();
  }
  // A short reason buffer gets a truncated, terminated reason.
  CModel m;
  unsupported_cases()[0].build(m);
  int32_t supported = -1;
  char small[8];
  ASSERT_EQ(npu()->query_operation(ctx.handle, m.model(), 0, &supported, small, sizeof(small)), OAR_STATUS_OK);
  EXPECT_STREQ(small, "reshape");
  // An operation index outside the model is an error.
  EXPECT_EQ(query(ctx, m.model(), 1).status, OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("operation 1"), std::string::npos) << last_error();
}

}  // namespace
