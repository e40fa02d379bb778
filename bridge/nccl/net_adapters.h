// The ncclNet v8, v9, v10 and v11 tables of a plugin, filled from one backend: everything that
// differs between the versions (argument types, per-communicator contexts, which properties
// exist) is adapted here once, so each plugin only implements its transport.
//
// A Backend is a struct of static members:
//   static constexpr const char* kName;        // the table's `name`
//   static constexpr int kMaxRecvs;            // most buffers of one irecv
//   static void Warn(const char* message);     // through the plugin's NCCL logger
//   // v11: one context per communicator; v8-v10: one process-wide state (ctx == nullptr below)
//   static ncclResult_t InitContext(void** ctx, uint64_t comm_id, ncclDebugLogger_t logger);
//   static ncclResult_t FinalizeContext(void* ctx);
//   static ncclResult_t InitLegacy(ncclDebugLogger_t logger);
//   static ncclResult_t Devices(int* ndev);
//   static ncclResult_t Device(int dev, NetDevice* device);  // warns and fails on a bad dev
//   static ncclResult_t Listen(void* ctx, int dev, void* handle, void** listen_comm);
//   static ncclResult_t Connect(void* ctx, int dev, int traffic_class, void* handle,
//                               void** send_comm);
//   static ncclResult_t Accept(void* listen_comm, void** recv_comm);
//   static ncclResult_t Isend(void* send_comm, void* data, uint64_t size, int tag,
//                             void** request);
//   static ncclResult_t Irecv(void* recv_comm, int n, void** data, const uint64_t* sizes,
//                             int* tags, void** request);  // 1 <= n <= kMaxRecvs
//   static ncclResult_t Test(void* request, int* done, int* sizes);
//   static ncclResult_t CloseSend(void*), CloseRecv(void*), CloseListen(void*);
//
// Every plugin built on it is host memory only (NCCL_PTR_HOST): no DMA-BUF, no device
// offload, no virtual NICs, nothing to flush. Usage:
//   extern "C" ncclNet_v11_t ncclNetPlugin_v11 = NetTables<MyBackend>::Make<ncclNet_v11_t>();
#pragma once

#include <cstdio>
#include <cstring>
#include <new>
#include <type_traits>

#include "bridge/nccl/net.h"

namespace nbox::bridge::nccl {

// What differs between the devices of a plugin; the rest of the properties is common.
struct NetDevice {
  const char* name = nullptr;
  const char* pci_path = nullptr;  // NULL for virtual devices
  uint64_t guid = 0;
  int speed_mbps = 0;
};

template <typename Backend>
class NetTables {
 public:
  // The table of one version: ncclNet_v11_t, _v10_t, _v9_t or _v8_t. Each member is the
  // overload below whose signature the version's member has.
  template <typename Table>
  static Table Make() {
    Table t{};
    t.name = Backend::kName;
    t.init = Init;
    t.devices = Backend::Devices;
    t.getProperties = GetProperties;
    t.listen = Listen;
    t.connect = Connect;
    t.accept = Accept;
    t.regMr = RegMr;
    t.regMrDmaBuf = nullptr;  // no NCCL_PTR_DMABUF
    t.deregMr = DeregMr;
    t.isend = Isend;
    t.irecv = Irecv;
    t.iflush = Iflush;
    t.test = Backend::Test;
    t.closeSend = Backend::CloseSend;
    t.closeRecv = Backend::CloseRecv;
    t.closeListen = Backend::CloseListen;
    t.getDeviceMr = nullptr;    // no device offload
    t.irecvConsumed = nullptr;  // likewise
    // makeVDevice (v9 and later) stays NULL: NCCL then uses the physical devices.
    if constexpr (std::is_same_v<Table, ncclNet_v11_t>) {
      t.finalize = Finalize;
      t.setNetAttr = SetNetAttr;
    }
    return t;
  }

 private:
  // What v11's init returns: the backend's context and the per-communicator settings.
  struct Context {
    void* backend = nullptr;
    int traffic_class = NCCL_NET_TRAFFIC_CLASS_UNDEF;
    ncclNetAttr_v11_t attr{};
  };

