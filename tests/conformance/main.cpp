// oar-conformance: how far a device is from full support, with evidence.
//
//   oar-conformance --device NAME | --plugin PATH
//                   [--level quick|full] [--filter GLOBS] [--list]
//                   [--timeout SECONDS] [--expectations FILE|none]
//                   [--json FILE] [--markdown FILE] [--report-dir DIR] [--quiet]
//
// The cases run in child processes of this executable (supervisor.h) in
// strict mode (OAR_FALLBACK=error); the parent applies the allow/skip list,
// prints failures as they come and writes the reports. Exit status: 0 when no
// case failed, crashed or timed out; 1 when one did; 2 for a usage error or a
// device that cannot be tested at all; 77 when the device's plugin loads but
// finds no device on this machine (nothing to test: a skip for CTest).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

#include "conformance_case.h"
#include "expectations.h"
#include "oar/core.h"
#include "oar/plugin_table.h"
#include "report.h"
#include "supervisor.h"

namespace fs = std::filesystem;
using namespace oar;
using namespace oar::conformance;

namespace {

struct Args {
  std::string device, plugin, filter, expectations, json, markdown, report_dir;
  std::string onnx_root = "/usr/share/libonnx-testdata/data";
  Level level = Level::kQuick;
  double timeout = 0;  // 0: each case's own budget
  bool list = false, quiet = false;
  // child modes
  bool child_list = false;
  std::string child_run_file;
  size_t child_start = 0;
};

void usage(std::FILE* to) {
  std::fprintf(to,
               "usage: oar-conformance --device NAME | --plugin PATH [options]\n"
               "  --level quick|full     quick (default) or every variant, large tensors and all ONNX tests\n"
               "  --filter GLOBS         comma-separated case globs ('ops/add/*,abi'); '-GLOB' excludes\n"
               "  --list                 print the case ids and exit\n"
               "  --timeout SECONDS      time budget of every case (default: each case's own)\n"
               "  --expectations FILE    allow/skip list (default: the installed expectations.txt; 'none')\n"
               "  --json FILE            JSON report\n"
               "  --markdown FILE        Markdown report\n"
               "  --report-dir DIR       both reports as DIR/<device>.json and DIR/<device>.md\n"
               "  --onnx-root DIR        libonnx-testdata's data folder (default %s)\n"
               "  --quiet                print only the summary\n",
               "/usr/share/libonnx-testdata/data");
}

bool parse(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    std::string s = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    std::string v;
    if (s == "--device") { if (!value(a.device)) return false; }
    else if (s == "--plugin") { if (!value(a.plugin)) return false; }
    else if (s == "--filter") { if (!value(a.filter)) return false; }
    else if (s == "--expectations") { if (!value(a.expectations)) return false; }
    else if (s == "--json") { if (!value(a.json)) return false; }
    else if (s == "--markdown") { if (!value(a.markdown)) return false; }
    else if (s == "--report-dir") { if (!value(a.report_dir)) return false; }
    else if (s == "--onnx-root") { if (!value(a.onnx_root)) return false; }
    else if (s == "--list") a.list = true;
    else if (s == "--quiet") a.quiet = true;
    else if (s == "--child-list") a.child_list = true;
    else if (s == "--level") {
      if (!value(v) || (v != "quick" && v != "full")) return false;
      a.level = v == "full" ? Level::kFull : Level::kQuick;
    } else if (s == "--timeout") {
      if (!value(v) || std::atof(v.c_str()) <= 0) return false;
      a.timeout = std::atof(v.c_str());
    } else if (s == "--child-run") {
      if (!value(a.child_run_file) || !value(v)) return false;
      a.child_start = size_t(std::atol(v.c_str()));
    } else if (s == "--help" || s == "-h") {
      usage(stdout);
      std::exit(0);
    } else {
      std::fprintf(stderr, "oar-conformance: unknown argument '%s'\n", s.c_str());
      return false;
    }
  }
  if (a.device.empty() == a.plugin.empty()) {
    std::fprintf(stderr, "oar-conformance: give exactly one of --device NAME and --plugin PATH\n");
    return false;
  }
  return true;
}

// ---- child side ----

