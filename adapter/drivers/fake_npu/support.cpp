// fake_npu's support rules: a fixed op set with an NPU's constraints (static
// shapes, constant weights, NCHW activations, few broadcasts). A constraint
// gives a reason; a model that breaks an op's contract is INVALID_ARGUMENT.
#include "support.h"

#include <algorithm>

#include "oar/adapter/driver_sdk.hpp"

namespace fake_npu {

namespace {

using namespace oar_adapter_sdk;

const char* const kOpSet[] = {"conv2d", "conv2d_act", "linear", "linear_act", "matmul",
                              "add", "relu", "max_pool2d", "avg_pool2d", "softmax"};

class Planner {
 public:
  Planner(const oar_adapter_model* m, uint32_t index) : m_(m), index_(index), op_(m->operations[index]), type_(op_->type) {}

  OpPlan run() {
    if (!in_op_set()) return plan_;
    if (type_ == "conv2d" || type_ == "conv2d_act") conv();
    else if (type_ == "linear" || type_ == "linear_act") linear();
    else if (type_ == "matmul") matmul();
    else if (type_ == "add") add();
    else if (type_ == "relu") unary(OpKind::kRelu, true);
    else if (type_ == "softmax") softmax();
    else pool();
    return plan_;
  }

 private:
  [[noreturn]] void broken(const std::string& what) const { throw invalid(operation_label(m_, index_) + ": " + what); }
  bool refuse(const std::string& why) {
    if (plan_.reason.empty()) plan_.reason = why;
    return false;
  }
  const oar_adapter_operand& operand(int32_t i) const { return *m_->operands[i]; }
  std::string label(int32_t i) const { return operand_label(m_, i); }
  std::vector<int64_t> dims(int32_t i) const { return static_dims(m_, i); }

  bool in_op_set() {
    for (const char* t : kOpSet)
      if (type_ == t) return true;
    std::string list;
    for (const char* t : kOpSet) list += std::string(list.empty() ? "" : ", ") + t;
    return refuse(type_ + " is not in fake_npu's op set (" + list + ")");
  }

  // Inputs: `required` of them, then `optional` that may be -1; one output.
  void arity(uint32_t required, uint32_t optional, const char* names) {
    if (op_->input_count < required || op_->input_count > required + optional)
      broken("takes inputs (" + std::string(names) + "), got " + std::to_string(op_->input_count));
    for (uint32_t i = 0; i < required; ++i)
      if (op_->inputs[i] < 0) broken("required input " + std::to_string(i) + " is absent");
    if (op_->output_count != 1) broken("has " + std::to_string(op_->output_count) + " outputs, not 1");
    plan_.output = op_->outputs[0];
  }
  int32_t input(uint32_t i) const { return i < op_->input_count ? op_->inputs[i] : -1; }

  bool static_shape(int32_t i) {
    const oar_adapter_operand& o = operand(i);
    for (uint32_t d = 0; d < o.rank; ++d)
      if (o.dims[d].size < 0)
        return refuse("fake_npu needs static shapes; " + label(i) + " has a dynamic dim " + std::to_string(d));
    return true;
  }

  // An activation: f32/f16, or i8/u8 with a per-tensor scale; 4-D ones NCHW.
  bool activation(int32_t i) {
    if (!static_shape(i)) return false;
    const oar_adapter_operand& o = operand(i);
    const oar_adapter_quant* q = o.quant;
    const bool quantized = q != nullptr && q->scheme != OAR_ADAPTER_QUANT_NONE;
    if (o.dtype != OAR_DTYPE_F32 && o.dtype != OAR_DTYPE_F16 && o.dtype != OAR_DTYPE_I8 && o.dtype != OAR_DTYPE_U8)
      return refuse(label(i) + " has dtype " + dtype_name(o.dtype) + "; fake_npu takes f32, f16 and quantized i8/u8");
    if ((o.dtype == OAR_DTYPE_I8 || o.dtype == OAR_DTYPE_U8) && !quantized)
      return refuse(label(i) + " is " + dtype_name(o.dtype) + " without quantization parameters");
    if (quantized && q->scheme != OAR_ADAPTER_QUANT_PER_TENSOR)
      return refuse(label(i) + " is an activation with per-channel quantization (fake_npu: per tensor only)");
    if (quantized && q->zero_points != nullptr) {
      const int32_t lo = o.dtype == OAR_DTYPE_U8 ? 0 : -128, hi = o.dtype == OAR_DTYPE_U8 ? 255 : 127;
      if (q->zero_points[0] < lo || q->zero_points[0] > hi)
        broken(label(i) + " has zero point " + std::to_string(q->zero_points[0]) + " outside its dtype's range");
    }
    if (o.rank == 4 && o.layout == OAR_ADAPTER_LAYOUT_NHWC)
      return refuse(label(i) + " is 4-D NHWC; fake_npu takes 4-D activations as NCHW");
    return true;
  }

