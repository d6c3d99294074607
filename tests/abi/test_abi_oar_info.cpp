// oar-info's report, checked from the outside as a user or script sees it:
// the CPU plugin's devices with capabilities and dtypes spelled out, kernel
// coverage, flags, the --abi table, option handling, and --json output that a
// strict JSON parser accepts even when skip reasons carry quotes.
#include <cctype>

#include "abi_test_util.h"
#include "oar/flags.h"
#include "oar/plugin_loader.h"

using namespace oar::abi_testing;

namespace {

// Strict recursive-descent JSON syntax check (RFC 8259); true when `s` is one
// well-formed value. Enough to catch a missing comma or a badly escaped string.
class JsonChecker {
 public:
  explicit JsonChecker(const std::string& s) : s_(s) {}
  bool ok() {
    ws();
    if (!value()) return false;
    ws();
    return i_ == s_.size();
  }

 private:
  void ws() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool lit(const char* w) {
    size_t n = std::char_traits<char>::length(w);
    if (s_.compare(i_, n, w) != 0) return false;
    i_ += n;
    return true;
  }
  bool string() {
    if (s_[i_] != '"') return false;
    for (++i_; i_ < s_.size(); ++i_) {
      unsigned char c = s_[i_];
      if (c == '"') return ++i_, true;
      if (c < 0x20) return false;
      if (c == '\\') {
        if (++i_ >= s_.size()) return false;
        char e = s_[i_];
        if (e == 'u') {
          for (int k = 0; k < 4; ++k)
            if (++i_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[i_]))) return false;
        } else if (std::string("\"\\/bfnrt").find(e) == std::string::npos) {
          return false;
        }
      }
    }
    return false;
  }
  bool number() {
    size_t start = i_;
    if (s_[i_] == '-') ++i_;
    while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) ||
                              std::string(".eE+-").find(s_[i_]) != std::string::npos))
      ++i_;
    return i_ > start;
  }
  bool value() {
    if (i_ >= s_.size()) return false;
    char c = s_[i_];
    if (c == '{' || c == '[') {
      char close = c == '{' ? '}' : ']';
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == close) return ++i_, true;
      while (true) {
        ws();
        if (c == '{') {
          if (!string()) return false;
          ws();
          if (i_ >= s_.size() || s_[i_++] != ':') return false;
          ws();
        }
        if (!value()) return false;
        ws();
        if (i_ >= s_.size()) return false;
        if (s_[i_] == ',') { ++i_; continue; }
        if (s_[i_] == close) return ++i_, true;
        return false;
      }
    }
    if (c == '"') return string();
    if (c == 't') return lit("true");
    if (c == 'f') return lit("false");
    if (c == 'n') return lit("null");
    return number();
  }
  const std::string& s_;
  size_t i_ = 0;
};

bool valid_json(const std::string& s) { return JsonChecker(s).ok(); }

}  // namespace

TEST(AbiOarInfo, JsonCheckerIsStrict) {
  EXPECT_TRUE(valid_json(R"({"a": [1, "x\"y", true, null], "b": {}})"));
  EXPECT_FALSE(valid_json(R"({"a": [1, 2,]})"));
  EXPECT_FALSE(valid_json(R"({"a": "x"y"})"));
  EXPECT_FALSE(valid_json(R"({"a": 1 "b": 2})"));
}

TEST(AbiOarInfo, JsonIsValidWithQuotedSkipReasons) {
  // The no_entry reason contains `extern "C"`, which must be escaped.
  std::string path = plugin_dir("no_entry") + ":" + plugin_dir("garbage") + ":" +
                     plugin_dir("newer_minor");
  ProcessResult r = run_oar_info({"--json"}, {{"OAR_PLUGIN_PATH", path}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(valid_json(r.out)) << r.out;
  EXPECT_NE(r.out.find(R"(extern \"C\")"), std::string::npos) << r.out;
  r = run_oar_info({"--json"}, {{"OAR_PLUGIN_DEFAULT_DIR", "0"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(valid_json(r.out)) << r.out;
}

TEST(AbiOarInfo, TextReportsCpuDevice) {
  ProcessResult r = run_oar_info({}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string& o = r.out;
  std::string version = std::to_string(OAR_ABI_VERSION_MAJOR) + "." + std::to_string(OAR_ABI_VERSION_MINOR);
  EXPECT_NE(o.find("oar core: plugin ABI " + version), std::string::npos) << o;
  EXPECT_NE(o.find("cpu_mkldnn"), std::string::npos) << o;
  EXPECT_NE(o.find("liboar_plugin_cpu.so"), std::string::npos) << o;
  EXPECT_NE(o.find("device type: cpu"), std::string::npos) << o;
  EXPECT_NE(o.find("ABI:         " + version), std::string::npos) << o;
  EXPECT_NE(o.find("devices:     1"), std::string::npos) << o;
  EXPECT_NE(o.find("[cpu:0]"), std::string::npos) << o;
  EXPECT_NE(o.find("host_accessible_memory"), std::string::npos) << o;
  EXPECT_NE(o.find("dtypes:          f32 f64 f16 bf16 i8 u8 i32 i64 bool"), std::string::npos) << o;
  EXPECT_NE(o.find("alloc alignment: 64 bytes"), std::string::npos) << o;
  EXPECT_NE(o.find("Skipped plugins (0):"), std::string::npos) << o;
  EXPECT_NE(o.find("Kernel coverage for device type 'cpu'"), std::string::npos) << o;
  // "add" is registered for f32 on the CPU: its row has an 'x' and an impl name.
  size_t row = o.find("\n  add ");
  ASSERT_NE(row, std::string::npos) << o;
  std::string line = o.substr(row + 1, o.find('\n', row + 1) - row - 1);
  EXPECT_NE(line.find('x'), std::string::npos) << line;
  EXPECT_NE(line.find("kp-cpu"), std::string::npos) << line;
  for (const auto& def : oar::builtin_flag_definitions())
    EXPECT_NE(o.find("  " + def.name + " = '" + def.default_value + "'"), std::string::npos)
        << def.name << "\n" << o;
}

TEST(AbiOarInfo, AbiTableListsEveryEntry) {
  ProcessResult r = run_oar_info({"--abi"}, {});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("| Entry | Requirement | Since ABI |\n|---|---|---|\n", 0), 0u) << r.out;
  for (const auto& e : oar::abi_entries()) {
    std::string row = std::string("| `") + e.name + "` | " + (e.required ? "required" : "optional");
    EXPECT_NE(r.out.find(row), std::string::npos) << row;
  }
  EXPECT_NE(r.out.find("| `memory_allocate` | required | 1.0 |"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("| `collectives` | optional | 1.0 |"), std::string::npos) << r.out;
}

TEST(AbiOarInfo, HelpAndBadOption) {
  ProcessResult r = run_oar_info({"--help"}, {});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("usage: oar-info"), std::string::npos) << r.out;
  r = run_oar_info({"--bogus"}, {});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown option '--bogus'"), std::string::npos) << r.err;
}
