// The OpenVINO adapter driver through its C ABI alone: every mapped op against
// a plain-loop reference written here, precision modes, quantized weights,
// unsupported reasons, options, the program cache format, async execution
// and buffer checks. Skips when the driver was not built (no OpenVINO).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "c_model.hpp"

#ifndef OAR_TEST_ADAPTER_DIR
#define OAR_TEST_ADAPTER_DIR "."
#endif

namespace {

using oar_test::CModel;
using Dims = std::vector<int64_t>;
using Floats = std::vector<float>;

// ---- tolerances: max |got - want| <= tolerance * max |want| ----
// fp32: OpenVINO's f32 kernels differ from the loops below in summation order only.
constexpr double kTolFp32 = 1e-5;
// bf16 hint: convolution / matmul inputs rounded to 8 significant bits.
constexpr double kTolBf16 = 3e-2;
// fp16 hint: 11 significant bits where the CPU has f16 units; OpenVINO's CPU
// plugin runs the hint as bf16 where it has none, so the bf16 bound applies.
constexpr double kTolFp16 = 3e-2;
// f16 / bf16 tensors (the operands' own dtype): inputs and output rounded.
constexpr double kTolF16Tensor = 4e-3;
constexpr double kTolBf16Tensor = 3e-2;

const char* const kDriverPath = OAR_TEST_ADAPTER_DIR "/liboar_adapter_openvino.so";

// ---- typed host buffers ----
// bf16 by rounding f32 to its top 16 bits (to nearest even); f16 through the compiler's _Float16.
uint16_t to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
float from_bf16(uint16_t b) {
  const uint32_t x = uint32_t(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
template <class T>
void store(unsigned char* p, T v) { std::memcpy(p, &v, sizeof(T)); }
template <class T>
T load(const unsigned char* p) {
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

Floats random_floats(size_t n, float lo = -1.0f, float hi = 1.0f, unsigned seed = 7) {
  std::mt19937 rng(seed + unsigned(n));
  std::uniform_real_distribution<float> dist(lo, hi);
  Floats v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

Floats rounded(const Floats& v, oar_dtype_t t) {
  HostTensor h(t, {int64_t(v.size())}, v);
  return h.floats();
}

void expect_close(const Floats& got, const Floats& want, double tolerance, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  double scale = 0, worst = 0;
  size_t at = 0;
  for (float w : want) scale = std::max(scale, double(std::fabs(w)));
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(double(got[i]) - double(want[i]));
    if (!(err <= worst)) worst = err, at = i;
  }
  EXPECT_LE(worst, tolerance * std::max(scale, 1e-30))
      << what << ": element " << at << " is " << got[at] << ", want " << want[at] << " (max |want| " << scale << ")";
}

// ---- plain-loop references (NCHW, row-major) ----
Floats conv2d_ref(const Floats& x, const Dims& xd, const Floats& w, const Dims& wd, const Floats* bias, Dims s, Dims p,
                  Dims d, int64_t groups, Dims* out_dims) {
  const int64_t N = xd[0], C = xd[1], H = xd[2], W = xd[3], O = wd[0], Cg = wd[1], KH = wd[2], KW = wd[3];
  const int64_t OH = (H + 2 * p[0] - d[0] * (KH - 1) - 1) / s[0] + 1, OW = (W + 2 * p[1] - d[1] * (KW - 1) - 1) / s[1] + 1;
  *out_dims = {N, O, OH, OW};
  Floats y(size_t(N * O * OH * OW));
  const int64_t og = O / groups;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = bias ? (*bias)[size_t(o)] : 0.0;
          const int64_t g = o / og;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t ih = oh * s[0] - p[0] + kh * d[0], iw = ow * s[1] - p[1] + kw * d[1];
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += double(x[size_t(((n * C + g * Cg + c) * H + ih) * W + iw)]) *
                       w[size_t(((o * Cg + c) * KH + kh) * KW + kw)];
              }
          y[size_t(((n * O + o) * OH + oh) * OW + ow)] = float(acc);
        }
  return y;
}

int64_t pool_size(int64_t in, int64_t k, int64_t s, int64_t p, bool ceil_mode) {
  const int64_t num = in + 2 * p - k + (ceil_mode ? s - 1 : 0);
  int64_t out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

Floats pool_ref(const Floats& x, const Dims& xd, Dims k, Dims s, Dims p, bool ceil_mode, bool is_max,
                bool count_include_pad, Dims* out_dims) {
  const int64_t planes = xd[0] * xd[1], H = xd[2], W = xd[3];
  const int64_t OH = pool_size(H, k[0], s[0], p[0], ceil_mode), OW = pool_size(W, k[1], s[1], p[1], ceil_mode);
  *out_dims = {xd[0], xd[1], OH, OW};
  Floats y(size_t(planes * OH * OW));
  for (int64_t pl = 0; pl < planes; ++pl)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        const int64_t h0 = oh * s[0] - p[0], w0 = ow * s[1] - p[1];
        const int64_t h1 = std::min(h0 + k[0], H + p[0]), w1 = std::min(w0 + k[1], W + p[1]);
        const int64_t padded = (h1 - h0) * (w1 - w0);
        double acc = is_max ? -INFINITY : 0.0;
        int64_t inside = 0;
        for (int64_t h = std::max<int64_t>(h0, 0); h < std::min(h1, H); ++h)
          for (int64_t w = std::max<int64_t>(w0, 0); w < std::min(w1, W); ++w) {
            const double v = x[size_t((pl * H + h) * W + w)];
            acc = is_max ? std::max(acc, v) : acc + v;
            ++inside;
          }
        y[size_t((pl * OH + oh) * OW + ow)] = float(is_max ? acc : acc / double(count_include_pad ? padded : inside));
      }
  return y;
}

Floats linear_ref(const Floats& x, int64_t rows, int64_t in, const Floats& w, int64_t out, const Floats* bias) {
  Floats y(size_t(rows * out));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double acc = bias ? (*bias)[size_t(o)] : 0.0;
      for (int64_t i = 0; i < in; ++i) acc += double(x[size_t(r * in + i)]) * w[size_t(o * in + i)];
      y[size_t(r * out + o)] = float(acc);
    }
  return y;
}

Dims strides_of(const Dims& d) {
  Dims s(d.size(), 1);
  for (size_t i = d.size(); i-- > 1;) s[i - 1] = s[i] * d[i];
  return s;
}

// NumPy broadcasting of two tensors through f.
Floats broadcast_ref(const Floats& a, Dims ad, const Floats& b, Dims bd, const std::function<double(double, double)>& f,
                     Dims* out_dims) {
  const size_t rank = std::max(ad.size(), bd.size());
  ad.insert(ad.begin(), rank - ad.size(), 1);
  bd.insert(bd.begin(), rank - bd.size(), 1);
  Dims od(rank);
  for (size_t i = 0; i < rank; ++i) od[i] = std::max(ad[i], bd[i]);
  *out_dims = od;
  const Dims as = strides_of(ad), bs = strides_of(bd), os = strides_of(od);
  Floats y(size_t(CModel::count(od)));
  for (int64_t flat = 0; flat < int64_t(y.size()); ++flat) {
    int64_t ai = 0, bi = 0;
    for (size_t i = 0; i < rank; ++i) {
      const int64_t c = flat / os[i] % od[i];
      ai += (ad[i] == 1 ? 0 : c) * as[i];
      bi += (bd[i] == 1 ? 0 : c) * bs[i];
    }
    y[size_t(flat)] = float(f(a[size_t(ai)], b[size_t(bi)]));
  }
  return y;
}

Floats unary_ref(const Floats& x, const std::function<double(double)>& f) {
  Floats y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = float(f(x[i]));
  return y;
}

Floats softmax_ref(const Floats& x, const Dims& d, int64_t dim, bool log) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < dim; ++i) outer *= d[size_t(i)];
  for (size_t i = size_t(dim) + 1; i < d.size(); ++i) inner *= d[i];
  const int64_t n = d[size_t(dim)];
  Floats y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in = 0; in < inner; ++in) {
      auto at = [&](int64_t j) { return size_t((o * n + j) * inner + in); };
      double mx = -INFINITY, sum = 0;
      for (int64_t j = 0; j < n; ++j) mx = std::max(mx, double(x[at(j)]));
      for (int64_t j = 0; j < n; ++j) sum += std::exp(double(x[at(j)]) - mx);
      for (int64_t j = 0; j < n; ++j)
        y[at(j)] = float(log ? double(x[at(j)]) - mx - std::log(sum) : std::exp(double(x[at(j)]) - mx) / sum);
    }
  return y;
}

