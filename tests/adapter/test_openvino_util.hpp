// Shared by test_openvino_ops.cpp and test_openvino_program.cpp: the
// OpenVINO adapter driver through its C ABI alone (a fixture that skips when
// the driver was not built), the tolerances, typed host tensors, contexts,
// programs and the models both files build.
#pragma once

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "c_model.hpp"
#include "reference_ops.hpp"

#ifndef OAR_TEST_ADAPTER_DIR
#define OAR_TEST_ADAPTER_DIR "."
#endif

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

namespace oar_test::openvino {

// ---- tolerances: max |got - want| <= tolerance * max |want| ----
// fp32: OpenVINO's f32 kernels differ from the references in summation order only.
constexpr Bound kTolFp32 = relative_to_max(1e-5);
// bf16 hint: convolution / matmul inputs rounded to 8 significant bits.
constexpr Bound kTolBf16 = relative_to_max(3e-2);
// fp16 hint: 11 significant bits where the CPU has f16 units; OpenVINO's CPU
// plugin runs the hint as bf16 where it has none, so the bf16 bound applies.
constexpr Bound kTolFp16 = relative_to_max(3e-2);
// f16 / bf16 tensors (the operands' own dtype): inputs and output rounded.
constexpr Bound kTolF16Tensor = relative_to_max(4e-3);
constexpr Bound kTolBf16Tensor = relative_to_max(3e-2);

inline const char* const kDriverPath = OAR_TEST_ADAPTER_DIR "/liboar_adapter_openvino.so";

// ---- typed host buffers ----
// bf16 by rounding f32 to its top 16 bits (to nearest even); f16 through the compiler's _Float16.
inline uint16_t to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
inline float from_bf16(uint16_t b) {
  const uint32_t x = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
template <class T>
inline void store(unsigned char* p, T v) { std::memcpy(p, &v, sizeof(T)); }
template <class T>
inline T load(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// A host tensor of any dtype, made from and read back as floats.
struct HostTensor {
  oar_dtype_t dtype = OAR_DTYPE_F32;
  Dims dims;
  std::vector<unsigned char> bytes;
  oar_adapter_buffer buf{};

  HostTensor(oar_dtype_t t, Dims d, const Floats& values = {}) : dtype(t), dims(std::move(d)) {
    bytes.assign(size_t(CModel::count(dims)) * CModel::elem_size(dtype), 0);
    for (size_t i = 0; i < values.size() && i < size_t(CModel::count(dims)); ++i) set(i, values[i]);
  }
  void set(size_t i, float v) {
    unsigned char* p = bytes.data() + i * CModel::elem_size(dtype);
    switch (dtype) {
      case OAR_DTYPE_F32: return store(p, v);
      case OAR_DTYPE_F16: return store(p, _Float16(v));
      case OAR_DTYPE_BF16: return store(p, to_bf16(v));
      case OAR_DTYPE_I32: return store(p, int32_t(v));
      case OAR_DTYPE_I64: return store(p, int64_t(v));
      case OAR_DTYPE_I8: return store(p, int8_t(v));
      case OAR_DTYPE_U8: return store(p, uint8_t(v));
      default: return;
    }
  }
  float get(size_t i) const {
    const unsigned char* p = bytes.data() + i * CModel::elem_size(dtype);
    switch (dtype) {
      case OAR_DTYPE_F32: return load<float>(p);
      case OAR_DTYPE_F16: return float(load<_Float16>(p));
      case OAR_DTYPE_BF16: return from_bf16(load<uint16_t>(p));
      case OAR_DTYPE_I32: return float(load<int32_t>(p));
      case OAR_DTYPE_I64: return float(load<int64_t>(p));
      case OAR_DTYPE_I8: return float(load<int8_t>(p));
      case OAR_DTYPE_U8: return float(load<uint8_t>(p));
      default: return 0;
    }
  }
  Floats floats() const {
    Floats out(size_t(CModel::count(dims)));
    for (size_t i = 0; i < out.size(); ++i) out[i] = get(i);
    return out;
  }
  const oar_adapter_buffer* buffer() {
    buf = {sizeof(oar_adapter_buffer), bytes.data(), bytes.size(), dtype, uint32_t(dims.size()), dims.data()};
    return &buf;
  }
};

inline Floats rounded(const Floats& v, oar_dtype_t t) {
  HostTensor h(t, {int64_t(v.size())}, v);
  return h.floats();
}

// ---- the driver, contexts, programs ----
inline bool file_exists(const char* path) {
  struct stat st;
  return ::stat(path, &st) == 0;
}

using Options = std::map<std::string, std::string>;

class OpenVinoDriver : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!file_exists(kDriverPath))
      GTEST_SKIP() << kDriverPath << " is absent: the openvino driver was not built (OpenVINO not found; "
                   << "scripts/install_openvino.sh installs it)";
    static std::string error;
    static const oar_adapter_driver_api* loaded = load_driver_for_test(kDriverPath, &error);
    ASSERT_NE(loaded, nullptr) << "loading " << kDriverPath << ": " << error;
    api = loaded;
  }

  using ContextPtr = std::unique_ptr<oar_adapter_context_s, std::function<void(oar_adapter_context_t)>>;
  using ProgramPtr = std::unique_ptr<oar_adapter_program_s, std::function<void(oar_adapter_program_t)>>;

