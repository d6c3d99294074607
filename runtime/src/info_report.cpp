// The report of oar-info and `python -m oar.info`, written once: the core's
// plugin ABI version, every loaded plugin with its devices (capabilities and
// dtypes spelled out), every skipped plugin with the loader's reason, the
// directories searched, per-device-type kernel coverage (op x dtype, with
// implementation names) and every OAR_* flag, the core's and each plugin's
// (with the declarations it refused and why).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "oar/info_report.h"
#include "oar/dlpack.h"
#include "oar/error.h"
#include "oar/flags.h"
#include "oar/kernel_registry.h"
#include "oar/op_registry.h"
#include "oar/plugin_loader.h"
#include "oar/plugin_table.h"
#include "oar/runtime.h"

namespace oar {

namespace {

using oar::DType;

std::vector<InfoSection>& info_sections() {
  static std::vector<InfoSection> sections;
  return sections;
}

// Bit i of oar_capability_flags_t, as named in oar_plugin.h.
const char* const kCapabilityNames[] = {"async_copy",         "event_timing", "collectives",
                                        "graph_offload",      "pinned_host_memory",
                                        "peer_copy",          "host_accessible_memory"};
const char* const kMemoryStatNames[] = {"in_use", "peak", "limit", "total", "free"};

// Names of the set bits of `mask`; bits without a name are shown as "bit N"
// so a plugin newer than this tool is still reported faithfully.
template <size_t N>
std::vector<std::string> bit_names(uint64_t mask, const char* const (&names)[N]) {
  std::vector<std::string> out;
  for (unsigned b = 0; b < 64; ++b)
    if (mask & (uint64_t(1) << b)) out.push_back(b < N ? names[b] : "bit " + std::to_string(b));
  return out;
}

std::vector<std::string> dtype_names(uint64_t mask) {
  std::vector<std::string> out;
  for (unsigned b = 0; b < 64; ++b)
    if (mask & (uint64_t(1) << b))
      out.push_back(b < unsigned(oar::kNumDTypes) ? oar::dtype_name(DType(b))
                                                  : "bit " + std::to_string(b));
  return out;
}

std::string join(const std::vector<std::string>& items, const std::string& sep) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : sep) + i;
  return s;
}

using oar::flag_type_name;

// One flag as a text line plus its help: "NAME = 'value'  [type, default, source]".
void print_flag_text(std::ostream& os, const oar::FlagValue& f) {
  const auto& def = f.definition;
  os << "  " << def.name << " = '" << f.value << "'  [" << flag_type_name(def.type);
  if (!def.choices.empty()) os << " {" << join(def.choices, ", ") << "}";
  os << ", default '" << def.default_value
     << "', source: " << (f.from_environment ? "env" : "default") << "]\n      " << def.help << "\n";
}

std::string signature_text(const std::vector<DType>& sig) {
  std::vector<std::string> parts;
  for (DType d : sig) parts.push_back(oar::dtype_name(d));
  std::string s = "(";  // appended, not operator+: GCC 12 warns falsely (-Wrestrict)
  s += join(parts, ",");
  return s += ")";
}

// The dtype a signature is "for": its most frequent input dtype, the first on
// a tie, so where(bool,f32,f32) counts as f32 and gather(f32,i64) as f32.
DType data_dtype(const std::vector<DType>& sig) {
  DType best = sig[0];
  long best_count = 0;
  for (DType d : sig) {
    long c = std::count(sig.begin(), sig.end(), d);
    if (c > best_count) best = d, best_count = c;
  }
  return best;
}

struct CoverageRow {
  std::string op;
  std::vector<std::vector<DType>> signatures;
  std::vector<std::string> impls;
};

// One row per catalog op, empty where the device type registers no kernel.
std::vector<CoverageRow> coverage(int32_t device_type) {
  const auto& registry = oar::KernelRegistry::instance();
  std::map<int32_t, std::set<std::string>> impls;
  for (const oar::KernelEntry* e : registry.entries_for_device(device_type))
    impls[e->op_id].insert(e->impl_name.empty() ? "(unnamed)" : e->impl_name);
  std::vector<CoverageRow> rows;
  for (const auto& schema : oar::OpRegistry::instance().all()) {
    if (schema->view) continue;  // views are Tensor methods on every device, never kernels
    CoverageRow row{schema->name, registry.signatures(schema->id, device_type), {}};
    for (const auto& n : impls[schema->id]) row.impls.push_back(n);
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(),
            [](const CoverageRow& a, const CoverageRow& b) { return a.op < b.op; });
  return rows;
}

// ---------------------------------------------------------------- text ----