Floats mean_ref(const Floats& x, const Dims& d, Dims dims, bool keepdim, Dims* out_dims) {
  const int64_t rank = int64_t(d.size());
  if (dims.empty())
    for (int64_t i = 0; i < rank; ++i) dims.push_back(i);
  std::vector<bool> reduced(d.size(), false);
  for (int64_t& v : dims) reduced[size_t(v < 0 ? v + rank : v)] = true;
  Dims kept(d);
  int64_t per = 1;
  for (size_t i = 0; i < d.size(); ++i)
    if (reduced[i]) per *= d[i], kept[i] = 1;
  out_dims->clear();
  for (size_t i = 0; i < d.size(); ++i)
    if (!reduced[i] || keepdim) out_dims->push_back(kept[i]);
  const Dims xs = strides_of(d), ks = strides_of(kept);
  std::vector<double> acc(size_t(CModel::count(kept)), 0.0);
  for (int64_t flat = 0; flat < int64_t(x.size()); ++flat) {
    int64_t o = 0;
    for (size_t i = 0; i < d.size(); ++i) o += (reduced[i] ? 0 : flat / xs[i] % d[i]) * ks[i];
    acc[size_t(o)] += x[size_t(flat)];
  }
  Floats y(acc.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = float(acc[i] / double(per));
  return y;
}

Floats permute_ref(const Floats& x, const Dims& d, const Dims& perm, Dims* out_dims) {
  Dims od(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) od[i] = d[size_t(perm[i])];
  *out_dims = od;
  const Dims xs = strides_of(d), os = strides_of(od);
  Floats y(x.size());
  for (int64_t flat = 0; flat < int64_t(y.size()); ++flat) {
    int64_t src = 0;
    for (size_t i = 0; i < od.size(); ++i) src += flat / os[i] % od[i] * xs[size_t(perm[i])];
    y[size_t(flat)] = x[size_t(src)];
  }
  return y;
}

double gelu_erf(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double gelu_tanh(double x) { return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// ---- the driver, contexts, programs ----
bool file_exists(const char* path) {
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
    static const oar_adapter_driver_api* loaded = oar_test::load_driver_for_test(kDriverPath, &error);
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
    EXPECT_EQ(make_context(overrides, &c), OAR_STATUS_OK) << oar_test::last_error();
    return c;
  }
  ProgramPtr compile(oar_adapter_context_t c, CModel& m, oar_status_t expect = OAR_STATUS_OK) {
    oar_adapter_program_t p = nullptr;
    EXPECT_EQ(api->compile(c, m.model(), &p), expect) << oar_test::last_error();
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
    EXPECT_EQ(execute(p.get(), inputs, outs), OAR_STATUS_OK) << oar_test::last_error();
    return outs.empty() ? Floats{} : outs[0].floats();
  }
  // query_operation's answer for operation `index`: "" when supported, else the reason.
  std::string query(CModel& m, uint32_t index, oar_status_t expect = OAR_STATUS_OK) {
    ContextPtr c = context();
    int32_t supported = -1;
    char reason[512] = "unset";
    EXPECT_EQ(api->query_operation(c.get(), m.model(), index, &supported, reason, sizeof(reason)), expect)
        << oar_test::last_error();
    if (expect != OAR_STATUS_OK) return "error";
    EXPECT_EQ(supported == 1, reason[0] == '\0') << reason;
    return supported == 1 ? "" : reason;
  }

  const oar_adapter_driver_api* api = nullptr;
};

// A model of one operation on one input: x [in] -> op -> y [out].
CModel one_op(const char* type, oar_dtype_t dtype, const Dims& in, const Dims& out, std::vector<CModel::Attr> attrs = {},
              oar_adapter_layout_t layout = OAR_ADAPTER_LAYOUT_PLAIN) {
  CModel m;
  int xi = m.input(dtype, in, layout, "x");
  int yi = m.output(dtype, out, layout);
  m.operation(type, {xi}, {yi}, std::move(attrs));
  return m;
}

#define EXPECT_CONTAINS(text, part) EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

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
    const Floats x = random_floats(size_t(CModel::count(k.x))), w = random_floats(size_t(CModel::count(k.w)), -1, 1, 3);
    const Floats b = random_floats(size_t(k.w[0]), -1, 1, 5);
    Dims s2 = k.stride.size() == 1 ? Dims{k.stride[0], k.stride[0]} : k.stride, yd;
    Floats want = conv2d_ref(x, k.x, w, k.w, k.bias ? &b : nullptr, s2, k.padding, k.dilation, k.groups, &yd);
    if (k.activation != nullptr) {
      const std::string a = k.activation;
      want = unary_ref(want, [&](double v) { return a == "relu" ? std::max(v, 0.0) : a == "tanh" ? std::tanh(v) : sigmoid(v); });
    }
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
    const Floats x = random_floats(size_t(CModel::count(k.x)));
    const Dims stride = k.stride.empty() ? k.kernel : k.stride;
    Dims yd;
    const Floats want = pool_ref(x, k.x, k.kernel, stride, k.padding, k.ceil_mode, k.is_max, k.count_include_pad, &yd);
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
    const Floats x = random_floats(size_t(CModel::count(k.x))), w = random_floats(size_t(k.out * in), -1, 1, 11);
    const Floats b = random_floats(size_t(k.out), -1, 1, 13);
    Floats want = linear_ref(x, rows, in, w, k.out, k.bias ? &b : nullptr);
    if (k.activation != nullptr)
      want = unary_ref(want, [&](double v) { return std::string(k.activation) == "tanh" ? std::tanh(v) : sigmoid(v); });
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
  const Floats a = random_floats(24), b = random_floats(20, -1, 1, 17);
  Floats want;
  for (int64_t batch = 0; batch < 2; ++batch) {
    Floats wt(20);  // b as [out=5, in=4] for linear_ref
    for (int64_t k = 0; k < 4; ++k)
      for (int64_t n = 0; n < 5; ++n) wt[size_t(n * 4 + k)] = b[size_t(k * 5 + n)];
    Floats part = linear_ref(Floats(a.begin() + batch * 12, a.begin() + batch * 12 + 12), 3, 4, wt, 5, nullptr);
    want.insert(want.end(), part.begin(), part.end());
  }
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
      {"relu", {}, [](double v) { return std::max(v, 0.0); }, -2, 2},
      {"sigmoid", {}, sigmoid, -4, 4},
      {"tanh", {}, [](double v) { return std::tanh(v); }, -3, 3},
      {"exp", {}, [](double v) { return std::exp(v); }, -3, 3},
      {"log", {}, [](double v) { return std::log(v); }, 0.1f, 5},
      {"sqrt", {}, [](double v) { return std::sqrt(v); }, 0.0f, 5},
      {"gelu", {CModel::string("approximate", "none")}, gelu_erf, -4, 4},
      {"gelu", {CModel::string("approximate", "tanh")}, gelu_tanh, -4, 4},
      {"silu", {}, [](double v) { return v * sigmoid(v); }, -4, 4},
      {"leaky_relu", {CModel::real("negative_slope", -0.3)}, [](double v) { return v > 0 ? v : -0.3 * v; }, -2, 2},
      {"clamp", {CModel::real("min", -1.0), CModel::real("max", 0.5)},
       [](double v) { return std::min(std::max(v, -1.0), 0.5); }, -2, 2},
      {"clamp", {CModel::real("min", 0.25), CModel::real("max", INFINITY)}, [](double v) { return std::max(v, 0.25); }, -2, 2},
      {"clamp", {CModel::real("min", 1.0), CModel::real("max", 0.0)}, [](double) { return 0.0; }, -2, 2},
  };
  for (const UnaryCase& k : cases) {
    SCOPED_TRACE(k.op);
    const Floats x = random_floats(15, k.lo, k.hi);
    CModel m = one_op(k.op, OAR_DTYPE_F32, {3, 5}, {3, 5}, k.attrs);
    EXPECT_EQ(query(m, 0), "");
    expect_close(run(m, {HostTensor(OAR_DTYPE_F32, {3, 5}, x)}), unary_ref(x, k.f), kTolFp32, k.op);
  }
}

