// libnccl-net-nboxtcp.so: the TCP backend behind the ncclNet v8..v11 tables
// (bridge/nccl/net_adapters.h adapts the versions) and nbox's wait extension. The exported
// tables are extern "C" and non-const so dlsym finds them.
#include <vector>

#include "bridge/include/nbox_net_ext.h"
#include "bridge/nccl/net.h"
#include "bridge/nccl/net_adapters.h"
#include "bridge/tcp/tcp_connection.h"
#include "bridge/tcp/tcp_devices.h"
#include "bridge/tcp/tcp_engine.h"
#include "bridge/tcp/tcp_log.h"
#include "bridge/tcp/tcp_setup.h"

namespace nbox::bridge::tcp {
namespace {

// Plain TCP needs no per-communicator state: every context is the process's devices and
// progress engine, so the backend's contexts are nullptr.
struct TcpBackend {
  static constexpr const char* kName = "nboxtcp";
  static constexpr int kMaxRecvs = tcp::kMaxRecvs;

  static void Warn(const char* message) { NBOX_TCP_WARN("%s", message); }

  static ncclResult_t InitLegacy(ncclDebugLogger_t logger) {
    SetLogger(logger);
    try {
      const std::vector<tcp::Device>& devices = tcp::Devices();
      for (size_t i = 0; i < devices.size(); ++i) {
        NBOX_TCP_INFO("device %zu: %s (%s), %d Mb/s", i, devices[i].local.name.c_str(),
                      devices[i].local.address.ToString().c_str(), devices[i].speed_mbps);
      }
      Engine::Instance();  // start the progress thread now rather than on the first connection
      return ncclSuccess;
    } catch (const AddressError& error) {
      NBOX_TCP_WARN("%s", error.what());
      return ncclInvalidArgument;
    }
  }

  static ncclResult_t InitContext(void** ctx, uint64_t, ncclDebugLogger_t logger) {
    *ctx = nullptr;
    return InitLegacy(logger);
  }

  static ncclResult_t FinalizeContext(void*) { return ncclSuccess; }

  static ncclResult_t Devices(int* ndev) {
    try {
      *ndev = static_cast<int>(tcp::Devices().size());
      return ncclSuccess;
    } catch (const AddressError& error) {
      NBOX_TCP_WARN("%s", error.what());
      return ncclInvalidArgument;
    }
  }

  static ncclResult_t Device(int dev, nccl::NetDevice* device) {
    try {
      const std::vector<tcp::Device>& devices = tcp::Devices();
      if (dev < 0 || dev >= static_cast<int>(devices.size())) {
        NBOX_TCP_WARN("device %d does not exist (there are %zu)", dev, devices.size());
        return ncclInvalidArgument;
      }
      const tcp::Device& d = devices[dev];
      device->name = d.local.name.c_str();
      device->pci_path = d.pci_path.empty() ? nullptr : d.pci_path.c_str();
      device->guid = static_cast<uint64_t>(dev);
      device->speed_mbps = d.speed_mbps;
      return ncclSuccess;
    } catch (const AddressError& error) {
      NBOX_TCP_WARN("%s", error.what());
      return ncclInvalidArgument;
    }
  }

  static ncclResult_t Listen(void*, int dev, void* handle, void** listen_comm) {
    ListenComm* comm = nullptr;
    const ncclResult_t result = tcp::Listen(dev, handle, &comm);
    *listen_comm = comm;
    return result;
  }

  static ncclResult_t Connect(void*, int dev, int traffic_class, void* handle, void** send_comm) {
    ConnectOptions options;
    options.traffic_class = traffic_class;
    Connection* connection = nullptr;
    const ncclResult_t result = tcp::Connect(dev, options, handle, &connection);
    *send_comm = connection;
    return result;
  }

  static ncclResult_t Accept(void* listen_comm, void** recv_comm) {
    Connection* connection = nullptr;
    const ncclResult_t result = static_cast<ListenComm*>(listen_comm)->Accept(&connection);
    *recv_comm = connection;
    return result;
  }

  static ncclResult_t Isend(void* send_comm, void* data, uint64_t size, int tag, void** request) {
    Connection* connection = AsConnection(send_comm, Connection::Role::kSend, "isend");
    if (connection == nullptr) return ncclInvalidUsage;
    return connection->PostSend(data, size, tag, request);
  }

  static ncclResult_t Irecv(void* recv_comm, int n, void** data, const uint64_t* sizes, int* tags,
                            void** request) {
    Connection* connection = AsConnection(recv_comm, Connection::Role::kRecv, "irecv");
    if (connection == nullptr) return ncclInvalidUsage;
    return connection->PostRecv(n, data, sizes, tags, request);
  }

  static ncclResult_t Test(void* request, int* done, int* sizes) {
    return Connection::Test(request, done, sizes);
  }

  static ncclResult_t CloseSend(void* comm) { return CloseConnection(comm); }
  static ncclResult_t CloseRecv(void* comm) { return CloseConnection(comm); }
  static ncclResult_t CloseListen(void* listen_comm) {
    delete static_cast<ListenComm*>(listen_comm);
    return ncclSuccess;
  }

 private:
  static Connection* AsConnection(void* comm, Connection::Role role, const char* call) {
    auto* connection = static_cast<Connection*>(comm);
    if (connection == nullptr || connection->role() != role) {
      NBOX_TCP_WARN("%s on a comm that is not a %s comm", call,
                    role == Connection::Role::kSend ? "send" : "recv");
      return nullptr;
    }
    return connection;
  }

  static ncclResult_t CloseConnection(void* comm) {
    if (comm != nullptr) static_cast<Connection*>(comm)->Close();
    return ncclSuccess;
  }
};

using Tables = nccl::NetTables<TcpBackend>;

uint64_t ExtEventCount() {
  return Engine::Instance().EventCount();
}
void ExtWaitEvents(uint64_t seen, int timeout_us) {
  Engine::Instance().WaitEvents(seen, timeout_us);
}

}  // namespace
}  // namespace nbox::bridge::tcp

// Exported (see tcp_plugin.map); NCCL tries _v11 first.
extern "C" {
ncclNet_v11_t ncclNetPlugin_v11 = nbox::bridge::tcp::Tables::Make<ncclNet_v11_t>();
ncclNet_v10_t ncclNetPlugin_v10 = nbox::bridge::tcp::Tables::Make<ncclNet_v10_t>();
ncclNet_v9_t ncclNetPlugin_v9 = nbox::bridge::tcp::Tables::Make<ncclNet_v9_t>();
ncclNet_v8_t ncclNetPlugin_v8 = nbox::bridge::tcp::Tables::Make<ncclNet_v8_t>();
nboxNetExt_v1_t nboxNetExt_v1 = {1, nbox::bridge::tcp::ExtEventCount,
                                 nbox::bridge::tcp::ExtWaitEvents};
}
