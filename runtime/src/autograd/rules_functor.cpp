// Gradient rules of the unary functor ops, from the d/dx column of
// kernel_primitives/include/oar/kp/unary_ops.def: an op declared by one .def
// line gets its gradient from that same line, so no core file names it.
#include <memory>

#include "grad_expr.h"
#include "oar/op_registry.h"
#include "rules_util.h"

namespace oar::autograd {

namespace {

void register_from_def(const char* name, const char* text) {
  if (*text == '\0') return;  // no column: the op's rule is hand-written, or it has none
  auto expr = std::make_shared<const GradExpr>(GradExpr::parse(text, OpRegistry::instance().get(name)));
  register_grad_rule(name, [expr](const GradContext& c) -> std::vector<Tensor> {
    const Tensor& y = expr->reads_output() ? c.outputs[0] : c.outputs.meta(0);
    Tensor x = c.inputs.meta(0);
    if (expr->reads_input()) {
      x = c.inputs[0];
      // Promotion happened inside dispatch (an integer input of a floating op): compute in the output's dtype.
      if (x.dtype() != y.dtype()) x = x.to(y.dtype());
    }
    return {expr->eval(c.grad_or_zeros(0), x, y, c.attrs)};
  });
}

}  // namespace

void register_functor_grad_rules() {
  // An empty string literal joined with the optional sixth column: "" when a row has none.
#define OAR_KP_UNARY(name, kind, p0_attr, p1_attr, expr, ...) register_from_def(#name, "" __VA_ARGS__);
#include "oar/kp/unary_ops.def"
#undef OAR_KP_UNARY
}

}  // namespace oar::autograd
