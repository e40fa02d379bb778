// Logging through the logger NCCL (or the host runtime) passes to a plugin's init, for every
// plugin in bridge/: each keeps one PluginLog with its prefix ("NET/nbox") and subsystem.
#pragma once

#include <atomic>
#include <cstdarg>
#include <cstdio>

#include "bridge/nccl/common.h"

namespace nbox::bridge::nccl {

class PluginLog {
 public:
  constexpr PluginLog(const char* prefix, unsigned long subsystem)
      : prefix_(prefix), subsystem_(subsystem) {}

  // Remembers the logger of the latest init (NCCL passes the same one every time).
  void SetLogger(ncclDebugLogger_t logger) {
    if (logger != nullptr) logger_.store(logger);
  }

  // printf-style; without a logger, warnings go to stderr and the rest is dropped.
  __attribute__((format(printf, 5, 6))) void Log(ncclDebugLogLevel level, const char* file,
                                                 int line, const char* format, ...) const {
    char text[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof(text), format, args);
    va_end(args);
    const ncclDebugLogger_t logger = logger_.load();
    if (logger != nullptr) {
      logger(level, subsystem_, file, line, "%s: %s", prefix_, text);
    } else if (level == NCCL_LOG_WARN) {
      std::fprintf(stderr, "%s WARN %s\n", prefix_, text);
    }
  }

 private:
  const char* prefix_;
  unsigned long subsystem_;
  std::atomic<ncclDebugLogger_t> logger_{nullptr};
};

}  // namespace nbox::bridge::nccl
