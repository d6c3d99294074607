#include "report.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "oar/dtype.h"

namespace oar::conformance {

namespace {

std::string json_str(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"') out += "\\\"";
    else if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      out += buf;
    } else {
      out += char(c);
    }
  }
  return out + "\"";
}

std::string md_cell(std::string s) {  // one table cell: no pipes, no newlines
  for (char& c : s)
    if (c == '\n') c = ' ';
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  if (out.size() > 400) out = out.substr(0, 397) + "...";
  return out;
}

std::string repro(const RunReport& r, const std::string& id) { return r.repro_prefix + " --filter '" + id + "'"; }

// Order of badness: the matrix shows the worst status of a cell's cases.
int rank(Status s) {
  switch (s) {
    case Status::kPass: return 0;
    case Status::kSkip: return 1;
    case Status::kAllowed: return 2;
    case Status::kFail: return 3;
    case Status::kTimeout: return 4;
    case Status::kCrash: return 5;
  }
  return 0;
}

const char* cell_text(Status s) {
  switch (s) {
    case Status::kPass: return "pass";
    case Status::kSkip: return "skip";
    case Status::kAllowed: return "allowed";
    case Status::kFail: return "**FAIL**";
    case Status::kTimeout: return "**TIMEOUT**";
    case Status::kCrash: return "**CRASH**";
  }
  return "?";
}

std::string group_of(const std::string& id) {
  size_t a = id.find('/');
  if (id.rfind("onnx/", 0) == 0) {
    size_t b = id.find('/', a + 1);
    return id.substr(0, b);
  }
  return id.substr(0, a);
}

bool bad(Status s) { return s == Status::kFail || s == Status::kCrash || s == Status::kTimeout; }

}  // namespace

std::vector<std::pair<Status, size_t>> status_counts(const RunReport& r, bool& failed) {
  std::map<int, size_t> n;
  failed = !r.fatal.empty();
  for (const auto& res : r.results) {
    ++n[int(res.status)];
    failed |= bad(res.status);
  }
  std::vector<std::pair<Status, size_t>> out;
  for (Status s : {Status::kPass, Status::kFail, Status::kCrash, Status::kTimeout, Status::kAllowed, Status::kSkip})
    out.push_back({s, n[int(s)]});
  return out;
}

std::string to_json(const RunReport& r) {
  std::ostringstream os;
  bool failed = false;
  os << "{\n  \"format\": \"oar-conformance-report/1\",\n  \"info\": {";
  for (size_t i = 0; i < r.info.size(); ++i)
    os << (i ? ", " : "") << json_str(r.info[i].first) << ": " << json_str(r.info[i].second);
  os << "},\n  \"seconds\": " << r.seconds << ",\n  \"fatal\": " << json_str(r.fatal) << ",\n  \"summary\": {";
  auto counts = status_counts(r, failed);
  for (size_t i = 0; i < counts.size(); ++i)
    os << (i ? ", " : "") << json_str(status_name(counts[i].first)) << ": " << counts[i].second;
  os << "},\n  \"passed\": " << (failed ? "false" : "true") << ",\n  \"cases\": [\n";
  for (size_t i = 0; i < r.cases.size(); ++i) {
    const CaseInfo& c = r.cases[i];
    const CaseResult& res = r.results[i];
    os << "    {\"id\": " << json_str(c.id) << ", \"status\": " << json_str(status_name(res.status))
       << ", \"seconds\": " << res.seconds;
    if (!c.op.empty()) os << ", \"op\": " << json_str(c.op) << ", \"dtype\": " << json_str(c.dtype);
    if (!res.reason.empty()) os << ", \"reason\": " << json_str(res.reason);
    if (bad(res.status)) os << ", \"repro\": " << json_str(repro(r, c.id));
    if (!res.output_tail.empty()) os << ", \"output\": " << json_str(res.output_tail);
    os << "}" << (i + 1 < r.cases.size() ? "," : "") << "\n";
  }
  os << "  ]\n}\n";
  return os.str();
}

