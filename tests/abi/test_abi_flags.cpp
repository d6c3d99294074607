// Flag diagnostics: an OAR_* environment variable that names no flag (a typo)
// draws a warning naming it, and a flag with an invalid value is reported and
// left at its default instead of stopping the program. Both are checked on a
// fresh oar-info process, whose environment is exactly what each test gives.
#include "abi_test_util.h"
#include "oar/error.h"
#include "oar/flags.h"

using namespace oar::abi_testing;

TEST(AbiFlags, UnknownVariableDrawsAWarningNamingIt) {
  ProcessResult r = run_oar_info({}, {{"OAR_DEVCE", "cpu"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("OAR_DEVCE"), std::string::npos) << "stderr: " << r.err;
  EXPECT_NE(r.err.find("warning"), std::string::npos) << "stderr: " << r.err;
  // The real flag is untouched and no plugin is lost over it.
  EXPECT_NE(r.out.find("OAR_DEVICE = 'cpu'"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu_mkldnn"), std::string::npos) << r.out;

  // A correctly spelled flag draws no such warning.
  r = run_oar_info({}, {{"OAR_DEVICE", "cpu"}});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.err.find("unknown environment variable"), std::string::npos) << r.err;
}

TEST(AbiFlags, InvalidValueIsReportedNotFatal) {
  ProcessResult r = run_oar_info({"--json"}, {{"OAR_FALLBACK", "maybe"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("OAR_FALLBACK"), std::string::npos) << "stderr: " << r.err;
  EXPECT_NE(r.err.find("'maybe'"), std::string::npos) << "stderr: " << r.err;
  EXPECT_NE(r.err.find("warn, error, silent"), std::string::npos) << "stderr: " << r.err;
  // The flag keeps its default and is marked as such.
  size_t at = r.out.find("\"name\": \"OAR_FALLBACK\"");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string entry = r.out.substr(at, r.out.find('}', at) - at);
  EXPECT_NE(entry.find("\"value\": \"warn\""), std::string::npos) << entry;
  EXPECT_NE(entry.find("\"source\": \"default\""), std::string::npos) << entry;

  r = run_oar_info({"--json"}, {{"OAR_FALLBACK", "error"}});
  at = r.out.find("\"name\": \"OAR_FALLBACK\"");
  ASSERT_NE(at, std::string::npos) << r.out;
  entry = r.out.substr(at, r.out.find('}', at) - at);
  EXPECT_NE(entry.find("\"value\": \"error\""), std::string::npos) << entry;
  EXPECT_NE(entry.find("\"source\": \"env\""), std::string::npos) << entry;
}

TEST(AbiFlags, OtherBadValuesAreNotFatal) {
  ProcessResult r = run_oar_info(
      {}, {{"OAR_NUM_THREADS", "many"}, {"OAR_PLUGIN_DEFAULT_DIR", "perhaps"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("OAR_NUM_THREADS expects an integer, got 'many'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("OAR_PLUGIN_DEFAULT_DIR expects a boolean"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("cpu_mkldnn"), std::string::npos) << r.out;  // default dir kept on
}

// Setting a flag at run time validates the same way, with a typed error.
TEST(AbiFlags, SetRejectsInvalidValues) {
  auto& flags = oar::Flags::instance();
  EXPECT_THROW(flags.set("OAR_FALLBACK", "maybe"), oar::ValueError);
  EXPECT_THROW(flags.set("OAR_DEVCE", "cpu"), oar::ValueError);
  std::string before = flags.get("OAR_FALLBACK");
  flags.set("OAR_FALLBACK", "SILENT");  // choices are case-insensitive
  EXPECT_EQ(flags.get("OAR_FALLBACK"), "silent");
  flags.set("OAR_FALLBACK", before);
}
