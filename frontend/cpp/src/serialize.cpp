// The OARSTATE file format (docs/serialization.md): a streaming writer with a
// running FNV-1a 64 checksum and an atomic tmp-file + fsync + rename commit,
// and a bounds-checked reader that names the file and the problem in every
// IOError. Integers are encoded byte by byte as little-endian; tensor bytes
// are copied raw, which is little-endian on every supported host.
#include "oar/serialize.h"

#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <unordered_set>
#include <vector>

#include "oar/error.h"

namespace oar {

static_assert(std::endian::native == std::endian::little,
              "OARSTATE stores tensor bytes little-endian; a big-endian host needs byte swapping here");

namespace {

constexpr char kMagic[8] = {'O', 'A', 'R', 'S', 'T', 'A', 'T', 'E'};
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;
constexpr uint32_t kMaxDims = 64;

uint64_t fnv1a(uint64_t h, const unsigned char* data, size_t n) {
  for (size_t i = 0; i < n; ++i) h = (h ^ data[i]) * kFnvPrime;
  return h;
}

std::string errno_text() { return std::strerror(errno); }

// Buffered writes to a file descriptor, hashing every byte.
class Writer {
 public:
  Writer(int fd, const std::string& path) : fd_(fd), path_(path) { buffer_.reserve(kBufferSize); }

  void bytes(const void* data, size_t n) {
    auto p = static_cast<const unsigned char*>(data);
    hash_ = fnv1a(hash_, p, n);
    raw(p, n);
  }
  template <class T>
  void integer(T v) {
    unsigned char b[sizeof(T)];
    for (size_t i = 0; i < sizeof(T); ++i) b[i] = static_cast<unsigned char>(uint64_t(v) >> (8 * i));
    bytes(b, sizeof(T));
  }
  // The checksum covers everything before it, so it is written unhashed.
  void finish() {
    unsigned char b[8];
    for (size_t i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(hash_ >> (8 * i));
    raw(b, 8);
    flush();
  }

 private:
  static constexpr size_t kBufferSize = 1 << 20;

  void raw(const unsigned char* p, size_t n) {
    if (buffer_.size() + n > kBufferSize) flush();
    if (n >= kBufferSize) return write_all(p, n);
    buffer_.insert(buffer_.end(), p, p + n);
  }
  void flush() {
    write_all(buffer_.data(), buffer_.size());
    buffer_.clear();
  }
  void write_all(const unsigned char* p, size_t n) {
    while (n > 0) {
      ssize_t w = ::write(fd_, p, n);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) throw IOError(str("save '", path_, "': write failed: ", errno_text()));
      p += w;
      n -= size_t(w);
    }
  }

  int fd_;
  const std::string& path_;
  std::vector<unsigned char> buffer_;
  uint64_t hash_ = kFnvOffset;
};

void write_entries(Writer& w, const StateDict& state_dict) {
  w.bytes(kMagic, sizeof(kMagic));
  w.integer<uint32_t>(kStateFormatVersion);
  w.integer<uint64_t>(state_dict.size());
  std::vector<unsigned char> data;
  for (const auto& [name, t] : state_dict) {
    w.integer<uint32_t>(uint32_t(name.size()));
    w.bytes(name.data(), name.size());
    w.integer<uint32_t>(uint32_t(t.dtype()));
    w.integer<uint32_t>(uint32_t(t.dim()));
    for (int64_t d : t.shape()) w.integer<int64_t>(d);
    const size_t nbytes = size_t(t.numel()) * t.itemsize();
    w.integer<uint64_t>(nbytes);
    data.resize(nbytes);
    if (nbytes) t.detach().copy_to_host(data.data(), t.dtype());
    w.bytes(data.data(), nbytes);
  }
  w.finish();
}

// Bounds-checked cursor over the file's bytes.
class Reader {
 public:
  Reader(const std::vector<unsigned char>& data, const std::string& path) : data_(data), path_(path) {}

  [[noreturn]] void fail(const std::string& problem) const {
    throw IOError(str("load '", path_, "': ", problem));
  }
  void need(size_t n, const char* what) const {
    if (n > data_.size() - pos_)
      fail(str("file is truncated: ", what, " needs ", n, " bytes at offset ", pos_, " but the file has ",
               data_.size(), " bytes"));
  }
  template <class T>
  T integer(const char* what) {
    need(sizeof(T), what);
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) v |= uint64_t(data_[pos_ + i]) << (8 * i);
    pos_ += sizeof(T);
    return static_cast<T>(v);
  }
  const unsigned char* take(size_t n, const char* what) {
    need(n, what);
    const unsigned char* p = data_.data() + pos_;
    pos_ += n;
    return p;
  }
  size_t pos() const { return pos_; }
  size_t remaining() const { return data_.size() - pos_; }

 private:
  const std::vector<unsigned char>& data_;
  const std::string& path_;
  size_t pos_ = 0;
};

std::vector<unsigned char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IOError(str("load '", path, "': cannot open: ", errno_text()));
  std::vector<unsigned char> data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw IOError(str("load '", path, "': read failed: ", errno_text()));
  return data;
}

}  // namespace

