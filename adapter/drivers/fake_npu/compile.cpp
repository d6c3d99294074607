// compile: turns a validated, fully supported model into a Program (weights
// repacked for NHWC and quantized or rounded for the context's precision).
#include <cstring>

#include "oar/adapter/driver_sdk.hpp"
#include "program.h"
#include "support.h"

namespace fake_npu {

namespace {

using namespace oar_adapter_sdk;

Quant per_tensor_quant(const oar_adapter_operand& o) {
  Quant q;
  if (o.quant == nullptr || o.quant->scheme != OAR_ADAPTER_QUANT_PER_TENSOR) return q;
  q.on = true;
  q.scale = o.quant->scales[0];
  q.zero_point = o.quant->zero_points != nullptr ? o.quant->zero_points[0] : 0;
  if (o.dtype == OAR_DTYPE_U8) q.qmin = 0, q.qmax = 255;
  return q;
}

// A constant's elements as real numbers (dequantized), in the model's order.
std::vector<float> constant_values(const oar_adapter_operand& o) {
  std::vector<int64_t> dims;
  for (uint32_t d = 0; d < o.rank; ++d) dims.push_back(o.dims[d].size);
  const int64_t n = element_count(dims);
  std::vector<float> out(size_t(n), 0.0f);
  const unsigned char* raw = static_cast<const unsigned char*>(o.data);
  if (o.dtype == OAR_DTYPE_F32) {
    if (n > 0) std::memcpy(out.data(), raw, size_t(n) * 4);
  } else if (o.dtype == OAR_DTYPE_F16) {
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, raw + 2 * i, 2);
      out[size_t(i)] = f16_bits_to_f32(h);
    }
  } else {  // i8/u8 with quantization parameters (support checked)
    const oar_adapter_quant* q = o.quant;
    int64_t inner = 1, channels = 1;
    if (q->scheme == OAR_ADAPTER_QUANT_PER_CHANNEL) {
      channels = dims[size_t(q->channel_axis)];
      for (size_t d = size_t(q->channel_axis) + 1; d < dims.size(); ++d) inner *= dims[d];
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t c = channels > 1 ? (i / inner) % channels : 0;
      const int32_t v = o.dtype == OAR_DTYPE_U8 ? int32_t(raw[i]) : int32_t(int8_t(raw[i]));
      const int32_t zp = q->zero_points != nullptr ? q->zero_points[c] : 0;
      out[size_t(i)] = q->scales[c] * float(v - zp);
    }
  }
  return out;
}

// NCHW -> NHWC for a 4-D constant read as an activation.
std::vector<float> to_npu_layout(std::vector<float> v, const std::vector<int64_t>& d) {
  if (d.size() != 4) return v;
  std::vector<float> out(v.size());
  const int64_t N = d[0], C = d[1], H = d[2], W = d[3];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) out[size_t(((n * H + h) * W + w) * C + c)] = v[size_t(((n * C + c) * H + h) * W + w)];
  return out;
}

class Builder {
 public:
  Builder(const oar_adapter_model* m, Precision precision) : m_(m) {
    p_.precision = precision;
    p_.values.resize(m->operand_count);
  }

  Program build(const std::vector<uint32_t>& order) {
    for (uint32_t i = 0; i < m_->input_count; ++i) p_.inputs.push_back(boundary(m_->inputs[i]));
    for (uint32_t k : order) p_.ops.push_back(op(plan_operation(m_, k)));
    for (uint32_t i = 0; i < m_->output_count; ++i) p_.outputs.push_back(boundary(m_->outputs[i]));
    return std::move(p_);
  }

 private:
  bool fp16() const { return p_.precision == Precision::kFp16; }
  bool int8() const { return p_.precision == Precision::kInt8; }

