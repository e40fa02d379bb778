// libnccl-net-nbox.so: the ncclNet v8..v11 tables of the nbox plugin and nbox's wait
// extension. Every call is a thin adapter onto BridgeClient; the exported tables are
// extern "C" and non-const so dlsym finds them.
#include <cstring>
#include <new>

#include "bridge/include/nbox_net_ext.h"
#include "bridge/nbox/bridge_client.h"
#include "bridge/nbox/nbox_log.h"
#include "bridge/nccl/net.h"

namespace nbox::bridge::nboxnet {
namespace {

constexpr const char* kPluginName = "nbox";
constexpr const char* kDeviceName = "nbox-cosim";
constexpr int kDefaultSpeedMbps = 100000;

// What v11's init returns: the session it holds and the per-communicator settings.
struct Context {
  std::shared_ptr<BridgeClient> client;
  int traffic_class = NCCL_NET_TRAFFIC_CLASS_UNDEF;
  ncclNetAttr_v11_t attr{};
};

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

ncclResult_t InitLegacy(ncclDebugLogger_t logger) {
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

ncclResult_t Devices(int* ndev) {
  *ndev = 1;
  return ncclSuccess;
}

template <typename Properties>
ncclResult_t FillV8Fields(int dev, Properties* props) {
  if (dev != 0) {
    NBOX_NET_WARN("device %d does not exist (the nbox plugin has one)", dev);
    return ncclInvalidArgument;
  }
  std::memset(props, 0, sizeof(*props));
  const std::shared_ptr<BridgeClient> client = BridgeClient::Latest();
  props->name = const_cast<char*>(kDeviceName);
  props->pciPath = nullptr;
  props->guid = 0;
  props->ptrSupport = NCCL_PTR_HOST;
  props->regIsGlobal = 0;
  props->speed = client != nullptr ? static_cast<int>(client->nic_speed_mbps()) : kDefaultSpeedMbps;
  props->port = 0;
  props->latency = 0;
  props->maxComms = 65536;
  props->maxRecvs = kMaxRecvs;
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
  return ncclSuccess;
}

template <typename Properties>
ncclResult_t GetPropertiesV9Plus(int dev, Properties* props) {
  const ncclResult_t result = FillV8Fields(dev, props);
  if (result != ncclSuccess) return result;
  props->forceFlush = 0;
  props->vProps.ndevs = 1;
  props->vProps.devs[0] = dev;
  props->maxP2pBytes = NCCL_MAX_NET_SIZE_BYTES;
  props->maxCollBytes = NCCL_MAX_NET_SIZE_BYTES;
  return ncclSuccess;
}

ncclResult_t GetPropertiesV11(int dev, ncclNetProperties_v11_t* props) {
  const ncclResult_t result = GetPropertiesV9Plus(dev, props);
  if (result == ncclSuccess) props->maxMultiRequestSize = 1;
  return result;
}

ncclResult_t GetPropertiesV8(int dev, ncclNetProperties_v8_t* props) {
  return FillV8Fields(dev, props);
}

ncclResult_t ListenWith(const std::shared_ptr<BridgeClient>& client, int dev, void* handle,
                        void** listen_comm) {
  *listen_comm = nullptr;
  if (client == nullptr || dev != 0) {
    NBOX_NET_WARN("listen on device %d without a session (init failed?)", dev);
    return ncclInvalidUsage;
  }
  ListenComm* comm = nullptr;
  const ncclResult_t result = client->Listen(client, handle, &comm);
  *listen_comm = comm;
  return result;
}

ncclResult_t ConnectWith(const std::shared_ptr<BridgeClient>& client, int dev, int traffic_class,
                         void* handle, void** send_comm) {
  *send_comm = nullptr;
  if (client == nullptr || dev != 0) {
    NBOX_NET_WARN("connect from device %d without a session (init failed?)", dev);
    return ncclInvalidUsage;
  }
  DataComm* comm = nullptr;
  const ncclResult_t result = client->Connect(client, handle, traffic_class, &comm);
  *send_comm = comm;
  return result;
}

ncclResult_t Accept(void* listen_comm, void** recv_comm, ncclNetDeviceHandle_v7_t** device) {
  *recv_comm = nullptr;
  if (device != nullptr) *device = nullptr;
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

ncclResult_t RegMr(void*, void*, size_t, int type, void** mhandle) {
  *mhandle = nullptr;
  if (type != NCCL_PTR_HOST) {
    NBOX_NET_WARN("regMr of memory type %d; this plugin only takes host memory", type);
    return ncclInternalError;
  }
  return ncclSuccess;
}

ncclResult_t DeregMr(void*, void*) {
  return ncclSuccess;
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

ncclResult_t Isend(void* send_comm, void* data, uint64_t size, int tag, void** request) {
  *request = nullptr;
  DataComm* comm = AsDataComm(send_comm, Comm::Kind::kSend, "isend");
  if (comm == nullptr) return ncclInvalidUsage;
  return comm->client->PostSend(comm, data, size, tag, request);
}

ncclResult_t Irecv(void* recv_comm, int n, void** data, const uint64_t* sizes, int* tags,
                   void** request) {
  *request = nullptr;
  DataComm* comm = AsDataComm(recv_comm, Comm::Kind::kRecv, "irecv");
  if (comm == nullptr) return ncclInvalidUsage;
  if (n < 1 || n > kMaxRecvs) {
    NBOX_NET_WARN("irecv with %d buffers; this plugin takes 1 to %d", n, kMaxRecvs);
    return ncclInvalidArgument;
  }
  return comm->client->PostRecv(comm, n, data, sizes, tags, request);
}

ncclResult_t IrecvSizeT(void* recv_comm, int n, void** data, size_t* sizes, int* tags,
                        void** request) {
  uint64_t sizes64[kMaxRecvs];
  for (int i = 0; i < n && i < kMaxRecvs; ++i) sizes64[i] = sizes[i];
  return Irecv(recv_comm, n, data, sizes64, tags, request);
}

ncclResult_t Iflush(void*, int, void**, int*, void**, void** request) {
  *request = nullptr;  // host memory: nothing to flush
  return ncclSuccess;
}

ncclResult_t Test(void* request, int* done, int* sizes) {
  return BridgeClient::Test(request, done, sizes);
}

ncclResult_t CloseComm(void* comm) {
  auto* c = static_cast<Comm*>(comm);
  if (c == nullptr) return ncclSuccess;
  const std::shared_ptr<BridgeClient> client = c->client;  // may be the last reference
  client->Close(c);
  delete c;
  return ncclSuccess;
}

// --- v11 -------------------------------------------------------------------------------------

ncclResult_t InitV11(void** ctx, uint64_t, ncclNetCommConfig_v11_t* config,
                     ncclDebugLogger_t logger, ncclProfilerCallback_t) {
  *ctx = nullptr;
  SetLogger(logger);
  std::shared_ptr<BridgeClient> client = AcquireOrWarn();
  if (client == nullptr) return ncclSystemError;
  auto* context = new (std::nothrow) Context();
  if (context == nullptr) {
    BridgeClient::Release(client);
    return ncclSystemError;
  }
  context->client = std::move(client);
  if (config != nullptr) context->traffic_class = config->trafficClass;
  *ctx = context;
  return ncclSuccess;
}

ncclResult_t ListenV11(void* ctx, int dev, void* handle, void** listen_comm) {
  auto* context = static_cast<Context*>(ctx);
  return ListenWith(context != nullptr ? context->client : nullptr, dev, handle, listen_comm);
}

ncclResult_t ConnectV11(void* ctx, int dev, void* handle, void** send_comm,
                        ncclNetDeviceHandle_v11_t** device) {
  if (device != nullptr) *device = nullptr;
  auto* context = static_cast<Context*>(ctx);
  return ConnectWith(context != nullptr ? context->client : nullptr, dev,
                     context != nullptr ? context->traffic_class : NCCL_NET_TRAFFIC_CLASS_UNDEF,
                     handle, send_comm);
}

ncclResult_t IsendV10(void* send_comm, void* data, size_t size, int tag, void*, void*,
                      void** request) {
  return Isend(send_comm, data, size, tag, request);
}

ncclResult_t IrecvV10(void* recv_comm, int n, void** data, size_t* sizes, int* tags, void**, void**,
                      void** request) {
  return IrecvSizeT(recv_comm, n, data, sizes, tags, request);
}

ncclResult_t FinalizeV11(void* ctx) {
  auto* context = static_cast<Context*>(ctx);
  if (context == nullptr) return ncclSuccess;
  std::shared_ptr<BridgeClient> client = std::move(context->client);
  delete context;
  BridgeClient::Release(std::move(client));
  return ncclSuccess;
}

ncclResult_t SetNetAttrV11(void* ctx, ncclNetAttr_v11_t* attr) {
  if (ctx != nullptr && attr != nullptr) static_cast<Context*>(ctx)->attr = *attr;
  return ncclSuccess;
}

// --- v10, v9, v8 -----------------------------------------------------------------------------

ncclResult_t InitV10(ncclDebugLogger_t logger, ncclProfilerCallback_t) {
  return InitLegacy(logger);
}

ncclResult_t InitV8(ncclDebugLogger_t logger) {
  return InitLegacy(logger);
}

ncclResult_t ListenV8(int dev, void* handle, void** listen_comm) {
  return ListenWith(LegacyClient(), dev, handle, listen_comm);
}

ncclResult_t ConnectV10(int dev, ncclNetCommConfig_v10_t* config, void* handle, void** send_comm,
                        ncclNetDeviceHandle_v10_t** device) {
  if (device != nullptr) *device = nullptr;
  return ConnectWith(LegacyClient(), dev,
                     config != nullptr ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF,
                     handle, send_comm);
}

ncclResult_t ConnectV8(int dev, void* handle, void** send_comm, ncclNetDeviceHandle_v8_t** device) {
  if (device != nullptr) *device = nullptr;
  return ConnectWith(LegacyClient(), dev, NCCL_NET_TRAFFIC_CLASS_UNDEF, handle, send_comm);
}

ncclResult_t IsendV9(void* send_comm, void* data, size_t size, int tag, void*, void** request) {
  return Isend(send_comm, data, size, tag, request);
}

ncclResult_t IrecvV9(void* recv_comm, int n, void** data, size_t* sizes, int* tags, void**,
                     void** request) {
  return IrecvSizeT(recv_comm, n, data, sizes, tags, request);
}

ncclResult_t IsendV8(void* send_comm, void* data, int size, int tag, void*, void** request) {
  if (size < 0) {
    *request = nullptr;
    NBOX_NET_WARN("isend of %d bytes", size);
    return ncclInvalidArgument;
  }
  return Isend(send_comm, data, static_cast<uint64_t>(size), tag, request);
}

ncclResult_t IrecvV8(void* recv_comm, int n, void** data, int* sizes, int* tags, void**,
                     void** request) {
  *request = nullptr;
  if (n < 1 || n > kMaxRecvs) {
    NBOX_NET_WARN("irecv with %d buffers; this plugin takes 1 to %d", n, kMaxRecvs);
    return ncclInvalidArgument;
  }
  uint64_t sizes64[kMaxRecvs];
  for (int i = 0; i < n; ++i) {
    if (sizes[i] < 0) {
      NBOX_NET_WARN("irecv buffer of %d bytes", sizes[i]);
      return ncclInvalidArgument;
    }
    sizes64[i] = static_cast<uint64_t>(sizes[i]);
  }
  return Irecv(recv_comm, n, data, sizes64, tags, request);
}

// --- tables ----------------------------------------------------------------------------------

template <typename Table>
void FillSharedMembers(Table* t) {
  t->name = kPluginName;
  t->devices = Devices;
  t->accept = Accept;
  t->regMr = RegMr;
  t->regMrDmaBuf = nullptr;  // no NCCL_PTR_DMABUF
  t->deregMr = DeregMr;
  t->iflush = Iflush;
  t->test = Test;
  t->closeSend = CloseComm;
  t->closeRecv = CloseComm;
  t->closeListen = CloseComm;
  t->getDeviceMr = nullptr;    // no device offload
  t->irecvConsumed = nullptr;  // likewise
}

ncclNet_v11_t MakeV11() {
  ncclNet_v11_t t{};
  FillSharedMembers(&t);
  t.init = InitV11;
  t.getProperties = GetPropertiesV11;
  t.listen = ListenV11;
  t.connect = ConnectV11;
  t.isend = IsendV10;
  t.irecv = IrecvV10;
  t.makeVDevice = nullptr;
  t.finalize = FinalizeV11;
  t.setNetAttr = SetNetAttrV11;
  return t;
}

ncclNet_v10_t MakeV10() {
  ncclNet_v10_t t{};
  FillSharedMembers(&t);
  t.init = InitV10;
  t.getProperties = GetPropertiesV9Plus<ncclNetProperties_v10_t>;
  t.listen = ListenV8;
  t.connect = ConnectV10;
  t.isend = IsendV10;
  t.irecv = IrecvV10;
  t.makeVDevice = nullptr;
  return t;
}

ncclNet_v9_t MakeV9() {
  ncclNet_v9_t t{};
  FillSharedMembers(&t);
  t.init = InitV8;
  t.getProperties = GetPropertiesV9Plus<ncclNetProperties_v9_t>;
  t.listen = ListenV8;
  t.connect = ConnectV8;
  t.isend = IsendV9;
  t.irecv = IrecvV9;
  t.makeVDevice = nullptr;
  return t;
}

ncclNet_v8_t MakeV8() {
  ncclNet_v8_t t{};
  FillSharedMembers(&t);
  t.init = InitV8;
  t.getProperties = GetPropertiesV8;
  t.listen = ListenV8;
  t.connect = ConnectV8;
  t.isend = IsendV8;
  t.irecv = IrecvV8;
  return t;
}

uint64_t ExtEventCount() {
  const std::shared_ptr<BridgeClient> client = BridgeClient::Latest();
  return client != nullptr ? client->EventCount() : 0;
}

void ExtWaitEvents(uint64_t seen, int timeout_us) {
  const std::shared_ptr<BridgeClient> client = BridgeClient::Latest();
  if (client != nullptr) client->WaitEvents(seen, timeout_us);
}

}  // namespace
}  // namespace nbox::bridge::nboxnet

// Exported (see nbox_plugin.map); NCCL tries _v11 first.
extern "C" {
ncclNet_v11_t ncclNetPlugin_v11 = nbox::bridge::nboxnet::MakeV11();
ncclNet_v10_t ncclNetPlugin_v10 = nbox::bridge::nboxnet::MakeV10();
ncclNet_v9_t ncclNetPlugin_v9 = nbox::bridge::nboxnet::MakeV9();
ncclNet_v8_t ncclNetPlugin_v8 = nbox::bridge::nboxnet::MakeV8();
nboxNetExt_v1_t nboxNetExt_v1 = {1, nbox::bridge::nboxnet::ExtEventCount,
                                 nbox::bridge::nboxnet::ExtWaitEvents};
}
