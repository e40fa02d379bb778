#include "bridge/nbox/nbox_log.h"

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace nbox::bridge::nboxnet {
namespace {

std::atomic<ncclDebugLogger_t> g_logger{nullptr};

}  // namespace

void SetLogger(ncclDebugLogger_t logger) {
  if (logger != nullptr) g_logger.store(logger);
}

void Log(ncclDebugLogLevel level, const char* file, int line, const char* format, ...) {
  char text[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  const ncclDebugLogger_t logger = g_logger.load();
  if (logger != nullptr) {
    logger(level, NCCL_NET, file, line, "NET/nbox: %s", text);
  } else if (level == NCCL_LOG_WARN) {
    std::fprintf(stderr, "NET/nbox WARN %s\n", text);
  }
}

}  // namespace nbox::bridge::nboxnet
