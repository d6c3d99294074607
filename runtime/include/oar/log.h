// Minimal levelled logging to stderr, filtered by OAR_LOG_LEVEL. Plugins log
// through the host table so their messages share the same filter.
#pragma once

#include <string>

namespace oar {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

void log_message(LogLevel level, const std::string& message);

}  // namespace oar
