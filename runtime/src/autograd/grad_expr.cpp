// A recursive-descent parser for gradient expressions and their evaluator.
#include "grad_expr.h"

#include <cctype>
#include <cstdlib>
#include <vector>

#include "oar/dispatch.h"
#include "oar/error.h"
#include "oar/op_registry.h"

namespace oar::autograd {

struct GradExpr::Node {
  enum Kind { kNumber, kGrad, kInput, kOutput, kAttr, kNeg, kCall, kZerosLike };
  Kind kind;
  double number = 0;
  std::string name;              // attribute, or the called op
  const OpSchema* op = nullptr;  // kCall; also + - * / (add, sub, mul, div)
  std::vector<std::shared_ptr<const Node>> args;
};

namespace {

using NodePtr = std::shared_ptr<const GradExpr::Node>;
using Node = GradExpr::Node;

class Parser {
 public:
  Parser(const std::string& text, const OpSchema& op) : text_(text), op_(op) {}

  NodePtr parse_all(bool& reads_x, bool& reads_y) {
    NodePtr root = sum();
    skip_space();
    if (pos_ != text_.size()) fail("unexpected '" + text_.substr(pos_, 1) + "'");
    reads_x = reads_x_;
    reads_y = reads_y_;
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InternalError(str("gradient of op '", op_.name, "' (kernel_primitives/ .def): ", what, " at column ",
                            pos_ + 1, " of \"", text_, "\""));
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool accept(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) return ++pos_, true;
    return false;
  }
  void expect(char c) {
    if (!accept(c)) fail(std::string("expected '") + c + "'");
  }
  static NodePtr call(const char* op, std::vector<NodePtr> args) {
    auto n = std::make_shared<Node>();
    n->kind = Node::kCall;
    n->op = &OpRegistry::instance().get(op);
    n->name = op;
    n->args = std::move(args);
    return n;
  }

  NodePtr sum() {
    NodePtr lhs = product();
    for (;;) {
      if (accept('+')) lhs = call("add", {lhs, product()});
      else if (accept('-')) lhs = call("sub", {lhs, product()});
      else return lhs;
    }
  }
  NodePtr product() {
    NodePtr lhs = unary();
    for (;;) {
      if (accept('*')) lhs = call("mul", {lhs, unary()});
      else if (accept('/')) lhs = call("div", {lhs, unary()});
      else return lhs;
    }
  }
  NodePtr unary() {
    if (accept('-')) {
      auto n = std::make_shared<Node>();
      n->kind = Node::kNeg;
      n->args = {unary()};
      return n;
    }
    return primary();
  }
  NodePtr primary() {
    if (accept('(')) {
      NodePtr inner = sum();
      expect(')');
      return inner;
    }
    skip_space();
    if (pos_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.')) {
      const char* start = text_.c_str() + pos_;
      char* end = nullptr;
      auto n = std::make_shared<Node>();
      n->kind = Node::kNumber;
      n->number = std::strtod(start, &end);
      pos_ += size_t(end - start);
      return n;
    }
    std::string name;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      name += text_[pos_++];
    if (name.empty()) fail("expected a number, a name or '('");
    if (accept('(')) return function(name);
    auto n = std::make_shared<Node>();
    if (name == "g") {
      n->kind = Node::kGrad;
    } else if (name == "x") {
      n->kind = Node::kInput;
      reads_x_ = true;
    } else if (name == "y") {
      n->kind = Node::kOutput;
      reads_y_ = true;
    } else {
      bool is_float_attr = false;
      for (const auto& a : op_.attrs) is_float_attr |= a.name == name && a.type == AttrType::kFloat;
      if (!is_float_attr) fail("unknown name '" + name + "' (g, x, y or a float attribute of the op)");
      n->kind = Node::kAttr;
      n->name = name;
    }
    return n;
  }
  NodePtr function(const std::string& name) {
    std::vector<NodePtr> args;
    if (!accept(')')) {
      do args.push_back(sum());
      while (accept(','));
      expect(')');
    }
    auto n = std::make_shared<Node>();
    n->args = std::move(args);
    if (name == "zeros_like") {
      if (n->args.size() != 1) fail("zeros_like takes one argument");
      n->kind = Node::kZerosLike;
      return n;
    }
    n->kind = Node::kCall;
    n->op = OpRegistry::instance().find(name);
    if (n->op == nullptr) fail("'" + name + "' is not a catalog op");
    n->name = name;
    return n;
  }

  const std::string& text_;
  const OpSchema& op_;
  size_t pos_ = 0;
  bool reads_x_ = false;
  bool reads_y_ = false;
};

struct Env {
  const Tensor& g;
  const Tensor& x;
  const Tensor& y;
  const Attrs& attrs;
};

Tensor eval_node(const Node& n, const Env& env) {
  switch (n.kind) {
    case Node::kNumber: return Tensor::full({}, n.number, env.y.dtype(), env.y.device());
    case Node::kGrad: return env.g;
    case Node::kInput: return env.x;
    case Node::kOutput: return env.y;
    case Node::kAttr: return Tensor::full({}, env.attrs.get_float(n.name), env.y.dtype(), env.y.device());
    case Node::kNeg: return call1("neg", {eval_node(*n.args[0], env)});
    case Node::kZerosLike: {
      Tensor t = eval_node(*n.args[0], env);
      return Tensor::zeros(t.shape(), t.dtype(), t.device());
    }
    case Node::kCall: {
      std::vector<Tensor> in;
      in.reserve(n.args.size());
      for (const auto& a : n.args) in.push_back(eval_node(*a, env));
      Attrs passed;
      for (const auto& spec : n.op->attrs)
        if (env.attrs.has(spec.name)) passed.set(spec.name, env.attrs.get(spec.name));
      return call(*n.op, in, passed)[0];
    }
  }
  throw InternalError("gradient expression: unknown node");
}

}  // namespace

GradExpr GradExpr::parse(const std::string& text, const OpSchema& op) {
  GradExpr e;
  e.root_ = Parser(text, op).parse_all(e.reads_x_, e.reads_y_);
  return e;
}

Tensor GradExpr::eval(const Tensor& g, const Tensor& x, const Tensor& y, const Attrs& attrs) const {
  return eval_node(*root_, Env{g, x, y, attrs});
}

}  // namespace oar::autograd
