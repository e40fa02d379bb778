// libnccl-net-nbox.so: the nbox-cosim backend behind the ncclNet v8..v11 tables
// (bridge/nccl/net_adapters.h adapts the versions; nbox's extensions are in nbox_net_ext.cc).
// Every call is a thin adapter onto BridgeClient; the exported tables are extern "C" and
// non-const so dlsym finds them.
#include <memory>
#include <new>

#include "bridge/nbox/bridge_client.h"
#include "bridge/nbox/nbox_log.h"
#include "bridge/nccl/net.h"
#include "bridge/nccl/net_adapters.h"

namespace nbox::bridge::nboxnet {
namespace {

constexpr const char* kDeviceName = "nbox-cosim";
constexpr int kDefaultSpeedMbps = 100000;

// v8..v10 have no per-communicator context and no finalize: their init keeps the session here
// for the rest of the process.
std::shared_ptr<BridgeClient>& LegacyClient() {
  static auto* client = new std::shared_ptr<BridgeClient>();
  return *client;
}

std::shared_ptr<BridgeClient> AcquireOrWarn() {
  std::string error;
  std::shared_ptr<BridgeClient> client = BridgeClient::Acquire(&error);
  if (client == nullptr) NBOX_NET_WARN("cannot join nbox-cosim: %s", error.c_str());
  return client;
}

// A v11 context is the session it holds (a heap-held shared_ptr); nullptr means the legacy
// session of v8..v10.
std::shared_ptr<BridgeClient> ClientOf(void* ctx) {
  return ctx != nullptr ? *static_cast<std::shared_ptr<BridgeClient>*>(ctx) : LegacyClient();
}

DataComm* AsDataComm(void* comm, Comm::Kind kind, const char* call) {
  auto* data = static_cast<Comm*>(comm);
  if (data == nullptr || data->kind != kind) {
    NBOX_NET_WARN("%s on a comm that is not a %s comm", call,
                  kind == Comm::Kind::kSend ? "send" : "recv");
    return nullptr;
  }
  return static_cast<DataComm*>(data);
}

ncclResult_t CloseComm(void* comm) {
  auto* c = static_cast<Comm*>(comm);
  if (c == nullptr) return ncclSuccess;
  const std::shared_ptr<BridgeClient> client = c->client;  // may be the last reference
  client->Close(c);
  delete c;
  return ncclSuccess;
}

struct NboxBackend {
  static constexpr const char* kName = "nbox";
  static constexpr int kMaxRecvs = nboxnet::kMaxRecvs;

  static void Warn(const char* message) { NBOX_NET_WARN("%s", message); }

  static ncclResult_t InitContext(void** ctx, uint64_t, ncclDebugLogger_t logger) {
    *ctx = nullptr;
    SetLogger(logger);
    std::shared_ptr<BridgeClient> client = AcquireOrWarn();
    if (client == nullptr) return ncclSystemError;
    auto* holder = new (std::nothrow) std::shared_ptr<BridgeClient>(client);
    if (holder == nullptr) {
      BridgeClient::Release(std::move(client));
      return ncclSystemError;
    }
    *ctx = holder;
    return ncclSuccess;
  }

  // The last context of a session ends it (Goodbye); a later init opens a new one.
  static ncclResult_t FinalizeContext(void* ctx) {
    auto* holder = static_cast<std::shared_ptr<BridgeClient>*>(ctx);
    if (holder == nullptr) return ncclSuccess;
    std::shared_ptr<BridgeClient> client = std::move(*holder);
    delete holder;
    BridgeClient::Release(std::move(client));
    return ncclSuccess;
  }

  static ncclResult_t InitLegacy(ncclDebugLogger_t logger) {
    SetLogger(logger);
    std::shared_ptr<BridgeClient> client = AcquireOrWarn();
    if (client == nullptr) return ncclSystemError;
    std::shared_ptr<BridgeClient>& legacy = LegacyClient();
    if (legacy != nullptr && legacy != client) BridgeClient::Release(legacy);
    if (legacy == client) {
      BridgeClient::Release(client);  // one legacy user is enough
    } else {
      legacy = client;
    }
    return ncclSuccess;
  }

