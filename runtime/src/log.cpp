#include "oar/log.h"

#include <cstdio>

#include "oar/flags.h"

namespace oar {

void log_message(LogLevel level, const std::string& message) {
  static const char* kNames[] = {"debug", "info", "warning", "error"};
  std::string min = Flags::instance().get("OAR_LOG_LEVEL");
  int min_level = 2;
  for (int i = 0; i < 4; ++i)
    if (min == kNames[i]) min_level = i;
  int lvl = static_cast<int>(level);
  if (lvl < 0 || lvl > 3) lvl = 3;
  if (lvl < min_level) return;
  std::fprintf(stderr, "oar: %s: %s\n", kNames[lvl], message.c_str());
}

}  // namespace oar
