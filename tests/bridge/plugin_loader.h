// Loads a built ncclNet plugin the way NCCL does (dlopen RTLD_NOW | RTLD_LOCAL, then dlsym of
// the versioned table) and helps tests drive it through the v11 table.
#pragma once

#include <dlfcn.h>

#include <chrono>
#include <string>

#include "bridge/nccl/net.h"

namespace nbox::bridge::testing {

class PluginLibrary {
 public:
  explicit PluginLibrary(const std::string& path) {
    handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle_ == nullptr) error_ = dlerror();
  }
  ~PluginLibrary() {
    if (handle_ != nullptr) dlclose(handle_);
  }
  PluginLibrary(const PluginLibrary&) = delete;
  PluginLibrary& operator=(const PluginLibrary&) = delete;

  bool loaded() const { return handle_ != nullptr; }
  const std::string& error() const { return error_; }
  template <typename T>
  T* Symbol(const char* name) const {
    return handle_ == nullptr ? nullptr : static_cast<T*>(dlsym(handle_, name));
  }

 private:
  void* handle_ = nullptr;
  std::string error_;
};

// The path of the plugin under test (compile definition from tests/bridge/CMakeLists.txt).
inline std::string TcpPluginPath() {
  return NBOX_TCP_PLUGIN_PATH;
}

// A connected pair of comms of one v11 context: send_comm -> recv_comm.
struct CommPair {
  void* listen_comm = nullptr;
  void* send_comm = nullptr;
  void* recv_comm = nullptr;
};

// Listens on `dev`, then calls connect and accept alternately from this one thread until both
// return a comm, which only terminates if neither blocks. Returns false after `timeout`.
inline bool ConnectPair(ncclNet_v11_t* net, void* ctx, int dev, CommPair* pair,
                        std::chrono::milliseconds timeout = std::chrono::seconds(10)) {
  char handle[NCCL_NET_HANDLE_MAXSIZE];
  if (net->listen(ctx, dev, handle, &pair->listen_comm) != ncclSuccess) return false;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  ncclNetDeviceHandle_v11_t* dev_handle = nullptr;
  while (pair->send_comm == nullptr || pair->recv_comm == nullptr) {
    if (pair->send_comm == nullptr &&
        net->connect(ctx, dev, handle, &pair->send_comm, &dev_handle) != ncclSuccess) {
      return false;
    }
    if (pair->recv_comm == nullptr &&
        net->accept(pair->listen_comm, &pair->recv_comm, &dev_handle) != ncclSuccess) {
      return false;
    }
    if (std::chrono::steady_clock::now() > deadline) return false;
  }
  return true;
}

inline void ClosePair(ncclNet_v11_t* net, CommPair* pair) {
  if (pair->send_comm != nullptr) net->closeSend(pair->send_comm);
  if (pair->recv_comm != nullptr) net->closeRecv(pair->recv_comm);
  if (pair->listen_comm != nullptr) net->closeListen(pair->listen_comm);
  *pair = CommPair();
}

// Polls test() until done or timeout; returns test's last result, or ncclInternalError on
// timeout (so a hang fails the test instead of hanging it).
inline ncclResult_t WaitRequest(ncclNet_v11_t* net, void* request, int* sizes,
                                std::chrono::milliseconds timeout = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int done = 0;
    const ncclResult_t result = net->test(request, &done, sizes);
    if (result != ncclSuccess || done) return result;
    if (std::chrono::steady_clock::now() > deadline) return ncclInternalError;
  }
}

}  // namespace nbox::bridge::testing
