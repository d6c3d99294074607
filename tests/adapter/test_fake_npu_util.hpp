// Shared by test_fake_npu_ops.cpp and test_fake_npu_program.cpp: the
// fake_npu driver loaded through its C ABI alone (dlopen, host table from
// driver_host.cpp), its tolerance per precision, contexts, programs, host
// buffers, and the models both files build.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "c_model.hpp"
#include "reference_ops.hpp"

#ifndef OAR_TEST_ADAPTER_DIR
#error "OAR_TEST_ADAPTER_DIR must name the directory of liboar_adapter_fake_npu.so"
#endif
#ifndef OAR_TEST_ADAPTER_V2_DIR
#error "OAR_TEST_ADAPTER_V2_DIR must name the directory of the 1.0.1 build of fake_npu"
#endif

namespace oar_test::fake_npu {

// ---- how close each precision must come to the double-precision reference ----
// bound per element = of_element * |ref| + of_output * S, where S is max|ref|
// (fp32, fp16) or the reference's range max - min (int8).
struct Tolerance {
  const char* precision;
  Bound bound;
};
inline constexpr Tolerance kTolerances[] = {
    {"fp32", {1e-5, 1e-6, false}},  // f32 accumulation against a double reference
    {"fp16", {0.0, 2e-3, false}},   // every stored tensor rounded to half (2^-11 relative each)
    {"int8", {0.0, 2e-2, true}},    // 8-bit products: ~1/254 of each operand's range per term
};

inline const Tolerance& tolerance(const std::string& precision) {
  for (const Tolerance& t : kTolerances)
    if (precision == t.precision) return t;
  throw std::runtime_error("no tolerance for " + precision);
}

inline void expect_close(const Floats& got, const Floats& ref, const Tolerance& t, const std::string& what) {
  oar_test::expect_close(got, ref, t.bound, what + " [" + t.precision + "]");
}

constexpr oar_adapter_layout_t kNCHW = OAR_ADAPTER_LAYOUT_NCHW;

// ---- the driver through its table ----
inline const oar_adapter_driver_api* load(const std::string& path) {
  std::string error;
  const oar_adapter_driver_api* api = load_driver_for_test(path, &error);
  if (api == nullptr) ADD_FAILURE() << "cannot load " << path << ": " << error;
  return api;
}
inline const oar_adapter_driver_api* npu() {
  static const oar_adapter_driver_api* api = load(OAR_TEST_ADAPTER_DIR "/liboar_adapter_fake_npu.so");
  return api;
}
inline const oar_adapter_driver_api* npu_v2() {
  static const oar_adapter_driver_api* api = load(OAR_TEST_ADAPTER_V2_DIR "/liboar_adapter_fake_npu.so");
  return api;
}

using Options = std::vector<std::pair<std::string, std::string>>;

struct Context {
  const oar_adapter_driver_api* api = nullptr;
  oar_adapter_context_t handle = nullptr;
  Context() = default;
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  ~Context() {
    if (handle != nullptr) api->context_destroy(handle);
  }
};

// Every declared option with its default (as the core does), then `overrides`.
inline oar_status_t create_context(const oar_adapter_driver_api* api, const Options& overrides, Context& out) {
  Options values;
  for (uint64_t i = 0; i < api->option_count; ++i) values.emplace_back(api->options[i]->name, api->options[i]->default_value);
  for (const auto& [name, value] : overrides) {
    bool found = false;
    for (auto& v : values)
      if (v.first == name) v.second = value, found = true;
    if (!found) values.emplace_back(name, value);
  }
  std::vector<oar_adapter_option> options;
  for (const auto& [name, value] : values) options.push_back({sizeof(oar_adapter_option), name.c_str(), value.c_str()});
  std::vector<const oar_adapter_option*> pointers;
  for (const auto& o : options) pointers.push_back(&o);
  out.api = api;
  return api->context_create(pointers.data(), uint32_t(pointers.size()), &out.handle);
}

struct Program {
  const oar_adapter_driver_api* api = nullptr;
  oar_adapter_program_t handle = nullptr;
  Program() = default;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program() {
    if (handle != nullptr) api->program_destroy(handle);
  }
};

struct Buffer {
  std::vector<unsigned char> bytes;
  Dims dims;
  oar_adapter_buffer c{};
  Buffer(oar_dtype_t dtype, Dims d) : dims(std::move(d)) {
    bytes.resize(size_t(CModel::count(dims)) * CModel::elem_size(dtype));
    c.struct_size = sizeof(c);
    c.dtype = dtype;
  }
  const oar_adapter_buffer* get() {
    c.data = bytes.data();
    c.size = bytes.size();
    c.rank = uint32_t(dims.size());
    c.dims = dims.data();
    return &c;
  }
  Floats floats() const {
    Floats v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), v.size() * 4);
    return v;
  }
};

