// The precision table of tests/adapter/precision_tolerances.txt, read at run
// time (OAR_SOURCE_DIR), so C++ and Python tests share one set of numbers.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace oar::testing {

struct PrecisionTolerance {
  double rtol = 0, atol = 0;
};

inline const PrecisionTolerance& precision_tolerance(const std::string& precision) {
  static const std::map<std::string, PrecisionTolerance> table = [] {
    std::map<std::string, PrecisionTolerance> t;
    std::ifstream in(std::string(OAR_SOURCE_DIR) + "/tests/adapter/precision_tolerances.txt");
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream row(line);
      std::string name;
      PrecisionTolerance tol;
      if (row >> name >> tol.rtol >> tol.atol) t[name] = tol;
    }
    return t;
  }();
  auto it = table.find(precision);
  if (it == table.end()) {
    ADD_FAILURE() << "no row for precision '" << precision << "' in tests/adapter/precision_tolerances.txt";
    static const PrecisionTolerance none;
    return none;
  }
  return it->second;
}

}  // namespace oar::testing
