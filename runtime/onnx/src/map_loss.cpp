// ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. ONNX adds
// per-class weights to PyTorch's semantics (a weighted mean divides by the
// summed weights of the counted targets), which oar's nll_loss lacks, so the
// loss is composed: gather the target's score along the class dim, weight
// it, zero the ignored positions, reduce.
#include "import_context.h"

namespace oar::onnx::detail {

namespace {

Value* nll(NodeContext& c, Value* scores, Value* target, Value* weight) {
  const Shape& ts = c.shape(target);
  DType d = c.dtype(scores);
  DType it = c.dtype(target);
  if (it != DType::i64 && it != DType::i32) c.invalid(str("target must be int32 or int64, got ", dtype_name(it)));
  if (c.rank(scores) != c.rank(target) + 1) c.invalid("scores must be [N, C, d...] with target [N, d...]");
  Value* valid = nullptr;
  Value* safe = target;
  if (c.has_attr("ignore_index")) {
    valid = c.op("ne", {target, c.scalar(double(c.attr_int("ignore_index")), it)});
    safe = c.where(valid, target, c.scalar(0, it));  // any in-range class; its term is zeroed
  }
  Value* picked = c.reshape(c.op("gather", {scores, c.unsqueeze(safe, 1)}, {{"dim", int64_t(1)}}), ts);
  Value* w = nullptr;
  if (weight != nullptr)
    w = c.reshape(c.op("index_select", {weight, c.reshape(safe, {numel_of(ts)})}, {{"dim", int64_t(0)}}), ts);
  if (valid != nullptr) {
    Value* mask = c.cast(valid, d);
    w = w != nullptr ? c.mul(w, mask) : mask;
  }
  Value* loss = c.op("neg", {picked});
  if (w != nullptr) loss = c.mul(loss, w);
  std::string reduction = c.attr_string("reduction", "mean");
  if (reduction == "none") return loss;
  Value* total = c.op("sum", {loss});
  if (reduction == "sum") return total;
  if (reduction != "mean") c.invalid(str("reduction must be none, sum or mean, got '", reduction, "'"));
  if (w == nullptr) return c.op("mean", {loss});
  return c.div(total, c.op("sum", {w}));
}

}  // namespace

void register_loss_mappers(MapperTable& t) {
  t.add("NegativeLogLikelihoodLoss", [](NodeContext& c) -> std::vector<Value*> {
    return {nll(c, c.required_input(0), c.required_input(1), c.input(2))};
  });
  t.add("SoftmaxCrossEntropyLoss", [](NodeContext& c) -> std::vector<Value*> {
    Value* scores = c.required_input(0);
    if (c.rank(scores) < 2) c.invalid("scores must be [N, C, d...]");
    Value* log_prob = c.op("log_softmax", {scores}, {{"dim", int64_t(1)}});
    return {nll(c, log_prob, c.required_input(1), c.input(2)), log_prob};
  });
}

}  // namespace oar::onnx::detail
