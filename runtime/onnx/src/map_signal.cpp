// ONNX signal ops: the window functions (Hann, Hamming, Blackman), which
// are constants once their size is known, and DFT, which is two real matrix
// products with the cosine and sine tables of its length (real and imaginary
// parts travel in a last dimension of size 2, as ONNX lays them out).
#include <cmath>

#include "import_context.h"

namespace oar::onnx::detail {

namespace {

// a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), N = size (periodic) or size - 1
Mapper window(double a0, double a1, double a2) {
  return [a0, a1, a2](NodeContext& c) -> std::vector<Value*> {
    int64_t size = int64_t(c.constant_input(0, "size").to(DType::f64).item());
    if (size < 0) c.invalid("size must be >= 0");
    bool periodic = c.attr_int("periodic", 1) != 0;
    DType d = dtype_from_onnx(int32_t(c.attr_int("output_datatype", 1)), c.where());
    double denom = periodic ? double(size) : double(size - 1);
    std::vector<double> w(static_cast<size_t>(size));
    for (int64_t i = 0; i < size; ++i) {
      double t = denom > 0 ? 2 * M_PI * double(i) / denom : 0;
      w[size_t(i)] = a0 - a1 * std::cos(t) + a2 * std::cos(2 * t);
    }
    return {c.constant(Tensor::from_vector(w, {size}, Device::cpu()).to(d))};
  };
}

std::vector<Value*> dft_op(NodeContext& c) {
  Value* x = c.required_input(0);
  int64_t r = c.rank(x);
  if (r < 3) c.invalid("input must be [batch, signal..., 1 or 2]");
  int64_t complex = c.shape(x).back();
  if (complex != 1 && complex != 2) c.invalid("the last dimension must be 1 (real) or 2 (complex)");
  // opset 20 moved axis to an input (default -2: the last signal axis)
  int64_t given = c.opset() < 20 ? c.attr_int("axis", 1)
                  : c.has_input(2) ? int64_t(c.constant_input(2, "axis").to(DType::f64).item())
                                   : -2;
  int64_t a = given < 0 ? given + r : given;
  if (a <= 0 || a >= r - 1) c.invalid(str("axis ", given, " is not a signal axis"));
  bool inverse = c.attr_int("inverse", 0) != 0, onesided = c.attr_int("onesided", 0) != 0;
  int64_t n_in = c.shape(x)[size_t(a)];
  int64_t n = c.has_input(1) && numel_of(c.shape(c.input(1))) > 0 ? int64_t(c.constant_input(1, "dft_length").to(DType::f64).item()) : n_in;
  int64_t k_out = onesided ? n / 2 + 1 : n;
  DType d = c.dtype(x);
  // real and imaginary parts, signal axis last, cut or zero-padded to n
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < r - 1; ++i)
    if (i != a) perm.push_back(i);
  perm.push_back(a);
  auto part = [&](int64_t index) {
    Value* p = c.op("select", {x}, {{"dim", r - 1}, {"index", index}});
    p = c.permute(p, perm);
    if (n < n_in) p = c.slice(p, r - 2, 0, n);
    if (n > n_in) {
      std::vector<int64_t> pads{0, n - n_in};
      p = c.op("pad", {p}, {{"pads", pads}, {"mode", std::string("constant")}, {"value", 0.0}});
    }
    return p;
  };
  Value* re = part(0);
  Value* im = complex == 2 ? part(1) : nullptr;
  std::vector<double> cosines(static_cast<size_t>(n * k_out)), sines(static_cast<size_t>(n * k_out));
  double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / double(n) : 1.0;
  for (int64_t t = 0; t < n; ++t)
    for (int64_t k = 0; k < k_out; ++k) {
      double theta = 2 * M_PI * double((t * k) % n) / double(n);
      cosines[size_t(t * k_out + k)] = scale * std::cos(theta);
      sines[size_t(t * k_out + k)] = scale * sign * std::sin(theta);
    }
  Value* cm = c.constant(Tensor::from_vector(cosines, {n, k_out}, Device::cpu()).to(d));
  Value* sm = c.constant(Tensor::from_vector(sines, {n, k_out}, Device::cpu()).to(d));
  // (a + ib)(cos + i sign sin) = (a cos - b sign sin) + i (a sign sin + b cos)
  Value* out_re = c.op("matmul", {re, cm});
  Value* out_im = c.op("matmul", {re, sm});
  if (im != nullptr) {
    out_re = c.sub(out_re, c.op("matmul", {im, sm}));
    out_im = c.add(out_im, c.op("matmul", {im, cm}));
  }
  std::vector<int64_t> inverse_perm(static_cast<size_t>(r - 1));
  for (int64_t i = 0; i < r - 1; ++i) inverse_perm[size_t(perm[size_t(i)])] = i;
  Value* y = c.op("stack", {c.permute(out_re, inverse_perm), c.permute(out_im, inverse_perm)}, {{"dim", int64_t(-1)}});
  return {y};
}

}  // namespace

void register_signal_mappers(MapperTable& t) {
  t.add("HannWindow", window(0.5, 0.5, 0.0));
  t.add("HammingWindow", window(25.0 / 46.0, 21.0 / 46.0, 0.0));
  t.add("BlackmanWindow", window(0.42, 0.5, 0.08));
  t.add("DFT", dft_op);
}

}  // namespace oar::onnx::detail