  // printf-style with up to two int arguments.
  static void Warn(const char* format, int a, int b = 0) {
    char message[160];
    std::snprintf(message, sizeof(message), format, a, b);
    Backend::Warn(message);
  }

  // --- properties: every version's fields, each written only if the version has it ---------

  template <typename Properties>
  static ncclResult_t GetProperties(int dev, Properties* props) {
    NetDevice device;
    const ncclResult_t result = Backend::Device(dev, &device);
    if (result != ncclSuccess) return result;
    std::memset(props, 0, sizeof(*props));  // exactly this version's struct, not a byte more
    props->name = const_cast<char*>(device.name);
    props->pciPath = const_cast<char*>(device.pci_path);
    props->guid = device.guid;
    props->ptrSupport = NCCL_PTR_HOST;
    props->regIsGlobal = 0;
    props->speed = device.speed_mbps;
    props->port = 0;
    props->latency = 0;
    props->maxComms = 65536;
    props->maxRecvs = Backend::kMaxRecvs;
    props->netDeviceType = NCCL_NET_DEVICE_HOST;
    props->netDeviceVersion = NCCL_NET_DEVICE_INVALID_VERSION;
    if constexpr (!std::is_same_v<Properties, ncclNetProperties_v8_t>) {  // v9 and later
      props->forceFlush = 0;
      props->vProps.ndevs = 1;
      props->vProps.devs[0] = dev;
      props->maxP2pBytes = NCCL_MAX_NET_SIZE_BYTES;
      props->maxCollBytes = NCCL_MAX_NET_SIZE_BYTES;
    }
    if constexpr (std::is_same_v<Properties, ncclNetProperties_v11_t>) {
      props->maxMultiRequestSize = 1;
    }
    return ncclSuccess;
  }

  // --- connection setup --------------------------------------------------------------------

  static ncclResult_t Init(void** ctx, uint64_t comm_id, ncclNetCommConfig_v11_t* config,
                           ncclDebugLogger_t logger, ncclProfilerCallback_t) {
    *ctx = nullptr;
    auto* context = new (std::nothrow) Context();
    if (context == nullptr) return ncclSystemError;
    const ncclResult_t result = Backend::InitContext(&context->backend, comm_id, logger);
    if (result != ncclSuccess) {
      delete context;
      return result;
    }
    if (config != nullptr) context->traffic_class = config->trafficClass;
    *ctx = context;
    return ncclSuccess;
  }

  static ncclResult_t Finalize(void* ctx) {
    auto* context = static_cast<Context*>(ctx);
    if (context == nullptr) return ncclSuccess;
    const ncclResult_t result = Backend::FinalizeContext(context->backend);
    delete context;
    return result;
  }

  static ncclResult_t SetNetAttr(void* ctx, ncclNetAttr_v11_t* attr) {
    if (ctx != nullptr && attr != nullptr) static_cast<Context*>(ctx)->attr = *attr;
    return ncclSuccess;
  }

  static ncclResult_t Init(ncclDebugLogger_t logger, ncclProfilerCallback_t) {
    return Backend::InitLegacy(logger);
  }

  static ncclResult_t Init(ncclDebugLogger_t logger) { return Backend::InitLegacy(logger); }

  static ncclResult_t Listen(void* ctx, int dev, void* handle, void** listen_comm) {
    *listen_comm = nullptr;
    auto* context = static_cast<Context*>(ctx);
    return Backend::Listen(context != nullptr ? context->backend : nullptr, dev, handle,
                           listen_comm);
  }

  static ncclResult_t Listen(int dev, void* handle, void** listen_comm) {
    *listen_comm = nullptr;
    return Backend::Listen(nullptr, dev, handle, listen_comm);
  }

  static ncclResult_t Connect(void* ctx, int dev, void* handle, void** send_comm,
                              ncclNetDeviceHandle_v11_t** device) {
    if (device != nullptr) *device = nullptr;
    *send_comm = nullptr;
    auto* context = static_cast<Context*>(ctx);
    if (context == nullptr) {
      return Backend::Connect(nullptr, dev, NCCL_NET_TRAFFIC_CLASS_UNDEF, handle, send_comm);
    }
    return Backend::Connect(context->backend, dev, context->traffic_class, handle, send_comm);
  }