void print_coverage_text(std::ostream& os, const oar::LoadedPlugin& p) {
  std::vector<CoverageRow> rows = coverage(p.device_type_id);
  size_t width = 2, covered = 0;
  for (const auto& r : rows) {
    width = std::max(width, r.op.size());
    covered += r.signatures.empty() ? 0 : 1;
  }
  os << "\nKernel coverage for device type '" << p.device_type << "' (" << covered << " of "
     << rows.size() << " ops; x = a kernel for inputs of that dtype):\n  ";
  os << std::string(width, ' ');
  for (DType d : oar::all_dtypes) os << ' ' << oar::dtype_name(d);
  os << "  implementations\n";
  for (const auto& r : rows) {
    os << "  " << r.op << std::string(width - r.op.size(), ' ');
    std::set<DType> marked;
    std::vector<std::string> mixed;
    bool no_inputs = false;
    for (const auto& sig : r.signatures) {
      if (sig.empty()) {
        no_inputs = true;
        continue;
      }
      marked.insert(data_dtype(sig));
      if (std::count(sig.begin(), sig.end(), sig[0]) != long(sig.size()))
        mixed.push_back(signature_text(sig));
    }
    for (DType d : oar::all_dtypes) {
      size_t w = std::string(oar::dtype_name(d)).size();
      os << std::string(w, ' ') << (marked.count(d) ? 'x' : '.');
    }
    std::string note = r.signatures.empty() ? "-" : join(r.impls, ", ");
    if (no_inputs) note += " (no tensor inputs; dtype from attributes)";
    if (mixed.size() > 3)  // keep the row short; --json lists every signature
      mixed = {mixed[0], mixed[1], "... (" + std::to_string(mixed.size()) + " in all)"};
    if (!mixed.empty()) note += "; signatures " + join(mixed, " ");
    os << "  " << note << "\n";
  }
}

void print_text(std::ostream& os, const oar::Runtime& rt) {
  std::vector<std::string> sections;
  for (const auto& s : info_sections()) sections.push_back(s.text());
  os << "oar core: plugin ABI " << OAR_ABI_VERSION_MAJOR << "." << OAR_ABI_VERSION_MINOR
     << " (oar_plugin_api struct_size " << sizeof(oar_plugin_api) << ")\n";
  auto& flags = oar::Flags::instance();
  os << "\nPlugin search directories (OAR_PLUGIN_PATH='" << flags.get("OAR_PLUGIN_PATH")
     << "', OAR_PLUGIN_DEFAULT_DIR=" << flags.get("OAR_PLUGIN_DEFAULT_DIR") << "):\n";
  if (rt.searched_dirs().empty())
    os << "  (none: OAR_PLUGIN_PATH is empty and OAR_PLUGIN_DEFAULT_DIR=0)\n";
  for (const auto& d : rt.searched_dirs()) {
    std::error_code ec;
    os << "  " << d << (std::filesystem::is_directory(d, ec) ? "" : "  (not a directory)")
       << "\n";
  }

  os << "\nLoaded plugins (" << rt.plugins().size() << "):\n";
  if (rt.plugins().empty())
    os << "  No plugin is loaded, so no device is available"
       << (rt.skipped().empty() ? " (no liboar_plugin_*.so was found).\n"
                                : "; the skipped plugins below say why.\n");
  for (const auto& p : rt.plugins()) {
    os << "  " << p->name << " " << p->version << "\n"
       << "    path:        " << p->path << "\n"
       << "    device type: " << p->device_type << "\n"
       << "    ABI:         " << p->abi_major << "." << p->abi_minor << " (table struct_size "
       << oar::plugin_table(*p).plugin_struct_size << ")";
    if (p->abi_minor > OAR_ABI_VERSION_MINOR)
      os << "; newer minor than this core, entries past " << OAR_ABI_VERSION_MAJOR << "."
         << OAR_ABI_VERSION_MINOR << " are ignored";
    os << "\n    flags:       "
       << (p->declared_flags.empty() ? "none" : join(p->declared_flags, ", ")) << "\n";
    for (const auto& r : p->rejected_flags)
      os << "    rejected flag " << r.name << ": " << r.reason << "\n";
    os << "    devices:     " << p->device_count << "\n";
    for (int32_t i = 0; i < p->device_count; ++i) {
      const oar_device_properties& props = p->properties[i];
      const oar_device_capabilities& caps = p->capabilities[i];
      std::vector<std::string> cap = bit_names(caps.flags, kCapabilityNames);
      std::vector<std::string> stats = bit_names(caps.memory_stats_fields, kMemoryStatNames);
      os << "    [" << p->device_type << ":" << i << "] " << props.name << "\n"
         << "        vendor:          " << props.vendor << "\n"
         << "        capabilities:    " << (cap.empty() ? "none" : join(cap, ", ")) << "\n"
         << "        dtypes:          " << join(dtype_names(caps.dtype_mask), " ") << "\n"
         << "        alloc alignment: " << caps.alloc_alignment << " bytes\n"
         << "        memory stats:    " << (stats.empty() ? "none" : join(stats, ", ")) << "\n"
         << "        total memory:    "
         << (props.total_memory ? std::to_string(props.total_memory) + " bytes" : "unknown")
         << ", compute units: " << props.compute_units << "\n"
         << "        DLPack device:   "
         << int(oar::dlpack_device_type(oar::Device{p->device_type_id, i}))
         << (props.dlpack_device_type > 0 ? "" : " (kDLExtDev: the plugin declares none)") << "\n";
    }
  }

  os << "\nSkipped plugins (" << rt.skipped().size() << "):\n";
  if (rt.skipped().empty()) os << "  none\n";
  for (const auto& s : rt.skipped()) os << "  " << s.path << "\n      reason: " << s.reason << "\n";
  for (const auto& text : sections) os << "\n" << text;

  for (const auto& p : rt.plugins()) print_coverage_text(os, *p);

  // Core flags first, then each plugin's, under its name.
  std::vector<oar::FlagValue> all = flags.list();
  os << "\nFlags (source: env = set in the environment, default = built-in default):\n";
  for (const auto& f : all)
    if (f.owner.empty()) print_flag_text(os, f);
  std::vector<std::string> owners;  // plugins first, then other declarers (adapter drivers)
  for (const auto& p : rt.plugins())
    if (!p->declared_flags.empty()) owners.push_back(p->name);
  for (const auto& f : all)
    if (!f.owner.empty() && std::find(owners.begin(), owners.end(), f.owner) == owners.end()) owners.push_back(f.owner);
  for (const auto& owner : owners) {
    bool plugin = std::any_of(rt.plugins().begin(), rt.plugins().end(), [&](const auto& p) { return p->name == owner; });
    os << "\nFlags of " << (plugin ? "plugin" : "adapter driver") << " '" << owner << "':\n";
    for (const auto& f : all)
      if (f.owner == owner) print_flag_text(os, f);
  }
}

