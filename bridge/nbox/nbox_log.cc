#include "bridge/nbox/nbox_log.h"

namespace nbox::bridge::nboxnet {

nccl::PluginLog& PluginLogger() {
  static nccl::PluginLog log("NET/nbox", NCCL_NET);
  return log;
}

}  // namespace nbox::bridge::nboxnet