// How a reason starts when the device type exists but has no device here (a
// CUDA plugin on a machine without a GPU): exit status 77, "skipped".
constexpr const char* kNoDevice = "no device here: ";

// The device under test, or the reason there is none.
std::string find_target(const Args& a, Target& t) {
  Runtime& rt = Runtime::get();
  std::string type = a.device;
  if (!a.plugin.empty()) {
    std::error_code ec;
    const fs::path want = fs::weakly_canonical(a.plugin, ec);
    type.clear();
    for (const auto& p : rt.plugins())
      if (fs::weakly_canonical(p->path, ec) == want) type = p->device_type;
    if (type.empty()) {
      for (const auto& s : rt.skipped())
        if (fs::weakly_canonical(s.path, ec) == want) return "the plugin " + a.plugin + " was not loaded: " + s.reason;
      return "the plugin " + a.plugin + " was not found by the loader";
    }
  }
  // A plugin that loaded with no device here (CUDA without a GPU): nothing to test.
  const std::string type_name = type.substr(0, type.find(':'));
  for (const auto& p : rt.plugins())
    if (p->device_type == type_name && p->device_count == 0)
      return kNoDevice + ("the " + type_name + " plugin found no device (" + p->version + ")");
  Device d;
  try {
    d = Device::parse(type);
  } catch (const Error& e) {
    return e.what();
  }
  for (Device have : rt.devices())
    if (have == d) {
      t.device = d;
      t.device_type = rt.device_type_name(d.type);
      return "";
    }
  for (const auto& p : rt.plugins())
    if (p->device_type == rt.device_type_name(d.type))
      return kNoDevice + ("the " + p->device_type + " plugin has no device " + d.str() + " (" + p->version + ")");
  std::string why = "no device '" + type + "': no loaded plugin provides it";
  for (const auto& s : rt.skipped()) why += "; skipped " + s.path + ": " + s.reason;
  return why;
}

int child_main(const Args& a) {
  constexpr int fd = 3;
  Target t;
  t.level = a.level;
  t.onnx_root = a.onnx_root;
  std::string why;
  try {
    why = find_target(a, t);
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (!why.empty()) {
    report_line(fd, "ERROR\t" + one_line(why));
    std::fflush(nullptr);
    _exit(0);
  }
  std::vector<Case> cases = all_cases(t);
  if (a.child_list) {
    Runtime& rt = Runtime::get();
    const LoadedPlugin& p = rt.plugin_for(t.device);
    oar_device_properties props{};
    props.struct_size = sizeof(props);
    plugin_table(p).entries.device_get_properties(t.device.index, &props);
    report_line(fd, "INFO\tdevice\t" + t.device.str());
    report_line(fd, "INFO\tdevice name\t" + one_line(props.name));
    report_line(fd, "INFO\tplugin\t" + one_line(p.name + " " + p.version));
    report_line(fd, "INFO\tplugin path\t" + one_line(p.path));
    report_line(fd, "INFO\tplugin ABI\t" + std::to_string(p.abi_major) + "." + std::to_string(p.abi_minor));
    report_line(fd, "INFO\tcore ABI\t" + std::to_string(OAR_ABI_VERSION_MAJOR) + "." +
                        std::to_string(OAR_ABI_VERSION_MINOR));
    std::string ops;
    for (const auto& op : OpRegistry::instance().all())
      if (!op->view) ops += (ops.empty() ? "" : ",") + op->name;
    report_line(fd, "INFO\tops\t" + ops);
    for (const auto& c : cases)
      report_line(fd, "CASE\t" + c.id + "\t" + std::to_string(c.budget_s) + "\t" + c.op + "\t" + c.dtype);
    report_line(fd, "DONE");
    std::fflush(nullptr);
    _exit(0);
  }
  std::map<std::string, const Case*> by_id;
  for (const auto& c : cases) by_id[c.id] = &c;
  std::ifstream in(a.child_run_file);
  std::vector<std::string> ids;
  for (std::string line; std::getline(in, line);) ids.push_back(line);
  for (size_t i = a.child_start; i < ids.size(); ++i) {
    report_line(fd, "BEGIN " + std::to_string(i));
    auto start = std::chrono::steady_clock::now();
    auto it = by_id.find(ids[i]);
    Outcome o = it == by_id.end() ? Outcome{Status::kFail, "no such case in this child (the device changed?)"}
                                  : run_guarded(it->second->run);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fflush(nullptr);
    report_line(fd, "END " + std::to_string(i) + " " + status_name(o.status) + " " + std::to_string(secs) + " " +
                        one_line(o.reason));
  }
  std::fflush(nullptr);
  // Skip the exit-time teardown of plugins: a device's clean shutdown is not
  // what the cases above measure, and a crash there must not blame the last one.
  _exit(0);
}

// ---- parent side ----

std::string default_expectations() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  fs::path installed = exe.parent_path().parent_path() / "share" / "oar" / "conformance" / "expectations.txt";
  if (fs::exists(installed, ec)) return installed.string();
#ifdef OAR_CONFORMANCE_SOURCE_DIR
  return std::string(OAR_CONFORMANCE_SOURCE_DIR) + "/expectations.txt";
#else
  return "";
#endif
}

