// fake_npu's programs and their machinery: the driver's table and options,
// the simulated SDK limits, a two-layer model end to end, quantized operands
// from the caller, the program cache format (round trip, garbage, another
// driver version), async execution and the checks on the caller's buffers.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "test_fake_npu_util.hpp"

namespace {

using namespace oar_test;
using namespace oar_test::fake_npu;

// ---- the table and options ----
TEST(FakeNpuDriver, DescribesItselfAndItsOptions) {
  const oar_adapter_driver_api* api = npu();
  ASSERT_NE(api, nullptr);
  EXPECT_STREQ(api->name, "fake_npu");
  EXPECT_STREQ(api->vendor, "oar (simulated NPU on the host)");
  EXPECT_STREQ(api->version, "1.0.0");
  ASSERT_NE(npu_v2(), nullptr);
  EXPECT_STREQ(npu_v2()->name, "fake_npu");
  EXPECT_STREQ(npu_v2()->version, "1.0.1");
  ASSERT_EQ(api->option_count, 3u);
  std::vector<std::string> names;
  for (uint64_t i = 0; i < api->option_count; ++i) {
    ASSERT_GE(api->options[i]->struct_size, sizeof(oar_flag_definition));
    names.push_back(api->options[i]->name);
    EXPECT_GT(std::strlen(api->options[i]->doc), 0u);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"OAR_FAKE_NPU_PRECISION", "OAR_FAKE_NPU_FAIL_COMPILE",
                                             "OAR_FAKE_NPU_MAX_OPERATIONS"}));
  EXPECT_EQ(api->options[0]->type, OAR_FLAG_TYPE_CHOICE);
  EXPECT_STREQ(api->options[0]->default_value, "fp32");
  EXPECT_STREQ(api->options[0]->choices, "fp32,fp16,int8");
  EXPECT_EQ(api->options[2]->type, OAR_FLAG_TYPE_INT);
}

TEST(FakeNpuDriver, RefusesBadOptions) {
  ASSERT_NE(npu(), nullptr);
  const std::vector<std::pair<Options, std::string>> bad = {
      {{{"OAR_FAKE_NPU_COLOR", "blue"}}, "unknown option 'OAR_FAKE_NPU_COLOR'"},
      {{{"OAR_FAKE_NPU_PRECISION", "fp64"}}, "fp64"},
      {{{"OAR_FAKE_NPU_MAX_OPERATIONS", "-1"}}, "OAR_FAKE_NPU_MAX_OPERATIONS"},
      {{{"OAR_FAKE_NPU_MAX_OPERATIONS", "3x"}}, "OAR_FAKE_NPU_MAX_OPERATIONS"},
  };
  for (const auto& [options, words] : bad) {
    Context ctx;
    EXPECT_EQ(create_context(npu(), options, ctx), OAR_STATUS_INVALID_ARGUMENT) << words;
    EXPECT_EQ(ctx.handle, nullptr);
    EXPECT_NE(last_error().find(words), std::string::npos) << last_error();
  }
  Context ok;
  EXPECT_EQ(create_context(npu(), {{"OAR_FAKE_NPU_PRECISION", "INT8"}}, ok), OAR_STATUS_OK) << last_error();
}

