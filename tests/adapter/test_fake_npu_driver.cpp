// fake_npu through its C ABI alone (dlopen, host table from driver_host.cpp):
// every op against an independent NCHW reference at each precision, the
// support reasons and options, quantized operands, the program cache format
// (round trip, garbage, another driver version), async execution and the
// checks on the caller's buffers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "c_model.hpp"

#ifndef OAR_TEST_ADAPTER_DIR
#error "OAR_TEST_ADAPTER_DIR must name the directory of liboar_adapter_fake_npu.so"
#endif
#ifndef OAR_TEST_ADAPTER_V2_DIR
#error "OAR_TEST_ADAPTER_V2_DIR must name the directory of the 1.0.1 build of fake_npu"
#endif

namespace {

using oar_test::CModel;
using Dims = std::vector<int64_t>;
using Floats = std::vector<float>;

// ---- how close each precision must come to the double-precision reference ----
// bound per element = of_element * |ref| + of_output * S, where S is max|ref|
// (fp32, fp16) or the reference's range max - min (int8).
struct Tolerance {
  const char* precision;
  double of_element;
  double of_output;
  bool of_range;
};
constexpr Tolerance kTolerances[] = {
    {"fp32", 1e-5, 1e-6, false},  // f32 accumulation against a double reference
    {"fp16", 0.0, 2e-3, false},   // every stored tensor rounded to half (2^-11 relative each)
    {"int8", 0.0, 2e-2, true},    // 8-bit products: ~1/254 of each operand's range per term
};

const Tolerance& tolerance(const std::string& precision) {
  for (const Tolerance& t : kTolerances)
    if (precision == t.precision) return t;
  throw std::runtime_error("no tolerance for " + precision);
}

void expect_close(const Floats& got, const Floats& ref, const Tolerance& t, const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  double maxabs = 0, lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (float r : ref) maxabs = std::max(maxabs, std::fabs(double(r))), lo = std::min(lo, double(r)), hi = std::max(hi, double(r));
  const double scale = t.of_range ? hi - lo : maxabs;
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double bound = t.of_element * std::fabs(double(ref[i])) + t.of_output * scale;
    if (!(std::fabs(double(got[i]) - double(ref[i])) <= bound) && bad++ < 5)
      ADD_FAILURE() << what << " [" << t.precision << "] element " << i << ": got " << got[i] << ", reference "
                    << ref[i] << ", allowed " << bound;
  }
}

bool differs(const Floats& a, const Floats& b) {
  for (size_t i = 0; i < a.size() && i < b.size(); ++i)
    if (a[i] != b[i]) return true;
  return false;
}

Floats random_floats(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  Floats v(static_cast<size_t>(n));
  for (float& f : v) f = dist(gen);
  return v;
}

// ---- independent NCHW references (plain loops, double accumulation) ----
Dims conv_dims(const Dims& x, const Dims& w, const Dims& stride, const Dims& pad) {
  return {x[0], w[0], (x[2] + 2 * pad[0] - w[2]) / stride[0] + 1, (x[3] + 2 * pad[1] - w[3]) / stride[1] + 1};
}

Floats ref_conv(const Floats& x, const Dims& xd, const Floats& w, const Dims& wd, const Floats* bias, const Dims& stride,
                const Dims& pad, int64_t groups, bool relu) {
  const Dims yd = conv_dims(xd, wd, stride, pad);
  Floats y(size_t(CModel::count(yd)));
  const int64_t cg = xd[1] / groups, og = wd[0] / groups;
  for (int64_t n = 0; n < yd[0]; ++n)
    for (int64_t oc = 0; oc < yd[1]; ++oc)
      for (int64_t oh = 0; oh < yd[2]; ++oh)
        for (int64_t ow = 0; ow < yd[3]; ++ow) {
          double acc = bias ? (*bias)[size_t(oc)] : 0.0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t i = 0; i < wd[2]; ++i)
              for (int64_t j = 0; j < wd[3]; ++j) {
                const int64_t ih = oh * stride[0] - pad[0] + i, iw = ow * stride[1] - pad[1] + j;
                if (ih < 0 || iw < 0 || ih >= xd[2] || iw >= xd[3]) continue;
                const int64_t ic = (oc / og) * cg + c;
                acc += double(x[size_t(((n * xd[1] + ic) * xd[2] + ih) * xd[3] + iw)]) *
                       double(w[size_t(((oc * cg + c) * wd[2] + i) * wd[3] + j)]);
              }
          y[size_t(((n * yd[1] + oc) * yd[2] + oh) * yd[3] + ow)] = float(relu && acc < 0 ? 0.0 : acc);
        }
  return y;
}

