// serialize / deserialize: a header that says whose bytes these are, then
// OpenVINO's CompiledModel::export_model blob.
//
// Layout (little-endian):
//   "OAROVIN\0"  u32 format version
//   str driver version, str device, str precision      (str: u32 length + bytes)
//   u32 input count,  per input:  u32 dtype, u32 rank, i64 dims[rank]
//   u32 output count, per output: the same
//   u64 blob size, blob (export_model bytes, to the end)
#include <cstring>
#include <sstream>
#include <streambuf>

#include "entry_points.h"
#include "model_builder.h"
#include "program.h"

namespace oar_openvino {

namespace {

constexpr char kMagic[8] = {'O', 'A', 'R', 'O', 'V', 'I', 'N', '\0'};
constexpr uint32_t kFormatVersion = 1;

DriverError not_ours(const std::string& why) {
  return oar_adapter_sdk::invalid("not an openvino program (" + why + ")");
}

class Writer {
 public:
  void bytes(const void* p, size_t n) { out_.append(static_cast<const char*>(p), n); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(char((v >> (8 * i)) & 0xff));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(char((v >> (8 * i)) & 0xff));
  }
  void str(const std::string& s) {
    u32(uint32_t(s.size()));
    bytes(s.data(), s.size());
  }
  void signatures(const std::vector<TensorSignature>& list) {
    u32(uint32_t(list.size()));
    for (const TensorSignature& s : list) {
      u32(uint32_t(s.dtype));
      u32(uint32_t(s.dims.size()));
      for (int64_t d : s.dims) u64(uint64_t(d));
    }
  }
  std::string& result() { return out_; }

 private:
  std::string out_;
};

// Every read is bounds-checked; running out means the bytes are not ours.
class Reader {
 public:
  Reader(const unsigned char* p, uint64_t n) : p_(p), left_(n) {}
  const unsigned char* take(uint64_t n, const char* what) {
    if (n > left_) throw not_ours(std::string("truncated in the ") + what);
    const unsigned char* at = p_;
    p_ += n;
    left_ -= n;
    return at;
  }
  uint32_t u32(const char* what) {
    const unsigned char* b = take(4, what);
    return uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
  }
  uint64_t u64(const char* what) { return uint64_t(u32(what)) | uint64_t(u32(what)) << 32; }
  std::string str(const char* what) {
    const uint32_t n = u32(what);
    if (n > 4096) throw not_ours(std::string("a ") + what + " of " + std::to_string(n) + " bytes");
    const unsigned char* b = take(n, what);
    return std::string(reinterpret_cast<const char*>(b), n);
  }
  std::vector<TensorSignature> signatures(const char* what) {
    const uint32_t count = u32(what);
    if (count > left_ / 8) throw not_ours(std::string("a ") + what + " count of " + std::to_string(count));
    std::vector<TensorSignature> list(count);
    for (TensorSignature& s : list) {
      s.dtype = oar_dtype_t(u32(what));
      const uint32_t rank = u32(what);
      if (rank > OAR_MAX_DIMS) throw not_ours(std::string("a ") + what + " of rank " + std::to_string(rank));
      for (uint32_t d = 0; d < rank; ++d) s.dims.push_back(int64_t(u64(what)));
    }
    return list;
  }
  uint64_t left() const { return left_; }
  const unsigned char* here() const { return p_; }

 private:
  const unsigned char* p_;
  uint64_t left_;
};

// An istream over the caller's bytes without copying them (import_model seeks).
class MemoryBuffer : public std::streambuf {
 public:
  MemoryBuffer(const unsigned char* p, uint64_t n) {
    char* b = const_cast<char*>(reinterpret_cast<const char*>(p));
    setg(b, b, b + n);
  }

 protected:
  pos_type seekoff(off_type off, std::ios_base::seekdir dir, std::ios_base::openmode) override {
    char* base = dir == std::ios_base::beg ? eback() : dir == std::ios_base::cur ? gptr() : egptr();
    if (base + off < eback() || base + off > egptr()) return pos_type(off_type(-1));
    setg(eback(), base + off, egptr());
    return pos_type(gptr() - eback());
  }
  pos_type seekpos(pos_type pos, std::ios_base::openmode which) override {
    return seekoff(off_type(pos), std::ios_base::beg, which);
  }
};

std::string header_mismatch(const std::vector<TensorSignature>& got, const std::vector<TensorSignature>& want,
                            const char* what) {
  if (got.size() != want.size())
    return "the bytes have " + std::to_string(got.size()) + " " + what + "s, the model " + std::to_string(want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i].dtype != want[i].dtype || got[i].dims != want[i].dims)
      return "the bytes' " + std::string(what) + " " + std::to_string(i) + " differs from the model's " + want[i].label;
  return "";
}

std::string make_bytes(oar_adapter_program_s& p) {
  Writer w;
  w.bytes(kMagic, sizeof(kMagic));
  w.u32(kFormatVersion);
  w.str(driver_version());
  w.str(p.options.device);
  w.str(p.options.precision);
  w.signatures(p.inputs);
  w.signatures(p.outputs);
  std::ostringstream blob;
  with_openvino(OAR_STATUS_DEVICE_ERROR, "OpenVINO export_model", [&] { p.compiled.export_model(blob); });
  const std::string bytes = blob.str();
  w.u64(bytes.size());
  w.bytes(bytes.data(), bytes.size());
  return std::move(w.result());
}

}  // namespace

