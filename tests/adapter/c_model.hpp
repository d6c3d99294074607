// Test helper: builds an oar_adapter_model by hand (the C arrays a driver
// receives), owning every array and string, so driver tests can hand a driver
// exact models, and mutate them one way at a time (negative tests).
//
//   CModel m;
//   int x = m.input(OAR_DTYPE_F32, {1, 3, 8, 8}, OAR_ADAPTER_LAYOUT_NCHW);
//   int w = m.constant(OAR_DTYPE_F32, {4, 3, 3, 3}, weights.data(), OAR_ADAPTER_LAYOUT_OIHW);
//   int y = m.output(OAR_DTYPE_F32, {1, 4, 6, 6});
//   m.operation("conv2d", {x, w, -1}, {y}, {CModel::ints("stride", {1, 1}), ...});
//   const oar_adapter_model* model = m.model();
#pragma once

#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "oar/adapter/oar_adapter_driver.h"

namespace oar_test {

class CModel {
 public:
  struct Attr {
    std::string name;
    oar_attr_kind_t kind = OAR_ATTR_INT;
    int64_t i = 0;
    double f = 0;
    std::string s;
    std::vector<int64_t> ints;
    std::vector<double> floats;
  };
  static Attr integer(std::string name, int64_t v) { return {std::move(name), OAR_ATTR_INT, v, 0, {}, {}, {}}; }
  static Attr boolean(std::string name, bool v) { return {std::move(name), OAR_ATTR_BOOL, v ? 1 : 0, 0, {}, {}, {}}; }
  static Attr real(std::string name, double v) { return {std::move(name), OAR_ATTR_FLOAT, 0, v, {}, {}, {}}; }
  static Attr string(std::string name, std::string v) { return {std::move(name), OAR_ATTR_STRING, 0, 0, std::move(v), {}, {}}; }
  static Attr ints(std::string name, std::vector<int64_t> v) { return {std::move(name), OAR_ATTR_INTS, 0, 0, {}, std::move(v), {}}; }
  static Attr floats(std::string name, std::vector<double> v) { return {std::move(name), OAR_ATTR_FLOATS, 0, 0, {}, {}, std::move(v)}; }

  // Operands; each returns its index.
  int input(oar_dtype_t dtype, std::vector<int64_t> dims, oar_adapter_layout_t layout = OAR_ADAPTER_LAYOUT_PLAIN,
            const std::string& name = "") {
    int i = operand(dtype, dims, OAR_ADAPTER_LIFETIME_INPUT, layout, name);
    inputs_.push_back(i);
    return i;
  }
  int output(oar_dtype_t dtype, std::vector<int64_t> dims, oar_adapter_layout_t layout = OAR_ADAPTER_LAYOUT_PLAIN,
             const std::string& name = "") {
    int i = operand(dtype, dims, OAR_ADAPTER_LIFETIME_OUTPUT, layout, name);
    outputs_.push_back(i);
    return i;
  }
  int temporary(oar_dtype_t dtype, std::vector<int64_t> dims, oar_adapter_layout_t layout = OAR_ADAPTER_LAYOUT_PLAIN) {
    return operand(dtype, dims, OAR_ADAPTER_LIFETIME_TEMPORARY, layout, "");
  }
  // `bytes` bytes of data are copied (dims x dtype size when bytes is 0).
  int constant(oar_dtype_t dtype, std::vector<int64_t> dims, const void* data,
               oar_adapter_layout_t layout = OAR_ADAPTER_LAYOUT_PLAIN, size_t bytes = 0) {
    int i = operand(dtype, dims, OAR_ADAPTER_LIFETIME_CONSTANT, layout, "");
    size_t n = bytes != 0 ? bytes : size_t(count(dims)) * elem_size(dtype);
    auto& blob = blobs_.emplace_back(n);
    if (n > 0) std::memcpy(blob.data(), data, n);
    operands_[size_t(i)]->data = blob.data();
    operands_[size_t(i)]->data_size = n;
    return i;
  }
  // Marks an operand quantized (per tensor: axis -1 and one scale).
  void quantize(int operand, std::vector<float> scales, std::vector<int32_t> zero_points = {}, int32_t axis = -1) {
    auto q = std::make_unique<oar_adapter_quant>();
    q->struct_size = sizeof(oar_adapter_quant);
    q->scheme = axis < 0 ? OAR_ADAPTER_QUANT_PER_TENSOR : OAR_ADAPTER_QUANT_PER_CHANNEL;
    q->channel_axis = axis < 0 ? 0 : axis;
    auto& s = float_store_.emplace_back(std::move(scales));
    auto& z = int32_store_.emplace_back(std::move(zero_points));
    q->scale_count = uint32_t(s.size());
    q->scales = s.data();
    q->zero_points = z.empty() ? nullptr : z.data();
    operands_[size_t(operand)]->quant = q.get();
    quants_.push_back(std::move(q));
  }

