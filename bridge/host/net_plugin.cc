#include "bridge/host/net_plugin.h"

#include <dlfcn.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

namespace nbox::host {
namespace {

std::mutex g_mutex;
std::map<std::string, std::weak_ptr<NetPlugin>>& LoadedPlugins() {
  static auto* plugins = new std::map<std::string, std::weak_ptr<NetPlugin>>();
  return *plugins;
}

std::mutex g_warning_mutex;
std::string& LastWarningText() {
  static auto* text = new std::string();
  return *text;
}

int DebugLevel() {
  static const int level = []() -> int {
    const char* value = std::getenv("NBOX_DEBUG");
    if (value == nullptr) return 0;
    if (std::strcmp(value, "INFO") == 0) return NCCL_LOG_INFO;
    if (std::strcmp(value, "WARN") == 0) return NCCL_LOG_WARN;
    return 0;
  }();
  return level;
}

void Log(ncclDebugLogLevel level, unsigned long, const char* file, int line, const char* format,
         ...) {
  char text[1024];
  va_list args;
  va_start(args, format);
  vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  if (level == NCCL_LOG_WARN) {
    std::lock_guard<std::mutex> lock(g_warning_mutex);
    LastWarningText() = text;
  }
  if (level != NCCL_LOG_NONE && static_cast<int>(level) <= DebugLevel()) {
    std::fprintf(stderr, "nbox %s %s:%d %s\n", level == NCCL_LOG_WARN ? "WARN" : "INFO", file, line,
                 text);
  }
}

// NCCL's rule: a bare name (no '/', not lib*.so) also tries libnccl-net-<name>.so.
bool IsBareName(const std::string& name) {
  if (name.find('/') != std::string::npos) return false;
  const bool lib_prefix = name.rfind("lib", 0) == 0;
  const bool so_suffix = name.size() >= 3 && name.compare(name.size() - 3, 3, ".so") == 0;
  return !(lib_prefix && so_suffix);
}

}  // namespace

std::shared_ptr<NetPlugin> NetPlugin::Load(const std::string& name) {
  if (name.empty()) throw HostError(nboxInvalidArgument, "NBOX_NET_PLUGIN is empty");
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& plugins = LoadedPlugins();
  if (auto it = plugins.find(name); it != plugins.end()) {
    if (auto plugin = it->second.lock()) return plugin;
  }
  std::vector<std::string> candidates = {name};
  if (IsBareName(name)) candidates.push_back("libnccl-net-" + name + ".so");
  std::string tried;
  std::shared_ptr<NetPlugin> plugin(new NetPlugin());
  for (const std::string& candidate : candidates) {
    plugin->handle_ = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (plugin->handle_ != nullptr) {
      plugin->path_ = candidate;
      break;
    }
    tried += "\n  " + candidate + ": " + dlerror();
  }
  if (plugin->handle_ == nullptr) {
    throw HostError(nboxSystemError, "cannot load the net plugin '" + name +
                                         "' (NBOX_NET_PLUGIN);"
                                         " tried:" +
                                         tried);
  }
  plugin->net_ = static_cast<ncclNet_v11_t*>(dlsym(plugin->handle_, "ncclNetPlugin_v11"));
  if (plugin->net_ == nullptr) {
    throw HostError(nboxSystemError, "the net plugin " + plugin->path_ +
                                         " has no ncclNetPlugin_v11 table (the host runtime "
                                         "needs ncclNet v11)");
  }
  if (plugin->net_->finalize == nullptr || plugin->net_->test == nullptr ||
      plugin->net_->isend == nullptr || plugin->net_->irecv == nullptr) {
    throw HostError(nboxSystemError, "the ncclNetPlugin_v11 table of " + plugin->path_ +
                                         " lacks init/isend/irecv/test/finalize");
  }
  const auto* ext =
      static_cast<const nboxNetExt_v1_t*>(dlsym(plugin->handle_, NBOX_NET_EXT_SYMBOL));
  if (ext != nullptr && ext->version >= 1 && ext->eventCount != nullptr &&
      ext->waitEvents != nullptr) {
    plugin->ext_ = ext;
  }
  const auto* ext2 =
      static_cast<const nboxNetExt_v2_t*>(dlsym(plugin->handle_, NBOX_NET_EXT_V2_SYMBOL));
  if (ext2 != nullptr && ext2->version >= 2 && ext2->reportOp != nullptr &&
      ext2->virtualTimeNs != nullptr && ext2->testFlags != nullptr &&
      ext2->programWaiting != nullptr) {
    plugin->ext2_ = ext2;
  }
  plugins[name] = plugin;
  return plugin;
}

NetPlugin::~NetPlugin() {
  if (handle_ != nullptr) dlclose(handle_);
}

ncclDebugLogger_t NetPlugin::Logger() {
  return Log;
}

HostError PluginError(const std::string& what, ncclResult_t result) {
  nboxResult_t code = nboxInternalError;
  switch (result) {
    case ncclRemoteError:
      code = nboxRemoteError;
      break;
    case ncclInvalidArgument:
      code = nboxInvalidArgument;
      break;
    case ncclInvalidUsage:
      code = nboxInvalidUsage;
      break;
    case ncclSystemError:
      code = nboxSystemError;
      break;
    default:
      break;
  }
  std::string text = what + " failed (ncclResult " + std::to_string(result) + ")";
  const std::string warning = NetPlugin::LastWarning();
  if (!warning.empty()) text += ": " + warning;
  return HostError(code, text);
}

std::string NetPlugin::LastWarning() {
  std::lock_guard<std::mutex> lock(g_warning_mutex);
  return LastWarningText();
}

}  // namespace nbox::host