TEST_F(OpenVinoDriver, BinaryOpsBroadcast) {
  const std::map<std::string, std::function<double(double, double)>> ops = {
      {"add", [](double a, double b) { return a + b; }},
      {"sub", [](double a, double b) { return a - b; }},
      {"mul", [](double a, double b) { return a * b; }},
      {"div", [](double a, double b) { return a / b; }}};
  const Floats a = random_floats(24), b = random_floats(3, 0.5f, 2.0f, 19);
  for (const auto& [op, f] : ops) {
    SCOPED_TRACE(op);
    Dims yd;
    const Floats want = broadcast_ref(a, {2, 3, 4}, b, {3, 1}, f, &yd);
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
      const Floats x = random_floats(24, -3, 3);
      const Floats want = softmax_ref(x, d, dim < 0 ? dim + 3 : dim, std::string(op) == "log_softmax");
      CModel m = one_op(op, OAR_DTYPE_F32, d, d, {CModel::integer("dim", dim)});
      expect_close(run(m, {HostTensor(OAR_DTYPE_F32, d, x)}), want, kTolFp32, op);
    }
  }
}

TEST_F(OpenVinoDriver, ReshapePermuteConcat) {
  const Floats x = random_floats(24);
  {
    CModel m = one_op("reshape", OAR_DTYPE_F32, {2, 3, 4}, {4, 6}, {CModel::ints("shape", {4, -1})});
    EXPECT_EQ(run(m, {HostTensor(OAR_DTYPE_F32, {2, 3, 4}, x)}), x);
  }
  {
    Dims yd;
    const Floats want = permute_ref(x, {2, 3, 4}, {2, 0, 1}, &yd);
    CModel m = one_op("permute", OAR_DTYPE_F32, {2, 3, 4}, yd, {CModel::ints("dims", {-1, 0, 1})});
    EXPECT_EQ(run(m, {HostTensor(OAR_DTYPE_F32, {2, 3, 4}, x)}), want);
  }
  {
    const Floats a = random_floats(6), b = random_floats(8, -1, 1, 23), c = {5, 6};
    Floats want;
    for (int r = 0; r < 2; ++r) {
      want.insert(want.end(), a.begin() + r * 3, a.begin() + r * 3 + 3);
      want.insert(want.end(), b.begin() + r * 4, b.begin() + r * 4 + 4);
      want.push_back(c[size_t(r)]);
    }
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
    const int64_t C = k.x[1], per = CModel::count(k.x) / (k.x[0] * C);
    const Floats x = random_floats(size_t(CModel::count(k.x))), w = random_floats(3, 0.5f, 2, 29),
                 b = random_floats(3, -1, 1, 31), mean = random_floats(3, -1, 1, 37), var = random_floats(3, 0.5f, 2, 41);
    const double eps = 1e-3;
    Floats want(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const size_t c = size_t(int64_t(i) / per % C);
      const double scale = k.affine ? w[c] : 1.0, shift = k.affine ? b[c] : 0.0;
      want[i] = float((x[i] - mean[c]) / std::sqrt(double(var[c]) + eps) * scale + shift);
    }
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
  const Floats x = random_floats(60);
  for (const Case& k : {Case{{1}, false}, Case{{0, 2}, true}, Case{{-1}, true}, Case{{}, false}}) {
    SCOPED_TRACE(::testing::PrintToString(k.dims) + (k.keepdim ? " keepdim" : ""));
    Dims yd;
    const Floats want = mean_ref(x, {3, 4, 5}, k.dims, k.keepdim, &yd);
    CModel m = one_op("mean", OAR_DTYPE_F32, {3, 4, 5}, yd, {CModel::ints("dims", k.dims), CModel::boolean("keepdim", k.keepdim)});
    expect_close(run(m, {HostTensor(OAR_DTYPE_F32, {3, 4, 5}, x)}), want, kTolFp32, "mean");
  }
}


// conv2d [1, 3, 8, 8] x [4, 3, 3, 3] + bias, padding 1, in `dtype` tensors.
struct SmallConv {
  Floats x = random_floats(192), w = random_floats(108, -1, 1, 43), b = random_floats(4, -1, 1, 47);
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
    Dims yd;
    return conv2d_ref(xr, {1, 3, 8, 8}, wr, {4, 3, 3, 3}, &br, {1, 1}, {1, 1}, {1, 1}, 1, &yd);
  }
};

