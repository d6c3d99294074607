// Model validation every adapter driver performs, in the spirit of Android
// NNAPI's validation tests: one valid model (conv2d -> relu -> max_pool2d, f32
// NCHW), broken one way at a time. query_operation, compile (and deserialize)
// must answer INVALID_ARGUMENT with a message naming the problem, never crash.
// Runs over every driver present: fake_npu always, openvino when it is built.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "c_model.hpp"

#ifndef OAR_TEST_ADAPTER_DIR
#error "OAR_TEST_ADAPTER_DIR must name the directory of the adapter drivers"
#endif

namespace {

using oar_test::CModel;

std::string driver_path(const std::string& name) {
  return std::string(OAR_TEST_ADAPTER_DIR) + "/liboar_adapter_" + name + ".so";
}

// Loads a driver once; "" in *skip when its library is absent (a driver that is not built).
const oar_adapter_driver_api* driver(const std::string& name, std::string* skip) {
  struct stat st;
  if (::stat(driver_path(name).c_str(), &st) != 0) {
    *skip = "the " + name + " adapter driver is not built (" + driver_path(name) + " is absent)";
    return nullptr;
  }
  static std::vector<std::pair<std::string, const oar_adapter_driver_api*>> loaded;
  for (auto& [n, api] : loaded)
    if (n == name) return api;
  std::string error;
  const oar_adapter_driver_api* api = oar_test::load_driver_for_test(driver_path(name), &error);
  if (api == nullptr) ADD_FAILURE() << "cannot load " << driver_path(name) << ": " << error;
  loaded.emplace_back(name, api);
  return api;
}

// A context with every declared option at its default, as the core creates one.
oar_adapter_context_t default_context(const oar_adapter_driver_api* api) {
  std::vector<oar_adapter_option> options;
  for (uint64_t i = 0; i < api->option_count; ++i)
    options.push_back({sizeof(oar_adapter_option), api->options[i]->name, api->options[i]->default_value});
  std::vector<const oar_adapter_option*> pointers;
  for (const auto& o : options) pointers.push_back(&o);
  oar_adapter_context_t ctx = nullptr;
  EXPECT_EQ(api->context_create(pointers.data(), uint32_t(pointers.size()), &ctx), OAR_STATUS_OK) << oar_test::last_error();
  return ctx;
}

// ---- the valid model ----
// operands: 0 x [1,3,8,8], 1 w [4,3,3,3], 2 b [4], 3 t1 [1,4,6,6], 4 t2 [1,4,6,6], 5 y [1,4,3,3]
// operations: 0 conv2d (x, w, b) -> t1, 1 relu t1 -> t2, 2 max_pool2d t2 -> y
struct ValidModel {
  CModel m;
  std::vector<float> w, b;
  ValidModel() : w(108), b(4) {
    for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i * 37 % 19) - 9) / 20.0f;
    for (size_t i = 0; i < b.size(); ++i) b[i] = 0.1f * float(i) - 0.15f;
    const int x = m.input(OAR_DTYPE_F32, {1, 3, 8, 8}, OAR_ADAPTER_LAYOUT_NCHW, "x");
    const int wi = m.constant(OAR_DTYPE_F32, {4, 3, 3, 3}, w.data(), OAR_ADAPTER_LAYOUT_OIHW);
    const int bi = m.constant(OAR_DTYPE_F32, {4}, b.data());
    const int t1 = m.temporary(OAR_DTYPE_F32, {1, 4, 6, 6}, OAR_ADAPTER_LAYOUT_NCHW);
    const int t2 = m.temporary(OAR_DTYPE_F32, {1, 4, 6, 6}, OAR_ADAPTER_LAYOUT_NCHW);
    const int y = m.output(OAR_DTYPE_F32, {1, 4, 3, 3}, OAR_ADAPTER_LAYOUT_NCHW, "y");
    m.operation("conv2d", {x, wi, bi}, {t1},
                {CModel::ints("stride", {1, 1}), CModel::ints("padding", {0, 0}), CModel::ints("dilation", {1, 1}),
                 CModel::integer("groups", 1)},
                "conv");
    m.operation("relu", {t1}, {t2}, {}, "relu");
    m.operation("max_pool2d", {t2}, {y},
                {CModel::ints("kernel_size", {2, 2}), CModel::ints("stride", {}), CModel::ints("padding", {0, 0}),
                 CModel::boolean("ceil_mode", false)},
                "pool");
  }
  // The reference of y for input x (plain loops).
  std::vector<float> reference(const std::vector<float>& x) const {
    std::vector<float> t(4 * 36), y(4 * 9);
    for (int oc = 0; oc < 4; ++oc)
      for (int p = 0; p < 36; ++p) {
        double acc = b[size_t(oc)];
        for (int c = 0; c < 3; ++c)
          for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
              acc += double(x[size_t((c * 8 + p / 6 + i) * 8 + p % 6 + j)]) * w[size_t(((oc * 3 + c) * 3 + i) * 3 + j)];
        t[size_t(oc * 36 + p)] = float(std::max(acc, 0.0));
      }
    for (int oc = 0; oc < 4; ++oc)
      for (int p = 0; p < 9; ++p) {
        const int h = p / 3 * 2, w2 = p % 3 * 2;
        const float* plane = &t[size_t(oc * 36)];
        y[size_t(oc * 9 + p)] = std::max(std::max(plane[h * 6 + w2], plane[h * 6 + w2 + 1]),
                                         std::max(plane[(h + 1) * 6 + w2], plane[(h + 1) * 6 + w2 + 1]));
      }
    return y;
  }
};