oar_status_t serialize(oar_adapter_program_t program, void* buffer, uint64_t capacity, uint64_t* out_size) {
  return oar_adapter_sdk::guarded("openvino serialize", [&] {
    if (program == nullptr || out_size == nullptr) throw oar_adapter_sdk::invalid("program or out_size is NULL");
    // The size query exports once; the copy-out hands those bytes over and drops them.
    if (program->serialized.empty()) program->serialized = make_bytes(*program);
    *out_size = program->serialized.size();
    if (buffer == nullptr) return;
    if (capacity < program->serialized.size())
      throw oar_adapter_sdk::invalid("buffer capacity " + std::to_string(capacity) + " is below the " +
                                     std::to_string(program->serialized.size()) + " bytes needed");
    std::memcpy(buffer, program->serialized.data(), program->serialized.size());
    std::string().swap(program->serialized);
  });
}

oar_status_t deserialize(oar_adapter_context_t context, const oar_adapter_model* model, const void* data,
                         uint64_t size, oar_adapter_program_t* out_program) {
  return oar_adapter_sdk::guarded("openvino deserialize", [&] {
    if (context == nullptr || out_program == nullptr) throw oar_adapter_sdk::invalid("context or out_program is NULL");
    *out_program = nullptr;
    if (data == nullptr && size > 0) throw oar_adapter_sdk::invalid("data is NULL");
    oar_adapter_sdk::validate_model(model);
    Reader r(static_cast<const unsigned char*>(data), size);
    if (size < sizeof(kMagic) || std::memcmp(r.take(sizeof(kMagic), "magic"), kMagic, sizeof(kMagic)) != 0)
      throw not_ours("no OAROVIN magic");
    const uint32_t format = r.u32("format version");
    if (format != kFormatVersion)
      throw DriverError(OAR_STATUS_VERSION_MISMATCH, "the bytes have format version " + std::to_string(format) +
                                                         ", this driver reads " + std::to_string(kFormatVersion));
    const std::string version = r.str("driver version");
    const std::string device = r.str("device");
    const std::string precision = r.str("precision");
    const std::vector<TensorSignature> inputs = r.signatures("input");
    const std::vector<TensorSignature> outputs = r.signatures("output");
    const uint64_t blob_size = r.u64("blob size");
    if (blob_size != r.left())
      throw not_ours("the blob has " + std::to_string(r.left()) + " bytes, the header says " + std::to_string(blob_size));
    const Options& o = context->options;
    auto mismatch = [](const std::string& what, const std::string& theirs, const std::string& ours) {
      return DriverError(OAR_STATUS_VERSION_MISMATCH, "compiled " + what + " '" + theirs + "', this context has '" + ours + "'");
    };
    if (version != driver_version()) throw mismatch("by openvino driver", version, driver_version());
    if (device != o.device) throw mismatch("for device", device, o.device);
    if (precision != o.precision) throw mismatch("with precision", precision, o.precision);
    auto program = std::make_unique<oar_adapter_program_s>();
    program->inputs = signatures(model, true);
    program->outputs = signatures(model, false);
    for (std::string why : {header_mismatch(inputs, program->inputs, "input"),
                            header_mismatch(outputs, program->outputs, "output")})
      if (!why.empty()) throw oar_adapter_sdk::invalid(why);
    program->core = context->core;
    program->options = o;
    require_device(*context->core, o.device);
    MemoryBuffer memory(r.here(), r.left());
    std::istream stream(&memory);
    // A blob OpenVINO cannot read is garbage to us (the core then recompiles).
    program->compiled = with_openvino(OAR_STATUS_INVALID_ARGUMENT, "not an openvino program (OpenVINO import_model)", [&] {
      return context->core->import_model(stream, o.device, device_properties(o, model));
    });
    finish_program(*context, *program);
    *out_program = program.release();
  });
}

}  // namespace oar_openvino