// y[r, o] = x[r, :] . w[o, :] (+ bias); `w_kn`: w is [k, n] instead (matmul).
Floats ref_gemm(const Floats& x, int64_t rows, int64_t k, const Floats& w, int64_t n, const Floats* bias, bool relu,
                bool w_kn = false) {
  Floats y(size_t(rows * n));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < n; ++o) {
      double acc = bias ? (*bias)[size_t(o)] : 0.0;
      for (int64_t i = 0; i < k; ++i)
        acc += double(x[size_t(r * k + i)]) * double(w_kn ? w[size_t(i * n + o)] : w[size_t(o * k + i)]);
      y[size_t(r * n + o)] = float(relu && acc < 0 ? 0.0 : acc);
    }
  return y;
}

// numpy broadcasting
Floats ref_add(const Floats& a, const Dims& ad, const Floats& b, const Dims& bd, const Dims& yd) {
  Floats y(size_t(CModel::count(yd)));
  auto source = [&](const Dims& d, int64_t flat) {
    int64_t index = 0, stride = 1;
    for (size_t k = 0; k < yd.size(); ++k) {
      const size_t axis = yd.size() - 1 - k;
      const int64_t coord = flat % yd[axis];
      flat /= yd[axis];
      if (k < d.size()) {
        const int64_t extent = d[d.size() - 1 - k];
        index += (extent == 1 ? 0 : coord) * stride;
        stride *= extent;
      }
    }
    return index;
  };
  for (int64_t i = 0; i < int64_t(y.size()); ++i) y[size_t(i)] = a[size_t(source(ad, i))] + b[size_t(source(bd, i))];
  return y;
}

Floats ref_pool(const Floats& x, const Dims& xd, bool max, const Dims& k, const Dims& s, const Dims& p, bool cip,
                Dims* out_dims) {
  const Dims yd = {xd[0], xd[1], (xd[2] + 2 * p[0] - k[0]) / s[0] + 1, (xd[3] + 2 * p[1] - k[1]) / s[1] + 1};
  *out_dims = yd;
  Floats y(size_t(CModel::count(yd)));
  for (int64_t nc = 0; nc < xd[0] * xd[1]; ++nc)
    for (int64_t oh = 0; oh < yd[2]; ++oh)
      for (int64_t ow = 0; ow < yd[3]; ++ow) {
        double acc = max ? -INFINITY : 0.0;
        int64_t real = 0, padded = 0;
        for (int64_t i = 0; i < k[0]; ++i)
          for (int64_t j = 0; j < k[1]; ++j) {
            const int64_t ih = oh * s[0] - p[0] + i, iw = ow * s[1] - p[1] + j;
            if (ih < xd[2] + p[0] && iw < xd[3] + p[1]) ++padded;  // inside the padded input
            if (ih < 0 || iw < 0 || ih >= xd[2] || iw >= xd[3]) continue;
            ++real;
            const double v = x[size_t((nc * xd[2] + ih) * xd[3] + iw)];
            acc = max ? std::max(acc, v) : acc + v;
          }
        y[size_t((nc * yd[2] + oh) * yd[3] + ow)] = float(max ? acc : acc / double(cip ? padded : real));
      }
  return y;
}

Floats ref_softmax(const Floats& x, int64_t rows, int64_t cols) {
  Floats y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double m = -INFINITY, sum = 0;
    for (int64_t i = 0; i < cols; ++i) m = std::max(m, double(x[size_t(r * cols + i)]));
    for (int64_t i = 0; i < cols; ++i) sum += std::exp(double(x[size_t(r * cols + i)]) - m);
    for (int64_t i = 0; i < cols; ++i) y[size_t(r * cols + i)] = float(std::exp(double(x[size_t(r * cols + i)]) - m) / sum);
  }
  return y;
}