// conv -> relu -> max_pool -> conv, its input and the reference of its output (`want`).
void two_layer_model(CModel& m, Floats& input, Floats& want) {
  const Dims xd = {1, 3, 10, 10}, w1d = {6, 3, 3, 3}, w2d = {4, 6, 3, 3};
  static const Floats w1 = random_floats(CModel::count(w1d), 21, -0.4f, 0.4f), b1 = random_floats(6, 22, -0.2f, 0.2f);
  static const Floats w2 = random_floats(CModel::count(w2d), 23, -0.3f, 0.3f), b2 = random_floats(4, 24, -0.2f, 0.2f);
  input = random_floats(CModel::count(xd), 25);
  const int x = m.input(OAR_DTYPE_F32, xd, kNCHW, "image");
  const int w1i = m.constant(OAR_DTYPE_F32, w1d, w1.data(), OAR_ADAPTER_LAYOUT_OIHW);
  const int b1i = m.constant(OAR_DTYPE_F32, {6}, b1.data());
  const int t1 = m.temporary(OAR_DTYPE_F32, {1, 6, 10, 10}, kNCHW);
  const int t2 = m.temporary(OAR_DTYPE_F32, {1, 6, 10, 10}, kNCHW);
  const int t3 = m.temporary(OAR_DTYPE_F32, {1, 6, 5, 5}, kNCHW);
  const int w2i = m.constant(OAR_DTYPE_F32, w2d, w2.data(), OAR_ADAPTER_LAYOUT_OIHW);
  const int b2i = m.constant(OAR_DTYPE_F32, {4}, b2.data());
  const int y = m.output(OAR_DTYPE_F32, {1, 4, 3, 3}, kNCHW, "logits");
  auto conv_attrs = [](int64_t pad) {
    return std::vector<CModel::Attr>{CModel::ints("stride", {1, 1}), CModel::ints("padding", {pad, pad}),
                                     CModel::ints("dilation", {1, 1}), CModel::integer("groups", 1)};
  };
  // Listed out of order on purpose: the driver runs them topologically.
  m.operation("conv2d", {t3, w2i, b2i}, {y}, conv_attrs(0), "conv2");
  m.operation("max_pool2d", {t2}, {t3},
              {CModel::ints("kernel_size", {2, 2}), CModel::ints("stride", {}), CModel::ints("padding", {0, 0}),
               CModel::boolean("ceil_mode", false)},
              "pool");
  m.operation("relu", {t1}, {t2}, {}, "relu");
  m.operation("conv2d", {x, w1i, b1i}, {t1}, conv_attrs(1), "conv1");
  Dims d1, d2;
  const Floats r1 = ref::unary(ref::conv2d(input, xd, w1, w1d, &b1, {1, 1}, {1, 1}, {1, 1}, 1, &d1), ref::relu);
  const Floats r3 = ref::max_pool2d(r1, d1, {2, 2}, {}, {0, 0}, false, &d2);
  want = ref::conv2d(r3, d2, w2, w2d, &b2, {1, 1}, {0, 0}, {1, 1}, 1);
}

TEST(FakeNpuDriver, FailCompileAndMaxOperationsSimulateSdkLimits) {
  ASSERT_NE(npu(), nullptr);
  CModel m;
  Floats input, want;
  two_layer_model(m, input, want);
  {
    Context ctx;
    ASSERT_EQ(create_context(npu(), {{"OAR_FAKE_NPU_FAIL_COMPILE", "softmax, conv2d"}}, ctx), OAR_STATUS_OK);
    const Answer a = query(ctx, m.model(), 0);  // every operation is still supported
    EXPECT_EQ(a.supported, 1);
    EXPECT_EQ(a.reason, "");
    Program p;
    p.api = npu();
    EXPECT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), OAR_STATUS_UNSUPPORTED);
    EXPECT_NE(last_error().find(
                  "fake_npu: compile refused: the model contains conv2d (OAR_FAKE_NPU_FAIL_COMPILE)"),
              std::string::npos)
        << last_error();
  }
  {
    Context ctx;
    ASSERT_EQ(create_context(npu(), {{"OAR_FAKE_NPU_FAIL_COMPILE", "softmax"}}, ctx), OAR_STATUS_OK);
    Program p;
    p.api = npu();
    EXPECT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), OAR_STATUS_OK) << last_error();
  }
  for (const auto& [limit, status] : std::vector<std::pair<std::string, oar_status_t>>{
           {"3", OAR_STATUS_UNSUPPORTED}, {"4", OAR_STATUS_OK}, {"0", OAR_STATUS_OK}}) {
    Context ctx;
    ASSERT_EQ(create_context(npu(), {{"OAR_FAKE_NPU_MAX_OPERATIONS", limit}}, ctx), OAR_STATUS_OK);
    Program p;
    p.api = npu();
    EXPECT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), status) << limit << ": " << last_error();
    if (status != OAR_STATUS_OK) {
      EXPECT_NE(last_error().find("OAR_FAKE_NPU_MAX_OPERATIONS"), std::string::npos) << last_error();
    }
  }
}

