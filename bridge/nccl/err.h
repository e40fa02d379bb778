/* Result codes of the ncclNet plugin ABI (NCCL 2.28.9).
 *
 * nbox's own declaration of the ABI: NCCL's ext-net README asks each plugin to carry its own
 * copy of the definitions. The values are fixed by the ABI; the names are NCCL's so that code
 * reads like any other plugin. Plain C, no CUDA. */
#ifndef NBOX_BRIDGE_NCCL_ERR_H_
#define NBOX_BRIDGE_NCCL_ERR_H_

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,   /* a system call failed (socket, memory) */
  ncclInternalError = 3, /* a bug or an unsupported request */
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6 /* the peer went away or broke the protocol */
} ncclResult_t;

#endif /* NBOX_BRIDGE_NCCL_ERR_H_ */
