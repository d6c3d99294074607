// Program invariants: verify_program is what stands between bytes from a
// cache file and the kernels, so it checks every index, shape and size they use.
#include <algorithm>
#include <cmath>

#include "oar/adapter/driver_sdk.hpp"
#include "program.h"

namespace fake_npu {

using oar_adapter_sdk::invalid;

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kFp32: return "fp32";
    case Precision::kFp16: return "fp16";
    case Precision::kInt8: return "int8";
  }
  return "unknown";
}

int64_t numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t window_out(int64_t in, int64_t k, int64_t s, int64_t p) {
  const int64_t span = in + 2 * p - k;
  return span < 0 || s <= 0 ? -1 : span / s + 1;
}

int64_t inner_extent(const std::vector<int64_t>& dims) {
  if (dims.empty()) return 1;
  return dims.size() == 4 ? dims[1] : dims.back();
}

std::string dims_text(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

namespace {

constexpr int64_t kMaxElements = int64_t(1) << 40;  // keeps every product below int64 overflow
constexpr int64_t kMaxParam = int64_t(1) << 24;     // kernel, stride, padding, groups

void check_quant(const Quant& q, const std::string& what) {
  if (!q.on) return;
  if (!(q.scale > 0.0f) || !std::isfinite(q.scale) || q.qmin > q.qmax || q.qmin < -128 || q.qmax > 255 ||
      q.zero_point < q.qmin || q.zero_point > q.qmax)
    throw invalid(what + ": inconsistent quantization parameters");
}

bool in_range(int64_t v, int64_t lo, int64_t hi) { return v >= lo && v <= hi; }

class Verifier {
 public:
  explicit Verifier(const Program& p) : p_(p), ready_(p.values.size(), false) {}

  void run() {
    if (uint8_t(p_.precision) > uint8_t(Precision::kInt8)) throw invalid("unknown precision");
    for (size_t i = 0; i < p_.values.size(); ++i) value(i);
    for (size_t i = 0; i < p_.inputs.size(); ++i) {
      const int32_t id = boundary(p_.inputs[i], "input " + std::to_string(i));
      if (p_.values[size_t(id)].constant || ready_[size_t(id)]) throw invalid("input " + std::to_string(i) + " is written twice");
      ready_[size_t(id)] = true;
    }
    for (size_t k = 0; k < p_.ops.size(); ++k) op(p_.ops[k], "op " + std::to_string(k));
    for (size_t i = 0; i < p_.outputs.size(); ++i) {
      const int32_t id = boundary(p_.outputs[i], "output " + std::to_string(i));
      if (!ready_[size_t(id)]) throw invalid("output " + std::to_string(i) + " is never written");
    }
  }

 private:
  void value(size_t i) {
    const Value& v = p_.values[i];
    const std::string what = "value " + std::to_string(i);
    if (!v.used) {
      if (!v.dims.empty() || !v.data.empty()) throw invalid(what + ": unused but has dims or data");
      return;
    }
    if (v.dims.size() > 16) throw invalid(what + ": rank above 16");
    int64_t n = 1;
    for (int64_t d : v.dims) {
      if (d < 0 || d > kMaxElements || (d > 0 && n > kMaxElements / d)) throw invalid(what + ": bad dims");
      n *= d;
    }
    if (v.constant ? int64_t(v.data.size()) != n : !v.data.empty()) throw invalid(what + ": data size disagrees with dims");
    check_quant(v.storage, what);
    check_quant(v.activation, what);
    if (v.constant) ready_[i] = true;
  }

  int32_t boundary(const Boundary& b, const std::string& what) {
    if (b.value < 0 || size_t(b.value) >= p_.values.size() || !p_.values[size_t(b.value)].used)
      throw invalid(what + ": refers to no value");
    const Value& v = p_.values[size_t(b.value)];
    const bool quantized = b.dtype == OAR_DTYPE_I8 || b.dtype == OAR_DTYPE_U8;
    if (b.dtype != OAR_DTYPE_F32 && b.dtype != OAR_DTYPE_F16 && !quantized) throw invalid(what + ": unsupported dtype");
    if (quantized != v.storage.on || (b.dtype == OAR_DTYPE_F16) != v.half)
      throw invalid(what + ": dtype disagrees with its value");
    return b.value;
  }

  const std::vector<int64_t>& in(const Op& op, size_t k, const std::string& what) {
    if (k >= op.inputs.size()) throw invalid(what + ": too few inputs");
    const int32_t id = op.inputs[k];
    if (id < 0 || size_t(id) >= p_.values.size() || !ready_[size_t(id)])
      throw invalid(what + ": reads a value that is not ready");
    return p_.values[size_t(id)].dims;
  }

  void weights(const Op& op, int64_t rows, int64_t inner, const std::string& what) {
    const Weights& w = op.weights;
    if (rows < 0 || inner < 0 || (inner > 0 && rows > kMaxElements / inner)) throw invalid(what + ": weights too large");
    const size_t n = size_t(rows * inner);
    if (w.rows != rows || w.inner != inner) throw invalid(what + ": weights have the wrong shape");
    const bool ok = p_.precision == Precision::kInt8
                        ? w.q.size() == n && w.scales.size() == size_t(rows) && w.f.empty()
                        : w.f.size() == n && w.q.empty() && w.scales.empty();
    if (!ok) throw invalid(what + ": weight data has the wrong size");
    for (float s : w.scales)
      if (!(s > 0.0f) || !std::isfinite(s)) throw invalid(what + ": a weight scale is not positive");
    if (!op.bias.empty() && op.bias.size() != size_t(rows)) throw invalid(what + ": bias has the wrong size");
  }

  void no_weights(const Op& op, const std::string& what) {
    if (op.weights.rows != 0 || op.weights.inner != 0 || !op.weights.f.empty() || !op.weights.q.empty() ||
        !op.weights.scales.empty() || !op.bias.empty())
      throw invalid(what + ": unexpected weights");
  }

  bool window_ok(const Op& op) const {
    return in_range(op.kh, 1, kMaxParam) && in_range(op.kw, 1, kMaxParam) && in_range(op.sh, 1, kMaxParam) &&
           in_range(op.sw, 1, kMaxParam) && in_range(op.ph, 0, kMaxParam) && in_range(op.pw, 0, kMaxParam);
  }

  void op(const Op& op, const std::string& what) {
    if (uint8_t(op.kind) >= uint8_t(OpKind::kCount)) throw invalid(what + ": unknown kind");
    if (op.output < 0 || size_t(op.output) >= p_.values.size() || !p_.values[size_t(op.output)].used ||
        ready_[size_t(op.output)])
      throw invalid(what + ": bad output");
    const std::vector<int64_t>& y = p_.values[size_t(op.output)].dims;
    const size_t arity = op.kind == OpKind::kAdd || op.kind == OpKind::kMatmul ? 2 : 1;
    if (op.inputs.size() != arity) throw invalid(what + ": wrong number of inputs");
    const std::vector<int64_t>& x = in(op, 0, what);
    bool ok = true;
    switch (op.kind) {
      case OpKind::kConv: {
        ok = x.size() == 4 && y.size() == 4 && window_ok(op) && in_range(op.groups, 1, kMaxParam) &&
             x[1] % op.groups == 0 && y[1] % op.groups == 0 && y[0] == x[0] &&
             y[2] == window_out(x[2], op.kh, op.sh, op.ph) && y[3] == window_out(x[3], op.kw, op.sw, op.pw);
        const int64_t taps = op.kh * op.kw, cg = ok ? x[1] / op.groups : 0;  // kh, kw <= 2^24: no overflow
        ok = ok && taps <= kMaxElements && (cg == 0 || taps <= kMaxElements / cg);
        if (ok) weights(op, y[1], taps * cg, what);
        break;
      }
      case OpKind::kLinear: {
        ok = !x.empty() && x.size() != 4 && y.size() == x.size() && std::equal(x.begin(), x.end() - 1, y.begin());
        if (ok) weights(op, y.back(), x.back(), what);
        break;
      }
      case OpKind::kMatmul: {
        const std::vector<int64_t>& b = in(op, 1, what);
        ok = x.size() == 2 && b.size() == 2 && y.size() == 2 && x[1] == b[0] && y[0] == x[0] && y[1] == b[1];
        no_weights(op, what);
        break;
      }
      case OpKind::kAdd: {
        const int64_t n = numel(y), na = numel(x), nb = numel(in(op, 1, what)), c = inner_extent(y);
        ok = (na == n || nb == n) && (na == n || na == 1 || na == c) && (nb == n || nb == 1 || nb == c);
        no_weights(op, what);
        break;
      }
      case OpKind::kRelu:
      case OpKind::kSoftmax:
        ok = x == y && (op.kind == OpKind::kRelu || x.size() == 2);
        no_weights(op, what);
        break;
      case OpKind::kMaxPool:
      case OpKind::kAvgPool:
        ok = x.size() == 4 && y.size() == 4 && window_ok(op) && 2 * op.ph <= op.kh && 2 * op.pw <= op.kw &&
             x[2] > 0 && x[3] > 0 && y[0] == x[0] && y[1] == x[1] && y[2] == window_out(x[2], op.kh, op.sh, op.ph) &&
             y[3] == window_out(x[3], op.kw, op.sw, op.pw);
        no_weights(op, what);
        break;
      case OpKind::kCount:
        ok = false;
    }
    if (!ok) throw invalid(what + ": shapes or attributes are inconsistent");
    ready_[size_t(op.output)] = true;
  }

  const Program& p_;
  std::vector<bool> ready_;
};

}  // namespace

void verify_program(const Program& p) { Verifier(p).run(); }

}  // namespace fake_npu
