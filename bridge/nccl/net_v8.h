/* ncclNet_v8: the table NCCL 2.19-2.21 look for (still accepted by 2.28.9).
 * Differences from v9: message sizes are int, isend/irecv take no profiler handle, and the
 * properties stop at netDeviceVersion. Include through bridge/nccl/net.h. */
#ifndef NBOX_BRIDGE_NCCL_NET_V8_H_
#define NBOX_BRIDGE_NCCL_NET_V8_H_

typedef struct {
  char* name;      /* for logs */
  char* pciPath;   /* /sys path of the PCI device, or NULL */
  uint64_t guid;   /* identifies the NIC chip across its PCI functions */
  int ptrSupport;  /* mask of NCCL_PTR_HOST, NCCL_PTR_CUDA, NCCL_PTR_DMABUF */
  int regIsGlobal; /* a registration is valid on every comm, not only the one given */
  int speed;       /* Mb/s */
  int port;
  float latency; /* us */
  int maxComms;
  int maxRecvs; /* most buffers one irecv may carry */
  ncclNetDeviceType netDeviceType;
  int netDeviceVersion;
} ncclNetProperties_v8_t;

typedef struct {
  const char* name;
  ncclResult_t (*init)(ncclDebugLogger_t logFunction);
  ncclResult_t (*devices)(int* ndev);
  ncclResult_t (*getProperties)(int dev, ncclNetProperties_v8_t* props);
  /* Writes at most NCCL_NET_HANDLE_MAXSIZE bytes to `handle` for the peer to connect to. */
  ncclResult_t (*listen)(int dev, void* handle, void** listenComm);
  /* Non-blocking: success with *sendComm == NULL means "call again". */
  ncclResult_t (*connect)(int dev, void* handle, void** sendComm,
                          ncclNetDeviceHandle_v8_t** sendDevComm);
  /* Non-blocking: success with *recvComm == NULL means "call again". */
  ncclResult_t (*accept)(void* listenComm, void** recvComm, ncclNetDeviceHandle_v8_t** recvDevComm);
  ncclResult_t (*regMr)(void* comm, void* data, size_t size, int type, void** mhandle);
  ncclResult_t (*regMrDmaBuf)(void* comm, void* data, size_t size, int type, uint64_t offset,
                              int fd, void** mhandle);
  ncclResult_t (*deregMr)(void* comm, void* mhandle);
  /* *request == NULL on success means "cannot take it now, try again". */
  ncclResult_t (*isend)(void* sendComm, void* data, int size, int tag, void* mhandle,
                        void** request);
  ncclResult_t (*irecv)(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles,
                        void** request);
  ncclResult_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                         void** request);
  /* sizes (may be NULL): bytes moved, one entry per buffer of the request. */
  ncclResult_t (*test)(void* request, int* done, int* sizes);
  ncclResult_t (*closeSend)(void* sendComm);
  ncclResult_t (*closeRecv)(void* recvComm);
  ncclResult_t (*closeListen)(void* listenComm);
  ncclResult_t (*getDeviceMr)(void* comm, void* mhandle, void** dptr_mhandle);
  ncclResult_t (*irecvConsumed)(void* recvComm, int n, void* request);
} ncclNet_v8_t;

#endif /* NBOX_BRIDGE_NCCL_NET_V8_H_ */
