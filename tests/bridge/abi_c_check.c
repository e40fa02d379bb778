/* The ABI headers are plain C without CUDA: this file only has to compile as C11. The
 * offsets are the LP64 layout worked out by hand from NCCL 2.28.9's ext-net/example/nccl
 * headers (every pointer and size_t 8 bytes, int and float 4, natural alignment). */
#include <stddef.h>

#include "bridge/nccl/net.h"

_Static_assert(offsetof(ncclNetProperties_v11_t, vProps) == 64, "v11 vProps");
_Static_assert(offsetof(ncclNetProperties_v11_t, maxMultiRequestSize) == 104, "v11 tail");
_Static_assert(offsetof(ncclNet_v11_t, finalize) == 160, "v11 finalize");
_Static_assert(sizeof(ncclNet_v8_t) == 152, "v8 table");

int NboxAbiCheckCompiledAsC(void) {
  return NCCL_NET_HANDLE_MAXSIZE;
}