inline Buffer f32_buffer(const Floats& v, const Dims& dims) {
  Buffer b(OAR_DTYPE_F32, dims);
  std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
  return b;
}

inline Dims operand_dims(const oar_adapter_model* m, int32_t index) {
  Dims d;
  for (uint32_t k = 0; k < m->operands[index]->rank; ++k) d.push_back(m->operands[index]->dims[k].size);
  return d;
}

inline oar_status_t execute(const Program& p, std::vector<Buffer>& inputs, std::vector<Buffer>& outputs) {
  std::vector<const oar_adapter_buffer*> in, out;
  for (Buffer& b : inputs) in.push_back(b.get());
  for (Buffer& b : outputs) out.push_back(b.get());
  return p.api->execute(p.handle, in.data(), uint32_t(in.size()), out.data(), uint32_t(out.size()));
}

// f32 buffers for a model's inputs (from `values`) and outputs.
inline void model_buffers(const oar_adapter_model* m, const std::vector<Floats>& values, std::vector<Buffer>& in,
                          std::vector<Buffer>& out) {
  for (uint32_t i = 0; i < m->input_count; ++i) in.push_back(f32_buffer(values.at(i), operand_dims(m, m->inputs[i])));
  for (uint32_t i = 0; i < m->output_count; ++i) out.emplace_back(OAR_DTYPE_F32, operand_dims(m, m->outputs[i]));
}

// Compiles `m` at `precision` and runs it on f32 inputs.
inline std::vector<Floats> compile_and_run(CModel& m, const std::string& precision, const std::vector<Floats>& inputs) {
  Context ctx;
  EXPECT_EQ(create_context(npu(), {{"OAR_FAKE_NPU_PRECISION", precision}}, ctx), OAR_STATUS_OK) << last_error();
  Program p;
  p.api = npu();
  const oar_adapter_model* model = m.model();
  EXPECT_EQ(npu()->compile(ctx.handle, model, &p.handle), OAR_STATUS_OK) << last_error();
  if (p.handle == nullptr) return {};
  std::vector<Buffer> in, out;
  model_buffers(model, inputs, in, out);
  EXPECT_EQ(execute(p, in, out), OAR_STATUS_OK) << last_error();
  std::vector<Floats> result;
  for (const Buffer& b : out) result.push_back(b.floats());
  return result;
}

// ---- support ----
struct Answer {
  oar_status_t status;
  int32_t supported;
  std::string reason;
};

inline Answer query(const Context& ctx, const oar_adapter_model* m, uint32_t index) {
  Answer a{OAR_STATUS_OK, -1, ""};
  char reason[512] = "untouched";
  a.status = ctx.api->query_operation(ctx.handle, m, index, &a.supported, reason, sizeof(reason));
  a.reason = reason;
  return a;
}

// ---- models ----
// x -> relu -> y in `dtype`.
inline void relu_model(CModel& m, oar_dtype_t dtype, Dims dims) {
  const int x = m.input(dtype, dims, OAR_ADAPTER_LAYOUT_PLAIN, "x");
  const int y = m.output(dtype, dims);
  m.operation("relu", {x}, {y});
}

// A model with one operation, its inputs and the reference of its output.
struct Built {
  CModel m;
  std::vector<Floats> inputs;
  Floats ref;
};
using Build = std::function<void(Built&)>;

// conv2d or conv2d_act (relu) of a random input and random constant weights.
inline Build conv_case(const char* type, Dims xd, Dims wd, bool with_bias, Dims stride, Dims pad, int64_t groups) {
  return [=](Built& c) {
    const Floats x = random_floats(CModel::count(xd), 1), w = random_floats(CModel::count(wd), 2, -0.5f, 0.5f);
    const Floats b = random_floats(wd[0], 3);
    const int xi = c.m.input(OAR_DTYPE_F32, xd, kNCHW, "x");
    const int wi = c.m.constant(OAR_DTYPE_F32, wd, w.data(), OAR_ADAPTER_LAYOUT_OIHW);
    const int bi = with_bias ? c.m.constant(OAR_DTYPE_F32, {wd[0]}, b.data()) : -1;
    const int yi = c.m.output(OAR_DTYPE_F32, ref::conv2d_dims(xd, wd, stride, pad, {1, 1}), kNCHW, "y");
    const bool act = std::string(type) == "conv2d_act";
    std::vector<CModel::Attr> attrs = {CModel::ints("stride", stride), CModel::ints("padding", pad),
                                       CModel::ints("dilation", {1, 1}), CModel::integer("groups", groups)};
    if (act) attrs.push_back(CModel::string("activation", "relu"));
    c.m.operation(type, {xi, wi, bi}, {yi}, attrs, "conv");
    c.inputs = {x};
    c.ref = ref::conv2d(x, xd, w, wd, with_bias ? &b : nullptr, stride, pad, {1, 1}, groups);
    if (act) c.ref = ref::unary(c.ref, ref::relu);
  };
}

}  // namespace oar_test::fake_npu
