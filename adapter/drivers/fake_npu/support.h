// What fake_npu can run: the rules of query_operation, also used by compile.
#pragma once

#include <cstdint>
#include <string>

#include "program.h"

namespace fake_npu {

// An operation as the NPU sees it (operand indices are the model's).
struct OpPlan {
  std::string reason;  // non-empty: the NPU cannot run it, and why
  OpKind kind = OpKind::kRelu;
  int32_t x = -1;       // the activation (add, matmul: the left side)
  int32_t other = -1;   // add: the right side; matmul: the right side when it is not constant
  int32_t weight = -1;  // conv, linear; matmul's right side when constant
  int32_t bias = -1;
  bool weight_kn = false;  // the weight is matmul's b [K, N]: output channels are its columns
  int32_t output = -1;
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, ph = 0, pw = 0, groups = 1;
  bool relu = false;
  bool count_include_pad = true;
};

// Plans operation `index` of a validated model. Throws INVALID_ARGUMENT for
// an operation that breaks its op's contract (arity, shapes, attributes).
OpPlan plan_operation(const oar_adapter_model* m, uint32_t index);

}  // namespace fake_npu