// A deep, writable copy of a C model, so a test can break any field. Sized
// once, so the pointers between its parts stay valid.
struct MutableModel {
  std::vector<oar_adapter_operand> operands;
  std::vector<std::vector<oar_adapter_dim>> dims;
  std::vector<oar_adapter_quant> quants;
  std::vector<std::vector<float>> scales;
  std::vector<oar_adapter_operation> operations;
  std::vector<std::vector<int32_t>> op_inputs, op_outputs;
  std::vector<std::vector<oar_attr>> attrs;
  std::vector<std::vector<const oar_attr*>> attr_ptrs;
  std::vector<const oar_adapter_operand*> operand_ptrs;
  std::vector<const oar_adapter_operation*> operation_ptrs;
  std::vector<int32_t> inputs, outputs;
  oar_adapter_model model{};

  explicit MutableModel(const oar_adapter_model* m)
      : operands(m->operand_count), dims(m->operand_count), quants(m->operand_count),
        scales(m->operand_count, std::vector<float>(4, 0.5f)), operations(m->operation_count),
        op_inputs(m->operation_count), op_outputs(m->operation_count), attrs(m->operation_count),
        attr_ptrs(m->operation_count), inputs(m->inputs, m->inputs + m->input_count),
        outputs(m->outputs, m->outputs + m->output_count) {
    for (uint32_t i = 0; i < m->operand_count; ++i) {
      operands[i] = *m->operands[i];
      dims[i].assign(m->operands[i]->dims, m->operands[i]->dims + m->operands[i]->rank);
      operands[i].dims = dims[i].data();
      operand_ptrs.push_back(&operands[i]);
      quants[i] = {sizeof(oar_adapter_quant), OAR_ADAPTER_QUANT_PER_TENSOR, 0, 1, scales[i].data(), nullptr};
    }
    for (uint32_t k = 0; k < m->operation_count; ++k) {
      const oar_adapter_operation* op = m->operations[k];
      operations[k] = *op;
      op_inputs[k].assign(op->inputs, op->inputs + op->input_count);
      op_outputs[k].assign(op->outputs, op->outputs + op->output_count);
      operations[k].inputs = op_inputs[k].data();
      operations[k].outputs = op_outputs[k].data();
      for (uint32_t a = 0; a < op->attr_count; ++a) attrs[k].push_back(*op->attrs[a]);
      for (oar_attr& a : attrs[k]) attr_ptrs[k].push_back(&a);
      operations[k].attrs = attr_ptrs[k].data();
      operation_ptrs.push_back(&operations[k]);
    }
    model = *m;
    model.operands = operand_ptrs.data();
    model.operations = operation_ptrs.data();
    model.inputs = inputs.data();
    model.outputs = outputs.data();
  }
  oar_attr& attr(int op, const char* name) {
    for (oar_attr& a : attrs[size_t(op)])
      if (std::strcmp(a.name, name) == 0) return a;
    throw std::runtime_error(std::string("no attribute ") + name);
  }
};

