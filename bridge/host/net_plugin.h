// An ncclNet plugin loaded the way NCCL 2.28.9 loads one: dlopen(name) with RTLD_NOW |
// RTLD_LOCAL, and if that fails dlopen("libnccl-net-<name>.so") (only for a bare name, not a
// path or a lib*.so file name); then dlsym("ncclNetPlugin_v11"). A plugin is loaded once per
// process and shared by the communicators that name it.
#pragma once

#include <memory>
#include <string>

#include "bridge/host/host_error.h"
#include "bridge/include/nbox_net_ext.h"
#include "bridge/nccl/net.h"

namespace nbox::host {

class NetPlugin {
 public:
  // Loads (or returns the already loaded) plugin named by `name`. Throws HostError naming every
  // file tried and why it failed.
  static std::shared_ptr<NetPlugin> Load(const std::string& name);

  ~NetPlugin();
  NetPlugin(const NetPlugin&) = delete;
  NetPlugin& operator=(const NetPlugin&) = delete;

  ncclNet_v11_t& net() const { return *net_; }
  // nboxNetExt_v1 when the plugin exports it, else nullptr (then callers poll).
  const nboxNetExt_v1_t* ext() const { return ext_; }
  // nboxNetExt_v2 (op reports, the rank's clock, synthetic completions: libnccl-net-nbox.so),
  // else nullptr.
  const nboxNetExt_v2_t* ext2() const { return ext2_; }
  const std::string& path() const { return path_; }

  // The logger the runtime passes to init: warnings are remembered for error messages and
  // printed when NBOX_DEBUG is WARN or INFO.
  static ncclDebugLogger_t Logger();
  // The plugin's most recent warning in this process ("" if none).
  static std::string LastWarning();

 private:
  NetPlugin() = default;

  void* handle_ = nullptr;
  ncclNet_v11_t* net_ = nullptr;
  const nboxNetExt_v1_t* ext_ = nullptr;
  const nboxNetExt_v2_t* ext2_ = nullptr;
  std::string path_;
};

// The error for a failed plugin call `what`: the code mapped from `result`, and the plugin's
// latest warning (which says what happened) in the message.
HostError PluginError(const std::string& what, ncclResult_t result);

}  // namespace nbox::host
