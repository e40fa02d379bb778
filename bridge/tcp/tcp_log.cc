#include "bridge/tcp/tcp_log.h"

namespace nbox::bridge::tcp {

nccl::PluginLog& PluginLogger() {
  static nccl::PluginLog log("NET/nboxtcp", NCCL_NET);
  return log;
}

}  // namespace nbox::bridge::tcp