// ---------------------------------------------------------------- JSON ----

// A minimal streaming JSON writer: commas and indentation are handled here so
// the report code reads as a list of keys and values.
class Json {
 public:
  explicit Json(std::ostream& os) : os_(os) {}
  Json& begin(char bracket) {
    element();
    os_ << bracket;
    first_.push_back(true);
    return *this;
  }
  Json& end(char bracket) {
    bool empty = first_.back();
    first_.pop_back();
    if (!empty) newline();
    os_ << bracket;
    return *this;
  }
  Json& key(const std::string& k) {
    element();
    quote(k);
    os_ << ": ";
    after_key_ = true;
    return *this;
  }
  Json& str(const std::string& v) { return element(), quote(v), *this; }
  Json& num(uint64_t v) { return element(), os_ << v, *this; }
  Json& num(int64_t v) { return element(), os_ << v, *this; }
  Json& boolean(bool v) { return element(), os_ << (v ? "true" : "false"), *this; }
  Json& raw(const std::string& json) { return element(), os_ << json, *this; }
  Json& strings(const std::vector<std::string>& v) {
    begin('[');
    for (const auto& s : v) str(s);
    return end(']');
  }

 private:
  void newline() { os_ << '\n' << std::string(2 * first_.size(), ' '); }
  void element() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (first_.empty()) return;
    if (!first_.back()) os_ << ',';
    first_.back() = false;
    newline();
  }
  void quote(const std::string& s) {
    os_ << '"';
    for (unsigned char c : s) {
      switch (c) {
        case '"': os_ << "\\\""; break;
        case '\\': os_ << "\\\\"; break;
        case '\n': os_ << "\\n"; break;
        case '\r': os_ << "\\r"; break;
        case '\t': os_ << "\\t"; break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof(buf), "\\u%04x", c);
            os_ << buf;
          } else {
            os_ << c;
          }
      }
    }
    os_ << '"';
  }
  std::ostream& os_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