TEST(FakeNpuDriver, TwoLayerModelEndToEnd) {
  ASSERT_NE(npu(), nullptr);
  for (const Tolerance& t : kTolerances) {
    CModel m;
    Floats input, want;
    two_layer_model(m, input, want);
    const std::vector<Floats> out = compile_and_run(m, t.precision, {input});
    ASSERT_EQ(out.size(), 1u);
    expect_close(out[0], want, t, "two-layer model");
  }
}

// ---- quantized operands given by the caller ----
std::vector<int8_t> random_ints(size_t n, uint32_t seed, int lo, int hi) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<int8_t> v(n);
  for (int8_t& q : v) q = int8_t(dist(gen));
  return v;
}

TEST(FakeNpuDriver, Int8PerChannelWeightsFromTheCaller) {
  ASSERT_NE(npu(), nullptr);
  const Dims xd = {1, 2, 5, 5}, wd = {3, 2, 3, 3};
  const float sx = 0.05f;
  const std::vector<float> sw = {0.01f, 0.02f, 0.005f};
  const std::vector<int8_t> qx = random_ints(size_t(CModel::count(xd)), 31, -100, 100);
  const std::vector<int8_t> qw = random_ints(size_t(CModel::count(wd)), 32, -127, 127);
  const Floats b = random_floats(3, 33, -0.2f, 0.2f);
  // x is an i8 input with a per-tensor scale, w i8 constant weights with one scale per output channel.
  CModel m;
  const int x = m.input(OAR_DTYPE_I8, xd, kNCHW, "x");
  m.quantize(x, {sx});
  const int w = m.constant(OAR_DTYPE_I8, wd, qw.data(), OAR_ADAPTER_LAYOUT_OIHW);
  m.quantize(w, sw, {}, 0);
  const int bi = m.constant(OAR_DTYPE_F32, {3}, b.data());
  const int y = m.output(OAR_DTYPE_F32, {1, 3, 3, 3}, kNCHW);
  m.operation("conv2d", {x, w, bi}, {y},
              {CModel::ints("stride", {1, 1}), CModel::ints("padding", {0, 0}), CModel::ints("dilation", {1, 1}),
               CModel::integer("groups", 1)});
  const Floats want = ref::conv2d(dequantize(qx, {sx}), xd, dequantize(qw, sw), wd, &b, {1, 1}, {0, 0}, {1, 1}, 1);
  // The integer product the int8 NPU computes: the caller's integers and scales as given.
  Floats exact(27);
  for (int64_t oc = 0; oc < 3; ++oc)
    for (int64_t p = 0; p < 9; ++p) {
      int64_t acc = 0;
      for (int64_t c = 0; c < 2; ++c)
        for (int64_t i = 0; i < 3; ++i)
          for (int64_t j = 0; j < 3; ++j)
            acc += int64_t(qx[size_t((c * 5 + p / 3 + i) * 5 + p % 3 + j)]) * int64_t(qw[size_t(((oc * 2 + c) * 3 + i) * 3 + j)]);
      exact[size_t(oc * 9 + p)] = float(acc) * sx * sw[size_t(oc)] + b[size_t(oc)];
    }
  for (const Tolerance& t : kTolerances) {
    Context ctx;
    ASSERT_EQ(create_context(npu(), {{"OAR_FAKE_NPU_PRECISION", t.precision}}, ctx), OAR_STATUS_OK);
    Program p;
    p.api = npu();
    ASSERT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), OAR_STATUS_OK) << last_error();
    std::vector<Buffer> in, out;
    in.emplace_back(OAR_DTYPE_I8, xd);
    std::memcpy(in[0].bytes.data(), qx.data(), qx.size());
    out.emplace_back(OAR_DTYPE_F32, Dims{1, 3, 3, 3});
    ASSERT_EQ(execute(p, in, out), OAR_STATUS_OK) << last_error();
    const Tolerance tight = {t.precision, {1e-5, 1e-6, false}};
    expect_close(out[0].floats(), std::string(t.precision) == "int8" ? exact : want,
                 std::string(t.precision) == "fp16" ? t : tight, "i8 conv");
  }
}

