// The compiled-subgraph cache (see program_cache.h).
#include "program_cache.h"

#include <cstring>
#include <filesystem>

#include "oar/error.h"
#include "oar/file_io.h"
#include "oar/log.h"
#include "sha1_hex.h"

namespace oar::adapter {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'O', 'A', 'R', 'A', 'D', 'P', 'C', '\n'};
constexpr uint32_t kFormat = 1;

void put_u64(std::string& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(char((v >> (8 * i)) & 0xff));
}

void put_string(std::string& out, const std::string& s) {
  put_u64(out, s.size());
  out += s;
}

// Reads what put_* wrote, refusing to run past the end.
struct Reader {
  const std::string& bytes;
  size_t pos = 0;
  uint64_t u64() {
    if (bytes.size() - pos < 8) throw IOError("truncated");
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t(uint8_t(bytes[pos + size_t(i)])) << (8 * i);
    pos += 8;
    return v;
  }
  std::string string() {
    uint64_t n = u64();
    if (n > bytes.size() - pos) throw IOError("truncated");
    std::string s = bytes.substr(pos, size_t(n));
    pos += size_t(n);
    return s;
  }
};

}  // namespace

ProgramCache::ProgramCache(std::string dir, const DriverContext& context) : dir_(std::move(dir)), context_(context) {}

std::string ProgramCache::options_text() const {
  std::string text;
  for (const auto& [name, value] : context_.options()) text += str(name, "=", value, "\n");
  return text;
}

std::string ProgramCache::key(const SubgraphModel& model) const {
  const Driver& d = context_.driver();
  return Sha1()
      .add(str("adapter-abi ", OAR_ADAPTER_ABI_VERSION_MAJOR, ".", OAR_ADAPTER_ABI_VERSION_MINOR, "\n"))
      .add(str("driver ", d.name, " ", d.version, "\n"))
      .add(options_text())
      .add(model.canonical())
      .hex();
}

std::string ProgramCache::path_for(const std::string& key) const {
  return (fs::path(dir_) / context_.driver().name / (key + ".oarprog")).string();
}

oar_adapter_program_t ProgramCache::load(const SubgraphModel& model, std::string* why) const {
  why->clear();
  if (!enabled() || !context_.driver().has_serialization()) return nullptr;
  const std::string k = key(model);
  const std::string path = path_for(k);
  std::error_code ec;
  if (!fs::exists(path, ec)) return nullptr;
  const Driver& d = context_.driver();
  std::string payload;
  try {
    std::string bytes = read_file(path);
    if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
      throw IOError("not a cache entry (bad magic)");
    Reader r{bytes, sizeof(kMagic)};
    if (uint64_t format = r.u64(); format != kFormat) throw IOError(str("entry format ", format, ", expected ", kFormat));
    if (r.string() != k) throw IOError("its key differs from its file name");
    if (std::string name = r.string(); name != d.name) throw IOError(str("written for driver '", name, "'"));
    if (std::string version = r.string(); version != d.version)
      throw IOError(str("written by driver version ", version, ", this is ", d.version));
    if (r.string() != options_text()) throw IOError("written with other driver options");
    if (r.string() != sha1_hex(model.canonical())) throw IOError("written for another subgraph");
    std::string digest = r.string();
    payload = r.string();
    if (r.pos != bytes.size()) throw IOError("trailing bytes");
    if (sha1_hex(payload) != digest) throw IOError("payload checksum mismatch (corrupt)");
  } catch (const IOError& e) {
    *why = str(path, ": ", e.what());
    return nullptr;
  }
  oar_adapter_program_t program = nullptr;
  oar_status_t status = d.api.deserialize(context_.handle(), model.model(), payload.data(), payload.size(), &program);
  if (status != OAR_STATUS_OK) {
    *why = str(path, ": the driver refused it: ", take_driver_error());
    return nullptr;
  }
  return program;
}

void ProgramCache::store(const SubgraphModel& model, oar_adapter_program_t program) const {
  if (!enabled() || !context_.driver().has_serialization()) return;
  const Driver& d = context_.driver();
  const std::string k = key(model);
  const std::string path = path_for(k);
  try {
    uint64_t size = 0;
    d.check(d.api.serialize(program, nullptr, 0, &size), "serialize");
    std::string payload(size_t(size), '\0');
    uint64_t written = size;
    d.check(d.api.serialize(program, payload.data(), size, &written), "serialize");
    payload.resize(size_t(std::min(written, size)));
    std::string bytes(kMagic, sizeof(kMagic));
    put_u64(bytes, kFormat);
    put_string(bytes, k);
    put_string(bytes, d.name);
    put_string(bytes, d.version);
    put_string(bytes, options_text());
    put_string(bytes, sha1_hex(model.canonical()));
    put_string(bytes, sha1_hex(payload));
    put_string(bytes, payload);
    std::error_code ec;
    fs::create_directories(fs::path(path).parent_path(), ec);
    if (ec) throw IOError(str("cannot create ", fs::path(path).parent_path().string(), ": ", ec.message()));
    write_file_atomic(path, bytes);
  } catch (const Error& e) {
    log_message(LogLevel::kWarning, str("adapter cache: not stored: ", e.what()));
  }
}

}  // namespace oar::adapter