TEST_F(OpenVinoDriver, HalfAndBfloat16Tensors) {
  SmallConv conv;
  for (auto [dtype, tolerance] : {std::pair<oar_dtype_t, double>{OAR_DTYPE_F16, kTolF16Tensor}, {OAR_DTYPE_BF16, kTolBf16Tensor}}) {
    SCOPED_TRACE(dtype == OAR_DTYPE_F16 ? "f16" : "bf16");
    CModel m = conv.model(dtype);
    expect_close(run(m, {HostTensor(dtype, {1, 3, 8, 8}, conv.x)}), conv.want(dtype), tolerance, "conv2d");
    // promotion: an f32 input added to a tensor of this dtype, result f32
    const Floats a = random_floats(6), b = random_floats(6, -1, 1, 53);
    CModel add;
    int ai = add.input(OAR_DTYPE_F32, {2, 3});
    int bi = add.input(dtype, {2, 3});
    int yi = add.output(OAR_DTYPE_F32, {2, 3});
    add.operation("add", {ai, bi}, {yi});
    Dims yd;
    const Floats want = broadcast_ref(a, {2, 3}, rounded(b, dtype), {2, 3}, [](double p, double q) { return p + q; }, &yd);
    expect_close(run(add, {HostTensor(OAR_DTYPE_F32, {2, 3}, a), HostTensor(dtype, {2, 3}, b)}), want, kTolFp32, "add");
  }
}