TEST(FakeNpuDriver, Int8PerChannelLinearWeights) {
  ASSERT_NE(npu(), nullptr);
  const std::vector<int8_t> qw = random_ints(4 * 6, 41, -127, 127);
  const std::vector<float> sw = {0.01f, 0.03f, 0.02f, 0.004f};
  const Floats x = random_floats(3 * 6, 42);
  CModel m;
  const int xi = m.input(OAR_DTYPE_F32, {3, 6});
  const int w = m.constant(OAR_DTYPE_I8, {4, 6}, qw.data());
  m.quantize(w, sw, {0, 0, 0, 0}, 0);
  const int y = m.output(OAR_DTYPE_F32, {3, 4});
  m.operation("linear", {xi, w, -1}, {y});
  const Floats want = ref::linear(x, 3, 6, dequantize(qw, sw), 4, nullptr);
  for (const Tolerance& t : kTolerances) expect_close(compile_and_run(m, t.precision, {x}).at(0), want, t, "i8 linear");
  // Asymmetric weights are something this NPU cannot take.
  m.quantize(w, sw, {0, 1, 0, 0}, 0);
  Context ctx;
  ASSERT_EQ(create_context(npu(), {}, ctx), OAR_STATUS_OK);
  const Answer a = query(ctx, m.model(), 0);
  EXPECT_EQ(a.supported, 0);
  EXPECT_NE(a.reason.find("symmetric"), std::string::npos) << a.reason;
}