// ---- the driver through its table ----
const oar_adapter_driver_api* load(const std::string& path) {
  std::string error;
  const oar_adapter_driver_api* api = oar_test::load_driver_for_test(path, &error);
  if (api == nullptr) ADD_FAILURE() << "cannot load " << path << ": " << error;
  return api;
}
const oar_adapter_driver_api* npu() {
  static const oar_adapter_driver_api* api = load(OAR_TEST_ADAPTER_DIR "/liboar_adapter_fake_npu.so");
  return api;
}
const oar_adapter_driver_api* npu_v2() {
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
oar_status_t create_context(const oar_adapter_driver_api* api, const Options& overrides, Context& out) {
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

Buffer f32_buffer(const Floats& v, const Dims& dims) {
  Buffer b(OAR_DTYPE_F32, dims);
  std::memcpy(b.bytes.data(), v.data(), b.bytes.size());
  return b;
}

Dims operand_dims(const oar_adapter_model* m, int32_t index) {
  Dims d;
  for (uint32_t k = 0; k < m->operands[index]->rank; ++k) d.push_back(m->operands[index]->dims[k].size);
  return d;
}

oar_status_t execute(const Program& p, std::vector<Buffer>& inputs, std::vector<Buffer>& outputs) {
  std::vector<const oar_adapter_buffer*> in, out;
  for (Buffer& b : inputs) in.push_back(b.get());
  for (Buffer& b : outputs) out.push_back(b.get());
  return p.api->execute(p.handle, in.data(), uint32_t(in.size()), out.data(), uint32_t(out.size()));
}

// f32 buffers for a model's inputs (from `values`) and outputs.
void model_buffers(const oar_adapter_model* m, const std::vector<Floats>& values, std::vector<Buffer>& in,
                   std::vector<Buffer>& out) {
  for (uint32_t i = 0; i < m->input_count; ++i) in.push_back(f32_buffer(values.at(i), operand_dims(m, m->inputs[i])));
  for (uint32_t i = 0; i < m->output_count; ++i) out.emplace_back(OAR_DTYPE_F32, operand_dims(m, m->outputs[i]));
}

// Compiles `m` at `precision` and runs it on f32 inputs.
std::vector<Floats> compile_and_run(CModel& m, const std::string& precision, const std::vector<Floats>& inputs) {
  Context ctx;
  EXPECT_EQ(create_context(npu(), {{"OAR_FAKE_NPU_PRECISION", precision}}, ctx), OAR_STATUS_OK) << oar_test::last_error();
  Program p;
  p.api = npu();
  const oar_adapter_model* model = m.model();
  EXPECT_EQ(npu()->compile(ctx.handle, model, &p.handle), OAR_STATUS_OK) << oar_test::last_error();
  if (p.handle == nullptr) return {};
  std::vector<Buffer> in, out;
  model_buffers(model, inputs, in, out);
  EXPECT_EQ(execute(p, in, out), OAR_STATUS_OK) << oar_test::last_error();
  std::vector<Floats> result;
  for (const Buffer& b : out) result.push_back(b.floats());
  return result;
}


// ---- per-op cases: a model with one operation, its inputs and the reference of its output ----
struct Built {
  CModel m;
  std::vector<Floats> inputs;
  Floats ref;
};
using Build = std::function<void(Built&)>;
struct OpCase {
  std::string name;
  Build build;
};

constexpr oar_adapter_layout_t kNCHW = OAR_ADAPTER_LAYOUT_NCHW;

Build conv_case(const char* type, Dims xd, Dims wd, bool with_bias, Dims stride, Dims pad, int64_t groups) {
  return [=](Built& c) {
    const Floats x = random_floats(CModel::count(xd), 1), w = random_floats(CModel::count(wd), 2, -0.5f, 0.5f);
    const Floats b = random_floats(wd[0], 3);
    const int xi = c.m.input(OAR_DTYPE_F32, xd, kNCHW, "x");
    const int wi = c.m.constant(OAR_DTYPE_F32, wd, w.data(), OAR_ADAPTER_LAYOUT_OIHW);
    const int bi = with_bias ? c.m.constant(OAR_DTYPE_F32, {wd[0]}, b.data()) : -1;
    const int yi = c.m.output(OAR_DTYPE_F32, conv_dims(xd, wd, stride, pad), kNCHW, "y");
    const bool act = std::string(type) == "conv2d_act";
    std::vector<CModel::Attr> attrs = {CModel::ints("stride", stride), CModel::ints("padding", pad),
                                       CModel::ints("dilation", {1, 1}), CModel::integer("groups", groups)};
    if (act) attrs.push_back(CModel::string("activation", "relu"));
    c.m.operation(type, {xi, wi, bi}, {yi}, attrs, "conv");
    c.inputs = {x};
    c.ref = ref_conv(x, xd, w, wd, with_bias ? &b : nullptr, stride, pad, groups, act);
  };
}

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
    c.ref = ref_gemm(x, rows, in, w, out, with_bias ? &b : nullptr, act);
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
    c.ref = ref_gemm(a, 3, 6, b, 5, nullptr, false, true);
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
    c.ref = ref_add(b, bd, a, ad, ad);
  };
}

