// execute: checks the caller's buffers, converts them at the boundary (dtype,
// NCHW <-> NHWC), runs the ops in order and rounds each written tensor to
// what the NPU stores (half in fp16, the i8/u8 grid of quantized operands).
#include <cstring>

#include "kernels.h"
#include "oar/adapter/driver_sdk.hpp"
#include "program.h"

namespace fake_npu {

using oar_adapter_sdk::dtype_name;
using oar_adapter_sdk::invalid;

std::vector<HostBuffer> check_buffers(const Program& p, const oar_adapter_buffer* const* buffers, uint32_t count,
                                      bool inputs) {
  const std::vector<Boundary>& expected = inputs ? p.inputs : p.outputs;
  const char* kind = inputs ? "input" : "output";
  if (count != expected.size())
    throw invalid(std::to_string(count) + " " + kind + " buffers given, the model has " + std::to_string(expected.size()));
  if (count > 0 && buffers == nullptr) throw invalid(std::string("the ") + kind + " buffer list is NULL");
  std::vector<HostBuffer> out;
  for (uint32_t i = 0; i < count; ++i) {
    const Boundary& b = expected[i];
    const std::vector<int64_t>& dims = p.values[size_t(b.value)].dims;
    std::string what = std::string(kind) + " " + std::to_string(i);
    if (!b.name.empty()) what += " ('" + b.name + "')";
    const oar_adapter_buffer* buf = buffers[i];
    if (!OAR_STRUCT_HAS(buf, oar_adapter_buffer, dims)) throw invalid(what + ": NULL buffer or struct_size too small");
    if (buf->dtype != b.dtype)
      throw invalid(what + ": dtype " + dtype_name(buf->dtype) + " given, the model's is " + dtype_name(b.dtype));
    if (buf->rank > 0 && buf->dims == nullptr) throw invalid(what + ": dims is NULL");
    std::vector<int64_t> given(buf->dims, buf->dims + buf->rank);
    if (given != dims) throw invalid(what + ": dims " + dims_text(given) + " given, the model's are " + dims_text(dims));
    const uint64_t need = uint64_t(numel(dims)) * oar_adapter_sdk::dtype_size(b.dtype);
    if (buf->size < need)
      throw invalid(what + ": " + std::to_string(buf->size) + " bytes given, its dims and dtype need " + std::to_string(need));
    if (buf->data == nullptr && need > 0) throw invalid(what + ": data is NULL");
    out.push_back({buf->data, buf->size});
  }
  return out;
}

namespace {

class Runner {
 public:
  explicit Runner(const Program& p) : p_(p), store_(p.values.size()) {}

  void run(const std::vector<HostBuffer>& in, const std::vector<HostBuffer>& out) {
    for (size_t i = 0; i < p_.inputs.size(); ++i) load(p_.inputs[i], in[i]);
    for (const Op& op : p_.ops) {
      std::vector<float>& y = store_[size_t(op.output)];
      y.assign(size_t(numel(p_.values[size_t(op.output)].dims)), 0.0f);
      execute(op, y.data());
      settle(op.output);
    }
    for (size_t i = 0; i < p_.outputs.size(); ++i) save(p_.outputs[i], out[i]);
  }

 private:
  const float* data(int32_t id) const {
    const Value& v = p_.values[size_t(id)];
    return v.constant ? v.data.data() : store_[size_t(id)].data();
  }
  const std::vector<int64_t>& dims(int32_t id) const { return p_.values[size_t(id)].dims; }

  // Rounds a freshly written tensor to what the NPU keeps of it.
  void settle(int32_t id) {
    const Value& v = p_.values[size_t(id)];
    std::vector<float>& t = store_[size_t(id)];
    if (v.storage.on)
      for (float& e : t) e = fake_quantize(e, v.storage);
    if (v.half || p_.precision == Precision::kFp16) round_to_half(t.data(), int64_t(t.size()));
  }

  void load(const Boundary& b, const HostBuffer& buf) {
    const Value& v = p_.values[size_t(b.value)];
    const int64_t n = numel(v.dims);
    std::vector<float> real(static_cast<size_t>(n));
    const unsigned char* raw = static_cast<const unsigned char*>(buf.data);
    for (int64_t i = 0; i < n; ++i) {
      if (b.dtype == OAR_DTYPE_F32) {
        std::memcpy(&real[size_t(i)], raw + 4 * i, 4);
      } else if (b.dtype == OAR_DTYPE_F16) {
        uint16_t h;
        std::memcpy(&h, raw + 2 * i, 2);
        real[size_t(i)] = f16_bits_to_f32(h);
      } else {
        const int32_t q = b.dtype == OAR_DTYPE_U8 ? int32_t(raw[i]) : int32_t(int8_t(raw[i]));
        real[size_t(i)] = v.storage.scale * float(q - v.storage.zero_point);
      }
    }
    std::vector<float>& t = store_[size_t(b.value)];
    if (v.dims.size() == 4) {
      t.resize(real.size());
      nchw_to_nhwc(real.data(), v.dims[0], v.dims[1], v.dims[2], v.dims[3], t.data());
    } else {
      t = std::move(real);
    }
    settle(b.value);
  }

