#include "expectations.h"

#include <fnmatch.h>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace oar::conformance {

std::vector<Expectation> read_expectations(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the expectations file " + path);
  std::vector<Expectation> out;
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.erase(hash);
    std::istringstream s(line);
    Expectation e;
    if (!(s >> e.device)) continue;  // blank or comment
    e.line = n;
    std::getline(s >> e.pattern >> e.action >> std::ws, e.reason);
    if (e.pattern.empty() || (e.action != "skip" && e.action != "allow") || e.reason.empty())
      throw std::runtime_error(path + ":" + std::to_string(n) +
                               ": expected '<device> <case pattern> skip|allow <reason>', got: " + line);
    out.push_back(e);
  }
  return out;
}

const Expectation* find_expectation(const std::vector<Expectation>& list, const std::string& device,
                                    const std::string& case_id) {
  for (const auto& e : list)
    if (fnmatch(e.device.c_str(), device.c_str(), 0) == 0 && fnmatch(e.pattern.c_str(), case_id.c_str(), 0) == 0)
      return &e;
  return nullptr;
}

bool matches_filter(const std::string& filter, const std::string& case_id) {
  if (filter.empty()) return true;
  bool any_positive = false, included = false;
  // A pattern without a glob character also matches the cases below it ("abi", "ops/add").
  auto match = [&](const std::string& glob) {
    return fnmatch(glob.c_str(), case_id.c_str(), 0) == 0 ||
           (glob.find_first_of("*?[") == std::string::npos && case_id.rfind(glob + "/", 0) == 0);
  };
  std::istringstream s(filter);
  std::string glob;
  while (std::getline(s, glob, ',')) {
    if (glob.empty()) continue;
    if (glob[0] == '-') {
      if (match(glob.substr(1))) return false;
      continue;
    }
    any_positive = true;
    included |= match(glob);
  }
  return !any_positive || included;
}

}  // namespace oar::conformance