Build relu_case(Dims xd) {
  return [=](Built& c) {
    const Floats x = random_floats(CModel::count(xd), 11);
    const int xi = c.m.input(OAR_DTYPE_F32, xd, xd.size() == 4 ? kNCHW : OAR_ADAPTER_LAYOUT_PLAIN);
    const int yi = c.m.output(OAR_DTYPE_F32, xd, xd.size() == 4 ? kNCHW : OAR_ADAPTER_LAYOUT_PLAIN);
    c.m.operation("relu", {xi}, {yi});
    c.inputs = {x};
    c.ref = x;
    for (float& v : c.ref) v = std::max(v, 0.0f);
  };
}

// stride {} means the catalog's [] (= kernel_size).
Build pool_case(bool max, Dims xd, Dims k, Dims stride, Dims pad, bool cip = true) {
  return [=](Built& c) {
    const Floats x = random_floats(CModel::count(xd), 12);
    Dims yd;
    c.ref = ref_pool(x, xd, max, k, stride.empty() ? k : stride, pad, cip, &yd);
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
    c.ref = ref_softmax(x, 4, 7);
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
    EXPECT_NE(oar_test::last_error().find(words), std::string::npos) << oar_test::last_error();
  }
  Context ok;
  EXPECT_EQ(create_context(npu(), {{"OAR_FAKE_NPU_PRECISION", "INT8"}}, ok), OAR_STATUS_OK) << oar_test::last_error();
}

// ---- support ----
struct Answer {
  oar_status_t status;
  int32_t supported;
  std::string reason;
};

Answer query(const Context& ctx, const oar_adapter_model* m, uint32_t index) {
  Answer a{OAR_STATUS_OK, -1, ""};
  char reason[512] = "untouched";
  a.status = ctx.api->query_operation(ctx.handle, m, index, &a.supported, reason, sizeof(reason));
  a.reason = reason;
  return a;
}

struct Unsupported {
  const char* name;
  std::function<void(CModel&)> build;
  const char* reason;  // a part of the expected reason
};

void relu_model(CModel& m, oar_dtype_t dtype, Dims dims) {
  const int x = m.input(dtype, dims, OAR_ADAPTER_LAYOUT_PLAIN, "x");
  const int y = m.output(dtype, dims);
  m.operation("relu", {x}, {y});
}

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
    ASSERT_EQ(a.status, OAR_STATUS_OK) << oar_test::last_error();
    EXPECT_EQ(a.supported, 0);
    EXPECT_NE(a.reason.find(c.reason), std::string::npos) << a.reason;
    Program p;
    p.api = npu();
    EXPECT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), OAR_STATUS_UNSUPPORTED);
    EXPECT_EQ(p.handle, nullptr);
    EXPECT_NE(oar_test::last_error().find("operation 0"), std::string::npos) << oar_test::last_error();
    EXPECT_NE(oar_test::last_error().find(c.reason), std::string::npos) << oar_test::last_error();
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
  EXPECT_NE(oar_test::last_error().find("operation 1"), std::string::npos) << oar_test::last_error();
}