  static ncclResult_t Connect(int dev, ncclNetCommConfig_v10_t* config, void* handle,
                              void** send_comm, ncclNetDeviceHandle_v10_t** device) {
    if (device != nullptr) *device = nullptr;
    *send_comm = nullptr;
    return Backend::Connect(nullptr, dev,
                            config != nullptr ? config->trafficClass : NCCL_NET_TRAFFIC_CLASS_UNDEF,
                            handle, send_comm);
  }

  static ncclResult_t Connect(int dev, void* handle, void** send_comm,
                              ncclNetDeviceHandle_v8_t** device) {
    if (device != nullptr) *device = nullptr;
    *send_comm = nullptr;
    return Backend::Connect(nullptr, dev, NCCL_NET_TRAFFIC_CLASS_UNDEF, handle, send_comm);
  }

  static ncclResult_t Accept(void* listen_comm, void** recv_comm,
                             ncclNetDeviceHandle_v7_t** device) {
    if (device != nullptr) *device = nullptr;
    *recv_comm = nullptr;
    return Backend::Accept(listen_comm, recv_comm);
  }

  // --- memory: host memory needs no registration and no flush -----------------------------

  static ncclResult_t RegMr(void*, void*, size_t, int type, void** mhandle) {
    *mhandle = nullptr;
    if (type != NCCL_PTR_HOST) {
      Warn("regMr of memory type %d; this plugin only takes host memory", type);
      return ncclInternalError;
    }
    return ncclSuccess;
  }

  static ncclResult_t DeregMr(void*, void*) { return ncclSuccess; }

  static ncclResult_t Iflush(void*, int, void**, int*, void**, void** request) {
    *request = nullptr;
    return ncclSuccess;
  }

  // --- data: each version's argument types onto the backend's -----------------------------

  static ncclResult_t Isend(void* send_comm, void* data, size_t size, int tag, void*, void*,
                            void** request) {
    *request = nullptr;
    return Backend::Isend(send_comm, data, size, tag, request);
  }

  static ncclResult_t Isend(void* send_comm, void* data, size_t size, int tag, void*,
                            void** request) {
    *request = nullptr;
    return Backend::Isend(send_comm, data, size, tag, request);
  }

  static ncclResult_t Isend(void* send_comm, void* data, int size, int tag, void*, void** request) {
    *request = nullptr;
    if (size < 0) {
      Warn("isend of %d bytes", size);
      return ncclInvalidArgument;
    }
    return Backend::Isend(send_comm, data, static_cast<uint64_t>(size), tag, request);
  }

  // Checks n and widens the sizes of any integer type to the backend's uint64_t.
  template <typename Size>
  static ncclResult_t IrecvAny(void* recv_comm, int n, void** data, const Size* sizes, int* tags,
                               void** request) {
    *request = nullptr;
    if (n < 1 || n > Backend::kMaxRecvs) {
      Warn("irecv with %d buffers; this plugin takes 1 to %d", n, Backend::kMaxRecvs);
      return ncclInvalidArgument;
    }
    uint64_t sizes64[Backend::kMaxRecvs];
    for (int i = 0; i < n; ++i) {
      if constexpr (std::is_signed_v<Size>) {
        if (sizes[i] < 0) {
          Warn("irecv buffer of %d bytes", static_cast<int>(sizes[i]));
          return ncclInvalidArgument;
        }
      }
      sizes64[i] = static_cast<uint64_t>(sizes[i]);
    }
    return Backend::Irecv(recv_comm, n, data, sizes64, tags, request);
  }

  static ncclResult_t Irecv(void* recv_comm, int n, void** data, size_t* sizes, int* tags, void**,
                            void**, void** request) {
    return IrecvAny(recv_comm, n, data, sizes, tags, request);
  }

  static ncclResult_t Irecv(void* recv_comm, int n, void** data, size_t* sizes, int* tags, void**,
                            void** request) {
    return IrecvAny(recv_comm, n, data, sizes, tags, request);
  }

  static ncclResult_t Irecv(void* recv_comm, int n, void** data, int* sizes, int* tags, void**,
                            void** request) {
    return IrecvAny(recv_comm, n, data, sizes, tags, request);
  }
};

}  // namespace nbox::bridge::nccl
