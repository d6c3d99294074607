// The OpenVINO adapter driver's programs and their machinery: the driver's
// table and options, quantized weights and inputs, a small CNN end to end, the
// program cache format, async execution and the checks on the caller's
// buffers. Skips when the driver was not built (no OpenVINO).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "test_openvino_util.hpp"

namespace {

using namespace oar_test;
using namespace oar_test::openvino;

TEST_F(OpenVinoDriver, DescribesItselfAndItsOptions) {
  EXPECT_STREQ(api->name, "openvino");
  EXPECT_STREQ(api->vendor, "Intel OpenVINO");
  EXPECT_CONTAINS(api->version, "+ov20");  // the OpenVINO build is part of the cache key
  ASSERT_EQ(api->option_count, 4u);
  std::map<std::string, std::string> defaults;
  for (uint64_t i = 0; i < api->option_count; ++i) defaults[api->options[i]->name] = api->options[i]->default_value;
  EXPECT_EQ(defaults["OAR_OPENVINO_DEVICE"], "CPU");
  EXPECT_EQ(defaults["OAR_OPENVINO_PRECISION"], "fp32");
  EXPECT_EQ(defaults["OAR_OPENVINO_NUM_THREADS"], "0");
  EXPECT_EQ(defaults["OAR_OPENVINO_HINT"], "latency");
}

TEST_F(OpenVinoDriver, Options) {
  CModel m = relu_model();
  {
    ContextPtr c = context({{"OAR_OPENVINO_DEVICE", "NOPE"}});
    compile(c.get(), m, OAR_STATUS_DEVICE_ERROR);
    EXPECT_CONTAINS(last_error(), "no device 'NOPE'");
    EXPECT_CONTAINS(last_error(), "available devices: CPU");
  }
  ContextPtr bad;
  EXPECT_EQ(make_context({{"OAR_OPENVINO_PRECISION", "int4"}}, &bad), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(last_error(), "fp32, bf16, fp16");
  EXPECT_EQ(make_context({{"OAR_OPENVINO_NUM_THREADS", "many"}}, &bad), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(make_context({{"OAR_OPENVINO_TYPO", "1"}}, &bad), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(last_error(), "unknown option OAR_OPENVINO_TYPO");
  // a virtual device: queries go through OpenVINO's query_model
  for (const char* device : {"AUTO", "HETERO:CPU"}) {
    SCOPED_TRACE(device);
    ContextPtr c = context({{"OAR_OPENVINO_DEVICE", device}});
    int32_t supported = 0;
    char reason[256] = "unset";
    EXPECT_EQ(api->query_operation(c.get(), m.model(), 0, &supported, reason, sizeof(reason)), OAR_STATUS_OK)
        << last_error();
    EXPECT_EQ(supported, 1) << reason;
    EXPECT_EQ(run(m, {HostTensor(OAR_DTYPE_F32, {2, 3}, {-1, 2, -3, 4, -5, 6})}, {{"OAR_OPENVINO_DEVICE", device}}),
              (Floats{0, 2, 0, 4, 0, 6}));
  }
  // choices are case-insensitive; threads and hints compile and run
  const Floats x = {-1, 2, -3, 4, -5, 6};
  EXPECT_EQ(run(m, {HostTensor(OAR_DTYPE_F32, {2, 3}, x)},
                {{"OAR_OPENVINO_NUM_THREADS", "1"}, {"OAR_OPENVINO_HINT", "THROUGHPUT"}, {"OAR_OPENVINO_PRECISION", "BF16"}}),
            (Floats{0, 2, 0, 4, 0, 6}));
}

TEST_F(OpenVinoDriver, QuantizedWeightsAndInputs) {
  // conv2d with int8 weights quantized per output channel (with zero points)
  std::vector<int8_t> q(108);
  for (size_t i = 0; i < q.size(); ++i) q[i] = int8_t(int(i * 37 % 255) - 127);
  const std::vector<float> scales = {0.01f, 0.02f, 0.005f, 0.03f};
  const std::vector<int32_t> zero_points = {0, 3, -2, 1};
  const Floats x = random_floats(192, 199);
  Dims yd;
  const Floats want = ref::conv2d(x, {1, 3, 8, 8}, dequantize(q, scales, zero_points), {4, 3, 3, 3}, nullptr, {1, 1},
                                  {1, 1}, {1, 1}, 1, &yd);
  CModel m;
  int xi = m.input(OAR_DTYPE_F32, {1, 3, 8, 8}, OAR_ADAPTER_LAYOUT_NCHW);
  int wi = m.constant(OAR_DTYPE_I8, {4, 3, 3, 3}, q.data(), OAR_ADAPTER_LAYOUT_OIHW);
  m.quantize(wi, scales, zero_points, 0);
  int yi = m.output(OAR_DTYPE_F32, yd, OAR_ADAPTER_LAYOUT_NCHW);
  m.operation("conv2d", {xi, wi, -1}, {yi},
              {CModel::ints("stride", {1, 1}), CModel::ints("padding", {1, 1}), CModel::ints("dilation", {1, 1}),
               CModel::integer("groups", 1)});
  EXPECT_EQ(query(m, 0), "");
  expect_close(run(m, {HostTensor(OAR_DTYPE_F32, {1, 3, 8, 8}, x)}), want, kTolFp32, "int8 per-channel conv2d");

  // linear on a uint8 model input quantized per tensor (zero point 128)
  const Floats lw = random_floats(12, 73);
  const Floats raw = {0, 17, 128, 200, 255, 90, 3, 140};
  CModel l;
  int li = l.input(OAR_DTYPE_U8, {2, 4});
  l.quantize(li, {0.05f}, {128});
  int lwi = l.constant(OAR_DTYPE_F32, {3, 4}, lw.data());
  int lyi = l.output(OAR_DTYPE_F32, {2, 3});
  l.operation("linear", {li, lwi, -1}, {lyi});
  expect_close(run(l, {HostTensor(OAR_DTYPE_U8, {2, 4}, raw)}), ref::linear(dequantize(raw, {0.05f}, {128}), 2, 4, lw, 3, nullptr), kTolFp32,
               "uint8 per-tensor linear input");
}

// conv -> relu -> pool -> conv -> relu -> pool -> reshape -> linear, on [2, 1, 12, 12].
TEST_F(OpenVinoDriver, SmallCnnEndToEnd) {
  const Floats x = random_floats(288, 295), w1 = random_floats(36, 103, -0.5f, 0.5f), b1 = random_floats(4, 75, -0.1f, 0.1f),
               w2 = random_floats(288, 361, -0.3f, 0.3f), b2 = random_floats(8, 87, -0.1f, 0.1f),
               w3 = random_floats(720, 803, -0.2f, 0.2f), b3 = random_floats(10, 99, -0.1f, 0.1f);
  Dims d1, d2, d3, d4;
  Floats h = ref::unary(ref::conv2d(x, {2, 1, 12, 12}, w1, {4, 1, 3, 3}, &b1, {1, 1}, {1, 1}, {1, 1}, 1, &d1), ref::relu);
  h = ref::max_pool2d(h, d1, {2, 2}, {}, {0, 0}, false, &d2);
  h = ref::unary(ref::conv2d(h, d2, w2, {8, 4, 3, 3}, &b2, {1, 1}, {1, 1}, {1, 1}, 1, &d3), ref::relu);
  h = ref::max_pool2d(h, d3, {2, 2}, {}, {0, 0}, false, &d4);
  const Floats want = ref::linear(h, 2, 72, w3, 10, &b3);

  CModel m;
  const std::vector<CModel::Attr> conv_attrs = {CModel::ints("stride", {1, 1}), CModel::ints("padding", {1, 1}),
                                                CModel::ints("dilation", {1, 1}), CModel::integer("groups", 1)};
  const std::vector<CModel::Attr> pool_attrs = {CModel::ints("kernel_size", {2, 2}), CModel::ints("stride", {}),
                                                CModel::ints("padding", {0, 0}), CModel::boolean("ceil_mode", false)};
  int xi = m.input(OAR_DTYPE_F32, {2, 1, 12, 12}, OAR_ADAPTER_LAYOUT_NCHW, "image");
  int c1 = m.temporary(OAR_DTYPE_F32, d1, OAR_ADAPTER_LAYOUT_NCHW), r1 = m.temporary(OAR_DTYPE_F32, d1);
  int p1 = m.temporary(OAR_DTYPE_F32, d2), c2 = m.temporary(OAR_DTYPE_F32, d3), r2 = m.temporary(OAR_DTYPE_F32, d3);
  int p2 = m.temporary(OAR_DTYPE_F32, d4), flat = m.temporary(OAR_DTYPE_F32, {2, 72});
  int yi = m.output(OAR_DTYPE_F32, {2, 10}, OAR_ADAPTER_LAYOUT_PLAIN, "logits");
  // operations listed out of order on purpose: the driver builds in topological order
  m.operation("linear", {flat, m.constant(OAR_DTYPE_F32, {10, 72}, w3.data()), m.constant(OAR_DTYPE_F32, {10}, b3.data())},
              {yi});
  m.operation("conv2d", {xi, m.constant(OAR_DTYPE_F32, {4, 1, 3, 3}, w1.data(), OAR_ADAPTER_LAYOUT_OIHW),
                         m.constant(OAR_DTYPE_F32, {4}, b1.data())}, {c1}, conv_attrs);
  m.operation("relu", {c1}, {r1});
  m.operation("max_pool2d", {r1}, {p1}, pool_attrs);
  m.operation("conv2d", {p1, m.constant(OAR_DTYPE_F32, {8, 4, 3, 3}, w2.data(), OAR_ADAPTER_LAYOUT_OIHW),
                         m.constant(OAR_DTYPE_F32, {8}, b2.data())}, {c2}, conv_attrs);
  m.operation("relu", {c2}, {r2});
  m.operation("max_pool2d", {r2}, {p2}, pool_attrs);
  m.operation("reshape", {p2}, {flat}, {CModel::ints("shape", {2, -1})});
  for (uint32_t k = 0; k < 8; ++k) EXPECT_EQ(query(m, k), "") << "operation " << k;
  expect_close(run(m, {HostTensor(OAR_DTYPE_F32, {2, 1, 12, 12}, x)}), want, kTolFp32, "small CNN");
}

class OpenVinoProgramCache : public OpenVinoDriver {
 protected:
  std::vector<unsigned char> serialize(oar_adapter_program_t p) {
    uint64_t size = 0;
    EXPECT_EQ(api->serialize(p, nullptr, 0, &size), OAR_STATUS_OK) << last_error();
    std::vector<unsigned char> bytes(size);
    uint64_t written = 0;
    EXPECT_EQ(api->serialize(p, bytes.data(), bytes.size(), &written), OAR_STATUS_OK) << last_error();
    EXPECT_EQ(written, size);
    return bytes;
  }
  oar_status_t deserialize(oar_adapter_context_t c, CModel& m, const std::vector<unsigned char>& bytes,
                           ProgramPtr* out = nullptr) {
    oar_adapter_program_t p = nullptr;
    oar_status_t st = api->deserialize(c, m.model(), bytes.data(), bytes.size(), &p);
    if (out != nullptr) *out = ProgramPtr(p, api->program_destroy);
    else if (p != nullptr) api->program_destroy(p);
    return st;
  }
};

TEST_F(OpenVinoProgramCache, RoundTripRunsIdentically) {
  SmallConv conv;
  CModel m = conv.model(OAR_DTYPE_F32);
  ContextPtr c = context();
  ProgramPtr original = compile(c.get(), m);
  ASSERT_TRUE(original);
  std::vector<HostTensor> in = {HostTensor(OAR_DTYPE_F32, {1, 3, 8, 8}, conv.x)};
  std::vector<HostTensor> a = output_tensors(m), b = output_tensors(m);
  ASSERT_EQ(execute(original.get(), in, a), OAR_STATUS_OK) << last_error();
  const std::vector<unsigned char> bytes = serialize(original.get());
  ASSERT_GT(bytes.size(), 8u);
  EXPECT_EQ(std::memcmp(bytes.data(), "OAROVIN\0", 8), 0);
  ProgramPtr restored;
  ASSERT_EQ(deserialize(c.get(), m, bytes, &restored), OAR_STATUS_OK) << last_error();
  original.reset();  // the restored program stands alone
  ASSERT_EQ(execute(restored.get(), in, b), OAR_STATUS_OK) << last_error();
  EXPECT_EQ(a[0].bytes, b[0].bytes);
  expect_close(b[0].floats(), conv.want(OAR_DTYPE_F32), kTolFp32, "restored conv2d");
  // a second context of the same options reads the bytes too
  ContextPtr other = context();
  EXPECT_EQ(deserialize(other.get(), m, bytes), OAR_STATUS_OK) << last_error();
  // too small a buffer is refused
  uint64_t size = 0;
  std::vector<unsigned char> small(16);
  EXPECT_EQ(api->serialize(restored.get(), small.data(), small.size(), &size), OAR_STATUS_INVALID_ARGUMENT);
}

TEST_F(OpenVinoProgramCache, ForeignBytesAreRefused) {
  CModel m = relu_model();
  ContextPtr c = context();
  ProgramPtr p = compile(c.get(), m);
  ASSERT_TRUE(p);
  const std::vector<unsigned char> bytes = serialize(p.get());

  for (size_t cut : {size_t(0), size_t(5), size_t(20), bytes.size() / 2, bytes.size() - 1}) {
    SCOPED_TRACE("truncated to " + std::to_string(cut));
    EXPECT_EQ(deserialize(c.get(), m, std::vector<unsigned char>(bytes.begin(), bytes.begin() + long(cut))),
              OAR_STATUS_INVALID_ARGUMENT);
    EXPECT_CONTAINS(last_error(), "not an openvino program");
  }
  std::vector<unsigned char> flipped = bytes;
  flipped[1] ^= 0x20;
  EXPECT_EQ(deserialize(c.get(), m, flipped), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(last_error(), "not an openvino program (no OAROVIN magic)");
  std::vector<unsigned char> longer = bytes;
  longer.push_back(0);
  EXPECT_EQ(deserialize(c.get(), m, longer), OAR_STATUS_INVALID_ARGUMENT);

  // any one header byte changed is refused, with a status and no crash
  for (size_t i = 0; i < 100 && i < bytes.size(); ++i) {
    std::vector<unsigned char> changed = bytes;
    changed[i] ^= 0x41;
    const oar_status_t st = deserialize(c.get(), m, changed);
    EXPECT_TRUE(st == OAR_STATUS_INVALID_ARGUMENT || st == OAR_STATUS_VERSION_MISMATCH) << "byte " << i << ": " << st;
  }
  // the same header with another driver version string (same length)
  const std::string version = api->version;
  std::vector<unsigned char> other = bytes;
  auto at = std::search(other.begin(), other.end(), version.begin(), version.end());
  ASSERT_NE(at, other.end());
  *at = static_cast<unsigned char>(*at == '9' ? '8' : '9');
  std::string changed(at, at + long(version.size()));
  EXPECT_EQ(deserialize(c.get(), m, other), OAR_STATUS_VERSION_MISMATCH);
  EXPECT_CONTAINS(last_error(), changed);
  EXPECT_CONTAINS(last_error(), version);

  ContextPtr bf16 = context({{"OAR_OPENVINO_PRECISION", "bf16"}});
  EXPECT_EQ(deserialize(bf16.get(), m, bytes), OAR_STATUS_VERSION_MISMATCH);
  EXPECT_CONTAINS(last_error(), "with precision 'fp32', this context has 'bf16'");
  ContextPtr npu = context({{"OAR_OPENVINO_DEVICE", "NPU"}});
  EXPECT_EQ(deserialize(npu.get(), m, bytes), OAR_STATUS_VERSION_MISMATCH);
  EXPECT_CONTAINS(last_error(), "for device 'CPU', this context has 'NPU'");

  // bytes of another model (other dims)
  CModel wider = relu_model({2, 4});
  EXPECT_EQ(deserialize(c.get(), wider, bytes), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(last_error(), "input 0");
}

TEST_F(OpenVinoDriver, AsyncExecution) {
  SmallConv conv;
  CModel m = conv.model(OAR_DTYPE_F32);
  ContextPtr c = context();
  ProgramPtr p = compile(c.get(), m);
  ASSERT_TRUE(p);
  const Floats x2 = random_floats(192, 289, -2, 2);
  std::vector<HostTensor> in1 = {HostTensor(OAR_DTYPE_F32, {1, 3, 8, 8}, conv.x)};
  std::vector<HostTensor> in2 = {HostTensor(OAR_DTYPE_F32, {1, 3, 8, 8}, x2)};
  std::vector<HostTensor> out1 = output_tensors(m), out2 = output_tensors(m);
  auto start = [&](std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
    const oar_adapter_buffer* ib[] = {in[0].buffer()};
    const oar_adapter_buffer* ob[] = {out[0].buffer()};
    oar_adapter_event_t e = nullptr;
    EXPECT_EQ(api->execute_async(p.get(), ib, 1, ob, 1, &e), OAR_STATUS_OK) << last_error();
    return e;
  };
  // two executions in flight at once, each with its own buffers
  oar_adapter_event_t e1 = start(in1, out1), e2 = start(in2, out2);
  ASSERT_NE(e1, nullptr);
  ASSERT_NE(e2, nullptr);
  EXPECT_EQ(api->event_wait(e2, -1), OAR_STATUS_OK) << last_error();
  EXPECT_EQ(api->event_wait(e1, 10000), OAR_STATUS_OK) << last_error();
  api->event_destroy(e1);
  api->event_destroy(e2);
  expect_close(out1[0].floats(), conv.want(OAR_DTYPE_F32), kTolFp32, "async 1");
  SmallConv second;
  second.x = x2;
  expect_close(out2[0].floats(), second.want(OAR_DTYPE_F32), kTolFp32, "async 2");

  // a long execution is not done after 0 ms; waiting for it then succeeds
  const Floats big = random_floats(1024 * 1024, 101);
  CModel mm;
  int ai = mm.input(OAR_DTYPE_F32, {2048, 1024});
  int bi = mm.constant(OAR_DTYPE_F32, {1024, 1024}, big.data());
  int yi = mm.output(OAR_DTYPE_F32, {2048, 1024});
  mm.operation("matmul", {ai, bi}, {yi});
  ProgramPtr slow = compile(c.get(), mm);
  ASSERT_TRUE(slow);
  HostTensor a(OAR_DTYPE_F32, {2048, 1024}, random_floats(2048 * 1024, 103));
  std::vector<HostTensor> y = output_tensors(mm);
  const oar_adapter_buffer* ib[] = {a.buffer()};
  const oar_adapter_buffer* ob[] = {y[0].buffer()};
  oar_adapter_event_t e = nullptr;
  ASSERT_EQ(api->execute_async(slow.get(), ib, 1, ob, 1, &e), OAR_STATUS_OK) << last_error();
  EXPECT_EQ(api->event_wait(e, 0), OAR_STATUS_TIMEOUT);
  EXPECT_CONTAINS(last_error(), "still running");
  EXPECT_EQ(api->event_wait(e, -1), OAR_STATUS_OK) << last_error();
  api->event_destroy(e);
  // destroying an event still in flight waits for (or cancels) it first
  ASSERT_EQ(api->execute_async(slow.get(), ib, 1, ob, 1, &e), OAR_STATUS_OK) << last_error();
  api->event_destroy(e);
}

TEST_F(OpenVinoDriver, BufferMismatchesAreInvalidArguments) {
  CModel m = relu_model();
  ContextPtr c = context();
  ProgramPtr p = compile(c.get(), m);
  ASSERT_TRUE(p);
  auto expect_refused = [&](std::vector<HostTensor> in, std::vector<HostTensor> out, const char* part) {
    EXPECT_EQ(execute(p.get(), in, out), OAR_STATUS_INVALID_ARGUMENT);
    EXPECT_CONTAINS(last_error(), part);
  };
  const HostTensor good(OAR_DTYPE_F32, {2, 3}, {1, 2, 3, 4, 5, 6});
  expect_refused({}, output_tensors(m), "0 input buffers given, the program has 1");
  expect_refused({HostTensor(OAR_DTYPE_F16, {2, 3})}, output_tensors(m), "input 0 (operand 0 ('x')): buffer has dtype f16");
  expect_refused({HostTensor(OAR_DTYPE_F32, {3, 2})}, output_tensors(m), "input 0 (operand 0 ('x')): buffer has dims [3, 2]");
  expect_refused({good}, {HostTensor(OAR_DTYPE_F32, {6})}, "output 0");
  // too few bytes, and no data
  std::vector<HostTensor> in = {good}, out = output_tensors(m);
  const oar_adapter_buffer* ob[] = {out[0].buffer()};
  oar_adapter_buffer shortened = *in[0].buffer();
  shortened.size = 20;
  const oar_adapter_buffer* ib[] = {&shortened};
  EXPECT_EQ(api->execute(p.get(), ib, 1, ob, 1), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(last_error(), "buffer has 20 bytes, its dims and dtype need 24");
  shortened.size = 24;
  shortened.data = nullptr;
  EXPECT_EQ(api->execute(p.get(), ib, 1, ob, 1), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(last_error(), "buffer data is NULL");
  // and the program still runs afterwards
  EXPECT_EQ(execute(p.get(), in, out), OAR_STATUS_OK) << last_error();
  EXPECT_EQ(out[0].floats(), (Floats{1, 2, 3, 4, 5, 6}));
}

TEST_F(OpenVinoDriver, ProgramKeepsNoPointerIntoTheModel) {
  const Floats w = random_floats(12, 119), x = random_floats(8, 15);
  CModel m;
  int xi = m.input(OAR_DTYPE_F32, {2, 4});
  int wi = m.constant(OAR_DTYPE_F32, {3, 4}, w.data());
  int yi = m.output(OAR_DTYPE_F32, {2, 3});
  m.operation("linear", {xi, wi, -1}, {yi});
  ContextPtr c = context();
  ProgramPtr p = compile(c.get(), m);
  ASSERT_TRUE(p);
  std::memset(const_cast<void*>(m.operand_at(wi).data), 0xff, 48);  // the model's weights are gone (NaN)
  std::vector<HostTensor> in = {HostTensor(OAR_DTYPE_F32, {2, 4}, x)}, out = output_tensors(m);
  ASSERT_EQ(execute(p.get(), in, out), OAR_STATUS_OK) << last_error();
  expect_close(out[0].floats(), ref::linear(x, 2, 4, w, 3, nullptr), kTolFp32, "linear after the model changed");
}

}  // namespace