  static ncclResult_t Devices(int* ndev) {
    *ndev = 1;
    return ncclSuccess;
  }

  static ncclResult_t Device(int dev, nccl::NetDevice* device) {
    if (dev != 0) {
      NBOX_NET_WARN("device %d does not exist (the nbox plugin has one)", dev);
      return ncclInvalidArgument;
    }
    const std::shared_ptr<BridgeClient> client = BridgeClient::Latest();
    device->name = kDeviceName;
    device->pci_path = nullptr;
    device->guid = 0;
    device->speed_mbps =
        client != nullptr ? static_cast<int>(client->nic_speed_mbps()) : kDefaultSpeedMbps;
    return ncclSuccess;
  }

  static ncclResult_t Listen(void* ctx, int dev, void* handle, void** listen_comm) {
    const std::shared_ptr<BridgeClient> client = ClientOf(ctx);
    if (client == nullptr || dev != 0) {
      NBOX_NET_WARN("listen on device %d without a session (init failed?)", dev);
      return ncclInvalidUsage;
    }
    ListenComm* comm = nullptr;
    const ncclResult_t result = client->Listen(client, handle, &comm);
    *listen_comm = comm;
    return result;
  }

  static ncclResult_t Connect(void* ctx, int dev, int traffic_class, void* handle,
                              void** send_comm) {
    const std::shared_ptr<BridgeClient> client = ClientOf(ctx);
    if (client == nullptr || dev != 0) {
      NBOX_NET_WARN("connect from device %d without a session (init failed?)", dev);
      return ncclInvalidUsage;
    }
    DataComm* comm = nullptr;
    const ncclResult_t result = client->Connect(client, handle, traffic_class, &comm);
    *send_comm = comm;
    return result;
  }

  static ncclResult_t Accept(void* listen_comm, void** recv_comm) {
    auto* listen = static_cast<ListenComm*>(listen_comm);
    if (listen == nullptr || listen->kind != Comm::Kind::kListen) {
      NBOX_NET_WARN("accept on something that is not a listen comm");
      return ncclInvalidUsage;
    }
    DataComm* comm = nullptr;
    const ncclResult_t result = listen->client->Accept(listen, &comm);
    *recv_comm = comm;
    return result;
  }

  static ncclResult_t Isend(void* send_comm, void* data, uint64_t size, int tag, void** request) {
    DataComm* comm = AsDataComm(send_comm, Comm::Kind::kSend, "isend");
    if (comm == nullptr) return ncclInvalidUsage;
    return comm->client->PostSend(comm, data, size, tag, request);
  }

  static ncclResult_t Irecv(void* recv_comm, int n, void** data, const uint64_t* sizes, int* tags,
                            void** request) {
    DataComm* comm = AsDataComm(recv_comm, Comm::Kind::kRecv, "irecv");
    if (comm == nullptr) return ncclInvalidUsage;
    return comm->client->PostRecv(comm, n, data, sizes, tags, request);
  }

  static ncclResult_t Test(void* request, int* done, int* sizes) {
    return BridgeClient::Test(request, done, sizes);
  }

  static ncclResult_t CloseSend(void* comm) { return CloseComm(comm); }
  static ncclResult_t CloseRecv(void* comm) { return CloseComm(comm); }
  static ncclResult_t CloseListen(void* comm) { return CloseComm(comm); }
};

using Tables = nccl::NetTables<NboxBackend>;

}  // namespace
}  // namespace nbox::bridge::nboxnet

// Exported (see nbox_plugin.map); NCCL tries _v11 first.
extern "C" {
ncclNet_v11_t ncclNetPlugin_v11 = nbox::bridge::nboxnet::Tables::Make<ncclNet_v11_t>();
ncclNet_v10_t ncclNetPlugin_v10 = nbox::bridge::nboxnet::Tables::Make<ncclNet_v10_t>();
ncclNet_v9_t ncclNetPlugin_v9 = nbox::bridge::nboxnet::Tables::Make<ncclNet_v9_t>();
ncclNet_v8_t ncclNetPlugin_v8 = nbox::bridge::nboxnet::Tables::Make<ncclNet_v8_t>();
}