TEST(FakeNpuDriver, QuantizedAndHalfBuffersAtTheBoundary) {
  ASSERT_NE(npu(), nullptr);
  // i8 and u8 inputs are dequantized on entry.
  for (const auto& [dtype, zp] : std::vector<std::pair<oar_dtype_t, int32_t>>{{OAR_DTYPE_I8, -3}, {OAR_DTYPE_U8, 128}}) {
    CModel m;
    const int x = m.input(dtype, {2, 5}, OAR_ADAPTER_LAYOUT_PLAIN, "q");
    m.quantize(x, {0.1f}, {zp});
    const int y = m.output(OAR_DTYPE_F32, {2, 5});
    m.operation("relu", {x}, {y});
    Context ctx;
    ASSERT_EQ(create_context(npu(), {}, ctx), OAR_STATUS_OK);
    Program p;
    p.api = npu();
    ASSERT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), OAR_STATUS_OK) << last_error();
    std::vector<Buffer> in, out;
    in.emplace_back(dtype, Dims{2, 5});
    for (size_t i = 0; i < 10; ++i) in[0].bytes[i] = static_cast<unsigned char>(zp + int(i) * 7 - 30);
    out.emplace_back(OAR_DTYPE_F32, Dims{2, 5});
    ASSERT_EQ(execute(p, in, out), OAR_STATUS_OK) << last_error();
    const Floats got = out[0].floats();
    for (size_t i = 0; i < 10; ++i) {
      const int q = dtype == OAR_DTYPE_U8 ? int(in[0].bytes[i]) : int(int8_t(in[0].bytes[i]));
      EXPECT_FLOAT_EQ(got[i], std::max(0.0f, 0.1f * float(q - zp))) << i;
    }
  }
  // f16 in and out: converted at the boundary, exact for relu.
  {
    CModel m;
    relu_model(m, OAR_DTYPE_F16, {6});
    const uint16_t bits[6] = {0x3c00, 0xbc00, 0x0001, 0x7bff, 0x8400, 0x3555};  // 1, -1, tiny, max, -min normal, 1/3
    const uint16_t want[6] = {0x3c00, 0x0000, 0x0001, 0x7bff, 0x0000, 0x3555};
    Context ctx;
    ASSERT_EQ(create_context(npu(), {}, ctx), OAR_STATUS_OK);
    Program p;
    p.api = npu();
    ASSERT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), OAR_STATUS_OK) << last_error();
    std::vector<Buffer> in, out;
    in.emplace_back(OAR_DTYPE_F16, Dims{6});
    std::memcpy(in[0].bytes.data(), bits, sizeof(bits));
    out.emplace_back(OAR_DTYPE_F16, Dims{6});
    ASSERT_EQ(execute(p, in, out), OAR_STATUS_OK) << last_error();
    EXPECT_EQ(std::memcmp(out[0].bytes.data(), want, sizeof(want)), 0);
  }
  // An i8 output is quantized on exit (round to nearest, clamped).
  {
    CModel m;
    const int x = m.input(OAR_DTYPE_F32, {4});
    const int y = m.output(OAR_DTYPE_I8, {4});
    m.quantize(y, {0.5f});
    m.operation("relu", {x}, {y});
    const Floats values = {1.2f, -3.0f, 100.0f, 0.76f};
    Context ctx;
    ASSERT_EQ(create_context(npu(), {}, ctx), OAR_STATUS_OK);
    Program p;
    p.api = npu();
    ASSERT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), OAR_STATUS_OK) << last_error();
    std::vector<Buffer> in, out;
    in.push_back(f32_buffer(values, {4}));
    out.emplace_back(OAR_DTYPE_I8, Dims{4});
    ASSERT_EQ(execute(p, in, out), OAR_STATUS_OK) << last_error();
    const int8_t want[4] = {2, 0, 127, 2};
    EXPECT_EQ(std::memcmp(out[0].bytes.data(), want, 4), 0);
  }
}

// ---- the program cache ----
std::vector<unsigned char> serialize(const Program& p) {
  uint64_t size = 0;
  EXPECT_EQ(p.api->serialize(p.handle, nullptr, 0, &size), OAR_STATUS_OK) << last_error();
  std::vector<unsigned char> bytes(static_cast<size_t>(size));
  uint64_t written = 0;
  EXPECT_EQ(p.api->serialize(p.handle, bytes.data(), bytes.size(), &written), OAR_STATUS_OK) << last_error();
  EXPECT_EQ(written, size);
  return bytes;
}

struct Compiled {
  CModel m;
  Floats input, ref;
  Context ctx;
  Program p;
};

void compile_two_layer(const oar_adapter_driver_api* api, const std::string& precision, Compiled& c) {
  two_layer_model(c.m, c.input, c.ref);
  ASSERT_EQ(create_context(api, {{"OAR_FAKE_NPU_PRECISION", precision}}, c.ctx), OAR_STATUS_OK);
  c.p.api = api;
  ASSERT_EQ(api->compile(c.ctx.handle, c.m.model(), &c.p.handle), OAR_STATUS_OK) << last_error();
}

std::vector<unsigned char> run_bytes(const Program& p, const oar_adapter_model* m, const Floats& input) {
  std::vector<Buffer> in, out;
  model_buffers(m, {input}, in, out);
  EXPECT_EQ(execute(p, in, out), OAR_STATUS_OK) << last_error();
  return out.at(0).bytes;
}