TEST_F(OpenVinoDriver, PrecisionModes) {
  SmallConv conv;
  CModel m = conv.model(OAR_DTYPE_F32);
  const Floats x = random_floats(48), w = random_floats(40, -1, 1, 59);
  CModel lin;
  int xi = lin.input(OAR_DTYPE_F32, {6, 8});
  int wi = lin.constant(OAR_DTYPE_F32, {5, 8}, w.data());
  int yi = lin.output(OAR_DTYPE_F32, {6, 5});
  lin.operation("linear", {xi, wi, -1}, {yi});
  const Floats lin_want = linear_ref(x, 6, 8, w, 5, nullptr);
  for (auto [precision, tolerance] : {std::pair<const char*, double>{"fp32", kTolFp32}, {"bf16", kTolBf16}, {"fp16", kTolFp16}}) {
    SCOPED_TRACE(precision);
    const Options options = {{"OAR_OPENVINO_PRECISION", precision}};
    expect_close(run(m, {HostTensor(OAR_DTYPE_F32, {1, 3, 8, 8}, conv.x)}, options), conv.want(OAR_DTYPE_F32), tolerance,
                 "conv2d");
    expect_close(run(lin, {HostTensor(OAR_DTYPE_F32, {6, 8}, x)}, options), lin_want, tolerance, "linear");
  }
}