  // Weights: constant f32/f16, or i8 quantized symmetrically per tensor or per output channel.
  bool weight(int32_t i, int32_t out_axis) {
    if (!static_shape(i)) return false;
    const oar_adapter_operand& o = operand(i);
    if (o.lifetime != OAR_ADAPTER_LIFETIME_CONSTANT)
      return refuse(type_ + ": weights must be constant (" + label(i) + " is not)");
    if (o.dtype == OAR_DTYPE_F32 || o.dtype == OAR_DTYPE_F16) return true;
    if (o.dtype != OAR_DTYPE_I8)
      return refuse(type_ + ": weights of dtype " + dtype_name(o.dtype) + " (fake_npu takes f32, f16 or symmetric i8)");
    const oar_adapter_quant* q = o.quant;
    if (q == nullptr || q->scheme == OAR_ADAPTER_QUANT_NONE)
      return refuse(type_ + ": i8 weights " + label(i) + " have no quantization parameters");
    if (q->scheme == OAR_ADAPTER_QUANT_PER_CHANNEL && q->channel_axis != out_axis)
      return refuse(type_ + ": i8 weights must be quantized per output channel (axis " + std::to_string(out_axis) +
                    "), not axis " + std::to_string(q->channel_axis));
    if (q->zero_points != nullptr)
      for (uint32_t s = 0; s < q->scale_count; ++s)
        if (q->zero_points[s] != 0) return refuse(type_ + ": i8 weights must be symmetric (zero points 0)");
    return true;
  }

  bool bias(int32_t i) {
    if (i < 0) return true;
    if (!static_shape(i)) return false;
    const oar_adapter_operand& o = operand(i);
    if (o.lifetime != OAR_ADAPTER_LIFETIME_CONSTANT) return refuse(type_ + ": bias must be constant");
    if (o.dtype != OAR_DTYPE_F32 && o.dtype != OAR_DTYPE_F16)
      return refuse(type_ + ": bias of dtype " + dtype_name(o.dtype) + " (fake_npu takes f32 or f16)");
    return true;
  }

  void expect_output(const std::vector<int64_t>& want) {
    if (dims(plan_.output) != want)
      broken(label(plan_.output) + " has dims " + dims_text(dims(plan_.output)) + ", expected " + dims_text(want));
  }

  // [h, w] from an ints attribute of one or two entries (bounded, so shape arithmetic cannot overflow).
  void pair(const char* name, std::vector<int64_t> fallback, int64_t& h, int64_t& w) {
    std::vector<int64_t> v = attr_ints(op_, name, std::move(fallback));
    if (v.empty() || v.size() > 2) broken("attribute '" + std::string(name) + "' needs 1 or 2 values");
    h = v.front(), w = v.back();
    constexpr int64_t kLimit = int64_t(1) << 24;
    if (h < -kLimit || h > kLimit || w < -kLimit || w > kLimit)
      broken("attribute '" + std::string(name) + "' is " + dims_text(v) + ", beyond 2^24");
  }

  bool fused_activation() {
    if (type_ != "conv2d_act" && type_ != "linear_act") return true;
    std::string act = attr_string(op_, "activation", "relu");
    if (act != "relu") return refuse(type_ + ": activation '" + act + "' is not supported (only relu)");
    plan_.relu = true;
    return true;
  }