TEST(FakeNpuDriver, SerializeDeserializeExecuteGivesIdenticalBytes) {
  ASSERT_NE(npu(), nullptr);
  for (const Tolerance& t : kTolerances) {
    SCOPED_TRACE(t.precision);
    Compiled c;
    compile_two_layer(npu(), t.precision, c);
    const std::vector<unsigned char> bytes = serialize(c.p);
    ASSERT_GT(bytes.size(), 16u);
    EXPECT_EQ(std::memcmp(bytes.data(), "OARFNPU\0", 8), 0);
    Program back;
    back.api = npu();
    ASSERT_EQ(npu()->deserialize(c.ctx.handle, c.m.model(), bytes.data(), bytes.size(), &back.handle), OAR_STATUS_OK)
        << last_error();
    EXPECT_EQ(run_bytes(back, c.m.model(), c.input), run_bytes(c.p, c.m.model(), c.input));
    EXPECT_EQ(serialize(back), bytes);  // a loaded program writes the same bytes again
    uint64_t size = 0;
    std::vector<unsigned char> small(10);
    EXPECT_EQ(npu()->serialize(c.p.handle, small.data(), small.size(), &size), OAR_STATUS_INVALID_ARGUMENT);
    EXPECT_EQ(size, bytes.size());
  }
}

oar_status_t deserialize(Compiled& c, const std::vector<unsigned char>& bytes, size_t size,
                         const oar_adapter_driver_api* api = nullptr, const Context* ctx = nullptr,
                         const oar_adapter_model* model = nullptr) {
  api = api ? api : npu();
  Program p;
  p.api = api;
  const oar_status_t status = api->deserialize((ctx ? ctx : &c.ctx)->handle, model ? model : c.m.model(),
                                               bytes.data(), size, &p.handle);
  EXPECT_EQ(status == OAR_STATUS_OK, p.handle != nullptr);
  return status;
}

TEST(FakeNpuDriver, DeserializeRefusesForeignOrBrokenBytes) {
  ASSERT_NE(npu(), nullptr);
  ASSERT_NE(npu_v2(), nullptr);
  Compiled c;
  compile_two_layer(npu(), "fp32", c);
  const std::vector<unsigned char> bytes = serialize(c.p);
  // Truncated anywhere.
  for (size_t size : {size_t(0), size_t(4), size_t(8), size_t(12), size_t(20), bytes.size() / 2, bytes.size() - 9,
                      bytes.size() - 1}) {
    EXPECT_EQ(deserialize(c, bytes, size), OAR_STATUS_INVALID_ARGUMENT) << size;
    EXPECT_FALSE(last_error().empty());
  }
  // Another magic.
  std::vector<unsigned char> other = bytes;
  other[0] ^= 0xff;
  EXPECT_EQ(deserialize(c, other, other.size()), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("not a fake_npu program"), std::string::npos) << last_error();
  // A modified byte in the middle.
  other = bytes;
  other[other.size() / 2] ^= 0x10;
  EXPECT_EQ(deserialize(c, other, other.size()), OAR_STATUS_INVALID_ARGUMENT);
  // A program from the 1.0.1 build of the same driver, and the other way round.
  Compiled c2;
  compile_two_layer(npu_v2(), "fp32", c2);
  const std::vector<unsigned char> bytes2 = serialize(c2.p);
  EXPECT_EQ(deserialize(c, bytes2, bytes2.size()), OAR_STATUS_VERSION_MISMATCH);
  EXPECT_NE(last_error().find("program was compiled by fake_npu 1.0.1, this is 1.0.0"), std::string::npos)
      << last_error();
  EXPECT_EQ(deserialize(c2, bytes, bytes.size(), npu_v2()), OAR_STATUS_VERSION_MISMATCH);
  EXPECT_NE(last_error().find("program was compiled by fake_npu 1.0.0, this is 1.0.1"), std::string::npos)
      << last_error();
  // Another precision.
  Context int8;
  ASSERT_EQ(create_context(npu(), {{"OAR_FAKE_NPU_PRECISION", "int8"}}, int8), OAR_STATUS_OK);
  EXPECT_EQ(deserialize(c, bytes, bytes.size(), npu(), &int8), OAR_STATUS_VERSION_MISMATCH);
  EXPECT_NE(last_error().find("precision fp32"), std::string::npos) << last_error();
  // Another model (its input has other dims).
  CModel relu;
  relu_model(relu, OAR_DTYPE_F32, {2, 3});
  EXPECT_EQ(deserialize(c, bytes, bytes.size(), npu(), nullptr, relu.model()), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("another model"), std::string::npos) << last_error();
}