std::string to_markdown(const RunReport& r) {
  std::ostringstream os;
  std::string device;
  for (const auto& [k, v] : r.info)
    if (k == "device") device = v;
  bool failed = false;
  auto counts = status_counts(r, failed);
  os << "# oar conformance report: " << device << "\n\n";
  os << "Written by `oar-conformance` (tests/conformance/); every failure below has a reason and a command that "
        "reproduces it.\n\n";
  os << "| | |\n|---|---|\n";
  for (const auto& [k, v] : r.info) os << "| " << md_cell(k) << " | " << md_cell(v) << " |\n";
  char secs[32];
  std::snprintf(secs, sizeof(secs), "%.1f s", r.seconds);
  os << "| duration | " << secs << " |\n| result | " << (failed ? "**FAILED**" : "passed") << " |\n\n";
  if (!r.fatal.empty()) os << "**The run stopped early:** " << md_cell(r.fatal) << "\n\n";

  os << "## Summary\n\n| status | cases |\n|---|---|\n";
  for (const auto& [s, n] : counts) os << "| " << status_name(s) << " | " << n << " |\n";

  // Per group.
  std::map<std::string, std::map<int, size_t>> groups;
  for (size_t i = 0; i < r.cases.size(); ++i) ++groups[group_of(r.cases[i].id)][int(r.results[i].status)];
  os << "\n## Groups\n\nThe pass rate counts allowed failures as failures and leaves skipped cases out.\n\n"
        "| group | pass | fail | crash | timeout | allowed | skip | pass rate |\n|---|---|---|---|---|---|---|---|\n";
  for (auto& [g, n] : groups) {
    size_t total = 0;
    for (auto& [s, k] : n) total += (s == int(Status::kSkip)) ? 0 : k;
    char rate[32] = "-";  // nothing ran (all skipped)
    if (total) std::snprintf(rate, sizeof(rate), "%.1f%%", 100.0 * double(n[int(Status::kPass)]) / double(total));
    os << "| " << g << " | " << n[int(Status::kPass)] << " | " << n[int(Status::kFail)] << " | "
       << n[int(Status::kCrash)] << " | " << n[int(Status::kTimeout)] << " | " << n[int(Status::kAllowed)] << " | "
       << n[int(Status::kSkip)] << " | " << rate << " |\n";
  }

  // Coverage: op x dtype, worst status of the cell's cases.
  std::map<std::string, std::map<std::string, Status>> cells;
  for (size_t i = 0; i < r.cases.size(); ++i) {
    const CaseInfo& c = r.cases[i];
    if (c.op.empty() || c.dtype.empty()) continue;
    auto& cell = cells[c.op];
    auto it = cell.find(c.dtype);
    if (it == cell.end() || rank(r.results[i].status) > rank(it->second)) cell[c.dtype] = r.results[i].status;
  }
  std::set<std::string> rows(r.ops.begin(), r.ops.end());
  for (auto& [op, _] : cells) rows.insert(op);
  os << "\n## Coverage: op x dtype\n\nThe worst result of each (op, dtype) cell's cases; `-` means the device registers "
        "no kernel for it; \"(decomposed)\" ops have no kernel of their own and ran as the ops they decompose into.\n\n";
  os << "| op |";
  for (DType d : all_dtypes) os << " " << dtype_name(d) << " |";
  os << "\n|---|";
  for (size_t i = 0; i < std::size(all_dtypes); ++i) os << "---|";
  os << "\n";
  for (const auto& op : rows) {
    os << "| `" << op << "` |";
    auto it = cells.find(op);
    for (DType d : all_dtypes) {
      const char* text = "-";
      if (it != cells.end()) {
        auto c = it->second.find(dtype_name(d));
        if (c != it->second.end()) text = cell_text(c->second);
      }
      os << " " << text << " |";
    }
    os << "\n";
  }

  auto list = [&](const char* title, const std::function<bool(Status)>& pick, bool with_repro) {
    size_t n = 0;
    for (const auto& res : r.results) n += pick(res.status);
    if (!n) return;
    os << "\n## " << title << " (" << n << ")\n\n| case | status | reason |" << (with_repro ? " reproduce |" : "")
       << "\n|---|---|---|" << (with_repro ? "---|" : "") << "\n";
    for (size_t i = 0; i < r.cases.size(); ++i) {
      if (!pick(r.results[i].status)) continue;
      os << "| `" << r.cases[i].id << "` | " << status_name(r.results[i].status) << " | "
         << md_cell(r.results[i].reason.empty() ? "(no reason given)" : r.results[i].reason) << " |";
      if (with_repro) os << " `" << md_cell(repro(r, r.cases[i].id)) << "` |";
      os << "\n";
    }
  };
  list("Failures", bad, true);
  list("Allowed failures", [](Status s) { return s == Status::kAllowed; }, false);
  list("Skipped", [](Status s) { return s == Status::kSkip; }, false);
  return os.str();
}


}  // namespace oar::conformance
