/* Device-offload handle of the ncclNet ABI (NCCL 2.28.9). nbox's plugins run on the host
 * (netDeviceType NCCL_NET_DEVICE_HOST) and never hand one out, but the type is part of the
 * connect/accept signatures. */
#ifndef NBOX_BRIDGE_NCCL_NET_DEVICE_H_
#define NBOX_BRIDGE_NCCL_NET_DEVICE_H_

#include <stddef.h>

#define NCCL_NET_DEVICE_INVALID_VERSION 0x0
#define NCCL_NET_MTU_SIZE 4096
/* The only offload version NCCL 2.28.9 accepts for NCCL_NET_DEVICE_UNPACK. */
#define NCCL_NET_DEVICE_UNPACK_VERSION 0x7

typedef enum { NCCL_NET_DEVICE_HOST = 0, NCCL_NET_DEVICE_UNPACK = 1 } ncclNetDeviceType;

typedef struct {
  ncclNetDeviceType netDeviceType;
  int netDeviceVersion;
  void* handle;
  size_t size;
  int needsProxyProgress;
} ncclNetDeviceHandle_v7_t;

/* The layout has not changed since v7. */
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v8_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v9_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v10_t;
typedef ncclNetDeviceHandle_v7_t ncclNetDeviceHandle_v11_t;

#endif /* NBOX_BRIDGE_NCCL_NET_DEVICE_H_ */
