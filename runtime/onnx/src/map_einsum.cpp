// ONNX Einsum as the catalog's einsum (runtime/src/catalog/composites_einsum.cpp):
// one implementation of the equation for eager code, traces and imported
// models; it contracts pairs of operands with batched matmuls.
#include "import_context.h"

namespace oar::onnx::detail {

namespace {

std::vector<Value*> einsum_op(NodeContext& c) {
  std::vector<Value*> xs;
  for (size_t i = 0; i < c.input_count(); ++i) xs.push_back(c.required_input(i));
  if (xs.empty()) c.invalid("Einsum needs at least one input");
  try {
    return {c.op("einsum", xs, {{"equation", c.attr_string("equation", "")}})};
  } catch (const ValueError& e) {
    c.invalid(e.what());
  } catch (const ShapeError& e) {
    c.invalid(e.what());
  }
}

}  // namespace

void register_einsum_mappers(MapperTable& t) { t.add("Einsum", einsum_op); }

}  // namespace oar::onnx::detail
