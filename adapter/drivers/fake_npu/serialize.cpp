// fake_npu's program file:
//   "OARFNPU\0"  u32 format version  str driver version  u8 precision
//   values, ops, inputs, outputs (see write_program)  u64 FNV-1a of all bytes before it
// Little endian; str = u32 length + bytes; vectors = u64 count + elements.
// Every read is bounds-checked, counts are checked against the bytes left
// before anything is allocated, and the result goes through verify_program.
#include <cstring>

#include "oar/adapter/driver_sdk.hpp"
#include "program.h"

#ifndef OAR_FAKE_NPU_VERSION
#error "OAR_FAKE_NPU_VERSION must be defined by the build"
#endif

namespace fake_npu {

using oar_adapter_sdk::DriverError;
using oar_adapter_sdk::invalid;

namespace {

constexpr char kMagic[8] = {'O', 'A', 'R', 'F', 'N', 'P', 'U', '\0'};
constexpr uint32_t kFormatVersion = 1;

uint64_t fnv1a(const uint8_t* p, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

class Writer {
 public:
  std::vector<uint8_t> bytes;
  void raw(const void* p, size_t n) { bytes.insert(bytes.end(), (const uint8_t*)p, (const uint8_t*)p + n); }
  void uint(uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes.push_back(uint8_t(v >> (8 * i)));
  }
  void u8(uint8_t v) { uint(v, 1); }
  void u32(uint32_t v) { uint(v, 4); }
  void i32(int32_t v) { uint(uint32_t(v), 4); }
  void i64(int64_t v) { uint(uint64_t(v), 8); }
  void f32(float v) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    uint(b, 4);
  }
  void str(const std::string& s) {
    u32(uint32_t(s.size()));
    raw(s.data(), s.size());
  }
  void floats(const std::vector<float>& v) {
    uint(v.size(), 8);
    for (float f : v) f32(f);
  }
  void quant(const Quant& q) {
    u8(q.on);
    f32(q.scale);
    i32(q.zero_point);
    i32(q.qmin);
    i32(q.qmax);
  }
};

class Reader {
 public:
  Reader(const uint8_t* p, size_t size) : p_(p), size_(size) {}
  size_t pos() const { return pos_; }
  size_t left() const { return size_ - pos_; }
  const uint8_t* take(size_t n) {
    if (n > left()) throw invalid("a truncated fake_npu program (" + std::to_string(size_) + " bytes)");
    const uint8_t* at = p_ + pos_;
    pos_ += n;
    return at;
  }
  uint64_t uint(int n) {
    const uint8_t* b = take(size_t(n));
    uint64_t v = 0;
    for (int i = 0; i < n; ++i) v |= uint64_t(b[i]) << (8 * i);
    return v;
  }
  uint8_t u8() { return uint8_t(uint(1)); }
  bool boolean() {
    const uint8_t v = u8();
    if (v > 1) throw invalid("an inconsistent fake_npu program (a flag byte is " + std::to_string(v) + ")");
    return v == 1;
  }
  uint32_t u32() { return uint32_t(uint(4)); }
  int32_t i32() { return int32_t(uint32_t(uint(4))); }
  int64_t i64() { return int64_t(uint(8)); }
  float f32() {
    const uint32_t b = uint32_t(uint(4));
    float v;
    std::memcpy(&v, &b, 4);
    return v;
  }
  // A count of items of at least `item_bytes` each that must fit in the bytes left.
  size_t count(int width, size_t item_bytes) {
    const uint64_t n = uint(width);
    if (item_bytes > 0 && n > left() / item_bytes) throw invalid("a truncated fake_npu program (a count of " + std::to_string(n) + ")");
    return size_t(n);
  }
  std::string str() {
    const size_t n = count(4, 1);
    const uint8_t* b = take(n);
    return std::string(reinterpret_cast<const char*>(b), n);
  }
  std::vector<float> floats() {
    std::vector<float> v(count(8, 4));
    for (float& f : v) f = f32();
    return v;
  }
  Quant quant() {
    Quant q;
    q.on = boolean();
    q.scale = f32();
    q.zero_point = i32();
    q.qmin = i32();
    q.qmax = i32();
    return q;
  }

