// Logging of the TCP plugin through the logger NCCL (or the host runtime) passes to init.
#pragma once

#include "bridge/nccl/net.h"
#include "bridge/nccl/plugin_log.h"

namespace nbox::bridge::tcp {

// The plugin's log ("NET/nboxtcp: ...", subsystem NCCL_NET).
nccl::PluginLog& PluginLogger();

// Remembers the logger of the latest init (NCCL passes the same one every time).
inline void SetLogger(ncclDebugLogger_t logger) {
  PluginLogger().SetLogger(logger);
}

}  // namespace nbox::bridge::tcp

#define NBOX_TCP_WARN(...) \
  ::nbox::bridge::tcp::PluginLogger().Log(NCCL_LOG_WARN, __FILE__, __LINE__, __VA_ARGS__)
#define NBOX_TCP_INFO(...) \
  ::nbox::bridge::tcp::PluginLogger().Log(NCCL_LOG_INFO, __FILE__, __LINE__, __VA_ARGS__)