std::string shell_quote(const std::string& s) {
  if (s.find_first_of(" '\"$\\") == std::string::npos) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

int parent_main(const Args& a) {
  const auto start = std::chrono::steady_clock::now();
  std::error_code ec;
  ChildCommand cmd;
  cmd.executable = fs::read_symlink("/proc/self/exe", ec).string();
  if (!a.plugin.empty() && !fs::is_regular_file(a.plugin, ec)) {
    std::fprintf(stderr, "oar-conformance: --plugin %s: no such file\n", a.plugin.c_str());
    return 2;
  }
  if (!a.plugin.empty()) {
    fs::path p = fs::absolute(a.plugin, ec);
    cmd.args = {"--plugin", p.string()};
    const char* old = std::getenv("OAR_PLUGIN_PATH");
    cmd.env.push_back("OAR_PLUGIN_PATH=" + p.parent_path().string() + (old && *old ? ":" + std::string(old) : ""));
  } else {
    cmd.args = {"--device", a.device};
  }
  cmd.args.insert(cmd.args.end(), {"--level", a.level == Level::kFull ? "full" : "quick", "--onnx-root", a.onnx_root});
  cmd.env.push_back("OAR_FALLBACK=error");

  std::vector<Expectation> expectations;
  const std::string exp_path = a.expectations.empty() ? default_expectations() : a.expectations;
  if (exp_path != "none" && !exp_path.empty()) {
    try {
      expectations = read_expectations(exp_path);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "oar-conformance: %s\n", e.what());
      return 2;
    }
  }

  RunReport report;
  std::vector<CaseInfo> all;
  std::string why = list_in_child(cmd, all, report.info);
  if (!why.empty()) {
    std::fprintf(stderr, "oar-conformance: cannot test %s: %s\n", a.device.empty() ? a.plugin.c_str() : a.device.c_str(),
                 why.c_str());
    return why.rfind(kNoDevice, 0) == 0 ? 77 : 2;
  }
  std::string device_type;
  for (auto& [k, v] : report.info) {
    if (k == "ops") {
      size_t pos = 0;
      while (pos <= v.size()) {
        size_t comma = v.find(',', pos);
        if (comma == std::string::npos) comma = v.size();
        if (comma > pos) report.ops.push_back(v.substr(pos, comma - pos));
        pos = comma + 1;
      }
    }
    if (k == "device") device_type = v.substr(0, v.find(':'));
  }
  std::erase_if(report.info, [](const auto& kv) { return kv.first == "ops"; });
  // Paths under the working directory are shown relative to it: reports get committed.
  const std::string cwd = fs::current_path(ec).string() + "/";
  for (auto& [k, v] : report.info)
    if (k == "plugin path" && v.rfind(cwd, 0) == 0) v = v.substr(cwd.size());
  report.info.push_back({"level", a.level == Level::kFull ? "full" : "quick"});
  if (!a.filter.empty()) report.info.push_back({"filter", a.filter});
  report.info.push_back({"expectations", exp_path.empty()                ? "none"
                                         : exp_path.rfind(cwd, 0) == 0 ? exp_path.substr(cwd.size())
                                                                       : exp_path});
  {
    std::time_t now = std::time(nullptr);
    char buf[64];
    std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
    report.info.push_back({"date", buf});
  }
  report.repro_prefix = "oar-conformance " + (a.plugin.empty() ? "--device " + shell_quote(a.device)
                                                                 : "--plugin " + shell_quote(a.plugin));
  if (a.level == Level::kFull) report.repro_prefix += " --level full";

  std::vector<CaseInfo> selected;
  for (auto& c : all)
    if (matches_filter(a.filter, c.id)) selected.push_back(c);
  if (selected.empty()) {
    std::fprintf(stderr, "oar-conformance: no case matches --filter '%s' (--list shows the ids)\n", a.filter.c_str());
    return 2;
  }
  if (a.list) {
    for (const auto& c : selected) std::printf("%s\n", c.id.c_str());
    return 0;
  }

  // Skipped cases never reach a child.
  std::vector<CaseInfo> to_run;
  std::vector<size_t> where;
  report.cases = selected;
  report.results.assign(selected.size(), CaseResult{});
  for (size_t i = 0; i < selected.size(); ++i) {
    if (a.timeout > 0) report.cases[i].budget_s = selected[i].budget_s = a.timeout;
    const Expectation* e = find_expectation(expectations, device_type, selected[i].id);
    if (e && e->action == "skip") {
      report.results[i] = {Status::kSkip, e->reason + " (expectations line " + std::to_string(e->line) + ")", 0, ""};
      continue;
    }
    to_run.push_back(selected[i]);
    where.push_back(i);
  }
  if (!a.quiet)
    std::printf("oar-conformance: %zu cases on %s (%zu skipped by the expectations)\n", to_run.size(),
                device_type.c_str(), selected.size() - to_run.size());
  std::vector<CaseResult> results;
  size_t done = 0;
  run_in_children(cmd, to_run, results,
                  [&](size_t i) {
                    ++done;
                    const CaseResult& r = results[i];
                    const Expectation* e = find_expectation(expectations, device_type, to_run[i].id);
                    bool bad = r.status == Status::kFail || r.status == Status::kCrash || r.status == Status::kTimeout;
                    if (!a.quiet && bad && !(e && e->action == "allow"))
                      std::printf("[%zu/%zu] %s %s: %s\n", done, to_run.size(), status_name(r.status),
                                  to_run[i].id.c_str(), r.reason.c_str());
                    std::fflush(stdout);
                  },
                  report.fatal);
  for (size_t k = 0; k < to_run.size(); ++k) {
    CaseResult r = results[k];
    const Expectation* e = find_expectation(expectations, device_type, to_run[k].id);
    if (e && e->action == "allow") {
      std::string where_from = " (expectations line " + std::to_string(e->line) + ": " + e->reason + ")";
      if (r.status == Status::kFail || r.status == Status::kCrash || r.status == Status::kTimeout) {
        r.reason = std::string(status_name(r.status)) + ": " + r.reason + where_from;
        r.status = Status::kAllowed;
      } else if (r.status == Status::kPass) {
        r.reason = "passes although allowed to fail" + where_from + ": the entry can go";
      }
    }
    report.results[where[k]] = r;
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  bool failed = false;
  auto counts = status_counts(report, failed);
  std::printf("oar-conformance %s:", device_type.c_str());
  for (const auto& [s, n] : counts) std::printf(" %s %zu", status_name(s), n);
  std::printf(" (%.1f s)%s\n", report.seconds, failed ? " FAILED" : "");
  if (!report.fatal.empty()) std::printf("stopped early: %s\n", report.fatal.c_str());

  std::string json = a.json, md = a.markdown;
  if (!a.report_dir.empty()) {
    fs::create_directories(a.report_dir, ec);
    std::string base = (fs::path(a.report_dir) / device_type).string();
    if (json.empty()) json = base + ".json";
    if (md.empty()) md = base + ".md";
  }
  try {
    if (!json.empty()) write_file_atomic(json, to_json(report));
    if (!md.empty()) write_file_atomic(md, to_markdown(report));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "oar-conformance: %s\n", e.what());
    return 2;
  }
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parse(argc, argv, a)) {
    usage(stderr);
    return 2;
  }
  if (a.child_list || !a.child_run_file.empty()) return child_main(a);
  return parent_main(a);
}
