/* nbox's declaration of the ncclNet plugin ABI, versions 8 to 11, laid out as NCCL 2.28.9
 * (tag v2.28.9-1, ext-net/example/nccl/) expects them. Plain C; compiles without CUDA.
 *
 * NCCL dlopen()s libnccl-net-<name>.so and looks up the data symbols ncclNetPlugin_v11, then
 * _v10, _v9, ... A plugin exports one table per version it supports (extern "C", not const).
 *
 * Request protocol common to all versions:
 *   - listen/connect/accept never block; connect and accept return success with a NULL comm
 *     until the connection is up, and are called again;
 *   - isend/irecv return success with *request == NULL when they cannot take the operation
 *     now (at most NCCL_NET_MAX_REQUESTS per comm); *request may arrive holding
 *     NCCL_NET_OPTIONAL_RECV_COMPLETION and must still be overwritten;
 *   - a receive may carry n buffers (n <= maxRecvs) with tags; a message goes to the buffer of
 *     its tag; a message may be shorter than the buffer, test reports the received size;
 *   - test is polled in a busy loop and must not block. */
#ifndef NBOX_BRIDGE_NCCL_NET_H_
#define NBOX_BRIDGE_NCCL_NET_H_

#include <stddef.h>
#include <stdint.h>

#include "bridge/nccl/common.h"
#include "bridge/nccl/err.h"
#include "bridge/nccl/net_device.h"

#define NCCL_NET_HANDLE_MAXSIZE 128
/* 1 TB: the largest transfer a v9+ plugin may advertise. */
#define NCCL_MAX_NET_SIZE_BYTES (1 * 1024 * 1024 * 1024 * 1024L)
/* Value NCCL may leave in *request before irecv (LL/LL128: completion optional). */
#define NCCL_NET_OPTIONAL_RECV_COMPLETION 0x1

#define NCCL_PTR_HOST 0x1
#define NCCL_PTR_CUDA 0x2
#define NCCL_PTR_DMABUF 0x4

#define NCCL_NET_MAX_REQUESTS 32
#define NCCL_NET_MAX_DEVS_PER_NIC 4

#include "bridge/nccl/net_v10.h"
#include "bridge/nccl/net_v11.h"
#include "bridge/nccl/net_v8.h"
#include "bridge/nccl/net_v9.h"

#endif /* NBOX_BRIDGE_NCCL_NET_H_ */
