// libnccl-net-nboxtcp.so: the ncclNet v8..v11 tables of the TCP plugin and nbox's wait
// extension. Everything version-specific is a thin adapter onto the same core (tcp_setup,
// tcp_connection); the exported tables are extern "C" and non-const so dlsym finds them.
#include <cstring>
#include <new>

#include "bridge/include/nbox_net_ext.h"
#include "bridge/nccl/net.h"
#include "bridge/tcp/tcp_connection.h"
#include "bridge/tcp/tcp_devices.h"
#include "bridge/tcp/tcp_engine.h"
#include "bridge/tcp/tcp_log.h"
#include "bridge/tcp/tcp_setup.h"

namespace nbox::bridge::tcp {
namespace {

constexpr const char* kPluginName = "nboxtcp";

// What v11's init returns: per-communicator settings.
struct Context {
  uint64_t comm_id = 0;
  ConnectOptions options;
  ncclNetAttr_v11_t attr{};
};

ncclResult_t InitCommon(ncclDebugLogger_t logger) {
  SetLogger(logger);
  try {
    const std::vector<Device>& devices = Devices();
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

ncclResult_t DeviceCount(int* ndev) {
  try {
    *ndev = static_cast<int>(Devices().size());
    return ncclSuccess;
  } catch (const AddressError& error) {
    NBOX_TCP_WARN("%s", error.what());
    return ncclInvalidArgument;
  }
}

const Device* DeviceAt(int dev) {
  try {
    const std::vector<Device>& devices = Devices();
    if (dev >= 0 && dev < static_cast<int>(devices.size())) return &devices[dev];
    NBOX_TCP_WARN("device %d does not exist (there are %zu)", dev, devices.size());
  } catch (const AddressError& error) {
    NBOX_TCP_WARN("%s", error.what());
  }
  return nullptr;
}

// The fields every version from v8 on has.
template <typename Properties>
void FillV8Fields(int dev, const Device& device, Properties* props) {
  props->name = const_cast<char*>(device.local.name.c_str());
  props->pciPath = device.pci_path.empty() ? nullptr : const_cast<char*>(device.pci_path.c_str());
  props->guid = static_cast<uint64_t>(dev);
  props->ptrSupport = NCCL_PTR_HOST;
  props->regIsGlobal = 0;
  props->speed = device.speed_mbps;
  props->port = 0;
  props->latency = 0;
  props->maxComms = 65536;
  props->maxRecvs = kMaxRecvs;
  props->netDeviceType = NCCL_NET_DEVICE_HOST;
  props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
}

// The fields v9 added (v10 and v11 keep them).
template <typename Properties>
void FillV9Fields(int dev, Properties* props) {
  props->forceFlush = 0;
  props->vProps.ndevs = 1;
  props->vProps.devs[0] = dev;
  props->maxP2pBytes = NCCL_MAX_NET_SIZE_BYTES;
  props->maxCollBytes = NCCL_MAX_NET_SIZE_BYTES;
}

template <typename Properties>
ncclResult_t GetPropertiesV9Plus(int dev, Properties* props) {
  const Device* device = DeviceAt(dev);
  if (device == nullptr) return ncclInvalidArgument;
  std::memset(props, 0, sizeof(*props));
  FillV8Fields(dev, *device, props);
  FillV9Fields(dev, props);
  return ncclSuccess;
}

ncclResult_t GetPropertiesV8(int dev, ncclNetProperties_v8_t* props) {
  const Device* device = DeviceAt(dev);
  if (device == nullptr) return ncclInvalidArgument;
  std::memset(props, 0, sizeof(*props));
  FillV8Fields(dev, *device, props);
  return ncclSuccess;
}

ncclResult_t GetPropertiesV11(int dev, ncclNetProperties_v11_t* props) {
  const ncclResult_t result = GetPropertiesV9Plus(dev, props);
  if (result == ncclSuccess) props->maxMultiRequestSize = 1;
  return result;
}

ncclResult_t ListenAny(int dev, void* handle, void** listen_comm) {
  ListenComm* comm = nullptr;
  const ncclResult_t result = Listen(dev, handle, &comm);
  *listen_comm = comm;
  return result;
}

ncclResult_t ConnectAny(int dev, const ConnectOptions& options, void* handle, void** send_comm) {
  Connection* connection = nullptr;
  const ncclResult_t result = Connect(dev, options, handle, &connection);
  *send_comm = connection;
  return result;
}

ncclResult_t AcceptAny(void* listen_comm, void** recv_comm, ncclNetDeviceHandle_v7_t**) {
  Connection* connection = nullptr;
  const ncclResult_t result = static_cast<ListenComm*>(listen_comm)->Accept(&connection);
  *recv_comm = connection;
  return result;
}

ncclResult_t RegMr(void*, void*, size_t, int type, void** mhandle) {
  *mhandle = nullptr;
  if (type != NCCL_PTR_HOST) {
    NBOX_TCP_WARN("regMr of memory type %d; this plugin only takes host memory", type);
    return ncclInternalError;
  }
  return ncclSuccess;
}

ncclResult_t DeregMr(void*, void*) {
  return ncclSuccess;
}

Connection* AsConnection(void* comm, Connection::Role role, const char* call) {
  auto* connection = static_cast<Connection*>(comm);
  if (connection == nullptr || connection->role() != role) {
    NBOX_TCP_WARN("%s on a comm that is not a %s comm", call,
                  role == Connection::Role::kSend ? "send" : "recv");
    return nullptr;
  }
  return connection;
}

ncclResult_t Isend(void* send_comm, void* data, size_t size, int tag, void** request) {
  *request = nullptr;
  Connection* connection = AsConnection(send_comm, Connection::Role::kSend, "isend");
  if (connection == nullptr) return ncclInvalidUsage;
  return connection->PostSend(data, size, tag, request);
}

ncclResult_t Irecv(void* recv_comm, int n, void** data, const uint64_t* sizes, int* tags,
                   void** request) {
  *request = nullptr;
  Connection* connection = AsConnection(recv_comm, Connection::Role::kRecv, "irecv");
  if (connection == nullptr) return ncclInvalidUsage;
  return connection->PostRecv(n, data, sizes, tags, request);
}

ncclResult_t IrecvSizeT(void* recv_comm, int n, void** data, size_t* sizes, int* tags,
                        void** request) {
  if (n < 1 || n > kMaxRecvs) {
    *request = nullptr;
    NBOX_TCP_WARN("irecv with %d buffers; this plugin takes 1 to %d", n, kMaxRecvs);
    return ncclInvalidArgument;
  }
  uint64_t sizes64[kMaxRecvs];
  for (int i = 0; i < n; ++i) sizes64[i] = sizes[i];
  return Irecv(recv_comm, n, data, sizes64, tags, request);
}

ncclResult_t Iflush(void*, int, void**, int*, void**, void** request) {
  *request = nullptr;  // host memory: nothing to flush
  return ncclSuccess;
}

ncclResult_t Test(void* request, int* done, int* sizes) {
  return Connection::Test(request, done, sizes);
}

ncclResult_t CloseConnection(void* comm) {
  if (comm != nullptr) static_cast<Connection*>(comm)->Close();
  return ncclSuccess;
}

ncclResult_t CloseListen(void* listen_comm) {
  delete static_cast<ListenComm*>(listen_comm);
  return ncclSuccess;
}

// --- v11 -------------------------------------------------------------------------------------

ncclResult_t InitV11(void** ctx, uint64_t comm_id, ncclNetCommConfig_v11_t* config,
                     ncclDebugLogger_t logger, ncclProfilerCallback_t) {
  *ctx = nullptr;
  const ncclResult_t result = InitCommon(logger);
  if (result != ncclSuccess) return result;
  auto* context = new (std::nothrow) Context();
  if (context == nullptr) return ncclSystemError;
  context->comm_id = comm_id;
  if (config != nullptr) context->options.traffic_class = config->trafficClass;
  *ctx = context;
  return ncclSuccess;
}

ncclResult_t ListenV11(void*, int dev, void* handle, void** listen_comm) {
  return ListenAny(dev, handle, listen_comm);
}

ncclResult_t ConnectV11(void* ctx, int dev, void* handle, void** send_comm,
                        ncclNetDeviceHandle_v11_t**) {
  const ConnectOptions options =
      ctx != nullptr ? static_cast<Context*>(ctx)->options : ConnectOptions();
  return ConnectAny(dev, options, handle, send_comm);
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
  delete static_cast<Context*>(ctx);
  return ncclSuccess;
}

ncclResult_t SetNetAttrV11(void* ctx, ncclNetAttr_v11_t* attr) {
  if (ctx != nullptr && attr != nullptr) static_cast<Context*>(ctx)->attr = *attr;
  return ncclSuccess;
}

// --- v10, v9, v8 -----------------------------------------------------------------------------

ncclResult_t InitV10(ncclDebugLogger_t logger, ncclProfilerCallback_t) {
  return InitCommon(logger);
}

ncclResult_t InitV8(ncclDebugLogger_t logger) {
  return InitCommon(logger);
}

ncclResult_t ListenV8(int dev, void* handle, void** listen_comm) {
  return ListenAny(dev, handle, listen_comm);
}

ncclResult_t ConnectV10(int dev, ncclNetCommConfig_v10_t* config, void* handle, void** send_comm,
                        ncclNetDeviceHandle_v10_t**) {
  ConnectOptions options;
  if (config != nullptr) options.traffic_class = config->trafficClass;
  return ConnectAny(dev, options, handle, send_comm);
}

ncclResult_t ConnectV8(int dev, void* handle, void** send_comm, ncclNetDeviceHandle_v8_t**) {
  return ConnectAny(dev, ConnectOptions(), handle, send_comm);
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
    NBOX_TCP_WARN("isend of %d bytes", size);
    return ncclInvalidArgument;
  }
  return Isend(send_comm, data, static_cast<uint64_t>(size), tag, request);
}

ncclResult_t IrecvV8(void* recv_comm, int n, void** data, int* sizes, int* tags, void**,
                     void** request) {
  *request = nullptr;
  if (n < 1 || n > kMaxRecvs) {
    NBOX_TCP_WARN("irecv with %d buffers; this plugin takes 1 to %d", n, kMaxRecvs);
    return ncclInvalidArgument;
  }
  uint64_t sizes64[kMaxRecvs];
  for (int i = 0; i < n; ++i) {
    if (sizes[i] < 0) {
      NBOX_TCP_WARN("irecv buffer of %d bytes", sizes[i]);
      return ncclInvalidArgument;
    }
    sizes64[i] = static_cast<uint64_t>(sizes[i]);
  }
  return Irecv(recv_comm, n, data, sizes64, tags, request);
}

// --- tables ----------------------------------------------------------------------------------

// The members all versions share, in the order they share them.
template <typename Table>
void FillSharedMembers(Table* t) {
  t->name = kPluginName;
  t->devices = DeviceCount;
  t->accept = AcceptAny;
  t->regMr = RegMr;
  t->regMrDmaBuf = nullptr;  // no NCCL_PTR_DMABUF
  t->deregMr = DeregMr;
  t->iflush = Iflush;
  t->test = Test;
  t->closeSend = CloseConnection;
  t->closeRecv = CloseConnection;
  t->closeListen = CloseListen;
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
  t.makeVDevice = nullptr;  // NCCL then uses the physical devices
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
  return Engine::Instance().EventCount();
}
void ExtWaitEvents(uint64_t seen, int timeout_us) {
  Engine::Instance().WaitEvents(seen, timeout_us);
}

}  // namespace
}  // namespace nbox::bridge::tcp

// Exported (see tcp_plugin.map); NCCL tries _v11 first.
extern "C" {
ncclNet_v11_t ncclNetPlugin_v11 = nbox::bridge::tcp::MakeV11();
ncclNet_v10_t ncclNetPlugin_v10 = nbox::bridge::tcp::MakeV10();
ncclNet_v9_t ncclNetPlugin_v9 = nbox::bridge::tcp::MakeV9();
ncclNet_v8_t ncclNetPlugin_v8 = nbox::bridge::tcp::MakeV8();
nboxNetExt_v1_t nboxNetExt_v1 = {1, nbox::bridge::tcp::ExtEventCount,
                                 nbox::bridge::tcp::ExtWaitEvents};
}