  void conv() {
    plan_.kind = OpKind::kConv;
    arity(2, 1, "x, weight, bias?");
    plan_.x = input(0), plan_.weight = input(1), plan_.bias = input(2);
    if (!activation(plan_.x) || !weight(plan_.weight, 0) || !bias(plan_.bias) || !activation(plan_.output)) return;
    const std::vector<int64_t> x = dims(plan_.x), w = dims(plan_.weight);
    if (x.size() != 4) broken("x must be 4-D [N, C, H, W], got " + dims_text(x));
    if (w.size() != 4 || w[2] <= 0 || w[3] <= 0 || w[2] > (int64_t(1) << 24) || w[3] > (int64_t(1) << 24))
      broken("weight must be 4-D [Cout, C / groups, kh, kw] with a kernel, got " + dims_text(w));
    if (plan_.bias >= 0 && dims(plan_.bias) != std::vector<int64_t>{w[0]})
      broken("bias has dims " + dims_text(dims(plan_.bias)) + ", expected [" + std::to_string(w[0]) + "]");
    int64_t dh = 1, dw = 1;
    pair("stride", {1, 1}, plan_.sh, plan_.sw);
    pair("padding", {0, 0}, plan_.ph, plan_.pw);
    pair("dilation", {1, 1}, dh, dw);
    plan_.groups = attr_int(op_, "groups", 1);
    plan_.kh = w[2], plan_.kw = w[3];
    if (plan_.sh <= 0 || plan_.sw <= 0 || plan_.ph < 0 || plan_.pw < 0 || dh <= 0 || dw <= 0)
      broken("stride and dilation must be positive, padding non-negative");
    const int64_t g = plan_.groups;
    if (g <= 0 || x[1] % g != 0 || w[0] % g != 0 || w[1] != x[1] / g)
      broken("groups " + std::to_string(g) + " does not fit x " + dims_text(x) + " and weight " + dims_text(w));
    // The output the model declares follows the real (dilated) window, even where the NPU refuses dilation.
    const int64_t oh = window_out(x[2], dh * (w[2] - 1) + 1, plan_.sh, plan_.ph);
    const int64_t ow = window_out(x[3], dw * (w[3] - 1) + 1, plan_.sw, plan_.pw);
    if (oh <= 0 || ow <= 0) broken("the kernel " + dims_text({w[2], w[3]}) + " is larger than the padded input");
    expect_output({x[0], w[0], oh, ow});
    if (dh != 1 || dw != 1) refuse(type_ + ": dilation " + dims_text({dh, dw}) + " is not supported (only 1)");
    if (g != 1 && g != x[1])
      refuse(type_ + ": groups " + std::to_string(g) + " is not supported (only 1 or depthwise)");
    fused_activation();
  }

  void linear() {
    plan_.kind = OpKind::kLinear;
    arity(2, 1, "x, weight, bias?");
    plan_.x = input(0), plan_.weight = input(1), plan_.bias = input(2);
    if (!activation(plan_.x) || !weight(plan_.weight, 0) || !bias(plan_.bias) || !activation(plan_.output)) return;
    std::vector<int64_t> x = dims(plan_.x);
    const std::vector<int64_t> w = dims(plan_.weight);
    if (x.empty() || w.size() != 2 || w[1] != x.back())
      broken("x " + dims_text(x) + " and weight " + dims_text(w) + " do not fit x [..., in] @ weight [out, in]^T");
    if (plan_.bias >= 0 && dims(plan_.bias) != std::vector<int64_t>{w[0]})
      broken("bias has dims " + dims_text(dims(plan_.bias)) + ", expected [" + std::to_string(w[0]) + "]");
    const bool four_d = x.size() == 4;
    x.back() = w[0];
    expect_output(x);
    if (four_d) refuse(type_ + " on a 4-D input is not supported (fake_npu keeps 4-D tensors NHWC)");
    fused_activation();
  }

  void matmul() {
    arity(2, 0, "a, b");
    plan_.x = input(0);
    const int32_t b = input(1);
    const bool constant_b = operand(b).lifetime == OAR_ADAPTER_LIFETIME_CONSTANT;
    plan_.kind = constant_b ? OpKind::kLinear : OpKind::kMatmul;
    (constant_b ? plan_.weight : plan_.other) = b;
    plan_.weight_kn = constant_b;
    if (!activation(plan_.x) || !(constant_b ? weight(b, 1) : activation(b)) || !activation(plan_.output)) return;
    const std::vector<int64_t> a = dims(plan_.x), bd = dims(b);
    if (a.size() != 2 || bd.size() != 2)
      return (void)refuse("matmul of " + dims_text(a) + " x " + dims_text(bd) + " (fake_npu multiplies 2-D by 2-D only)");
    if (a[1] != bd[0]) broken("a " + dims_text(a) + " and b " + dims_text(bd) + " do not fit a [M, K] @ b [K, N]");
    expect_output({a[0], bd[1]});
  }

  // One input, one output; `same_dims`: an elementwise op.
  void unary(OpKind kind, bool same_dims) {
    plan_.kind = kind;
    arity(1, 0, "x");
    plan_.x = input(0);
    if (!activation(plan_.x) || !activation(plan_.output)) return;
    if (same_dims) expect_output(dims(plan_.x));
  }

  void softmax() {
    unary(OpKind::kSoftmax, true);
    if (!plan_.reason.empty()) return;
    const std::vector<int64_t> x = dims(plan_.x);
    int64_t dim = attr_int(op_, "dim", -1);
    if (dim < -int64_t(x.size()) || dim >= int64_t(x.size()) || x.empty())
      broken("dim " + std::to_string(dim) + " is outside rank " + std::to_string(x.size()));
    if (dim < 0) dim += int64_t(x.size());
    if (x.size() != 2 || dim != 1)
      refuse("softmax over dim " + std::to_string(dim) + " of a " + std::to_string(x.size()) +
             "-D tensor (fake_npu: the last dim of a 2-D tensor only)");
  }