void print_json(std::ostream& os, const oar::Runtime& rt) {
  std::vector<std::pair<std::string, std::string>> sections;
  for (const auto& s : info_sections()) sections.emplace_back(s.key, s.json());
  Json j(os);
  j.begin('{');
  for (const auto& [key, value] : sections) j.key(key).raw(value);
  j.key("abi").begin('{');
  j.key("major").num(uint64_t(OAR_ABI_VERSION_MAJOR)).key("minor").num(uint64_t(OAR_ABI_VERSION_MINOR));
  j.key("plugin_api_struct_size").num(uint64_t(sizeof(oar_plugin_api)));
  j.end('}');
  j.key("search_dirs").strings(rt.searched_dirs());
  j.key("no_plugin_loaded").boolean(rt.plugins().empty());
  j.key("plugins").begin('[');
  for (const auto& p : rt.plugins()) {
    j.begin('{');
    j.key("name").str(p->name).key("version").str(p->version).key("path").str(p->path);
    j.key("device_type").str(p->device_type);
    j.key("abi_major").num(uint64_t(p->abi_major)).key("abi_minor").num(uint64_t(p->abi_minor));
    j.key("struct_size").num(uint64_t(oar::plugin_table(*p).plugin_struct_size));
    j.key("flags").strings(p->declared_flags);
    j.key("rejected_flags").begin('[');
    for (const auto& r : p->rejected_flags)
      j.begin('{').key("name").str(r.name).key("reason").str(r.reason).end('}');
    j.end(']');
    j.key("device_count").num(int64_t(p->device_count));
    j.key("devices").begin('[');
    for (int32_t i = 0; i < p->device_count; ++i) {
      const oar_device_properties& props = p->properties[i];
      const oar_device_capabilities& caps = p->capabilities[i];
      j.begin('{');
      j.key("index").num(int64_t(i)).key("name").str(props.name).key("vendor").str(props.vendor);
      j.key("capabilities").strings(bit_names(caps.flags, kCapabilityNames));
      j.key("dtypes").strings(dtype_names(caps.dtype_mask));
      j.key("alloc_alignment").num(uint64_t(caps.alloc_alignment));
      j.key("memory_stats").strings(bit_names(caps.memory_stats_fields, kMemoryStatNames));
      j.key("total_memory").num(uint64_t(props.total_memory));
      j.key("compute_units").num(int64_t(props.compute_units));
      j.key("dlpack_device_type").num(int64_t(oar::dlpack_device_type(oar::Device{p->device_type_id, i})));
      j.end('}');
    }
    j.end(']');
    j.key("kernels").begin('[');
    for (const auto& row : coverage(p->device_type_id)) {
      if (row.signatures.empty()) continue;
      j.begin('{').key("op").str(row.op).key("signatures").begin('[');
      std::set<std::string> dtypes;
      for (const auto& sig : row.signatures) {
        std::vector<std::string> names;
        for (DType d : sig) names.push_back(oar::dtype_name(d));
        j.strings(names);
        if (!sig.empty()) dtypes.insert(oar::dtype_name(data_dtype(sig)));
      }
      j.end(']');
      j.key("dtypes").strings(std::vector<std::string>(dtypes.begin(), dtypes.end()));
      j.key("impls").strings(row.impls).end('}');
    }
    j.end(']');
    j.end('}');
  }
  j.end(']');
  j.key("skipped").begin('[');
  for (const auto& s : rt.skipped())
    j.begin('{').key("path").str(s.path).key("reason").str(s.reason).end('}');
  j.end(']');
  j.key("flags").begin('[');
  for (const auto& f : oar::Flags::instance().list()) {
    const auto& def = f.definition;
    j.begin('{').key("name").str(def.name).key("type").str(flag_type_name(def.type));
    j.key("value").str(f.value).key("default").str(def.default_value);
    j.key("source").str(f.from_environment ? "env" : "default").key("owner").str(f.owner);
    j.key("choices").strings(def.choices).key("help").str(def.help).end('}');
  }
  j.end(']');
  j.key("abi_entries").begin('[');
  for (const auto& e : oar::abi_entries()) {
    j.begin('{').key("name").str(e.name).key("required").boolean(e.required);
    j.key("since_minor").num(int64_t(e.since_minor)).end('}');
  }
  j.end(']');
  j.end('}');
  os << "\n";
}

// The table docs/abi.md carries verbatim (checked by tests/abi/test_abi_docs).
void print_abi_markdown(std::ostream& os) {
  os << "| Entry | Requirement | Since ABI |\n|---|---|---|\n";
  for (const auto& e : oar::abi_entries())
    os << "| `" << e.name << "` | " << (e.required ? "required" : "optional") << " | "
       << OAR_ABI_VERSION_MAJOR << "." << e.since_minor << " |\n";
}

}  // namespace

void register_info_section(InfoSection section) { info_sections().push_back(std::move(section)); }

std::string info_report_text() {
  std::ostringstream out;
  print_text(out, Runtime::get());
  return out.str();
}

std::string info_report_json() {
  std::ostringstream out;
  print_json(out, Runtime::get());
  return out.str();
}

std::string abi_entries_markdown() {
  std::ostringstream out;
  print_abi_markdown(out);
  return out.str();
}

}  // namespace oar
