// Logging of the nbox plugin through the logger NCCL (or the host runtime) passes to init.
#pragma once

#include "bridge/nccl/net.h"

namespace nbox::bridge::nboxnet {

// Remembers the logger of the latest init (NCCL passes the same one every time).
void SetLogger(ncclDebugLogger_t logger);

// printf-style; without a logger, warnings go to stderr and the rest is dropped.
void Log(ncclDebugLogLevel level, const char* file, int line, const char* format, ...)
    __attribute__((format(printf, 4, 5)));

}  // namespace nbox::bridge::nboxnet

#define NBOX_NET_WARN(...) \
  ::nbox::bridge::nboxnet::Log(NCCL_LOG_WARN, __FILE__, __LINE__, __VA_ARGS__)
#define NBOX_NET_INFO(...) \
  ::nbox::bridge::nboxnet::Log(NCCL_LOG_INFO, __FILE__, __LINE__, __VA_ARGS__)