  oar_status_t make_context(const Options& overrides, ContextPtr* out) {
    Options values = {{"OAR_OPENVINO_DEVICE", "CPU"}, {"OAR_OPENVINO_PRECISION", "fp32"},
                      {"OAR_OPENVINO_NUM_THREADS", "0"}, {"OAR_OPENVINO_HINT", "latency"}};
    for (const auto& [k, v] : overrides) values[k] = v;
    std::vector<oar_adapter_option> opts;
    for (const auto& [k, v] : values) opts.push_back({sizeof(oar_adapter_option), k.c_str(), v.c_str()});
    std::vector<const oar_adapter_option*> ptrs;
    for (auto& o : opts) ptrs.push_back(&o);
    oar_adapter_context_t c = nullptr;
    oar_status_t st = api->context_create(ptrs.data(), uint32_t(ptrs.size()), &c);
    *out = ContextPtr(c, api->context_destroy);
    return st;
  }
  ContextPtr context(const Options& overrides = {}) {
    ContextPtr c;
    EXPECT_EQ(make_context(overrides, &c), OAR_STATUS_OK) << last_error();
    return c;
  }
  ProgramPtr compile(oar_adapter_context_t c, CModel& m, oar_status_t expect = OAR_STATUS_OK) {
    oar_adapter_program_t p = nullptr;
    EXPECT_EQ(api->compile(c, m.model(), &p), expect) << last_error();
    return ProgramPtr(p, api->program_destroy);
  }
  std::vector<HostTensor> output_tensors(CModel& m) {
    const oar_adapter_model* model = m.model();
    std::vector<HostTensor> outs;
    for (uint32_t i = 0; i < model->output_count; ++i) {
      const oar_adapter_operand* o = model->operands[model->outputs[i]];
      Dims d;
      for (uint32_t k = 0; k < o->rank; ++k) d.push_back(o->dims[k].size);
      outs.emplace_back(o->dtype, d);
    }
    return outs;
  }
  oar_status_t execute(oar_adapter_program_t p, std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
    std::vector<const oar_adapter_buffer*> ib, ob;
    for (auto& t : in) ib.push_back(t.buffer());
    for (auto& t : out) ob.push_back(t.buffer());
    return api->execute(p, ib.data(), uint32_t(ib.size()), ob.data(), uint32_t(ob.size()));
  }
  // Compiles m with these options, runs it once, returns output 0 as floats.
  Floats run(CModel& m, std::vector<HostTensor> inputs, const Options& options = {}) {
    ContextPtr c = context(options);
    if (!c) return {};
    ProgramPtr p = compile(c.get(), m);
    if (!p) return {};
    std::vector<HostTensor> outs = output_tensors(m);
    EXPECT_EQ(execute(p.get(), inputs, outs), OAR_STATUS_OK) << last_error();
    return outs.empty() ? Floats{} : outs[0].floats();
  }
  // query_operation's answer for operation `index`: "" when supported, else the reason.
  std::string query(CModel& m, uint32_t index, oar_status_t expect = OAR_STATUS_OK) {
    ContextPtr c = context();
    int32_t supported = -1;
    char reason[512] = "unset";
    EXPECT_EQ(api->query_operation(c.get(), m.model(), index, &supported, reason, sizeof(reason)), expect)
        << last_error();
    if (expect != OAR_STATUS_OK) return "error";
    EXPECT_EQ(supported == 1, reason[0] == '\0') << reason;
    return supported == 1 ? "" : reason;
  }

  const oar_adapter_driver_api* api = nullptr;
};

// A model of one operation on one input: x [in] -> op -> y [out].
inline CModel one_op(const char* type, oar_dtype_t dtype, const Dims& in, const Dims& out,
                     std::vector<CModel::Attr> attrs = {}, oar_adapter_layout_t layout = OAR_ADAPTER_LAYOUT_PLAIN) {
  CModel m;
  int xi = m.input(dtype, in, layout, "x");
  int yi = m.output(dtype, out, layout);
  m.operation(type, {xi}, {yi}, std::move(attrs));
  return m;
}

// relu on [2, 3]: the smallest program, for the tests of the machinery.
inline CModel relu_model(const Dims& d = {2, 3}) { return one_op("relu", OAR_DTYPE_F32, d, d); }

// conv2d [1, 3, 8, 8] x [4, 3, 3, 3] + bias, padding 1, in `dtype` tensors.
struct SmallConv {
  Floats x = random_floats(192, 199), w = random_floats(108, 151), b = random_floats(4, 51);
  CModel model(oar_dtype_t dtype) {
    HostTensor wt(dtype, {4, 3, 3, 3}, w), bt(dtype, {4}, b);
    CModel m;
    int xi = m.input(dtype, {1, 3, 8, 8}, OAR_ADAPTER_LAYOUT_NCHW);
    int wi = m.constant(dtype, {4, 3, 3, 3}, wt.bytes.data(), OAR_ADAPTER_LAYOUT_OIHW);
    int bi = m.constant(dtype, {4}, bt.bytes.data());
    int yi = m.output(dtype, {1, 4, 8, 8}, OAR_ADAPTER_LAYOUT_NCHW);
    m.operation("conv2d", {xi, wi, bi}, {yi},
                {CModel::ints("stride", {1, 1}), CModel::ints("padding", {1, 1}), CModel::ints("dilation", {1, 1}),
                 CModel::integer("groups", 1)});
    return m;
  }
  // The reference on the values the tensors of `dtype` actually hold.
  Floats want(oar_dtype_t dtype) {
    const Floats xr = rounded(x, dtype), wr = rounded(w, dtype), br = rounded(b, dtype);
    return ref::conv2d(xr, {1, 3, 8, 8}, wr, {4, 3, 3, 3}, &br, {1, 1}, {1, 1}, {1, 1}, 1);
  }
};

}  // namespace oar_test::openvino