TEST_F(OpenVinoDriver, QuantizedWeightsAndInputs) {
  // conv2d with int8 weights quantized per output channel (with zero points)
  std::vector<int8_t> q(108);
  for (size_t i = 0; i < q.size(); ++i) q[i] = int8_t(int(i * 37 % 255) - 127);
  const std::vector<float> scales = {0.01f, 0.02f, 0.005f, 0.03f};
  const std::vector<int32_t> zero_points = {0, 3, -2, 1};
  Floats w(108);
  for (size_t i = 0; i < w.size(); ++i) w[i] = scales[i / 27] * float(q[i] - zero_points[i / 27]);
  const Floats x = random_floats(192);
  Dims yd;
  const Floats want = conv2d_ref(x, {1, 3, 8, 8}, w, {4, 3, 3, 3}, nullptr, {1, 1}, {1, 1}, {1, 1}, 1, &yd);
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
  const Floats lw = random_floats(12, -1, 1, 61);
  const Floats raw = {0, 17, 128, 200, 255, 90, 3, 140};
  Floats real(raw.size());
  for (size_t i = 0; i < raw.size(); ++i) real[i] = 0.05f * (raw[i] - 128.0f);
  CModel l;
  int li = l.input(OAR_DTYPE_U8, {2, 4});
  l.quantize(li, {0.05f}, {128});
  int lwi = l.constant(OAR_DTYPE_F32, {3, 4}, lw.data());
  int lyi = l.output(OAR_DTYPE_F32, {2, 3});
  l.operation("linear", {li, lwi, -1}, {lyi});
  expect_close(run(l, {HostTensor(OAR_DTYPE_U8, {2, 4}, raw)}), linear_ref(real, 2, 4, lw, 3, nullptr), kTolFp32,
               "uint8 per-tensor linear input");
}

// conv -> relu -> pool -> conv -> relu -> pool -> reshape -> linear, on [2, 1, 12, 12].
TEST_F(OpenVinoDriver, SmallCnnEndToEnd) {
  const Floats x = random_floats(288), w1 = random_floats(36, -0.5f, 0.5f, 67), b1 = random_floats(4, -0.1f, 0.1f, 71),
               w2 = random_floats(288, -0.3f, 0.3f, 73), b2 = random_floats(8, -0.1f, 0.1f, 79),
               w3 = random_floats(720, -0.2f, 0.2f, 83), b3 = random_floats(10, -0.1f, 0.1f, 89);
  Dims d1, d2, d3, d4;
  auto relu = [](const Floats& v) { return unary_ref(v, [](double a) { return std::max(a, 0.0); }); };
  Floats h = relu(conv2d_ref(x, {2, 1, 12, 12}, w1, {4, 1, 3, 3}, &b1, {1, 1}, {1, 1}, {1, 1}, 1, &d1));
  h = pool_ref(h, d1, {2, 2}, {2, 2}, {0, 0}, false, true, true, &d2);
  h = relu(conv2d_ref(h, d2, w2, {8, 4, 3, 3}, &b2, {1, 1}, {1, 1}, {1, 1}, 1, &d3));
  h = pool_ref(h, d3, {2, 2}, {2, 2}, {0, 0}, false, true, true, &d4);
  const Floats want = linear_ref(h, 2, 72, w3, 10, &b3);

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


// relu on [2, 3]: the smallest program, for the tests of the machinery.
CModel relu_model(const Dims& d = {2, 3}) { return one_op("relu", OAR_DTYPE_F32, d, d); }

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
    EXPECT_CONTAINS(oar_test::last_error(), "operation 0 (embedding)");
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
    const int64_t out = pool_size(10, 3, 2, 1, true);
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
  EXPECT_CONTAINS(oar_test::last_error(), "operand 7");
  ContextPtr c = context();
  compile(c.get(), m, OAR_STATUS_INVALID_ARGUMENT);
  CModel ok = relu_model();
  EXPECT_EQ(query(ok, 3, OAR_STATUS_OUT_OF_RANGE), "error");
  // an attribute of the wrong kind
  CModel clamp = one_op("clamp", OAR_DTYPE_F32, {3}, {3}, {CModel::string("min", "low")});
  EXPECT_EQ(query(clamp, 0, OAR_STATUS_INVALID_ARGUMENT), "error");
  EXPECT_CONTAINS(oar_test::last_error(), "clamp: attribute 'min'");
  CModel pool = one_op("max_pool2d", OAR_DTYPE_F32, {1, 1, 4, 4}, {1, 1, 2, 2}, {CModel::string("kernel_size", "2")});
  EXPECT_EQ(query(pool, 0, OAR_STATUS_INVALID_ARGUMENT), "error");
  EXPECT_CONTAINS(oar_test::last_error(), "max_pool2d: attribute 'kernel_size'");
}

