// The optimizer ops of ONNX's training domain (ai.onnx.preview.training):
// Adagrad, Momentum (standard and Nesterov) and Adam, written elementwise
// from the formulas in the ONNX operator spec. The step count T is read at
// import time (constant or bound), so its bias corrections are constants.
#include <cmath>

#include "import_context.h"

namespace oar::onnx::detail {

namespace {

struct Step {
  Value* rate;        // R, a scalar
  double t;           // T
  size_t n;           // tensors per group
};

Step step(NodeContext& c, size_t groups) {
  if (c.input_count() < 2 || (c.input_count() - 2) % groups != 0)
    c.invalid(str("expects R, T and ", groups, " equally long groups of tensors"));
  return {c.required_input(0), c.constant_input(1, "T").to(DType::f64).item(), (c.input_count() - 2) / groups};
}

// norm_coefficient * X + G
Value* regularized(NodeContext& c, Value* x, Value* g, double norm) {
  return norm == 0 ? g : c.add(c.mul(c.scalar(norm, c.dtype(x)), x), g);
}

std::vector<Value*> adagrad_op(NodeContext& c) {
  Step s = step(c, 3);
  double decay = c.attr_float("decay_factor", 0), eps = c.attr_float("epsilon", 1e-6), norm = c.attr_float("norm_coefficient", 0);
  std::vector<Value*> xs, hs;
  for (size_t i = 0; i < s.n; ++i) {
    Value* x = c.required_input(2 + i);
    DType d = c.dtype(x);
    Value* g = regularized(c, x, c.required_input(2 + s.n + i), norm);
    Value* h = c.add(c.required_input(2 + 2 * s.n + i), c.mul(g, g));
    Value* r = c.mul(c.cast(s.rate, d), c.scalar(1.0 / (1.0 + s.t * decay), d));
    Value* adaptive = c.add(c.op("sqrt", {h}), c.scalar(eps, d));
    xs.push_back(c.sub(x, c.div(c.mul(r, g), adaptive)));
    hs.push_back(h);
  }
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

std::vector<Value*> momentum_op(NodeContext& c) {
  Step s = step(c, 3);
  for (const char* required : {"alpha", "beta", "mode", "norm_coefficient"})
    if (!c.has_attr(required)) c.invalid(str("required attribute '", required, "' is missing"));
  double alpha = c.attr_float("alpha", 0), beta = c.attr_float("beta", 0), norm = c.attr_float("norm_coefficient", 0);
  std::string mode = c.attr_string("mode", "standard");
  if (mode != "standard" && mode != "nesterov") c.invalid(str("unknown mode '", mode, "'"));
  double beta_adjusted = s.t > 0 ? beta : 1.0;
  std::vector<Value*> xs, vs;
  for (size_t i = 0; i < s.n; ++i) {
    Value* x = c.required_input(2 + i);
    DType d = c.dtype(x);
    Value* g = regularized(c, x, c.required_input(2 + s.n + i), norm);
    Value* v = c.add(c.mul(c.scalar(alpha, d), c.required_input(2 + 2 * s.n + i)), c.mul(c.scalar(beta_adjusted, d), g));
    Value* direction = mode == "standard" ? v : c.add(g, c.mul(c.scalar(alpha, d), v));
    xs.push_back(c.sub(x, c.mul(c.cast(s.rate, d), direction)));
    vs.push_back(v);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  return xs;
}

std::vector<Value*> adam_op(NodeContext& c) {
  Step s = step(c, 4);
  double alpha = c.attr_float("alpha", 0.9), beta = c.attr_float("beta", 0.999), eps = c.attr_float("epsilon", 1e-6);
  double norm = c.attr_float("norm_coefficient", 0), post = c.attr_float("norm_coefficient_post", 0);
  double correction = s.t > 0 ? std::sqrt(1 - std::pow(beta, s.t)) / (1 - std::pow(alpha, s.t)) : 1.0;
  std::vector<Value*> xs, vs, hs;
  for (size_t i = 0; i < s.n; ++i) {
    Value* x = c.required_input(2 + i);
    DType d = c.dtype(x);
    Value* g = regularized(c, x, c.required_input(2 + s.n + i), norm);
    Value* v = c.add(c.mul(c.scalar(alpha, d), c.required_input(2 + 2 * s.n + i)), c.mul(c.scalar(1 - alpha, d), g));
    Value* h = c.add(c.mul(c.scalar(beta, d), c.required_input(2 + 3 * s.n + i)),
                     c.mul(c.scalar(1 - beta, d), c.mul(g, g)));
    Value* r = c.mul(c.cast(s.rate, d), c.scalar(correction, d));
    Value* x_new = c.sub(x, c.mul(r, c.div(v, c.add(c.op("sqrt", {h}), c.scalar(eps, d)))));
    xs.push_back(post == 0 ? x_new : c.mul(c.scalar(1 - post, d), x_new));
    vs.push_back(v);
    hs.push_back(h);
  }
  xs.insert(xs.end(), vs.begin(), vs.end());
  xs.insert(xs.end(), hs.begin(), hs.end());
  return xs;
}

}  // namespace

void register_training_mappers(MapperTable& t) {
  t.add("Adagrad", adagrad_op);
  t.add("Momentum", momentum_op);
  t.add("Adam", adam_op);
}

}  // namespace oar::onnx::detail