  int operation(const std::string& type, std::vector<int32_t> inputs, std::vector<int32_t> outputs,
                std::vector<Attr> attrs = {}, const std::string& name = "") {
    auto op = std::make_unique<oar_adapter_operation>();
    std::memset(op.get(), 0, sizeof(*op));
    op->struct_size = sizeof(*op);
    op->type = strings_.emplace_back(type).c_str();
    op->name = strings_.emplace_back(name).c_str();
    auto& in = int32_store_.emplace_back(inputs.begin(), inputs.end());
    auto& out = int32_store_.emplace_back(outputs.begin(), outputs.end());
    op->input_count = uint32_t(in.size());
    op->inputs = in.data();
    op->output_count = uint32_t(out.size());
    op->outputs = out.data();
    auto& ptrs = attr_ptrs_.emplace_back();
    for (Attr& a : attrs) {
      auto& owned = attr_store_.emplace_back(std::move(a));
      auto& c = attr_c_.emplace_back();
      std::memset(&c, 0, sizeof(c));
      c.struct_size = sizeof(oar_attr);
      c.name = owned.name.c_str();
      c.kind = owned.kind;
      c.i = owned.i;
      c.f = owned.f;
      c.s = owned.s.c_str();
      c.ints = owned.ints.data();
      c.floats = owned.floats.data();
      c.count = int64_t(owned.kind == OAR_ATTR_FLOATS ? owned.floats.size() : owned.ints.size());
      ptrs.push_back(&c);
    }
    op->attr_count = uint32_t(ptrs.size());
    op->attrs = ptrs.data();
    operations_.push_back(std::move(op));
    return int(operations_.size()) - 1;
  }

  // The C model; valid until the next change to this CModel.
  const oar_adapter_model* model() {
    operand_ptrs_.clear();
    for (auto& o : operands_) operand_ptrs_.push_back(o.get());
    operation_ptrs_.clear();
    for (auto& o : operations_) operation_ptrs_.push_back(o.get());
    std::memset(&model_, 0, sizeof(model_));
    model_.struct_size = sizeof(model_);
    model_.operand_count = uint32_t(operand_ptrs_.size());
    model_.operands = operand_ptrs_.data();
    model_.operation_count = uint32_t(operation_ptrs_.size());
    model_.operations = operation_ptrs_.data();
    model_.input_count = uint32_t(inputs_.size());
    model_.inputs = inputs_.data();
    model_.output_count = uint32_t(outputs_.size());
    model_.outputs = outputs_.data();
    return &model_;
  }

  // Direct access for mutation tests.
  oar_adapter_operand& operand_at(int i) { return *operands_[size_t(i)]; }
  oar_adapter_operation& operation_at(int i) { return *operations_[size_t(i)]; }
  std::vector<int32_t>& model_inputs() { return inputs_; }
  std::vector<int32_t>& model_outputs() { return outputs_; }
  // The dims array of an operand (writable).
  oar_adapter_dim* dims_of(int i) { return const_cast<oar_adapter_dim*>(operands_[size_t(i)]->dims); }
  // The inputs array of an operation (writable).
  int32_t* inputs_of(int op) { return const_cast<int32_t*>(operations_[size_t(op)]->inputs); }

  static int64_t count(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
  static size_t elem_size(oar_dtype_t t) {
    switch (t) {
      case OAR_DTYPE_F64: case OAR_DTYPE_I64: return 8;
      case OAR_DTYPE_F32: case OAR_DTYPE_I32: return 4;
      case OAR_DTYPE_F16: case OAR_DTYPE_BF16: return 2;
      default: return 1;
    }
  }

 private:
  int operand(oar_dtype_t dtype, const std::vector<int64_t>& dims, oar_adapter_lifetime_t lifetime,
              oar_adapter_layout_t layout, const std::string& name) {
    auto o = std::make_unique<oar_adapter_operand>();
    std::memset(o.get(), 0, sizeof(*o));
    o->struct_size = sizeof(*o);
    o->name = strings_.emplace_back(name).c_str();
    o->dtype = dtype;
    o->layout = layout;
    o->lifetime = lifetime;
    auto& d = dim_store_.emplace_back();
    for (int64_t v : dims) d.push_back({v, v, v, nullptr});
    o->rank = uint32_t(d.size());
    o->dims = d.data();
    operands_.push_back(std::move(o));
    return int(operands_.size()) - 1;
  }

  std::deque<std::string> strings_;
  std::deque<std::vector<oar_adapter_dim>> dim_store_;
  std::deque<std::vector<int32_t>> int32_store_;
  std::deque<std::vector<float>> float_store_;
  std::deque<std::vector<unsigned char>> blobs_;
  std::deque<Attr> attr_store_;
  std::deque<oar_attr> attr_c_;
  std::deque<std::vector<const oar_attr*>> attr_ptrs_;
  std::vector<std::unique_ptr<oar_adapter_quant>> quants_;
  std::vector<std::unique_ptr<oar_adapter_operand>> operands_;
  std::vector<std::unique_ptr<oar_adapter_operation>> operations_;
  std::vector<const oar_adapter_operand*> operand_ptrs_;
  std::vector<const oar_adapter_operation*> operation_ptrs_;
  std::vector<int32_t> inputs_, outputs_;
  oar_adapter_model model_{};
};

// Loads a driver library with dlopen and calls its entry with a host table
// whose set_error keeps the last message (tests read last_error()).
const oar_adapter_driver_api* load_driver_for_test(const std::string& path, std::string* error);
std::string last_error();

}  // namespace oar_test