// conv -> relu -> max_pool -> conv, the reference of its output, and its input.
void two_layer_model(CModel& m, Floats& input, Floats& ref) {
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
  Floats r1 = ref_conv(input, xd, w1, w1d, &b1, {1, 1}, {1, 1}, 1, true);
  Dims pd;
  Floats r3 = ref_pool(r1, {1, 6, 10, 10}, true, {2, 2}, {2, 2}, {0, 0}, true, &pd);
  ref = ref_conv(r3, pd, w2, w2d, &b2, {1, 1}, {0, 0}, 1, false);
}

TEST(FakeNpuDriver, FailCompileAndMaxOperationsSimulateSdkLimits) {
  ASSERT_NE(npu(), nullptr);
  CModel m;
  Floats input, ref;
  two_layer_model(m, input, ref);
  {
    Context ctx;
    ASSERT_EQ(create_context(npu(), {{"OAR_FAKE_NPU_FAIL_COMPILE", "softmax, conv2d"}}, ctx), OAR_STATUS_OK);
    const Answer a = query(ctx, m.model(), 0);  // every operation is still supported
    EXPECT_EQ(a.supported, 1);
    EXPECT_EQ(a.reason, "");
    Program p;
    p.api = npu();
    EXPECT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), OAR_STATUS_UNSUPPORTED);
    EXPECT_NE(oar_test::last_error().find(
                  "fake_npu: compile refused: the model contains conv2d (OAR_FAKE_NPU_FAIL_COMPILE)"),
              std::string::npos)
        << oar_test::last_error();
  }
  {
    Context ctx;
    ASSERT_EQ(create_context(npu(), {{"OAR_FAKE_NPU_FAIL_COMPILE", "softmax"}}, ctx), OAR_STATUS_OK);
    Program p;
    p.api = npu();
    EXPECT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), OAR_STATUS_OK) << oar_test::last_error();
  }
  for (const auto& [limit, status] : std::vector<std::pair<std::string, oar_status_t>>{
           {"3", OAR_STATUS_UNSUPPORTED}, {"4", OAR_STATUS_OK}, {"0", OAR_STATUS_OK}}) {
    Context ctx;
    ASSERT_EQ(create_context(npu(), {{"OAR_FAKE_NPU_MAX_OPERATIONS", limit}}, ctx), OAR_STATUS_OK);
    Program p;
    p.api = npu();
    EXPECT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), status) << limit << ": " << oar_test::last_error();
    if (status != OAR_STATUS_OK) {
      EXPECT_NE(oar_test::last_error().find("OAR_FAKE_NPU_MAX_OPERATIONS"), std::string::npos) << oar_test::last_error();
    }
  }
}