TEST_F(OpenVinoDriver, Options) {
  CModel m = relu_model();
  {
    ContextPtr c = context({{"OAR_OPENVINO_DEVICE", "NOPE"}});
    compile(c.get(), m, OAR_STATUS_DEVICE_ERROR);
    EXPECT_CONTAINS(oar_test::last_error(), "no device 'NOPE'");
    EXPECT_CONTAINS(oar_test::last_error(), "available devices: CPU");
  }
  ContextPtr bad;
  EXPECT_EQ(make_context({{"OAR_OPENVINO_PRECISION", "int4"}}, &bad), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(oar_test::last_error(), "fp32, bf16, fp16");
  EXPECT_EQ(make_context({{"OAR_OPENVINO_NUM_THREADS", "many"}}, &bad), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(make_context({{"OAR_OPENVINO_TYPO", "1"}}, &bad), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(oar_test::last_error(), "unknown option OAR_OPENVINO_TYPO");
  // a virtual device: queries go through OpenVINO's query_model
  for (const char* device : {"AUTO", "HETERO:CPU"}) {
    SCOPED_TRACE(device);
    ContextPtr c = context({{"OAR_OPENVINO_DEVICE", device}});
    int32_t supported = 0;
    char reason[256] = "unset";
    EXPECT_EQ(api->query_operation(c.get(), m.model(), 0, &supported, reason, sizeof(reason)), OAR_STATUS_OK)
        << oar_test::last_error();
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


class OpenVinoProgramCache : public OpenVinoDriver {
 protected:
  std::vector<unsigned char> serialize(oar_adapter_program_t p) {
    uint64_t size = 0;
    EXPECT_EQ(api->serialize(p, nullptr, 0, &size), OAR_STATUS_OK) << oar_test::last_error();
    std::vector<unsigned char> bytes(size);
    uint64_t written = 0;
    EXPECT_EQ(api->serialize(p, bytes.data(), bytes.size(), &written), OAR_STATUS_OK) << oar_test::last_error();
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
  ASSERT_EQ(execute(original.get(), in, a), OAR_STATUS_OK) << oar_test::last_error();
  const std::vector<unsigned char> bytes = serialize(original.get());
  ASSERT_GT(bytes.size(), 8u);
  EXPECT_EQ(std::memcmp(bytes.data(), "OAROVIN\0", 8), 0);
  ProgramPtr restored;
  ASSERT_EQ(deserialize(c.get(), m, bytes, &restored), OAR_STATUS_OK) << oar_test::last_error();
  original.reset();  // the restored program stands alone
  ASSERT_EQ(execute(restored.get(), in, b), OAR_STATUS_OK) << oar_test::last_error();
  EXPECT_EQ(a[0].bytes, b[0].bytes);
  expect_close(b[0].floats(), conv.want(OAR_DTYPE_F32), kTolFp32, "restored conv2d");
  // a second context of the same options reads the bytes too
  ContextPtr other = context();
  EXPECT_EQ(deserialize(other.get(), m, bytes), OAR_STATUS_OK) << oar_test::last_error();
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
    EXPECT_CONTAINS(oar_test::last_error(), "not an openvino program");
  }
  std::vector<unsigned char> flipped = bytes;
  flipped[1] ^= 0x20;
  EXPECT_EQ(deserialize(c.get(), m, flipped), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(oar_test::last_error(), "not an openvino program (no OAROVIN magic)");
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
  EXPECT_CONTAINS(oar_test::last_error(), changed);
  EXPECT_CONTAINS(oar_test::last_error(), version);

  ContextPtr bf16 = context({{"OAR_OPENVINO_PRECISION", "bf16"}});
  EXPECT_EQ(deserialize(bf16.get(), m, bytes), OAR_STATUS_VERSION_MISMATCH);
  EXPECT_CONTAINS(oar_test::last_error(), "with precision 'fp32', this context has 'bf16'");
  ContextPtr npu = context({{"OAR_OPENVINO_DEVICE", "NPU"}});
  EXPECT_EQ(deserialize(npu.get(), m, bytes), OAR_STATUS_VERSION_MISMATCH);
  EXPECT_CONTAINS(oar_test::last_error(), "for device 'CPU', this context has 'NPU'");

  // bytes of another model (other dims)
  CModel wider = relu_model({2, 4});
  EXPECT_EQ(deserialize(c.get(), wider, bytes), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(oar_test::last_error(), "input 0");
}

TEST_F(OpenVinoDriver, AsyncExecution) {
  SmallConv conv;
  CModel m = conv.model(OAR_DTYPE_F32);
  ContextPtr c = context();
  ProgramPtr p = compile(c.get(), m);
  ASSERT_TRUE(p);
  const Floats x2 = random_floats(192, -2, 2, 97);
  std::vector<HostTensor> in1 = {HostTensor(OAR_DTYPE_F32, {1, 3, 8, 8}, conv.x)};
  std::vector<HostTensor> in2 = {HostTensor(OAR_DTYPE_F32, {1, 3, 8, 8}, x2)};
  std::vector<HostTensor> out1 = output_tensors(m), out2 = output_tensors(m);
  auto start = [&](std::vector<HostTensor>& in, std::vector<HostTensor>& out) {
    const oar_adapter_buffer* ib[] = {in[0].buffer()};
    const oar_adapter_buffer* ob[] = {out[0].buffer()};
    oar_adapter_event_t e = nullptr;
    EXPECT_EQ(api->execute_async(p.get(), ib, 1, ob, 1, &e), OAR_STATUS_OK) << oar_test::last_error();
    return e;
  };
  // two executions in flight at once, each with its own buffers
  oar_adapter_event_t e1 = start(in1, out1), e2 = start(in2, out2);
  ASSERT_NE(e1, nullptr);
  ASSERT_NE(e2, nullptr);
  EXPECT_EQ(api->event_wait(e2, -1), OAR_STATUS_OK) << oar_test::last_error();
  EXPECT_EQ(api->event_wait(e1, 10000), OAR_STATUS_OK) << oar_test::last_error();
  api->event_destroy(e1);
  api->event_destroy(e2);
  expect_close(out1[0].floats(), conv.want(OAR_DTYPE_F32), kTolFp32, "async 1");
  SmallConv second;
  second.x = x2;
  expect_close(out2[0].floats(), second.want(OAR_DTYPE_F32), kTolFp32, "async 2");

  // a long execution is not done after 0 ms; waiting for it then succeeds
  const Floats big = random_floats(1024 * 1024, -1, 1, 101);
  CModel mm;
  int ai = mm.input(OAR_DTYPE_F32, {2048, 1024});
  int bi = mm.constant(OAR_DTYPE_F32, {1024, 1024}, big.data());
  int yi = mm.output(OAR_DTYPE_F32, {2048, 1024});
  mm.operation("matmul", {ai, bi}, {yi});
  ProgramPtr slow = compile(c.get(), mm);
  ASSERT_TRUE(slow);
  HostTensor a(OAR_DTYPE_F32, {2048, 1024}, random_floats(2048 * 1024, -1, 1, 103));
  std::vector<HostTensor> y = output_tensors(mm);
  const oar_adapter_buffer* ib[] = {a.buffer()};
  const oar_adapter_buffer* ob[] = {y[0].buffer()};
  oar_adapter_event_t e = nullptr;
  ASSERT_EQ(api->execute_async(slow.get(), ib, 1, ob, 1, &e), OAR_STATUS_OK) << oar_test::last_error();
  EXPECT_EQ(api->event_wait(e, 0), OAR_STATUS_TIMEOUT);
  EXPECT_CONTAINS(oar_test::last_error(), "still running");
  EXPECT_EQ(api->event_wait(e, -1), OAR_STATUS_OK) << oar_test::last_error();
  api->event_destroy(e);
  // destroying an event still in flight waits for (or cancels) it first
  ASSERT_EQ(api->execute_async(slow.get(), ib, 1, ob, 1, &e), OAR_STATUS_OK) << oar_test::last_error();
  api->event_destroy(e);
}

TEST_F(OpenVinoDriver, BufferMismatchesAreInvalidArguments) {
  CModel m = relu_model();
  ContextPtr c = context();
  ProgramPtr p = compile(c.get(), m);
  ASSERT_TRUE(p);
  auto expect_refused = [&](std::vector<HostTensor> in, std::vector<HostTensor> out, const char* part) {
    EXPECT_EQ(execute(p.get(), in, out), OAR_STATUS_INVALID_ARGUMENT);
    EXPECT_CONTAINS(oar_test::last_error(), part);
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
  EXPECT_CONTAINS(oar_test::last_error(), "buffer has 20 bytes, its dims and dtype need 24");
  shortened.size = 24;
  shortened.data = nullptr;
  EXPECT_EQ(api->execute(p.get(), ib, 1, ob, 1), OAR_STATUS_INVALID_ARGUMENT);
  EXPECT_CONTAINS(oar_test::last_error(), "buffer data is NULL");
  // and the program still runs afterwards
  EXPECT_EQ(execute(p.get(), in, out), OAR_STATUS_OK) << oar_test::last_error();
  EXPECT_EQ(out[0].floats(), (Floats{1, 2, 3, 4, 5, 6}));
}

TEST_F(OpenVinoDriver, ProgramKeepsNoPointerIntoTheModel) {
  const Floats w = random_floats(12, -1, 1, 107), x = random_floats(8);
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
  ASSERT_EQ(execute(p.get(), in, out), OAR_STATUS_OK) << oar_test::last_error();
  expect_close(out[0].floats(), linear_ref(x, 2, 4, w, 3, nullptr), kTolFp32, "linear after the model changed");
}

}  // namespace
