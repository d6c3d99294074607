// The gradient expressions of unary_ops.def (runtime/src/autograd/grad_expr.h,
// private to the core): grammar, values, which saved tensors a rule reads,
// and errors that name the op and the column.
#include "../../runtime/src/autograd/grad_expr.h"

#include "oar/op_registry.h"
#include "test_util.h"

using namespace oar;
using namespace oar::testing;
using autograd::GradExpr;

namespace {

Tensor vec(std::vector<double> v) { return make_tensor(v, {int64_t(v.size())}, DType::f64, Device::cpu()); }

std::vector<double> eval(const std::string& text, const std::string& op = "exp", Attrs attrs = {}) {
  GradExpr e = GradExpr::parse(text, OpRegistry::instance().get(op));
  return host_values(e.eval(vec({1, 2}), vec({3, 4}), vec({0.5, 0.25}), attrs));
}

TEST(GradExpr, PrecedenceNumbersAndUnaryMinus) {
  EXPECT_EQ(eval("1 + 2 * 3 + g * 0"), (std::vector<double>{7, 7}));        // g only sets the shape here
  EXPECT_EQ(eval("(1 + 2) * g"), (std::vector<double>{3, 6}));
  EXPECT_EQ(eval("g - x / y"), (std::vector<double>{1 - 6, 2 - 16}));
  EXPECT_EQ(eval("-x * -2"), (std::vector<double>{6, 8}));
  EXPECT_EQ(eval("1.5e1 * g + .5"), (std::vector<double>{15.5, 30.5}));
  EXPECT_EQ(eval("zeros_like(g)"), (std::vector<double>{0, 0}));
}

TEST(GradExpr, CatalogOpsAndAttributes) {
  EXPECT_EQ(eval("maximum(g, x - 2)"), (std::vector<double>{1, 2}));
  EXPECT_EQ(eval("where(gt(x, 3.5), g, -g)"), (std::vector<double>{-1, 2}));
  Attrs bounds{{"min", 3.5}, {"max", 10.0}};
  EXPECT_EQ(eval("g * min + max", "clamp", bounds), (std::vector<double>{13.5, 17}));
  // leaky_relu_backward receives negative_slope from the differentiated op's attributes
  Attrs slope{{"negative_slope", 0.5}};
  GradExpr e = GradExpr::parse("leaky_relu_backward(g, x)", OpRegistry::instance().get("leaky_relu"));
  EXPECT_EQ(host_values(e.eval(vec({1, 2}), vec({-1, 1}), vec({0, 0}), slope)), (std::vector<double>{0.5, 2}));
}

TEST(GradExpr, KnowsWhatItReads) {
  const OpSchema& op = OpRegistry::instance().get("exp");
  GradExpr a = GradExpr::parse("g * y", op), b = GradExpr::parse("g / x", op), c = GradExpr::parse("-g", op);
  EXPECT_TRUE(a.reads_output() && !a.reads_input());
  EXPECT_TRUE(b.reads_input() && !b.reads_output());
  EXPECT_FALSE(c.reads_input() || c.reads_output());
}

void expect_error(const std::string& text, const std::string& fragment, const std::string& op = "exp") {
  try {
    GradExpr::parse(text, OpRegistry::instance().get(op));
    ADD_FAILURE() << "'" << text << "' parsed";
  } catch (const InternalError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
    EXPECT_NE(what.find("op '" + op + "'"), std::string::npos) << what;
  }
}

TEST(GradExpr, ErrorsNameTheOpAndTheColumn) {
  expect_error("g * (x", "expected ')' at column 7");
  expect_error("g +", "expected a number, a name or '(' at column 4");
  expect_error("g * z", "unknown name 'z'");
  expect_error("g * negative_slope", "unknown name 'negative_slope'");  // exp has no such attribute
  expect_error("no_such_op(x)", "'no_such_op' is not a catalog op");
  expect_error("g x", "unexpected 'x'");
  expect_error("zeros_like(g, x)", "zeros_like takes one argument");
}

}  // namespace