 private:
  const uint8_t* p_;
  size_t size_, pos_ = 0;
};

void write_program(Writer& w, const Program& p) {
  w.u32(uint32_t(p.values.size()));
  for (const Value& v : p.values) {
    w.u8(v.used);
    if (!v.used) continue;
    w.u32(uint32_t(v.dims.size()));
    for (int64_t d : v.dims) w.i64(d);
    w.u8(v.half);
    w.u8(v.constant);
    w.quant(v.storage);
    w.quant(v.activation);
    w.floats(v.data);
  }
  w.u32(uint32_t(p.ops.size()));
  for (const Op& op : p.ops) {
    w.u8(uint8_t(op.kind));
    w.u32(uint32_t(op.inputs.size()));
    for (int32_t i : op.inputs) w.i32(i);
    w.i32(op.output);
    for (int64_t g : {op.kh, op.kw, op.sh, op.sw, op.ph, op.pw, op.groups}) w.i64(g);
    w.u8(op.relu);
    w.u8(op.count_include_pad);
    w.i64(op.weights.rows);
    w.i64(op.weights.inner);
    w.floats(op.weights.f);
    w.uint(op.weights.q.size(), 8);
    w.raw(op.weights.q.data(), op.weights.q.size());
    w.floats(op.weights.scales);
    w.floats(op.bias);
  }
  for (const std::vector<Boundary>* list : {&p.inputs, &p.outputs}) {
    w.u32(uint32_t(list->size()));
    for (const Boundary& b : *list) {
      w.i32(b.value);
      w.i32(b.dtype);
      w.str(b.name);
    }
  }
}

void read_program(Reader& r, Program& p) {
  p.values.resize(r.count(4, 1));
  for (Value& v : p.values) {
    v.used = r.boolean();
    if (!v.used) continue;
    const uint32_t rank = r.u32();
    if (rank > 16) throw invalid("an inconsistent fake_npu program (rank " + std::to_string(rank) + ")");
    v.dims.resize(rank);
    for (int64_t& d : v.dims) d = r.i64();
    v.half = r.boolean();
    v.constant = r.boolean();
    v.storage = r.quant();
    v.activation = r.quant();
    v.data = r.floats();
  }
  p.ops.resize(r.count(4, 1));
  for (Op& op : p.ops) {
    const uint8_t kind = r.u8();
    if (kind >= uint8_t(OpKind::kCount)) throw invalid("an inconsistent fake_npu program (op kind " + std::to_string(kind) + ")");
    op.kind = OpKind(kind);
    op.inputs.resize(r.count(4, 4));
    for (int32_t& i : op.inputs) i = r.i32();
    op.output = r.i32();
    for (int64_t* g : {&op.kh, &op.kw, &op.sh, &op.sw, &op.ph, &op.pw, &op.groups}) *g = r.i64();
    op.relu = r.boolean();
    op.count_include_pad = r.boolean();
    op.weights.rows = r.i64();
    op.weights.inner = r.i64();
    op.weights.f = r.floats();
    const size_t nq = r.count(8, 1);
    const uint8_t* q = r.take(nq);
    op.weights.q.assign(reinterpret_cast<const int8_t*>(q), reinterpret_cast<const int8_t*>(q) + nq);
    op.weights.scales = r.floats();
    op.bias = r.floats();
  }
  for (std::vector<Boundary>* list : {&p.inputs, &p.outputs}) {
    list->resize(r.count(4, 12));
    for (Boundary& b : *list) {
      b.value = r.i32();
      b.dtype = r.i32();
      b.name = r.str();
    }
  }
}

}  // namespace

std::vector<uint8_t> serialize_program(const Program& p) {
  Writer w;
  w.raw(kMagic, sizeof(kMagic));
  w.u32(kFormatVersion);
  w.str(OAR_FAKE_NPU_VERSION);
  w.u8(uint8_t(p.precision));
  write_program(w, p);
  w.uint(fnv1a(w.bytes.data(), w.bytes.size()), 8);
  return std::move(w.bytes);
}

Program deserialize_program(const void* data, uint64_t size, Precision expected) {
  if (data == nullptr || size < sizeof(kMagic) || std::memcmp(data, kMagic, sizeof(kMagic)) != 0)
    throw invalid("not a fake_npu program (no OARFNPU magic)");
  Reader r(static_cast<const uint8_t*>(data), size_t(size));
  r.take(sizeof(kMagic));
  const uint32_t format = r.u32();
  if (format != kFormatVersion)
    throw invalid("not a fake_npu program of a known format (format " + std::to_string(format) + ", this driver reads " +
                  std::to_string(kFormatVersion) + ")");
  std::string version = r.str();
  if (version != OAR_FAKE_NPU_VERSION) {
    if (version.size() > 64) version = version.substr(0, 64) + "...";
    throw DriverError(OAR_STATUS_VERSION_MISMATCH, "program was compiled by fake_npu " + version + ", this is " +
                                                       OAR_FAKE_NPU_VERSION);
  }
  if (r.left() < 9) throw invalid("a truncated fake_npu program (" + std::to_string(size) + " bytes)");
  const size_t body = size_t(size) - 8;
  Reader tail(static_cast<const uint8_t*>(data) + body, 8);
  if (tail.uint(8) != fnv1a(static_cast<const uint8_t*>(data), body))
    throw invalid("a corrupt fake_npu program (checksum mismatch; truncated or modified bytes)");
  Reader in(static_cast<const uint8_t*>(data), body);
  in.take(r.pos());
  Program p;
  const uint8_t precision = in.u8();
  if (precision > uint8_t(Precision::kInt8)) throw invalid("an inconsistent fake_npu program (precision byte)");
  p.precision = Precision(precision);
  if (p.precision != expected)
    throw DriverError(OAR_STATUS_VERSION_MISMATCH, std::string("program was compiled for precision ") +
                                                       precision_name(p.precision) + ", this context uses " +
                                                       precision_name(expected));
  read_program(in, p);
  if (in.left() != 0) throw invalid("an inconsistent fake_npu program (" + std::to_string(in.left()) + " trailing bytes)");
  verify_program(p);
  return p;
}

void check_matches_model(const Program& p, const oar_adapter_model* m) {
  auto mismatch = [](const std::string& what) {
    return invalid("the program bytes belong to another model: " + what);
  };
  if (p.values.size() != m->operand_count) throw mismatch("operand count differs");
  if (p.inputs.size() != m->input_count || p.outputs.size() != m->output_count)
    throw mismatch("input or output count differs");
  for (int side = 0; side < 2; ++side) {
    const std::vector<Boundary>& list = side == 0 ? p.inputs : p.outputs;
    const int32_t* indices = side == 0 ? m->inputs : m->outputs;
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string what = (side == 0 ? "input " : "output ") + std::to_string(i);
      const oar_adapter_operand& o = *m->operands[indices[i]];
      const Value& v = p.values[size_t(list[i].value)];
      if (list[i].value != indices[i] || list[i].dtype != o.dtype) throw mismatch(what + " differs in operand or dtype");
      std::vector<int64_t> dims;
      for (uint32_t d = 0; d < o.rank; ++d) dims.push_back(o.dims[d].size);
      if (dims != v.dims) throw mismatch(what + " has dims " + dims_text(v.dims) + ", the model's are " + dims_text(dims));
      const bool quantized = o.quant != nullptr && o.quant->scheme == OAR_ADAPTER_QUANT_PER_TENSOR;
      if (v.storage.on && (!quantized || o.quant->scales[0] != v.storage.scale))
        throw mismatch(what + " has other quantization parameters");
    }
  }
}

}  // namespace fake_npu