  void pool() {
    const bool max = type_ == "max_pool2d";
    unary(max ? OpKind::kMaxPool : OpKind::kAvgPool, false);
    if (!plan_.reason.empty()) return;
    const std::vector<int64_t> x = dims(plan_.x);
    if (x.size() != 4) broken("x must be 4-D [N, C, H, W], got " + dims_text(x));
    if (find_attr(op_, "kernel_size") == nullptr) broken("attribute 'kernel_size' is missing");
    pair("kernel_size", {}, plan_.kh, plan_.kw);
    std::vector<int64_t> stride = attr_ints(op_, "stride", {});
    if (stride.empty()) plan_.sh = plan_.kh, plan_.sw = plan_.kw;  // [] means stride = kernel_size
    else pair("stride", {}, plan_.sh, plan_.sw);
    pair("padding", {0, 0}, plan_.ph, plan_.pw);
    if (plan_.kh <= 0 || plan_.kw <= 0 || plan_.sh <= 0 || plan_.sw <= 0 || plan_.ph < 0 || plan_.pw < 0)
      broken("kernel_size and stride must be positive, padding non-negative");
    if (plan_.ph * 2 > plan_.kh || plan_.pw * 2 > plan_.kw) broken("padding must be at most half the kernel size");
    if (x[2] == 0 || x[3] == 0) broken("x has an empty plane " + dims_text(x));
    const int64_t oh = window_out(x[2], plan_.kh, plan_.sh, plan_.ph), ow = window_out(x[3], plan_.kw, plan_.sw, plan_.pw);
    if (oh <= 0 || ow <= 0) broken("the window is larger than the padded input");
    plan_.count_include_pad = max ? true : attr_int(op_, "count_include_pad", 1) != 0;
    // Before the output check: ceil_mode outputs may be one larger than the NPU's floor.
    if (attr_int(op_, "ceil_mode", 0) != 0) return (void)refuse(type_ + ": ceil_mode is not supported");
    expect_output({x[0], x[1], oh, ow});
  }

  // Can dims d reach output dims o in NPU memory? Same dims, a scalar, per
  // channel ([1, C, 1, 1] onto 4-D, channels innermost in NHWC) or along the
  // last dim of other ranks: all of them index d at i % size(d).
  static bool npu_broadcast(const std::vector<int64_t>& d, const std::vector<int64_t>& o) {
    if (d == o || element_count(d) == 1) return true;
    if (d.size() > o.size() || o.empty()) return false;
    const size_t keep = o.size() == 4 ? 1 : o.size() - 1;  // the one axis d may keep
    const size_t lead = o.size() - d.size();
    for (size_t k = 0; k < o.size(); ++k)
      if ((k < lead ? 1 : d[k - lead]) != (k == keep ? o[k] : 1)) return false;
    return true;
  }

  void add() {
    plan_.kind = OpKind::kAdd;
    arity(2, 0, "a, b");
    plan_.x = input(0), plan_.other = input(1);
    if (!activation(plan_.x) || !activation(plan_.other) || !activation(plan_.output)) return;
    const std::vector<int64_t> a = dims(plan_.x), b = dims(plan_.other), o = dims(plan_.output);
    // numpy broadcasting of a and b must give the output's dims
    const size_t rank = std::max(a.size(), b.size());
    std::vector<int64_t> want(rank);
    for (size_t k = 0; k < rank; ++k) {
      const int64_t da = k + a.size() >= rank ? a[k + a.size() - rank] : 1;
      const int64_t db = k + b.size() >= rank ? b[k + b.size() - rank] : 1;
      if (da != db && da != 1 && db != 1) broken("a " + dims_text(a) + " and b " + dims_text(b) + " do not broadcast");
      want[k] = da == 1 ? db : da;
    }
    expect_output(want);
    if (a != o && b != o)
      return (void)refuse("add broadcasts both " + dims_text(a) + " and " + dims_text(b) +
                          " (fake_npu: one operand must have the output's dims)");
    if (!npu_broadcast(a, o) || !npu_broadcast(b, o))
      refuse("add broadcasts " + dims_text(a == o ? b : a) + " onto " + dims_text(o) +
             " (fake_npu: same dims, a scalar, per channel [1, C, 1, 1] onto 4-D, or along the last dim of other ranks)");
  }

  const oar_adapter_model* m_;
  uint32_t index_;
  const oar_adapter_operation* op_;
  std::string type_;
  OpPlan plan_;
};

}  // namespace

OpPlan plan_operation(const oar_adapter_model* m, uint32_t index) { return Planner(m, index).run(); }

}  // namespace fake_npu