struct Mutation {
  const char* name;
  std::function<void(MutableModel&)> apply;
  const char* keyword;       // a word the driver's message must contain
  bool unknown_op = false;   // query: "unsupported" with a reason; compile: an error
};

enum { kX = 0, kW = 1, kB = 2, kT1 = 3, kT2 = 4, kY = 5 };
enum { kConv = 0, kRelu = 1, kPool = 2 };
const float kNaN = std::numeric_limits<float>::quiet_NaN();
float g_not_a_constant[4];

const std::vector<Mutation>& mutations() {
  static const std::vector<Mutation> list = {
      {"operation_input_out_of_range", [](auto& m) { m.op_inputs[kConv][0] = 99; }, "operand 99"},
      {"operation_input_negative", [](auto& m) { m.op_inputs[kRelu][0] = -7; }, "operand -7"},
      {"operation_output_out_of_range", [](auto& m) { m.op_outputs[kPool][0] = 6; }, "operand 6"},
      {"model_input_out_of_range", [](auto& m) { m.inputs[0] = 42; }, "model input 0"},
      {"model_output_out_of_range", [](auto& m) { m.outputs[0] = -1; }, "model output 0"},
      {"negative_dim", [](auto& m) { m.dims[kX][1].size = -3; }, "dim 1"},
      {"dynamic_dim_with_empty_range", [](auto& m) { m.dims[kX][0] = {OAR_ADAPTER_DIM_DYNAMIC, 4, 2, nullptr}; }, "range"},
      {"constant_data_size_disagrees", [](auto& m) { m.operands[kW].data_size -= 4; }, "constant data has"},
      {"constant_dims_disagree_with_data", [](auto& m) { m.dims[kW][0].size = 5; }, "constant data has"},
      {"missing_constant", [](auto& m) { m.operands[kW].data = nullptr; }, "without data"},
      {"data_on_an_input", [](auto& m) { m.operands[kX].data = g_not_a_constant; }, "not a constant"},
      {"unknown_dtype", [](auto& m) { m.operands[kX].dtype = 77; }, "unknown dtype"},
      {"unknown_lifetime", [](auto& m) { m.operands[kT1].lifetime = 9; }, "unknown lifetime"},
      {"unknown_layout", [](auto& m) { m.operands[kX].layout = 12; }, "unknown layout"},
      {"input_lifetime_not_a_model_input", [](auto& m) { m.operands[kT1].lifetime = OAR_ADAPTER_LIFETIME_INPUT; },
       "not among the model's inputs"},
      {"model_output_not_output_lifetime", [](auto& m) { m.outputs[0] = kT2; }, "not OUTPUT"},
      {"operand_written_twice", [](auto& m) { m.op_outputs[kPool][0] = kT2; }, "already writes"},
      {"operation_writes_a_constant", [](auto& m) { m.op_outputs[kRelu][0] = kW; }, "constant"},
      {"operation_writes_a_model_input", [](auto& m) { m.op_outputs[kRelu][0] = kX; }, "input"},
      {"cycle", [](auto& m) { m.op_inputs[kConv][0] = kT2; }, "cycle"},
      {"output_written_by_nothing", [](auto& m) { m.model.operation_count = 2; }, "written by no operation"},
      {"no_operations", [](auto& m) { m.model.operation_count = 0; }, "no operations"},
      {"null_operand", [](auto& m) { m.operand_ptrs[kB] = nullptr; }, "NULL"},
      {"null_operation", [](auto& m) { m.operation_ptrs[kRelu] = nullptr; }, "NULL"},
      {"operand_struct_size_too_small", [](auto& m) { m.operands[kX].struct_size = 8; }, "struct_size"},
      {"operation_struct_size_too_small", [](auto& m) { m.operations[kConv].struct_size = 8; }, "struct_size"},
      {"model_struct_size_too_small", [](auto& m) { m.model.struct_size = 8; }, "struct_size"},
      {"per_channel_quant_wrong_scale_count",
       [](auto& m) {
         m.quants[kW].scheme = OAR_ADAPTER_QUANT_PER_CHANNEL;
         m.quants[kW].scale_count = 3;  // w has 4 output channels
         m.operands[kW].quant = &m.quants[kW];
       },
       "scales"},
      {"per_channel_quant_axis_outside_rank",
       [](auto& m) {
         m.quants[kW].scheme = OAR_ADAPTER_QUANT_PER_CHANNEL;
         m.quants[kW].channel_axis = 7;
         m.operands[kW].quant = &m.quants[kW];
       },
       "axis"},
      {"nan_scale",
       [](auto& m) {
         m.scales[kX][0] = kNaN;
         m.operands[kX].quant = &m.quants[kX];
       },
       "scale"},
      {"null_scales",
       [](auto& m) {
         m.quants[kX].scales = nullptr;
         m.operands[kX].quant = &m.quants[kX];
       },
       "scales"},
      {"attribute_with_null_ints", [](auto& m) { m.attr(kConv, "stride").ints = nullptr; }, "stride"},
      {"attribute_without_name", [](auto& m) { m.attrs[kConv][0].name = nullptr; }, "attribute"},
      {"attribute_of_unknown_kind", [](auto& m) { m.attr(kPool, "kernel_size").kind = 42; }, "kernel_size"},
      {"operation_without_outputs", [](auto& m) { m.operations[kRelu].output_count = 0; }, "no outputs"},
      {"operation_without_type", [](auto& m) { m.operations[kRelu].type = ""; }, "no type"},
      {"operation_with_null_input_list", [](auto& m) { m.operations[kConv].inputs = nullptr; }, "NULL"},
      {"unknown_op_type", [](auto& m) { m.operations[kRelu].type = "frobnicate"; }, "frobnicate", true},
  };
  return list;
}

