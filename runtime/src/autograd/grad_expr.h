// Gradient expressions: the d/dx column of kernel_primitives' unary_ops.def
// (e.g. "g / square(1 + abs(x))"), parsed once into a tree of catalog op
// calls. Evaluating the tree calls those ops, so a rule written this way is
// itself differentiable (double grad) and runs on every device.
//
// Grammar: + - * / with the usual precedence, unary minus, parentheses,
// numbers (0-d tensors of the output's dtype) and names:
//   g            the gradient of the output
//   x, y         the op's input (in the output's dtype) and its output
//   <attribute>  a float attribute of the op (clamp's min, max)
//   <op>(a, ...) a catalog op; attributes it shares by name with the
//                differentiated op are passed on (leaky_relu_backward's
//                negative_slope, gelu_backward's approximate)
//   zeros_like(t)
#pragma once

#include <memory>
#include <string>

#include "oar/op_schema.h"
#include "oar/tensor.h"

namespace oar::autograd {

class GradExpr {
 public:
  // Throws InternalError naming the op and the position of a syntax error,
  // an unknown name or an op that is not in the catalog.
  static GradExpr parse(const std::string& text, const OpSchema& op);

  // Which saved values the expression reads (the others are used for their
  // dtype and shape only, so an in-place write to them is no error).
  bool reads_input() const { return reads_x_; }
  bool reads_output() const { return reads_y_; }

  Tensor eval(const Tensor& g, const Tensor& x, const Tensor& y, const Attrs& attrs) const;

  struct Node;

 private:
  std::shared_ptr<const Node> root_;
  bool reads_x_ = false;
  bool reads_y_ = false;
};

}  // namespace oar::autograd