TEST(FakeNpuDriver, TwoLayerModelEndToEnd) {
  ASSERT_NE(npu(), nullptr);
  for (const Tolerance& t : kTolerances) {
    CModel m;
    Floats input, ref;
    two_layer_model(m, input, ref);
    const std::vector<Floats> out = compile_and_run(m, t.precision, {input});
    ASSERT_EQ(out.size(), 1u);
    expect_close(out[0], ref, t, "two-layer model");
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
  Floats real_x(qx.size()), real_w(qw.size());
  for (size_t i = 0; i < qx.size(); ++i) real_x[i] = sx * float(qx[i]);
  for (size_t i = 0; i < qw.size(); ++i) real_w[i] = sw[i / 18] * float(qw[i]);
  const Floats ref = ref_conv(real_x, xd, real_w, wd, &b, {1, 1}, {0, 0}, 1, false);
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
    ASSERT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), OAR_STATUS_OK) << oar_test::last_error();
    std::vector<Buffer> in, out;
    in.emplace_back(OAR_DTYPE_I8, xd);
    std::memcpy(in[0].bytes.data(), qx.data(), qx.size());
    out.emplace_back(OAR_DTYPE_F32, Dims{1, 3, 3, 3});
    ASSERT_EQ(execute(p, in, out), OAR_STATUS_OK) << oar_test::last_error();
    const Tolerance tight = {t.precision, 1e-5, 1e-6, false};
    expect_close(out[0].floats(), std::string(t.precision) == "int8" ? exact : ref,
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
  Floats real_w(qw.size());
  for (size_t i = 0; i < qw.size(); ++i) real_w[i] = sw[i / 6] * float(qw[i]);
  const Floats ref = ref_gemm(x, 3, 6, real_w, 4, nullptr, false);
  for (const Tolerance& t : kTolerances) expect_close(compile_and_run(m, t.precision, {x}).at(0), ref, t, "i8 linear");
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
    ASSERT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), OAR_STATUS_OK) << oar_test::last_error();
    std::vector<Buffer> in, out;
    in.emplace_back(dtype, Dims{2, 5});
    for (size_t i = 0; i < 10; ++i) in[0].bytes[i] = static_cast<unsigned char>(zp + int(i) * 7 - 30);
    out.emplace_back(OAR_DTYPE_F32, Dims{2, 5});
    ASSERT_EQ(execute(p, in, out), OAR_STATUS_OK) << oar_test::last_error();
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
    ASSERT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), OAR_STATUS_OK) << oar_test::last_error();
    std::vector<Buffer> in, out;
    in.emplace_back(OAR_DTYPE_F16, Dims{6});
    std::memcpy(in[0].bytes.data(), bits, sizeof(bits));
    out.emplace_back(OAR_DTYPE_F16, Dims{6});
    ASSERT_EQ(execute(p, in, out), OAR_STATUS_OK) << oar_test::last_error();
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
    ASSERT_EQ(npu()->compile(ctx.handle, m.model(), &p.handle), OAR_STATUS_OK) << oar_test::last_error();
    std::vector<Buffer> in, out;
    in.push_back(f32_buffer(values, {4}));
    out.emplace_back(OAR_DTYPE_I8, Dims{4});
    ASSERT_EQ(execute(p, in, out), OAR_STATUS_OK) << oar_test::last_error();
    const int8_t want[4] = {2, 0, 127, 2};
    EXPECT_EQ(std::memcmp(out[0].bytes.data(), want, 4), 0);
  }
}

// ---- the program cache ----
std::vector<unsigned char> serialize(const Program& p) {
  uint64_t size = 0;
  EXPECT_EQ(p.api->serialize(p.handle, nullptr, 0, &size), OAR_STATUS_OK) << oar_test::last_error();
  std::vector<unsigned char> bytes(static_cast<size_t>(size));
  uint64_t written = 0;
  EXPECT_EQ(p.api->serialize(p.handle, bytes.data(), bytes.size(), &written), OAR_STATUS_OK) << oar_test::last_error();
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
  ASSERT_EQ(api->compile(c.ctx.handle, c.m.model(), &c.p.handle), OAR_STATUS_OK) << oar_test::last_error();
}