// White-box: flips bytes and then fixes the trailing FNV-1a checksum, so the
// parser and verify_program (not the checksum) must refuse what breaks.
TEST(FakeNpuDriver, DeserializeSurvivesModifiedBytes) {
  ASSERT_NE(npu(), nullptr);
  Compiled c;
  compile_two_layer(npu(), "fp32", c);
  const std::vector<unsigned char> bytes = serialize(c.p);
  std::mt19937 gen(77);
  int accepted = 0;
  for (int round = 0; round < 400; ++round) {
    std::vector<unsigned char> b = bytes;
    const int flips = 1 + round % 3;
    for (int f = 0; f < flips; ++f) b[8 + gen() % (b.size() - 16)] ^= static_cast<unsigned char>(1 + gen() % 255);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i + 8 < b.size(); ++i) h = (h ^ b[i]) * 1099511628211ull;
    for (int i = 0; i < 8; ++i) b[b.size() - 8 + size_t(i)] = static_cast<unsigned char>(h >> (8 * i));
    Program p;
    p.api = npu();
    const oar_status_t s = npu()->deserialize(c.ctx.handle, c.m.model(), b.data(), b.size(), &p.handle);
    ASSERT_TRUE(s == OAR_STATUS_OK || s == OAR_STATUS_INVALID_ARGUMENT || s == OAR_STATUS_VERSION_MISMATCH)
        << s << " " << last_error();
    if (s != OAR_STATUS_OK) continue;
    ++accepted;  // e.g. a changed weight: it must still run
    std::vector<Buffer> in, out;
    model_buffers(c.m.model(), {c.input}, in, out);
    EXPECT_EQ(execute(p, in, out), OAR_STATUS_OK) << last_error();
  }
  EXPECT_LT(accepted, 400);
}

