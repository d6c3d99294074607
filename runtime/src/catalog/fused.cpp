// fused_elementwise: a chain of elementwise functors run as one kernel (the
// graph's fusion pass makes these; plugin_sdk/fused_program.hpp is the
// program format). Any device without a kernel runs its decomposition: one
// eager op per instruction, with the same results.
#include <map>

#include "catalog_util.h"
#include "oar/dispatch.h"
#include "oar/kp/functors.h"
#include "oar/plugin_sdk/fused_program.hpp"

namespace oar {

using namespace catalog;

const std::map<std::string, FusableFunctor>& fusable_functors() {
  static const std::map<std::string, FusableFunctor> table = [] {
    std::map<std::string, FusableFunctor> t;
    kp::for_each_functor([&]<class Op>() {
      // A dtype change, an attribute-picked form, or integer-only (fusion is for floating chains).
      if (Op::kind == kp::VARIANT || Op::kind == kp::COMPARE || Op::kind == kp::INTEGRAL) return;
      t[Op::op_name] = {Op::arity, Op::p0_attr, Op::p1_attr};
    });
    return t;
  }();
  return table;
}

namespace {

std::vector<sdk::FusedInstruction> checked_program(const std::string& text, size_t num_inputs) {
  std::vector<sdk::FusedInstruction> program;
  try {
    program = sdk::parse_fused_program(text, int(num_inputs));
  } catch (const std::invalid_argument& e) {
    throw ValueError(e.what());
  }
  for (const auto& ins : program) {
    auto it = fusable_functors().find(ins.op);
    if (it == fusable_functors().end())
      throw ValueError(str("fused_elementwise: '", ins.op, "' is not a fusable elementwise functor"));
    if ((it->second.arity == 2) != (ins.b >= 0))
      throw ValueError(str("fused_elementwise: '", ins.op, "' takes ", it->second.arity, " operand(s)"));
  }
  return program;
}

Attrs functor_attrs(const sdk::FusedInstruction& ins) {
  const FusableFunctor& f = fusable_functors().at(ins.op);
  Attrs attrs;
  if (*f.p0_attr) attrs.set(f.p0_attr, ins.p0);
  if (*f.p1_attr) attrs.set(f.p1_attr, ins.p1);
  return attrs;
}

}  // namespace

void register_fused_ops(OpRegistry& r) {
  InputSpec xs = variadic("x");
  xs.promoted = false;
  OpSchema s = make_schema(
      "fused_elementwise", {xs}, {"y"}, {attr("program", AttrType::kString)},
      [](const InferContext& c) {
        checked_program(c.attrs.get_string("program"), c.inputs.size());
        for (size_t i = 0; i < c.inputs.size(); ++i) {
          require_floating(c, i);
          if (c.dtype(i) != c.dtype(0))
            throw DTypeError(str("fused_elementwise: input ", i, " is ", dtype_name(c.dtype(i)), ", input 0 is ",
                                 dtype_name(c.dtype(0)), " (a fused chain has one dtype)"));
        }
        return std::vector<TensorMeta>{{broadcast_all(c), c.dtype(0)}};
      },
      "a chain of elementwise functors in one pass (made by graph fusion; attribute `program`, see "
      "plugin_sdk/fused_program.hpp)",
      DTypePolicy::kNone);
  s.broadcast = true;
  s.strided_inputs = true;
  s.role = OpRole::kFusion;
  s.gradient = Gradient::kDecomposition;
  s.decompose = [](const std::vector<Tensor>& inputs, const Attrs& attrs) {
    std::vector<Tensor> regs = inputs;
    for (const auto& ins : checked_program(attrs.get_string("program"), inputs.size())) {
      std::vector<Tensor> operands{regs[size_t(ins.a)]};
      if (ins.b >= 0) operands.push_back(regs[size_t(ins.b)]);
      regs.push_back(call1(ins.op, operands, functor_attrs(ins)));
    }
    return std::vector<Tensor>{regs.back()};
  };
  r.add(std::move(s), {"([3,5] [3,5]) program='mul 0x0p+0 0x0p+0 0 1;exp 0x0p+0 0x0p+0 2'",
                       "([2,3,4] [3,1]) program='add 0x0p+0 0x0p+0 0 1;clamp -0x1p+0 0x1p-1 2;tanh 0x0p+0 0x0p+0 3'"});
}

}  // namespace oar