  // The value of an operand the program reads or writes as an activation.
  int32_t touch(int32_t index) {
    Value& v = p_.values[size_t(index)];
    if (v.used) return index;
    const oar_adapter_operand& o = *m_->operands[index];
    v.used = true;
    v.dims = static_dims(m_, index);
    v.half = o.dtype == OAR_DTYPE_F16;
    if (o.dtype == OAR_DTYPE_I8 || o.dtype == OAR_DTYPE_U8) v.storage = per_tensor_quant(o);
    v.activation = per_tensor_quant(o);
    if (o.lifetime == OAR_ADAPTER_LIFETIME_CONSTANT) {
      v.constant = true;
      v.data = to_npu_layout(constant_values(o), v.dims);
      if (fp16()) round_to_half(v.data.data(), int64_t(v.data.size()));
    }
    return index;
  }

  Boundary boundary(int32_t index) {
    const oar_adapter_operand& o = *m_->operands[index];
    touch(index);
    return {index, o.dtype, o.name != nullptr ? o.name : ""};
  }

  // Weights as rows of output channels. `rows_first`: the model stores them
  // [rows, ...] (conv OIHW, linear [out, in]); otherwise [inner, rows] (matmul's b).
  Weights weights(int32_t index, bool rows_first, bool conv) {
    const oar_adapter_operand& o = *m_->operands[index];
    const std::vector<int64_t> d = static_dims(m_, index);
    Weights w;
    w.rows = rows_first ? d[0] : d[1];
    w.inner = element_count(d) / (w.rows > 0 ? w.rows : 1);
    const std::vector<float> real = constant_values(o);
    std::vector<float> packed(real.size());
    std::vector<size_t> from(real.size());  // packed position -> model position
    for (int64_t r = 0; r < w.rows; ++r)
      for (int64_t i = 0; i < w.inner; ++i) {
        size_t src;
        if (conv) {  // OIHW [r, cg, kh, kw] -> [r, kh, kw, cg]
          const int64_t cg = d[1], kh = d[2], kw = d[3];
          const int64_t c = i % cg, j = (i / cg) % kw, h = i / (cg * kw);
          src = size_t(((r * cg + c) * kh + h) * kw + j);
        } else {
          src = size_t(rows_first ? r * w.inner + i : i * w.rows + r);
        }
        from[size_t(r * w.inner + i)] = src;
        packed[size_t(r * w.inner + i)] = real[src];
      }
    if (!int8()) {
      w.f = std::move(packed);
      if (fp16()) round_to_half(w.f.data(), int64_t(w.f.size()));
      return w;
    }
    if (o.dtype != OAR_DTYPE_I8) {
      quantize_rows(packed.data(), w.rows, w.inner, w.q, w.scales);
      return w;
    }
    // Caller-quantized i8 weights: their integers and scales as given.
    const int8_t* raw = static_cast<const int8_t*>(o.data);
    w.q.resize(packed.size());
    for (size_t k = 0; k < packed.size(); ++k) w.q[k] = raw[from[k]];
    w.scales.resize(size_t(w.rows));
    for (int64_t r = 0; r < w.rows; ++r)
      w.scales[size_t(r)] = o.quant->scheme == OAR_ADAPTER_QUANT_PER_CHANNEL ? o.quant->scales[r] : o.quant->scales[0];
    return w;
  }

  Op op(const OpPlan& plan) {
    if (!plan.reason.empty()) throw unsupported("internal: building an unsupported operation");
    Op op;
    op.kind = plan.kind;
    op.inputs.push_back(touch(plan.x));
    if (plan.other >= 0) op.inputs.push_back(touch(plan.other));
    op.output = touch(plan.output);
    op.kh = plan.kh, op.kw = plan.kw, op.sh = plan.sh, op.sw = plan.sw, op.ph = plan.ph, op.pw = plan.pw;
    op.groups = plan.groups;
    op.relu = plan.relu;
    op.count_include_pad = plan.count_include_pad;
    if (plan.weight >= 0) op.weights = weights(plan.weight, !plan.weight_kn, plan.kind == OpKind::kConv);
    if (plan.bias >= 0) {
      op.bias = constant_values(*m_->operands[plan.bias]);
      if (fp16()) round_to_half(op.bias.data(), int64_t(op.bias.size()));
    }
    return op;
  }

  const oar_adapter_model* m_;
  Program p_;
};

}  // namespace

Program build_program(const oar_adapter_model* m, const std::vector<uint32_t>& order, Precision precision) {
  return Builder(m, precision).build(order);
}

}  // namespace fake_npu