void save(const StateDict& state_dict, const std::string& path) {
  for (const auto& [name, t] : state_dict) {
    if (name.empty()) throw ValueError(str("save '", path, "': an entry has an empty name"));
    if (!t.defined()) throw ValueError(str("save '", path, "': entry '", name, "' is an undefined tensor"));
  }
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw IOError(str("save '", path, "': cannot create temporary file '", tmp, "': ", errno_text()));
  try {
    Writer w(fd, path);
    write_entries(w, state_dict);
    if (::fsync(fd) != 0) throw IOError(str("save '", path, "': fsync failed: ", errno_text()));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::close(fd) != 0) {
    std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw IOError(str("save '", path, "': close failed: ", why));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw IOError(str("save '", path, "': cannot rename '", tmp, "' over it: ", why));
  }
  // Persist the rename itself; best effort, the data is already durable.
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    (void)::fsync(dfd);
    ::close(dfd);
  }
}

StateDict load(const std::string& path) { return load(path, Device::cpu()); }

StateDict load(const std::string& path, Device device) {
  const std::vector<unsigned char> data = read_file(path);
  Reader r(data, path);
  if (data.empty()) r.fail("file is empty (truncated)");
  const size_t magic_len = std::min(data.size(), sizeof(kMagic));
  if (std::memcmp(data.data(), kMagic, magic_len) != 0)
    r.fail("not an oar state file (the magic bytes \"OARSTATE\" are missing)");
  r.take(sizeof(kMagic), "the magic");
  const uint32_t version = r.integer<uint32_t>("the format version");
  if (version == 0) r.fail("invalid format version 0");
  if (version > kStateFormatVersion)
    r.fail(str("format version ", version, " is newer than this build supports (", kStateFormatVersion,
               "); upgrade oar to read it"));
  const uint64_t count = r.integer<uint64_t>("the entry count");
  // Each entry takes at least 20 bytes, so a huge count means a damaged file.
  if (count > r.remaining() / 20) r.fail(str("file is truncated or corrupt: it cannot hold ", count, " entries"));

  // Parse and verify everything before any tensor is allocated.
  struct Entry {
    std::string name;
    DType dtype;
    Shape shape;
    uint64_t numel;
    const unsigned char* bytes;
  };
  std::vector<Entry> entries;
  std::unordered_set<std::string> names;
  for (uint64_t e = 0; e < count; ++e) {
    const uint32_t name_len = r.integer<uint32_t>("an entry name length");
    const auto* name_bytes = r.take(name_len, "an entry name");
    std::string name(reinterpret_cast<const char*>(name_bytes), name_len);
    const uint32_t code = r.integer<uint32_t>("an entry dtype");
    if (!is_valid_dtype(int32_t(code))) r.fail(str("entry '", name, "' has unknown dtype code ", code));
    const DType dtype = DType(int32_t(code));
    const uint32_t ndim = r.integer<uint32_t>("an entry rank");
    if (ndim > kMaxDims) r.fail(str("entry '", name, "' has ", ndim, " dimensions (at most ", kMaxDims, ")"));
    Shape shape(ndim);
    uint64_t numel = 1;
    for (auto& d : shape) {
      d = r.integer<int64_t>("an entry dimension");
      if (d < 0) r.fail(str("entry '", name, "' has a negative dimension ", d));
      if (d != 0 && numel > (uint64_t(1) << 62) / uint64_t(d)) r.fail(str("entry '", name, "' is impossibly large"));
      numel *= uint64_t(d);
    }
    const uint64_t nbytes = r.integer<uint64_t>("an entry byte length");
    if (nbytes != numel * dtype_size(dtype))
      r.fail(str("entry '", name, "' has ", nbytes, " bytes but shape ", shape_str(shape), " of ", dtype_name(dtype),
                 " needs ", numel * dtype_size(dtype)));
    const auto* bytes = r.take(size_t(nbytes), "entry data");
    if (dtype == DType::boolean)  // a bool byte other than 0 or 1 would be a value no kernel expects
      for (uint64_t i = 0; i < nbytes; ++i)
        if (bytes[i] > 1) r.fail(str("entry '", name, "' holds bool byte ", int(bytes[i]), " (only 0 and 1 are bools)"));
    if (!names.insert(name).second) r.fail(str("entry '", name, "' appears twice"));
    entries.push_back({std::move(name), dtype, std::move(shape), numel, bytes});
  }
  const size_t body = r.pos();
  const uint64_t stored = r.integer<uint64_t>("the checksum");
  if (r.remaining() != 0) r.fail(str(r.remaining(), " unexpected bytes after the checksum"));
  const uint64_t actual = fnv1a(kFnvOffset, data.data(), body);
  if (stored != actual) r.fail("checksum mismatch: the file is corrupt");
  StateDict out;
  for (const auto& e : entries) out.insert(e.name, Tensor::from_host(e.bytes, int64_t(e.numel), e.shape, e.dtype, device));
  return out;
}

void save(const nn::Module& module, const std::string& path) { save(module.state_dict(), path); }

nn::LoadStateDictResult load(nn::Module& module, const std::string& path, bool strict) {
  return module.load_state_dict(load(path), strict);
}

}  // namespace oar
