// A logger to hand a plugin's init (NCCL's ncclDebugLogger_t) that keeps the last warning,
// for tests that check what a plugin says when something fails.
#pragma once

#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <string>

#include "bridge/nccl/common.h"

namespace nbox::bridge::testing {

inline std::mutex g_warning_mutex;
inline std::string g_last_warning;

inline void CaptureLog(ncclDebugLogLevel level, unsigned long, const char*, int, const char* format,
                       ...) {
  if (level != NCCL_LOG_WARN) return;
  char text[2048];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  std::lock_guard<std::mutex> lock(g_warning_mutex);
  g_last_warning = text;
}

inline std::string LastWarning() {
  std::lock_guard<std::mutex> lock(g_warning_mutex);
  return g_last_warning;
}

inline void ClearWarning() {
  std::lock_guard<std::mutex> lock(g_warning_mutex);
  g_last_warning.clear();
}

}  // namespace nbox::bridge::testing