  void save(const Boundary& b, const HostBuffer& buf) {
    const Value& v = p_.values[size_t(b.value)];
    const std::vector<float>& t = store_[size_t(b.value)];
    std::vector<float> nchw;
    const float* src = t.data();
    if (v.dims.size() == 4) {
      nchw.resize(t.size());
      nhwc_to_nchw(t.data(), v.dims[0], v.dims[1], v.dims[2], v.dims[3], nchw.data());
      src = nchw.data();
    }
    unsigned char* raw = static_cast<unsigned char*>(buf.data);
    for (size_t i = 0; i < t.size(); ++i) {
      if (b.dtype == OAR_DTYPE_F32) {
        std::memcpy(raw + 4 * i, &src[i], 4);
      } else if (b.dtype == OAR_DTYPE_F16) {
        const uint16_t h = f32_to_f16_bits(src[i]);
        std::memcpy(raw + 2 * i, &h, 2);
      } else {
        const int32_t q = quantize_value(src[i], v.storage);
        raw[i] = b.dtype == OAR_DTYPE_U8 ? uint8_t(q) : uint8_t(int8_t(q));
      }
    }
  }

  // x as the integers of an int8 product (its own scale, or a dynamic one).
  float quantized(int32_t id, std::vector<int32_t>& q) const {
    return quantize_activation(data(id), numel(dims(id)), p_.values[size_t(id)].activation, q);
  }

  void execute(const Op& op, float* y) {
    const int32_t x = op.inputs[0];
    const std::vector<int64_t>& xd = dims(x);
    const std::vector<int64_t>& yd = dims(op.output);
    const float* bias = op.bias.empty() ? nullptr : op.bias.data();
    const bool int8 = p_.precision == Precision::kInt8;
    const ConvShape s = xd.size() == 4 && yd.size() == 4
                            ? ConvShape{xd[0], xd[2], xd[3], xd[1], yd[2], yd[3], yd[1], op.kh, op.kw, op.sh, op.sw,
                                        op.ph, op.pw, op.groups}
                            : ConvShape{};
    std::vector<int32_t> q;
    switch (op.kind) {
      case OpKind::kConv:
        if (int8) {
          const float scale = quantized(x, q);
          conv_i8(q.data(), scale, op.weights.q.data(), op.weights.scales.data(), bias, op.relu, s, y);
        } else {
          conv_f32(data(x), op.weights.f.data(), bias, op.relu, s, y);
        }
        return;
      case OpKind::kLinear: {
        const int64_t k = xd.back(), m = k > 0 ? numel(xd) / k : 0, n = op.weights.rows;
        if (int8) {
          const float scale = quantized(x, q);
          gemm_i8(q.data(), scale, op.weights.q.data(), op.weights.scales.data(), bias, op.relu, m, k, n, y);
        } else {
          gemm_f32(data(x), op.weights.f.data(), bias, op.relu, m, k, n, y);
        }
        return;
      }
      case OpKind::kMatmul: {
        const int32_t b = op.inputs[1];
        const int64_t m = xd[0], k = xd[1], n = dims(b)[1];
        std::vector<float> bt(size_t(k * n));  // rows per output column, as weights are kept
        transpose(data(b), k, n, bt.data());
        if (!int8) return gemm_f32(data(x), bt.data(), nullptr, false, m, k, n, y);
        const float scale = quantized(x, q);
        std::vector<int8_t> bq;
        std::vector<float> bscales;
        const Quant& given = p_.values[size_t(b)].activation;
        if (given.on && given.zero_point == 0 && given.qmax <= 127) {  // its own symmetric scale for every column
          bq.resize(bt.size());
          for (size_t i = 0; i < bt.size(); ++i) bq[i] = int8_t(quantize_value(bt[i], given));
          bscales.assign(size_t(n), given.scale);
        } else {
          quantize_rows(bt.data(), n, k, bq, bscales);
        }
        return gemm_i8(q.data(), scale, bq.data(), bscales.data(), nullptr, false, m, k, n, y);
      }
      case OpKind::kAdd: {
        const int32_t b = op.inputs[1];
        return add(data(x), numel(xd), data(b), numel(dims(b)), y, numel(yd));
      }
      case OpKind::kRelu: return relu(data(x), y, numel(xd));
      case OpKind::kMaxPool:
      case OpKind::kAvgPool: return pool(op.kind == OpKind::kMaxPool, op.count_include_pad, data(x), s, y);
      case OpKind::kSoftmax: return softmax_rows(data(x), xd[0], xd[1], y);
      case OpKind::kCount: return;
    }
  }

  const Program& p_;
  std::vector<std::vector<float>> store_;
};

}  // namespace

void run_program(const Program& p, const std::vector<HostBuffer>& inputs, const std::vector<HostBuffer>& outputs) {
  Runner(p).run(inputs, outputs);
}

}  // namespace fake_npu