bool contains(const std::string& s, const char* word) { return s.find(word) != std::string::npos; }

class DriverValidation : public ::testing::TestWithParam<std::tuple<std::string, size_t>> {};

TEST_P(DriverValidation, BrokenModelIsRefusedWithAMessage) {
  const auto& [name, index] = GetParam();
  std::string skip;
  const oar_adapter_driver_api* api = driver(name, &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  ASSERT_NE(api, nullptr);
  const Mutation& mutation = mutations()[index];
  ValidModel valid;
  MutableModel broken(valid.m.model());
  mutation.apply(broken);
  oar_adapter_context_t ctx = default_context(api);
  ASSERT_NE(ctx, nullptr);

  // query_operation: INVALID_ARGUMENT for a broken model; an unknown op is a "no".
  int32_t supported = -1;
  char reason[512] = "";
  const uint32_t op = mutation.unknown_op ? kRelu : kConv;
  const oar_status_t q = api->query_operation(ctx, &broken.model, op, &supported, reason, sizeof(reason));
  if (mutation.unknown_op) {
    EXPECT_EQ(q, OAR_STATUS_OK) << oar_test::last_error();
    EXPECT_EQ(supported, 0);
    EXPECT_TRUE(contains(reason, mutation.keyword)) << "reason: " << reason;
  } else {
    EXPECT_EQ(q, OAR_STATUS_INVALID_ARGUMENT) << "query_operation";
    EXPECT_TRUE(contains(oar_test::last_error(), mutation.keyword)) << "query_operation: " << oar_test::last_error();
  }

  // compile: an error with a message; for an unknown op UNSUPPORTED is as right as INVALID_ARGUMENT.
  oar_adapter_program_t program = nullptr;
  const oar_status_t c = api->compile(ctx, &broken.model, &program);
  if (mutation.unknown_op) {
    EXPECT_TRUE(c == OAR_STATUS_UNSUPPORTED || c == OAR_STATUS_INVALID_ARGUMENT) << c;
  } else {
    EXPECT_EQ(c, OAR_STATUS_INVALID_ARGUMENT) << "compile";
  }
  EXPECT_EQ(program, nullptr);
  EXPECT_TRUE(contains(oar_test::last_error(), mutation.keyword)) << "compile: " << oar_test::last_error();
  if (program != nullptr) api->program_destroy(program);

  // deserialize: bytes of the valid model do not make a broken model valid.
  if (!mutation.unknown_op && api->serialize != nullptr && api->deserialize != nullptr) {
    oar_adapter_program_t good = nullptr;
    ASSERT_EQ(api->compile(ctx, valid.m.model(), &good), OAR_STATUS_OK) << oar_test::last_error();
    uint64_t size = 0;
    ASSERT_EQ(api->serialize(good, nullptr, 0, &size), OAR_STATUS_OK) << oar_test::last_error();
    std::vector<unsigned char> bytes(static_cast<size_t>(size));
    ASSERT_EQ(api->serialize(good, bytes.data(), bytes.size(), &size), OAR_STATUS_OK) << oar_test::last_error();
    api->program_destroy(good);
    oar_adapter_program_t back = nullptr;
    EXPECT_EQ(api->deserialize(ctx, &broken.model, bytes.data(), bytes.size(), &back), OAR_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(back, nullptr);
    EXPECT_FALSE(oar_test::last_error().empty());
    if (back != nullptr) api->program_destroy(back);
  }
  api->context_destroy(ctx);
}

INSTANTIATE_TEST_SUITE_P(Drivers, DriverValidation,
                         ::testing::Combine(::testing::Values("fake_npu", "openvino"),
                                            ::testing::Range<size_t>(0, mutations().size())),
                         [](const ::testing::TestParamInfo<DriverValidation::ParamType>& info) {
                           return std::get<0>(info.param) + "_" + mutations()[std::get<1>(info.param)].name;
                         });

class ValidModelRuns : public ::testing::TestWithParam<std::string> {};

TEST_P(ValidModelRuns, CompilesQueriesAndRuns) {
  std::string skip;
  const oar_adapter_driver_api* api = driver(GetParam(), &skip);
  if (!skip.empty()) GTEST_SKIP() << skip;
  ASSERT_NE(api, nullptr);
  ValidModel valid;
  const oar_adapter_model* model = valid.m.model();
  oar_adapter_context_t ctx = default_context(api);
  ASSERT_NE(ctx, nullptr);
  for (uint32_t k = 0; k < model->operation_count; ++k) {
    int32_t supported = -1;
    char reason[256] = "";
    ASSERT_EQ(api->query_operation(ctx, model, k, &supported, reason, sizeof(reason)), OAR_STATUS_OK)
        << oar_test::last_error();
    EXPECT_EQ(supported, 1) << "operation " << k << ": " << reason;
  }
  oar_adapter_program_t program = nullptr;
  ASSERT_EQ(api->compile(ctx, model, &program), OAR_STATUS_OK) << oar_test::last_error();
  std::vector<float> x(3 * 64), y(36, -1.0f);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * float(i));
  const int64_t xd[] = {1, 3, 8, 8}, yd[] = {1, 4, 3, 3};
  const oar_adapter_buffer in = {sizeof(oar_adapter_buffer), x.data(), x.size() * 4, OAR_DTYPE_F32, 4, xd};
  const oar_adapter_buffer out = {sizeof(oar_adapter_buffer), y.data(), y.size() * 4, OAR_DTYPE_F32, 4, yd};
  const oar_adapter_buffer* ins[] = {&in};
  const oar_adapter_buffer* outs[] = {&out};
  ASSERT_EQ(api->execute(program, ins, 1, outs, 1), OAR_STATUS_OK) << oar_test::last_error();
  const std::vector<float> want = valid.reference(x);
  float scale = 0;
  for (float v : want) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], want[i], 1e-4f * scale) << i;
  api->program_destroy(program);
  api->context_destroy(ctx);
}

INSTANTIATE_TEST_SUITE_P(Drivers, ValidModelRuns, ::testing::Values("fake_npu", "openvino"));

}  // namespace