// ---- execution ----
TEST(FakeNpuDriver, ExecuteAsyncAndWait) {
  ASSERT_NE(npu(), nullptr);
  Built b;
  conv_case("conv2d", {1, 16, 40, 40}, {32, 16, 3, 3}, true, {1, 1}, {1, 1}, 1)(b);
  Context ctx;
  ASSERT_EQ(create_context(npu(), {}, ctx), OAR_STATUS_OK);
  Program p;
  p.api = npu();
  ASSERT_EQ(npu()->compile(ctx.handle, b.m.model(), &p.handle), OAR_STATUS_OK) << last_error();
  std::vector<Buffer> in, out, sync_out;
  model_buffers(b.m.model(), b.inputs, in, out);
  model_buffers(b.m.model(), b.inputs, in, sync_out);
  in.erase(in.begin() + 1, in.end());
  ASSERT_EQ(execute(p, in, sync_out), OAR_STATUS_OK);
  const oar_adapter_buffer* inputs[] = {in[0].get()};
  const oar_adapter_buffer* outputs[] = {out[0].get()};
  oar_adapter_event_t event = nullptr;
  ASSERT_EQ(npu()->execute_async(p.handle, inputs, 1, outputs, 1, &event), OAR_STATUS_OK) << last_error();
  ASSERT_NE(event, nullptr);
  const oar_status_t first = npu()->event_wait(event, 0);
  EXPECT_TRUE(first == OAR_STATUS_OK || first == OAR_STATUS_TIMEOUT) << first;
  if (first == OAR_STATUS_TIMEOUT) {
    EXPECT_NE(last_error().find("still running"), std::string::npos);
  }
  EXPECT_EQ(npu()->event_wait(event, -1), OAR_STATUS_OK) << last_error();
  EXPECT_EQ(npu()->event_wait(event, 10), OAR_STATUS_OK);  // done stays done
  npu()->event_destroy(event);
  EXPECT_EQ(out[0].bytes, sync_out[0].bytes);
  expect_close(out[0].floats(), b.ref, tolerance("fp32"), "async conv");
  // A buffer problem is reported at once, with no event.
  out[0].dims[1] = 31;
  outputs[0] = out[0].get();
  event = nullptr;
  EXPECT_EQ(npu()->execute_async(p.handle, inputs, 1, outputs, 1, &event), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(event, nullptr);
  // Destroying an event nobody waited for joins its execution.
  out[0].dims[1] = 32;
  outputs[0] = out[0].get();
  ASSERT_EQ(npu()->execute_async(p.handle, inputs, 1, outputs, 1, &event), OAR_STATUS_OK);
  npu()->event_destroy(event);
}

TEST(FakeNpuDriver, ExecuteChecksEveryBuffer) {
  ASSERT_NE(npu(), nullptr);
  CModel m;
  relu_model(m, OAR_DTYPE_F32, {2, 3});
  Context ctx;
  ASSERT_EQ(create_context(npu(), {}, ctx), OAR_STATUS_OK);
  Program p;
  p.api = npu();
  ASSERT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), OAR_STATUS_OK);
  struct Case {
    const char* name;
    std::function<void(std::vector<Buffer>&, std::vector<Buffer>&)> spoil;
    const char* words;
  };
  const std::vector<Case> cases = {
      {"no inputs", [](auto& in, auto&) { in.clear(); }, "0 input buffers given, the model has 1"},
      {"two outputs", [](auto&, auto& out) { out.push_back(out[0]); }, "2 output buffers given"},
      {"dtype", [](auto& in, auto&) { in[0].c.dtype = OAR_DTYPE_F16; }, "input 0 ('x'): dtype f16 given, the model's is f32"},
      {"dims", [](auto& in, auto&) { in[0].dims = {3, 2}; }, "input 0 ('x'): dims [3, 2] given, the model's are [2, 3]"},
      {"rank", [](auto& in, auto&) { in[0].dims = {6}; }, "dims [6] given"},
      {"output dims", [](auto&, auto& out) { out[0].dims = {2, 4}; }, "output 0: dims [2, 4] given"},
      {"bytes", [](auto& in, auto&) { in[0].bytes.resize(20); }, "input 0 ('x'): 20 bytes given, its dims and dtype need 24"},
  };
  for (const Case& c : cases) {
    std::vector<Buffer> in, out;
    model_buffers(m.model(), {Floats(6, 1.0f)}, in, out);
    c.spoil(in, out);
    EXPECT_EQ(execute(p, in, out), OAR_STATUS_INVALID_ARGUMENT) << c.name;
    EXPECT_NE(last_error().find(c.words), std::string::npos) << c.name << ": " << last_error();
  }
  std::vector<Buffer> in, out;
  model_buffers(m.model(), {Floats(6, 1.0f)}, in, out);
  const oar_adapter_buffer* null_input[] = {nullptr};
  const oar_adapter_buffer* outputs[] = {out[0].get()};
  EXPECT_EQ(npu()->execute(p.handle, null_input, 1, outputs, 1), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("NULL buffer"), std::string::npos) << last_error();
  oar_adapter_buffer no_data = *in[0].get();
  no_data.data = nullptr;
  const oar_adapter_buffer* inputs[] = {&no_data};
  EXPECT_EQ(npu()->execute(p.handle, inputs, 1, outputs, 1), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(last_error().find("data is NULL"), std::string::npos) << last_error();
  // A larger buffer than needed is fine (allocators round up).
  in[0].bytes.resize(64);
  EXPECT_EQ(execute(p, in, out), OAR_STATUS_OK) << last_error();
}

}  // namespace