std::vector<unsigned char> run_bytes(const Program& p, const oar_adapter_model* m, const Floats& input) {
  std::vector<Buffer> in, out;
  model_buffers(m, {input}, in, out);
  EXPECT_EQ(execute(p, in, out), OAR_STATUS_OK) << oar_test::last_error();
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
        << oar_test::last_error();
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
    EXPECT_FALSE(oar_test::last_error().empty());
  }
  // Another magic.
  std::vector<unsigned char> other = bytes;
  other[0] ^= 0xff;
  EXPECT_EQ(deserialize(c, other, other.size()), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(oar_test::last_error().find("not a fake_npu program"), std::string::npos) << oar_test::last_error();
  // A modified byte in the middle.
  other = bytes;
  other[other.size() / 2] ^= 0x10;
  EXPECT_EQ(deserialize(c, other, other.size()), OAR_STATUS_INVALID_ARGUMENT);
  // A program from the 1.0.1 build of the same driver, and the other way round.
  Compiled c2;
  compile_two_layer(npu_v2(), "fp32", c2);
  const std::vector<unsigned char> bytes2 = serialize(c2.p);
  EXPECT_EQ(deserialize(c, bytes2, bytes2.size()), OAR_STATUS_VERSION_MISMATCH);
  EXPECT_NE(oar_test::last_error().find("program was compiled by fake_npu 1.0.1, this is 1.0.0"), std::string::npos)
      << oar_test::last_error();
  EXPECT_EQ(deserialize(c2, bytes, bytes.size(), npu_v2()), OAR_STATUS_VERSION_MISMATCH);
  EXPECT_NE(oar_test::last_error().find("program was compiled by fake_npu 1.0.0, this is 1.0.1"), std::string::npos)
      << oar_test::last_error();
  // Another precision.
  Context int8;
  ASSERT_EQ(create_context(npu(), {{"OAR_FAKE_NPU_PRECISION", "int8"}}, int8), OAR_STATUS_OK);
  EXPECT_EQ(deserialize(c, bytes, bytes.size(), npu(), &int8), OAR_STATUS_VERSION_MISMATCH);
  EXPECT_NE(oar_test::last_error().find("precision fp32"), std::string::npos) << oar_test::last_error();
  // Another model (its input has other dims).
  CModel relu;
  relu_model(relu, OAR_DTYPE_F32, {2, 3});
  EXPECT_EQ(deserialize(c, bytes, bytes.size(), npu(), nullptr, relu.model()), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(oar_test::last_error().find("another model"), std::string::npos) << oar_test::last_error();
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
        << s << " " << oar_test::last_error();
    if (s != OAR_STATUS_OK) continue;
    ++accepted;  // e.g. a changed weight: it must still run
    std::vector<Buffer> in, out;
    model_buffers(c.m.model(), {c.input}, in, out);
    EXPECT_EQ(execute(p, in, out), OAR_STATUS_OK) << oar_test::last_error();
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
  ASSERT_EQ(npu()->compile(ctx.handle, b.m.model(), &p.handle), OAR_STATUS_OK) << oar_test::last_error();
  std::vector<Buffer> in, out, sync_out;
  model_buffers(b.m.model(), b.inputs, in, out);
  model_buffers(b.m.model(), b.inputs, in, sync_out);
  in.erase(in.begin() + 1, in.end());
  ASSERT_EQ(execute(p, in, sync_out), OAR_STATUS_OK);
  const oar_adapter_buffer* inputs[] = {in[0].get()};
  const oar_adapter_buffer* outputs[] = {out[0].get()};
  oar_adapter_event_t event = nullptr;
  ASSERT_EQ(npu()->execute_async(p.handle, inputs, 1, outputs, 1, &event), OAR_STATUS_OK) << oar_test::last_error();
  ASSERT_NE(event, nullptr);
  const oar_status_t first = npu()->event_wait(event, 0);
  EXPECT_TRUE(first == OAR_STATUS_OK || first == OAR_STATUS_TIMEOUT) << first;
  if (first == OAR_STATUS_TIMEOUT) {
    EXPECT_NE(oar_test::last_error().find("still running"), std::string::npos);
  }
  EXPECT_EQ(npu()->event_wait(event, -1), OAR_STATUS_OK) << oar_test::last_error();
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
    EXPECT_NE(oar_test::last_error().find(c.words), std::string::npos) << c.name << ": " << oar_test::last_error();
  }
  std::vector<Buffer> in, out;
  model_buffers(m.model(), {Floats(6, 1.0f)}, in, out);
  const oar_adapter_buffer* null_input[] = {nullptr};
  const oar_adapter_buffer* outputs[] = {out[0].get()};
  EXPECT_EQ(npu()->execute(p.handle, null_input, 1, outputs, 1), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(oar_test::last_error().find("NULL buffer"), std::string::npos) << oar_test::last_error();
  oar_adapter_buffer no_data = *in[0].get();
  no_data.data = nullptr;
  const oar_adapter_buffer* inputs[] = {&no_data};
  EXPECT_EQ(npu()->execute(p.handle, inputs, 1, outputs, 1), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(oar_test::last_error().find("data is NULL"), std::string::npos) << oar_test::last_error();
  // A larger buffer than needed is fine (allocators round up).
  in[0].bytes.resize(64);
  EXPECT_EQ(execute(p, in, out), OAR_STATUS_OK) << oar_test::last_error();
}

}  // namespace
