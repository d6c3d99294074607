// oar-info: what this oar installation can do, as the core sees it. It prints
// the core's plugin ABI version, every loaded plugin with its devices
// (capabilities and dtypes spelled out), every skipped plugin with the
// loader's reason, the directories searched, per-device-type kernel coverage
// (op x dtype, with implementation names) and every OAR_* flag, the core's
// and each plugin's (with the declarations it refused and why). `--abi` prints
// the ABI entry table as Markdown (pasted into docs/abi.md), `--json` the
// whole report as JSON for tests and scripts (the report itself is the
// core's, oar/info_report.h, shared with `python -m oar.info`). It must work on a broken
// installation, so it never lets an error escape and reports "no plugin is
// loaded" as a result, not a failure.
#include <iostream>
#include <string>

#include "oar/error.h"
#include "oar/info_report.h"

namespace {

constexpr const char* kUsage =
    "usage: oar-info [--abi | --json | --help]\n"
    "  (no option)  plugins, devices, skipped plugins, kernel coverage and flags as text\n"
    "  --abi        the plugin ABI entry table (oar_plugin_entries.def) as Markdown\n"
    "  --json       the full report as JSON\n"
    "  --help       this text\n"
    "Plugins are searched in OAR_PLUGIN_PATH, then beside liboar_core.so unless\n"
    "OAR_PLUGIN_DEFAULT_DIR=0.\n";

}  // namespace

int main(int argc, char** argv) {
  bool abi = false, json = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--abi") {
      abi = true;
    } else if (a == "--json") {
      json = true;
    } else if (a == "--help" || a == "-h") {
      std::cout << kUsage;
      return 0;
    } else {
      std::cerr << "oar-info: unknown option '" << a << "'\n" << kUsage;
      return 2;
    }
  }
  try {
    if (abi) {
      std::cout << oar::abi_entries_markdown();
      return 0;
    }
    // Built whole first, so an error half-way never leaves truncated JSON.
    std::cout << (json ? oar::info_report_json() : oar::info_report_text()) << std::flush;
    return 0;
  } catch (const oar::Error& e) {
    std::cerr << "oar-info: " << oar::error_kind_name(e.kind()) << ": " << e.what() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "oar-info: error: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "oar-info: unknown error\n";
  }
  return 1;
}
